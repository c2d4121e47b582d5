"""Reading the day: offsets ("in 2 hours"), dates and day words, for ``intents.time.parse``.

One half of the time reader (the other is ``intents.time.clocks``): every way a
request names *which day* (or a moment by offset), and how a relative day resolves
to a date. A mixin over the reader's state, so the two halves share one scan.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from intents.intent import RelativeDay
from intents.text.numbers import number
from intents.text.typos import distance
from intents.time.reading import ReaderState
from intents.time.resolve import resolve_relative
from intents.time.words import (
    CLOCK_AFTER,
    CLOCK_BEFORE,
    CN_MD,
    CN_WEEKDAY,
    CN_WEEKDAY_CHAR,
    DAY_WORDS,
    DOM,
    EN_DM,
    EN_MD,
    EN_WEEKDAY,
    ISO,
    MONTHS,
    MONTH_DOM,
    OFFSET_EN,
    OFFSET_ZH,
    SLASH_MD,
    WEEKDAYS,
    rx,
)

__all__ = ["DateReading", "upcoming", "day_of_month", "weekday_day"]


def weekday_day(which: str, index: int) -> RelativeDay:
    return RelativeDay[f"{which}_{WEEKDAYS[index]}"]


def upcoming(today: date, month: int, day: int, year: int | None) -> date | None:
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


def day_of_month(today: date, day: int) -> date | None:
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


_PAST_WEEK = rx(r"(?<![早晚马路头身])(?:上个?|上一个?)\s*(?:周|星期|礼拜)?\s*$|\b(?:last|past|previous)\s+(?:week\s+)?$")
_NOT_A_MODIFIER = frozenset({"on", "by", "the", "to", "at", "of", "for", "and", "or", "from", "until", "till", "before",
                             "after", "each", "every", "since", "is", "was", "it", "its", "as", "so", "then", "this",
                             "next", "coming", "upcoming"})


class DateReading(ReaderState):
    """The day-reading steps of the time reader."""

    def offsets(self) -> None:
        for pattern, zh in ((OFFSET_EN, False), (OFFSET_ZH, True)):
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
            for pattern in (ISO, CN_MD, SLASH_MD, EN_MD, EN_DM, DOM):
                for m in self.scan.finditer(pattern):
                    if pattern is ISO:
                        self._add_date(m, int(m.group("y")), int(m.group("m")), int(m.group("d")))
                    else:
                        self.problem(m.start(), m.end(), "a date needs today's date to be read", "需要知道今天的日期")
            return
        today = self.today
        for m in self.scan.finditer(ISO):
            self._add_date(m, int(m.group("y")), int(m.group("m")), int(m.group("d")))
        for m in self.scan.finditer(CN_MD):
            month, day = number(m.group("m")), number(m.group("d"))
            year = {"明年": today.year + 1, "今年": today.year}.get(m.group("y") or "")
            self._add(m, None if month is None or day is None else upcoming(today, int(month), int(day), year))
        for m in self.scan.finditer(SLASH_MD):
            first, second = int(m.group("m")), int(m.group("d"))
            if first <= 12 and second <= 12 and first != second:
                # 12/5 is 5 December to some writers and 12 May to others: ask, do not pick.
                self.problem(m.start(), m.end(), f"is this {first}/{second} month/day or day/month?",
                             f"{first}/{second} 是月/日还是日/月？", "day")
                continue
            month, day = (first, second) if first <= 12 else (second, first)
            self._add(m, upcoming(today, month, day, None))
        for pattern in (EN_DM, EN_MD):  # "3 Dec 10:00": the day before the month wins over "Dec 10"
            for m in self.scan.finditer(pattern):
                year = int(m.group("y")) if m.group("y") else None
                self._add(m, upcoming(today, MONTHS[m.group("mon")[:3]], int(m.group("d")), year))
        for m in self.scan.finditer(MONTH_DOM):
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
        for m in self.scan.finditer(DOM):
            d = number(m.group("d") or m.group("d2"))
            self._add(m, None if d is None else day_of_month(today, int(d)))

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

    def _after_next(self, found: list[tuple[int, int, RelativeDay | date]]) -> None:
        """下下周一, "the Monday after next", "Tuesday of the week after next": that weekday a week after the one
        下周一 / "next Monday" names (``resolve.resolve_relative``). The week after next without a day is asked."""
        weekly = [(CN_WEEKDAY[ch], rf"下下个?(?:周|星期|礼拜)\s*{ch}(?![0-9.:：点时号日次回个天遍趟])") for ch in CN_WEEKDAY]
        for index, full, abbr in EN_WEEKDAY:
            day = rf"(?:{full}|{abbr})"
            weekly.append((index, rf"\b(?:on\s+)?(?:the\s+)?{day}\s+(?:after\s+next|(?:of\s+|in\s+)?the\s+week\s+after\s+next)\b"
                                  rf"|\b(?:on\s+)?the\s+week\s+after\s+next\s*,?\s+on\s+{day}\b"))
        for index, pattern in weekly:
            for m in self.scan.finditer(rx(pattern)):
                if self.today is None:
                    self.problem(m.start(), m.end(), "a date needs today's date to be read", "需要知道今天的日期", "day")
                    continue
                self.scan.claim(m.start(), m.end())
                found.append((m.start(), m.end(), resolve_relative(weekday_day("NEXT", index), self.today) + timedelta(days=7)))
        for m in self.scan.finditer(rx(r"下下个?(?:周|星期|礼拜)|\b(?:the\s+)?week\s+after\s+next\b")):
            self.problem(m.start(), m.end(), "which day exactly?", "具体是哪一天？", "day")

    def _said_before(self, day: tuple[int, int, RelativeDay | date]) -> bool:
        """Whether the word right before a weekday read as this week's makes it another day: a past week (上周一,
        "last monday"), or a slip of next / this / coming ("nest monday", "thsi friday"). Asked, quoting both; the
        slip's "yes" puts the word meant in its place. ``True``: the weekday is not read."""
        start, end, value = day
        if not (isinstance(value, RelativeDay) and value.value.startswith("THIS_")):
            return False
        text = self.scan.text
        past = _PAST_WEEK.search(text[max(0, start - 12) : start])
        if past is not None:
            s = start - (len(text[max(0, start - 12) : start]) - past.start())
            self.problem(s, end, "this day has already passed; which day is meant?", "这一天已经过去了，是哪一天？", "day")
            return True
        word = re.search(r"(?<![a-z])([a-z]{2,9})\s+$", text[max(0, start - 12) : start])
        if word is None or word.group(1) in _NOT_A_MODIFIER:
            return False
        meant = next((w for w in ("next", "this", "coming") if distance(word.group(1), w, 1) == 1), None)
        if meant is None:
            return False
        s = start - len(word.group(0))
        quote = self.scan.quote(s, end)
        self.problem(s, end, f'is this "{meant}"? it was not read; which day?', f"这是“{meant}”吗？没有读懂，是哪一天？", "day",
                     (("yes", f"{meant} {self.scan.quote(start, end)}"),))
        return True

    def day_words(self) -> None:
        found: list[tuple[int, int, RelativeDay | date]] = []
        self._after_next(found)
        for m in self.scan.finditer(rx(r"(?:下个?|下一个?)\s*(?:周|星期|礼拜)\s*(" + CN_WEEKDAY_CHAR + ")")):
            found.append((m.start(), m.end(), weekday_day("NEXT", CN_WEEKDAY[m.group(1)])))
            self.scan.claim(m.start(), m.end())
        for m in self.scan.finditer(rx(r"(?:这个?|本|这一?)?\s*(?:周|星期|礼拜)\s*(" + CN_WEEKDAY_CHAR + ")")):
            found.append((m.start(), m.end(), weekday_day("THIS", CN_WEEKDAY[m.group(1)])))
            self.scan.claim(m.start(), m.end())
        for index, full, abbr in EN_WEEKDAY:  # "next monday", "next week monday", "monday next week", "next week on monday"
            for m in self.scan.finditer(rx(rf"\bnext\s+(?:week\s*,?\s+(?:on\s+)?)?(?:{full}|{abbr})\b"
                                           rf"|\b(?:on\s+)?(?:{full}|{abbr})\s*,?\s+(?:of\s+|in\s+)?next\s+week\b")):
                found.append((m.start(), m.end(), weekday_day("NEXT", index)))
                self.scan.claim(m.start(), m.end())
        for index, full, abbr in EN_WEEKDAY:
            for m in self.scan.finditer(
                rx(rf"\b(?:on\s+|this\s+(?:coming\s+)?|coming\s+|upcoming\s+)?(?:{full})\b|\b(?:on|this|coming)\s+(?:{abbr})\b"
                   rf"|\b(?:{abbr})\b\.?(?={CLOCK_AFTER})|{CLOCK_BEFORE}(?:{abbr})\b\.?")
            ):
                found.append((m.start(), m.end(), weekday_day("THIS", index)))
                self.scan.claim(m.start(), m.end())
        found[:] = [f for f in found if not self._said_before(f)]
        for pattern, day, part in DAY_WORDS:
            for m in self.scan.finditer(rx(pattern)):
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
