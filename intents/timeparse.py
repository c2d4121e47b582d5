"""Reading *when* from a request, zh and en, exactly or not at all.

Every time expression the reader understands is claimed in the ``Scan`` and
becomes part of a ``TimeReading``; one it recognises as a time but cannot pin
down (two different days, "about an hour", 25点, "at dawn") becomes a
``Problem`` that the Intent asks about. Conventions, documented because the
corpus labels and the LLM prompt rely on them:

* **Absolute dates**: 2026-12-06, 2026/12/6, 2026年12月6日, 12月5日/号,
  December 5 / Dec 5th / 5 Dec / the 5th of December, ``M/D`` (12/5 is
  5 December, month first as in 12月5日), 5号 / the 5th (day of this month).
  A date without a year is its next occurrence on or after today; a day of
  the month alone is this month's, or next month's once it has passed.
* **Relative days**: 今天/明天/后天/大后天, today/tomorrow/day after tomorrow,
  in N days / N天后, 周五 / on Friday (this week's, on or after today), 下周五 /
  next Friday (the following calendar week).
* **Offsets**: 两小时后, 一个半小时后, 半小时后, 30分钟后, in 30 minutes, in 2 h,
  in an hour and a half, 90 minutes from now: ``now`` plus the offset, to the
  minute (seconds dropped). An offset with another day or time is a question.
* **Clock times**: 上午9点, 九点半, 四点一刻, 四点三刻, 差五分五点 (4:55),
  15:30, 9am, 3:30 pm, half past nine, quarter past 3, quarter to five, ten to
  five, 0900, 1600 hrs, 21h, at 9, 9 o'clock, noon. A bare hour 1–5 without
  上午/下午/am/pm is the afternoon (nobody means a 3 a.m. inspection flight
  without saying so); a part of the day named elsewhere decides am/pm.
* **Parts of the day** (``timeresolve.PART_OF_DAY_CLOCK``): morning 09:00,
  noon 12:00, afternoon 15:00, evening/tonight 19:00, night 22:00.
* Questions, never guesses: weekend, next week without a day, midnight,
  dawn/dusk, "before lunch", "about 10", "later", 下下周.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from intents.intent import PartOfDay, RelativeDay
from intents.numbers import CN_NUM, EN_NUM, number
from intents.scan import Scan

__all__ = ["Problem", "TimeReading", "read_time"]


def _rx(pattern: str) -> re.Pattern[str]:
    """ASCII word classes, so ``\\b`` separates "明天9am" (CJK is not a word character)."""
    return re.compile(pattern, re.ASCII)


@dataclass(frozen=True)
class Problem:
    """A span the reader recognised as a parameter but could not read exactly."""

    kind: str  # time, day, altitude, number, sensor, scope, place, instruction, parameter
    start: int
    end: int
    why_en: str
    why_zh: str


@dataclass
class TimeReading:
    day: RelativeDay | None = None
    date: date | None = None
    clock: str | None = None
    part: PartOfDay | None = None
    asap: bool = False
    found: bool = False
    problems: list[Problem] = field(default_factory=list)


# ----------------------------------------------------------------------------- vocabulary

_H = rf"(?:\d{{1,2}}|{CN_NUM})"
_EN_H = r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11,
    "dec": 12,
}
_MON = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
_ORD = r"(?:st|nd|rd|th)?"
_WEEKDAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")
_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6}
_EN_WEEKDAY = [
    (0, r"monday|mondya", r"mon"),
    (1, r"tuesday|tuseday|tues", r"tue"),
    (2, r"wednesday|wednsday|wensday|wendsday|wedensday", r"wed"),
    (3, r"thursday|thurs|thrusday|thursay", r"thu"),
    (4, r"friday|firday", r"fri"),
    (5, r"saturday|saterday", r"sat"),
    (6, r"sunday", r"sun"),
]
_TOMORROW_EN = r"tomorrow|tomorow|tommorow|tommorrow|tomorro|tmrw|tmr|tmrow|2morrow|2moro"

# (pattern, day, part): words that name a day, some also a part of it.
_DAY_WORDS: list[tuple[str, RelativeDay | int, PartOfDay | None]] = [
    (r"大后天", 3, None),
    (r"大后儿个?", 3, None),
    (r"(?<!大)后天|(?<!大)后儿个?|\b(?:the )?day after (?:" + _TOMORROW_EN + r")\b", RelativeDay.DAY_AFTER_TOMORROW, None),
    (r"明早|明晨|明天一早|\b(?:" + _TOMORROW_EN + r") morning\b", RelativeDay.TOMORROW, PartOfDay.MORNING),
    (r"明晚|\b(?:" + _TOMORROW_EN + r") (?:evening|night)\b", RelativeDay.TOMORROW, PartOfDay.EVENING),
    (r"\b(?:" + _TOMORROW_EN + r") afternoon\b", RelativeDay.TOMORROW, PartOfDay.AFTERNOON),
    (r"明天|明日|明儿个?|明个|\b(?:" + _TOMORROW_EN + r")\b", RelativeDay.TOMORROW, None),
    (r"今早|今晨|\bthis morning\b", RelativeDay.TODAY, PartOfDay.MORNING),
    (r"今晚|\btonight\b|\btonite\b|\bthis evening\b", RelativeDay.TODAY, PartOfDay.EVENING),
    (r"\bthis afternoon\b", RelativeDay.TODAY, PartOfDay.AFTERNOON),
    (r"今天|今日|今儿个?|当天|\btoday\b", RelativeDay.TODAY, None),
]
_PART_WORDS: list[tuple[PartOfDay, str]] = [
    (PartOfDay.NIGHT, r"夜里|夜间|半夜|深夜|\bat night\b|\bovernight\b|\blate at night\b"),
    (PartOfDay.EVENING, r"晚上|傍晚|晚间|\b(?:in the )?evening\b"),
    (PartOfDay.AFTERNOON, r"下午|午后|\b(?:in the )?afternoon\b|(?<=[a-z\x00] )p\.m\.?(?!\w)|(?<=[a-z\x00] )pm\b"),
    (PartOfDay.NOON, r"中午|正午|\bnoon\b|\bmidday\b|\blunch ?time\b|\blunch\b"),
    (PartOfDay.MORNING, r"清晨|早上|早晨|上午|一早|\b(?:in the |early )?morning\b|\bmorn\b|(?<=[a-z\x00] )a\.m\.?(?!\w)"),
]
_PM_PARTS = {PartOfDay.AFTERNOON, PartOfDay.EVENING, PartOfDay.NIGHT}
_CN_QUAL = r"凌晨|清晨|早上|早晨|上午|中午|正午|午后|下午|傍晚|晚上|夜里|夜间|半夜|深夜|早|晚"
_QUAL_PART = {
    "中午": PartOfDay.NOON, "正午": PartOfDay.NOON, "午后": PartOfDay.AFTERNOON, "下午": PartOfDay.AFTERNOON,
    "傍晚": PartOfDay.EVENING, "晚上": PartOfDay.EVENING, "晚": PartOfDay.EVENING, "夜里": PartOfDay.NIGHT,
    "夜间": PartOfDay.NIGHT, "半夜": PartOfDay.NIGHT, "深夜": PartOfDay.NIGHT,
}
_NOT_DATE_AFTER = r"(?![楼机门库线仓位口区栋座厂号道段层台架栋院桩罐塔车])"

_OFFSET_EN = _rx(
    rf"\bin\s+(?P<n>an?|half an?|{EN_NUM}|\d+(?:\.\d+)?)(?P<half>\s+and\s+a\s+half)?"
    r"\s*(?P<u>hours?|hrs?|h|minutes?|mins?|days?)(?P<half2>\s+and\s+a\s+half)?(?![a-z])"
    rf"|\b(?P<n2>an?|half an?|{EN_NUM}|\d+(?:\.\d+)?)(?P<half3>\s+and\s+a\s+half)?\s*(?P<u2>hours?|hrs?|h|minutes?|mins?|days?)"
    r"(?P<half4>\s+and\s+a\s+half)?\s+from now\b"
)
_OFFSET_ZH = _rx(
    rf"(?:过\s*)?(?P<n>\d+(?:\.\d+)?|{CN_NUM}|半)\s*(?:个)?\s*(?P<half>半)?\s*(?P<u>小时|钟头|分钟|分|天|日)\s*(?:以后|之后|过后|后)"
    rf"|过\s*(?P<n2>\d+(?:\.\d+)?|{CN_NUM}|半)\s*(?:个)?\s*(?P<half2>半)?\s*(?P<u2>小时|钟头|分钟)"
)
_ISO = _rx(r"(?<![\d.])(?P<y>20\d{2})\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]\s*(?P<d>\d{1,2})\s*[日号]?(?![\d])")
_CN_MD = _rx(
    rf"(?P<y>明年|今年)?\s*(?<![\d.])(?P<m>\d{{1,2}}|{CN_NUM})\s*月\s*(?P<d>\d{{1,2}}|{CN_NUM})\s*[日号]?" + _NOT_DATE_AFTER
)
_SLASH_MD = _rx(r"(?<![\d/.:])(?P<m>\d{1,2})/(?P<d>\d{1,2})(?![\d/])")
_EN_MD = _rx(rf"\b(?P<mon>{_MON})\.?\s+(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}\b(?![:.]\d)(?:,?\s*(?P<y>20\d{{2}}))?")
_EN_DM = _rx(rf"\b(?:the\s+)?(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<mon>{_MON})\b\.?(?:,?\s*(?P<y>20\d{{2}}))?")
_MONTH_DOM = _rx(rf"(?P<which>下个?月|这个?月|本月)\s*(?P<d>\d{{1,2}}|{CN_NUM})\s*[号日]")
_DOM = _rx(rf"(?<![\d月./])(?P<d>\d{{1,2}}|{CN_NUM})\s*[号日]" + _NOT_DATE_AFTER + r"|\bthe\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)\b")

_CN_DIFF = _rx(
    rf"(?P<qual>{_CN_QUAL})?\s*差\s*(?P<m>一刻|三刻|\d{{1,2}}|{CN_NUM})\s*(?:分钟?)?\s*(?P<h>{_H})\s*(?:点|时)(?:钟)?"
    rf"|(?P<qual2>{_CN_QUAL})?\s*(?P<h2>{_H})\s*(?:点|时)\s*差\s*(?P<m2>一刻|\d{{1,2}}|{CN_NUM})\s*(?:分钟?)?"
)
_CN_CLOCK = _rx(
    rf"(?P<qual>{_CN_QUAL})?\s*(?P<h>{_H})\s*(?:点|时)\s*(?:钟)?\s*"
    rf"(?:过\s*)?(?P<m>半|一刻|三刻|\d{{1,2}}\s*分?|{CN_NUM}\s*分?)?\s*(?:整)?"
)
_EN_IDIOM = _rx(
    r"\b(?:(?P<half>half)|(?:a\s+)?(?P<quarter>quarter)|(?P<n>five|ten|twenty|twenty[- ]five)|(?P<n3>\d{1,2}|" + EN_NUM + r")\s+minutes?)\s+"
    rf"(?P<dir>past|after|to|till|til)\s+(?P<h>{_EN_H})\b(?:\s*(?P<ampm>a\.?m\.?|p\.?m\.?)(?![a-z]))?"
)
_EN_AMPM = _rx(r"(?<![\d.:])(?P<h>\d{1,2})(?:[:.](?P<m>[0-5]\d))?\s*(?P<ampm>a\.?m\.?|p\.?m\.?)(?![a-z])")
_HHMM = _rx(
    r"(?<![\d.:/-])(?P<h>[01]?\d|2[0-3])\s*:\s*(?P<m>[0-5]\d)(?![\d:])(?:\s*(?:h|hrs|hours)\b)?"
    r"|(?:(?<=\bat )|(?<=@)|(?<=klo )|(?<=\bkl ))\s*(?P<h2>[01]?\d|2[0-3])\.(?P<m2>[0-5]\d)(?![\d.])"
)
_H24 = _rx(
    r"(?<![\d.:/-])(?P<h>[01]\d|2[0-3])(?P<m>[0-5]\d)\s*(?P<suf>h\b|hrs\b|hours\b|hr\b|时)?(?![\d])"
    r"|(?<![\d.:/-])(?P<h2>1[3-9]|2[0-3]|0\d)\s*h(?:\s*(?P<m2>[0-5]\d))?\b"
)
_EN_AT = _rx(
    rf"\b(?:at|@|starting at|start at|from)\s+(?P<h>{_EN_H})"
    r"(?:\s+(?P<mw>fifteen|thirty|forty[- ]five|o'?[- ]?five|ten|twenty|twenty[- ]five|thirty[- ]five|forty|fifty|fifty[- ]five)(?![- ]?(?:one|two|three|four|five|six|seven|eight|nine)\b))?"
    r"(?:\s*(?P<ampm>a\.?m\.?|p\.?m\.?)(?![a-z]))?(?:\s*o'?clock)?\b"
    r"(?!\s*(?:m\b|meters?|metres?|米|ft|feet|foot|%|km|mps|m/s|knots?|kts|degrees?|minutes?|mins?|hours?|hrs?|days?|drones?|:|\.\d))"
)
_EN_OCLOCK = _rx(rf"\b(?P<h>{_EN_H})\s*o'?clock\b")
_AFTER_MOD = _rx(
    r"\s*(?:以后|之后|过后|后|以前|之前|前|左右|前后|上下|光景|ish\b|or so\b|or later\b|or earlier\b|at the latest\b|latest\b"
    r"|(?:-|–|~|to|till|until|through|到|至)\s*(?:\d|[一二两三四五六七八九十]|noon|midnight|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve))"
)
_BEFORE_MOD = _rx(
    r"(?:大概|大约|约|差不多|估计|最晚|最迟|不晚于|不早于|\b(?:around|about|approx\.?|approximately|roughly|circa|ca\.?|before|after|by"
    r"|until|till|no later than|not before|not after|not later than|latest|between|sometime|some time)(?:\s+at)?)\s*$"
)
_BARE_HOUR = _rx(r"\s*,?\s*(?P<h>[01]?\d|2[0-3])(?![\d:.])(?!\s*(?:%|[a-z]|[\u4e00-\u9fff]|/))")
_NOON = _rx(r"\b12\s*noon\b|\bnoon\b|\bmidday\b|中午12点|正午12点")
_ASAP = _rx(
    r"\basap\b|a\.s\.a\.p\.?|\bright (?:now|away)\b|\bimmediately\b|\bnow\b|\bat once\b|\bstraight away\b"
    r"|\bas soon as (?:possible|you can)\b|立刻|马上|立即|现在|赶紧|尽快|尽早|即刻|火速|赶快"
)


# ----------------------------------------------------------------------------- helpers


def _weekday_day(which: str, index: int) -> RelativeDay:
    return RelativeDay[f"{which}_{_WEEKDAYS[index]}"]


def _to_24h(hour: int, part: PartOfDay | None) -> int:
    """Apply the part of the day; with none, a bare 1–5 is the afternoon."""
    if part in _PM_PARTS and hour < 12:
        return hour + 12
    if part is PartOfDay.NOON and 1 <= hour <= 5:
        return hour + 12
    if part is None and 1 <= hour <= 5:
        return hour + 12
    return hour


def _clock(hour: int | float | None, minute: int | float | None) -> str | None:
    if hour is None or minute is None or hour != int(hour) or minute != int(minute):
        return None
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return f"{int(hour):02d}:{int(minute):02d}"


def _cn_minutes(token: str | None) -> float | None:
    if not token:
        return 0
    token = token.replace("分", "").strip()
    return {"半": 30, "一刻": 15, "三刻": 45}.get(token, number(token))


def _upcoming(today: date, month: int, day: int, year: int | None) -> date | None:
    try:
        if year is not None:
            return date(year, month, day)
        candidate = date(today.year, month, day)
        if candidate < today:
            candidate = date(today.year + 1, month, day)
    except ValueError:
        return None
    # A date without a year that is more than half a year away has most likely just passed: ask.
    return candidate if (candidate - today).days <= 183 else None


def _day_of_month(today: date, day: int) -> date | None:
    month, year = today.month, today.year
    for _ in range(2):
        try:
            candidate = date(year, month, day)
        except ValueError:
            candidate = None
        if candidate is not None and candidate >= today:
            return candidate
        month, year = (1, year + 1) if month == 12 else (month + 1, year)
    return None


def resolve_relative(day: RelativeDay, today: date) -> date:
    """The date a relative day names, seen from ``today`` (the same rules as ``timeresolve``)."""
    if day is RelativeDay.TODAY:
        return today
    if day is RelativeDay.TOMORROW:
        return today + timedelta(days=1)
    if day is RelativeDay.DAY_AFTER_TOMORROW:
        return today + timedelta(days=2)
    which, _, name = day.value.partition("_")
    target = _WEEKDAYS.index(name)
    if which == "THIS":
        return today + timedelta(days=(target - today.weekday()) % 7)
    return today + timedelta(days=7 - today.weekday()) + timedelta(days=target)


class _Reader:
    def __init__(self, scan: Scan, now: datetime | None) -> None:
        self.scan = scan
        self.now = now
        self.today = now.date() if now is not None else None
        self.out = TimeReading()
        self.days: list[tuple[int, int, RelativeDay | date]] = []
        self.clocks: list[tuple[int, int, str]] = []
        self.parts: list[tuple[int, int, PartOfDay]] = []
        self.offset: tuple[int, int, datetime] | None = None

    def problem(self, start: int, end: int, why_en: str, why_zh: str, kind: str = "time") -> None:
        self.scan.claim(start, end)
        self.out.problems.append(Problem(kind, start, end, why_en, why_zh))

    # --------------------------------------------------------------- offsets and dates

    def offsets(self) -> None:
        for pattern, zh in ((_OFFSET_EN, False), (_OFFSET_ZH, True)):
            for m in self.scan.finditer(pattern):
                n_tok = m.group("n") or m.group("n2")
                unit = m.group("u") or m.group("u2")
                groups = m.groupdict()
                half = bool(groups.get("half") or groups.get("half2") or groups.get("half3") or groups.get("half4"))
                value = self._offset_value(n_tok, half)
                if value is None:
                    self.problem(m.start(), m.end(), "this offset cannot be read exactly", "这个时间间隔无法准确读取")
                    continue
                self.scan.claim(m.start(), m.end())
                self.out.found = True
                if unit.startswith(("day", "天", "日")):
                    if value != int(value) or self.today is None:
                        self.problem(m.start(), m.end(), "which day exactly?", "具体是哪一天？")
                        continue
                    self.days.append((m.start(), m.end(), self.today + timedelta(days=int(value))))
                    continue
                minutes = value * (60 if unit.startswith(("h", "小时", "钟头")) else 1)
                if minutes != int(minutes) or self.now is None:
                    self.problem(m.start(), m.end(), "which clock time exactly?", "具体几点几分？")
                    continue
                if self.offset is not None:
                    self.problem(m.start(), m.end(), "two different offsets; which one?", "有两个不同的时间间隔，按哪个？")
                    continue
                self.offset = (m.start(), m.end(), self.now.replace(second=0, microsecond=0) + timedelta(minutes=int(minutes)))

    @staticmethod
    def _offset_value(token: str, half: bool) -> float | None:
        token = token.strip()
        fixed = {"a": 1, "an": 1, "half a": 0.5, "half an": 0.5, "半": 0.5}
        if token in fixed:
            value: float | None = fixed[token]
        elif token.endswith(" and a half"):
            base = number(token[: -len(" and a half")])
            value = None if base is None else base + 0.5
        else:
            value = number(token)
        if value is None:
            return None
        return value + 0.5 if half else value

    def dates(self) -> None:
        if self.today is None:
            for pattern in (_ISO, _CN_MD, _SLASH_MD, _EN_MD, _EN_DM, _DOM):
                for m in self.scan.finditer(pattern):
                    if pattern is _ISO:
                        self._add_date(m, int(m.group("y")), int(m.group("m")), int(m.group("d")))
                    else:
                        self.problem(m.start(), m.end(), "a date needs today's date to be read", "需要知道今天的日期")
            return
        today = self.today
        for m in self.scan.finditer(_ISO):
            self._add_date(m, int(m.group("y")), int(m.group("m")), int(m.group("d")))
        for m in self.scan.finditer(_CN_MD):
            month, day = number(m.group("m")), number(m.group("d"))
            year = {"明年": today.year + 1, "今年": today.year}.get(m.group("y") or "")
            self._add(m, None if month is None or day is None else _upcoming(today, int(month), int(day), year))
        for m in self.scan.finditer(_SLASH_MD):
            first, second = int(m.group("m")), int(m.group("d"))
            if first <= 12 and second <= 12 and first != second:
                # 12/5 is 5 December to some writers and 12 May to others: ask, do not pick.
                self.problem(m.start(), m.end(), f"is this {first}/{second} month/day or day/month?",
                             f"{first}/{second} 是月/日还是日/月？", "day")
                continue
            month, day = (first, second) if first <= 12 else (second, first)
            self._add(m, _upcoming(today, month, day, None))
        for pattern in (_EN_DM, _EN_MD):  # "3 Dec 10:00": the day before the month wins over "Dec 10"
            for m in self.scan.finditer(pattern):
                year = int(m.group("y")) if m.group("y") else None
                self._add(m, _upcoming(today, _MONTHS[m.group("mon")[:3]], int(m.group("d")), year))
        for m in self.scan.finditer(_MONTH_DOM):
            d = number(m.group("d"))
            which = m.group("which")
            month, year = today.month, today.year
            if which.startswith("下"):
                month, year = (1, year + 1) if month == 12 else (month + 1, year)
            try:
                value: date | None = date(year, month, int(d)) if d is not None else None
            except ValueError:
                value = None
            self._add(m, value if value is None or value >= today else None)
        for m in self.scan.finditer(_DOM):
            d = number(m.group("d") or m.group("d2"))
            self._add(m, None if d is None else _day_of_month(today, int(d)))

    def _add_date(self, m: re.Match[str], y: int, mo: int, d: int) -> None:
        try:
            self._add(m, date(y, mo, d))
        except ValueError:
            self._add(m, None)

    def _add(self, m: re.Match[str], value: date | None) -> None:
        if value is None:
            self.problem(m.start(), m.end(), "this is not a date on the calendar", "这不是一个有效日期", "day")
            return
        self.scan.claim(m.start(), m.end())
        self.out.found = True
        self.days.append((m.start(), m.end(), value))

    def day_words(self) -> None:
        text = self.scan.view()
        for m in _rx(r"下下个?(?:周|星期|礼拜)\s*[一二三四五六日天七]?|\bthe week after next\b").finditer(text):
            self.problem(m.start(), m.end(), "which day exactly?", "具体是哪一天？", "day")
        found: list[tuple[int, int, RelativeDay | date]] = []
        for m in self.scan.finditer(_rx(r"(?:下个?|下一个?)\s*(?:周|星期|礼拜)\s*([一二三四五六日天七])")):
            found.append((m.start(), m.end(), _weekday_day("NEXT", _CN_WEEKDAY[m.group(1)])))
            self.scan.claim(m.start(), m.end())
        for m in self.scan.finditer(_rx(r"(?:这个?|本|这一?)?\s*(?:周|星期|礼拜)\s*([一二三四五六日天七])")):
            found.append((m.start(), m.end(), _weekday_day("THIS", _CN_WEEKDAY[m.group(1)])))
            self.scan.claim(m.start(), m.end())
        for index, full, abbr in _EN_WEEKDAY:
            for m in self.scan.finditer(_rx(rf"\bnext\s+(?:week\s+)?(?:{full}|{abbr})\b")):
                found.append((m.start(), m.end(), _weekday_day("NEXT", index)))
                self.scan.claim(m.start(), m.end())
        for index, full, abbr in _EN_WEEKDAY:
            for m in self.scan.finditer(
                _rx(rf"\b(?:on\s+|this\s+(?:coming\s+)?|coming\s+|upcoming\s+)?(?:{full})\b|\b(?:on|this|coming)\s+(?:{abbr})\b")
            ):
                found.append((m.start(), m.end(), _weekday_day("THIS", index)))
                self.scan.claim(m.start(), m.end())
        for pattern, day, part in _DAY_WORDS:
            for m in self.scan.finditer(_rx(pattern)):
                self.scan.claim(m.start(), m.end())
                if isinstance(day, int):
                    if self.today is None:
                        self.problem(m.start(), m.end(), "a date needs today's date to be read", "需要知道今天的日期", "day")
                        continue
                    found.append((m.start(), m.end(), self.today + timedelta(days=day)))
                else:
                    found.append((m.start(), m.end(), day))
                if part is not None:
                    self.parts.append((m.start(), m.end(), part))
        if found:
            self.out.found = True
        self.days.extend(found)

    # --------------------------------------------------------------- clock times

    def part_words(self) -> None:
        for part, pattern in _PART_WORDS:
            for m in self.scan.finditer(_rx(pattern)):
                self.parts.append((m.start(), m.end(), part))

    def _context_part(self) -> PartOfDay | None:
        kinds = {p for _, _, p in self.parts}
        return next(iter(kinds)) if len(kinds) == 1 else None

    def _add_clock(self, start: int, end: int, value: str | None) -> None:
        if value is None:
            self.problem(start, end, "this is not a clock time", "这不是一个有效的时间")
            return
        after = _AFTER_MOD.match(self.scan.text, end)
        before = _BEFORE_MOD.search(self.scan.text[max(0, start - 16) : start])
        if after or before:
            # "about 9", "9点左右", "before 10", "9点前", "9-11": a window or an estimate, not a start time.
            s = start - (len(self.scan.text[max(0, start - 16) : start]) - before.start()) if before else start
            e = after.end() if after else end
            self.problem(s, e, "is this an exact start time?", "这是确切的开始时间吗？")
            return
        self.scan.claim(start, end)
        self.out.found = True
        self.clocks.append((start, end, value))

    def clock_times(self) -> None:
        part = self._context_part()
        for m in self.scan.finditer(_CN_DIFF):
            qual = m.group("qual") or m.group("qual2")
            hour, minutes = number(m.group("h") or m.group("h2")), _cn_minutes(m.group("m") or m.group("m2"))
            qpart = _QUAL_PART.get(qual or "", PartOfDay.MORNING if qual else part)
            if hour is None or minutes is None or not 0 < minutes < 60:
                self._add_clock(m.start(), m.end(), None)
                continue
            h24 = _to_24h(int(hour), qpart)
            self._add_clock(m.start(), m.end(), _clock((h24 - 1) % 24, 60 - minutes))
        for m in self.scan.finditer(_CN_CLOCK):
            qual, h_tok, m_tok = m.group("qual"), m.group("h"), m.group("m")
            hour = number(h_tok)
            before = self.scan.text[max(0, m.start() - 1) : m.start()]
            if not qual and not m_tok and h_tok == "一" and (re.match(r"[快早晚高低慢多少好近远大小轻重点些]", before) or
                                                            self.scan.text[m.end() : m.end() + 1] in ("儿", "点")):
                continue  # 快一点, 高一点: "a little", not one o'clock (the residual check still sees it)
            qpart = _QUAL_PART.get(qual or "", PartOfDay.MORNING if qual else part)
            if qual in ("凌晨",) and hour is not None and hour <= 5:
                qpart = PartOfDay.MORNING
            if hour == 12 and qual in ("凌晨", "晚上", "晚", "夜里", "夜间", "半夜", "深夜"):
                self._add_clock(m.start(), m.end(), None)  # midnight: which day's? ask
                continue
            minute = _cn_minutes(m_tok)
            self._add_clock(m.start(), m.end(), None if hour is None else _clock(_to_24h(int(hour), qpart), minute))
        for m in self.scan.finditer(_EN_IDIOM):
            hour = number(m.group("h"))
            if m.group("half"):
                minutes: float | None = 30
            elif m.group("quarter"):
                minutes = 15
            else:
                minutes = number(m.group("n") or m.group("n3"))
            if re.search(r"\b(?:from|between)\s*$", self.scan.text[max(0, m.start() - 10) : m.start()]):
                self._add_clock(m.start(), m.end(), None)  # "from nine to eleven" is a window, not 10:51
                continue
            if hour is None or minutes is None or not 0 < minutes < 60 or not 1 <= hour <= 12:
                self._add_clock(m.start(), m.end(), None)
                continue
            ampm = m.group("ampm")
            h24 = int(hour) % 12 + (12 if ampm.startswith("p") else 0) if ampm else _to_24h(int(hour), part)
            forward = m.group("dir") in ("past", "after")
            total = h24 * 60 + (minutes if forward else -minutes)
            self._add_clock(m.start(), m.end(), _clock((total // 60) % 24, total % 60))
        for m in self.scan.finditer(_EN_AMPM):
            hour, minute = int(m.group("h")), int(m.group("m") or 0)
            ok = 1 <= hour <= 12
            hour = hour % 12 + (12 if m.group("ampm").startswith("p") else 0)
            self._add_clock(m.start(), m.end(), _clock(hour, minute) if ok else None)
        for m in self.scan.finditer(_HHMM):
            hour, minute = int(m.group("h") or m.group("h2")), int(m.group("m") or m.group("m2"))
            if part in _PM_PARTS and hour < 12:
                hour += 12
            elif part is None and len(m.group("h") or m.group("h2")) == 1:
                hour = _to_24h(hour, None)  # "2:30" reads like "at 2"; "02:30" is a 24-hour time
            self._add_clock(m.start(), m.end(), _clock(hour, minute))
        text = self.scan.view()
        for m in _H24.finditer(text):
            if m.group("h") is not None:
                context = self.scan.text[max(0, m.start() - 14) : m.start()]
                after = self.scan.text[m.end() : m.end() + 14]
                days = r"今天|明天|后天|今晚|明早|today|tomorrow|tonight|tmrw"
                cued = (
                    m.group("suf") is not None
                    or m.group("h").startswith("0")
                    or re.search(r"(?:\bat|@|\bfrom|\bstart\w*|\btime)\s*$", context)
                    or re.search(days, context)
                    or re.match(rf"\s*(?:{days})", after)
                    or (re.search(r"(?:^|[，,;；])\s*$", context) and re.match(r"\s*(?:$|[，,。;；])", after))
                )
                if not cued:
                    continue
                self._add_clock(m.start(), m.end(), _clock(int(m.group("h")), int(m.group("m"))))
            else:
                self._add_clock(m.start(), m.end(), _clock(int(m.group("h2")), int(m.group("m2") or 0)))
        view = self.scan.view()
        for _, day_end, _ in self.days:
            m = _BARE_HOUR.match(view, day_end)
            if m:
                hour = int(m.group("h"))
                self._add_clock(m.start("h"), m.end("h"), _clock(_to_24h(hour, part) if hour <= 12 else hour, 0))
        for pattern in (_EN_AT, _EN_OCLOCK):
            for m in self.scan.finditer(pattern):
                hour = number(m.group("h"))
                if hour is None or not 1 <= hour <= 23:
                    continue  # "at 0", "at 40": left for the reader to ask about
                hour = int(hour)
                groups = m.groupdict()
                words = re.sub(r"^o'?[- ]?", "", groups.get("mw") or "").replace("-", " ").strip()
                minute = number(words) if words else 0
                ampm = groups.get("ampm")
                if ampm and 1 <= hour <= 12:
                    h24 = hour % 12 + (12 if ampm.startswith("p") else 0)
                elif ampm:
                    h24 = -1  # "at 15 pm": not a clock time
                else:
                    h24 = _to_24h(hour, part) if hour <= 12 else hour
                self._add_clock(m.start(), m.end(), _clock(h24, minute))
        for m in self.scan.finditer(_NOON):
            self.scan.claim(m.start(), m.end())
            self.out.found = True
            self.parts.append((m.start(), m.end(), PartOfDay.NOON))

    def claim_parts(self) -> None:
        for part, pattern in _PART_WORDS:
            for m in self.scan.finditer(_rx(pattern)):
                self.scan.claim(m.start(), m.end())
                self.out.found = True
                if not any(s == m.start() for s, _, _ in self.parts):
                    self.parts.append((m.start(), m.end(), part))
        for m in self.scan.finditer(_ASAP):
            self.scan.claim(m.start(), m.end())
            self.out.asap = True
            self.out.found = True

    # --------------------------------------------------------------- putting it together

    def settle(self) -> TimeReading:
        out = self.out
        days = self.days
        absolute = [d for _, _, d in days if isinstance(d, date)]
        if absolute:
            # "Friday 11 December": a weekday beside a date checks the date, it does not name another day.
            weekdays = [x for x in days if isinstance(x[2], RelativeDay) and x[2].value.startswith(("THIS_", "NEXT_"))]
            if weekdays and all(_WEEKDAYS.index(w[2].value.split("_", 1)[1]) == absolute[0].weekday() for w in weekdays):
                days = [x for x in days if x not in weekdays]
        if self.today is not None:
            resolved = {(d if isinstance(d, date) else resolve_relative(d, self.today)) for _, _, d in days}
        else:
            resolved = {d for _, _, d in days}  # type: ignore[misc]
        if len(resolved) > 1:
            s, e = min(x[0] for x in days), max(x[1] for x in days)
            self.problem(s, e, "two different days are named; which one?", "提到了两个不同的日子，是哪一天？", "day")
        elif days:
            values = [d for _, _, d in days]
            rel = next((d for d in values if isinstance(d, RelativeDay)), None)
            absolute = next((d for d in values if isinstance(d, date)), None)
            out.day = rel
            out.date = absolute
        clocks = {c for _, _, c in self.clocks}
        if len(clocks) > 1:
            s, e = min(x[0] for x in self.clocks), max(x[1] for x in self.clocks)
            self.problem(s, e, "two different times are named; which one?", "提到了两个不同的时间，是几点？")
        elif clocks:
            out.clock = clocks.pop()
        parts = {p for _, _, p in self.parts}
        if len(parts) > 1 and out.clock is None:
            s, e = min(x[0] for x in self.parts), max(x[1] for x in self.parts)
            self.problem(s, e, "which part of the day?", "是一天中的哪个时段？")
        elif len(parts) == 1:
            out.part = parts.pop()
        if self.offset is not None:
            s, e, at = self.offset
            if days or self.clocks or self.parts:
                self.problem(s, e, "an offset and another time are both given; which one?", "同时给了时间间隔和时间，按哪个？")
            else:
                out.date, out.clock, out.day = at.date(), at.strftime("%H:%M"), None
        if out.clock is not None or out.part is not None or out.day not in (None, RelativeDay.TODAY) or (
            out.date is not None and out.date != self.today
        ):
            out.asap = False
        return out


_GREETING = _rx(
    r"^\s*(?:good\s+(?:morning|afternoon|evening|day|night)\b[!,.]?|(?:morning|afternoon|evening)\s*!+"
    r"|(?:早上好|早安|上午好|中午好|下午好|晚上好|晚安)[!！,，。]?)"
)


def read_time(scan: Scan, now: datetime | None) -> TimeReading:
    """Claim and read every time expression in ``scan``; ``now`` is local (``None``: no absolute dates)."""
    greeting = _GREETING.match(scan.view())
    if greeting:  # "Morning! …" greets; it does not schedule
        scan.claim(greeting.start(), greeting.end())
    reader = _Reader(scan, now)
    reader.offsets()
    reader.dates()
    reader.day_words()
    reader.part_words()
    reader.clock_times()
    reader.claim_parts()
    return reader.settle()
