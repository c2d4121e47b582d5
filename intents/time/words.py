"""The words and patterns the time reader recognises, zh and en (``intents.time.parse``).

The vocabulary is most of the reader's size and changes for other reasons than its
logic (a new spelling, a new way to say a time), so it reads apart from how the
dates (``intents.time.dates``) and clock times (``intents.time.clocks``) are read.
"""

from __future__ import annotations

import re

from intents.intent import PartOfDay, RelativeDay
from intents.text.numbers import CN_NUM, EN_NUM
from intents.text.patterns import LazyPattern

__all__ = [
    "rx",
    "H",
    "EN_H",
    "MONTHS",
    "MON",
    "ORD",
    "WEEKDAYS",
    "CN_WEEKDAY",
    "CN_WEEKDAY_CHAR",
    "EN_WEEKDAY",
    "CLOCK_AFTER",
    "CLOCK_BEFORE",
    "TOMORROW_EN",
    "DAY_WORDS",
    "PART_WORDS",
    "PM_PARTS",
    "CN_QUAL",
    "QUAL_PART",
    "NOT_DATE_AFTER",
    "OFFSET_EN",
    "OFFSET_ZH",
    "ISO",
    "CN_MD",
    "SLASH_MD",
    "EN_MD",
    "EN_DM",
    "MONTH_DOM",
    "DOM",
    "CN_DIFF",
    "CN_CLOCK",
    "EN_IDIOM",
    "EN_AMPM",
    "NOT_LENGTH",
    "HHMM",
    "H24",
    "EN_AT",
    "EN_OCLOCK",
    "EN_HOUR_PART",
    "AFTER_MOD",
    "BEFORE_MOD",
    "BETWEEN_AND",
    "RANGE_AFTER",
    "RANGE_BEFORE",
    "BARE_HOUR",
    "MIDNIGHT",
    "NOON",
    "ASAP",
]


def rx(pattern: str) -> LazyPattern:
    """ASCII word classes, so ``\\b`` separates "明天9am" (CJK is not a word character); compiled on first use
    (``intents.text.patterns``: a request needs a part of these tables)."""
    return LazyPattern(pattern, re.ASCII)


H = rf"(?:\d{{1,2}}|{CN_NUM})"
EN_H = r"(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11,
    "dec": 12,
}
MON = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
ORD = r"(?:st|nd|rd|th)?"
WEEKDAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")
CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "七": 6,
              "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
"""A weekday after 周/星期/礼拜: its character, or its digit (周1, 星期3: how many type it)."""
CN_WEEKDAY_CHAR = r"(?:[一二三四五六日天七]|[1-7](?![0-9.:：点时号日次回个天遍趟]))"
"""``CN_WEEKDAY``'s keys as a pattern: a digit only where it is no count or clock of its own (周3次, 周1点 are not)."""
EN_WEEKDAY = [
    (0, r"monday|mondya", r"mon"),
    (1, r"tuesday|tuseday|tues", r"tue"),
    (2, r"wednesday|wednsday|wensday|wendsday|wedensday", r"wed"),
    (3, r"thursday|thurs|thrusday|thursay", r"thu"),
    (4, r"friday|firday", r"fri"),
    (5, r"saturday|saterday", r"sat"),
    (6, r"sunday", r"sun"),
]
# A weekday abbreviation ("fri", "sat", "sun") is a day only beside a clock time ("fri 1400", "Sat 09:30", "1400 fri"):
# alone, "sun" and "sat" are as often other words.
CLOCK_AFTER = r"\s*,?\s*(?:@\s*|at\s+)?(?:\d{3,4}(?!\d)|\d{1,2}\s*[:.h]\s*\d{2}|\d{1,2}\s*(?:am|pm|a\.m|p\.m)\b)"
CLOCK_BEFORE = r"(?:(?<=\d )|(?<=\d))"
TOMORROW_EN = r"tomorrow|tomorow|tommorow|tommorrow|tomorro|tmrw|tmr|tmrow|2morrow|2moro"

# (pattern, day, part): words that name a day, some also a part of it.
DAY_WORDS: list[tuple[str, RelativeDay | int, PartOfDay | None]] = [
    (r"大后天", 3, None),
    (r"大后儿个?", 3, None),
    (r"(?<!大)后天|(?<!大)后儿个?|\b(?:the )?day after (?:" + TOMORROW_EN + r")\b", RelativeDay.DAY_AFTER_TOMORROW, None),
    (r"明早|明晨|明天一早|\b(?:" + TOMORROW_EN + r") morning\b", RelativeDay.TOMORROW, PartOfDay.MORNING),
    (r"明晚|\b(?:" + TOMORROW_EN + r") (?:evening|night)\b", RelativeDay.TOMORROW, PartOfDay.EVENING),
    (r"\b(?:" + TOMORROW_EN + r") afternoon\b", RelativeDay.TOMORROW, PartOfDay.AFTERNOON),
    (r"明天|明日|明儿个?|明个|\b(?:" + TOMORROW_EN + r")\b", RelativeDay.TOMORROW, None),
    (r"今早|今晨|\bthis morning\b", RelativeDay.TODAY, PartOfDay.MORNING),
    (r"今晚|\btonight\b|\btonite\b|\bthis evening\b", RelativeDay.TODAY, PartOfDay.EVENING),
    (r"\bthis afternoon\b", RelativeDay.TODAY, PartOfDay.AFTERNOON),
    (r"今天|今日|今儿个?|当天|\btoday\b", RelativeDay.TODAY, None),
]
PART_WORDS: list[tuple[PartOfDay, str]] = [
    (PartOfDay.NIGHT, r"夜里|夜间|半夜|深夜|\bat night\b|\bovernight\b|\blate at night\b"),
    (PartOfDay.EVENING, r"晚上|傍晚|晚间|\b(?:in the )?evening\b"),
    (PartOfDay.AFTERNOON, r"下午|午后|\b(?:in the )?afternoon\b|(?<=[a-z\x00] )p\.m\.?(?!\w)|(?<=[a-z\x00] )pm\b"),
    (PartOfDay.NOON, r"中午|正午|\bnoon\b|\bmidday\b|\blunch ?time\b|\blunch\b"),
    (PartOfDay.MORNING, r"清晨|早上|早晨|上午|一早|\b(?:in the |early )?morning\b|\bmorn\b|(?<=[a-z\x00] )a\.m\.?(?!\w)"),
]
PM_PARTS = {PartOfDay.AFTERNOON, PartOfDay.EVENING, PartOfDay.NIGHT}
CN_QUAL = r"凌晨|清晨|早上|早晨|上午|中午|正午|午后|下午|傍晚|晚上|夜里|夜间|半夜|深夜|早|晚"
QUAL_PART = {
    "中午": PartOfDay.NOON, "正午": PartOfDay.NOON, "午后": PartOfDay.AFTERNOON, "下午": PartOfDay.AFTERNOON,
    "傍晚": PartOfDay.EVENING, "晚上": PartOfDay.EVENING, "晚": PartOfDay.EVENING, "夜里": PartOfDay.NIGHT,
    "夜间": PartOfDay.NIGHT, "半夜": PartOfDay.NIGHT, "深夜": PartOfDay.NIGHT,
}
NOT_DATE_AFTER = r"(?![楼机门库线仓位口区栋座厂号道段层台架栋院桩罐塔车])"

OFFSET_EN = rx(
    rf"\bin\s+(?P<n>an?|half an?|{EN_NUM}|\d+(?:\.\d+)?)(?P<half>\s+and\s+a\s+half)?"
    r"\s*(?P<u>hours?|hrs?|h|minutes?|mins?|days?)(?P<half2>\s+and\s+a\s+half)?(?![a-z])"
    rf"|\b(?P<n2>an?|half an?|{EN_NUM}|\d+(?:\.\d+)?)(?P<half3>\s+and\s+a\s+half)?\s*(?P<u2>hours?|hrs?|h|minutes?|mins?|days?)"
    r"(?P<half4>\s+and\s+a\s+half)?\s+from now\b"
)
OFFSET_ZH = rx(
    rf"(?:过\s*)?(?P<n>\d+(?:\.\d+)?|{CN_NUM}|半)\s*(?:个)?\s*(?P<half>半)?\s*(?P<u>小时|钟头|分钟|分|天|日)\s*(?:以后|之后|过后|后)"
    rf"|过\s*(?P<n2>\d+(?:\.\d+)?|{CN_NUM}|半)\s*(?:个)?\s*(?P<half2>半)?\s*(?P<u2>小时|钟头|分钟)"
)
ISO = rx(r"(?<![\d.])(?P<y>20\d{2})\s*[-/.年]\s*(?P<m>\d{1,2})\s*[-/.月]\s*(?P<d>\d{1,2})\s*[日号]?(?![\d])")
CN_MD = rx(
    rf"(?P<y>明年|今年)?\s*(?<![\d.])(?P<m>\d{{1,2}}|{CN_NUM})\s*月\s*(?P<d>\d{{1,2}}|{CN_NUM})\s*[日号]?" + NOT_DATE_AFTER
)
SLASH_MD = rx(r"(?<![\d/.:])(?P<m>\d{1,2})/(?P<d>\d{1,2})(?![\d/])")
EN_MD = rx(rf"\b(?P<mon>{MON})\.?\s+(?:the\s+)?(?P<d>\d{{1,2}}){ORD}\b(?![:.]\d)(?:,?\s*(?P<y>20\d{{2}}))?")
EN_DM = rx(rf"\b(?:the\s+)?(?P<d>\d{{1,2}}){ORD}\s+(?:of\s+)?(?P<mon>{MON})\b\.?(?:,?\s*(?P<y>20\d{{2}}))?")
MONTH_DOM = rx(rf"(?P<which>下个?月|这个?月|本月)\s*(?P<d>\d{{1,2}}|{CN_NUM})\s*[号日]")
DOM = rx(rf"(?<![\d月./])(?P<d>\d{{1,2}}|{CN_NUM})\s*[号日]" + NOT_DATE_AFTER + r"|\bthe\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)\b")

CN_DIFF = rx(
    rf"(?P<qual>{CN_QUAL})?\s*差\s*(?P<m>一刻|三刻|\d{{1,2}}|{CN_NUM})\s*(?:分钟?)?\s*(?P<h>{H})\s*(?:点|时)(?:钟)?"
    rf"|(?P<qual2>{CN_QUAL})?\s*(?P<h2>{H})\s*(?:点|时)\s*差\s*(?P<m2>一刻|\d{{1,2}}|{CN_NUM})\s*(?:分钟?)?"
)
CN_CLOCK = rx(
    rf"(?P<qual>{CN_QUAL})?\s*(?P<h>{H})\s*(?:点|时)\s*(?:钟)?\s*"
    rf"(?:过\s*)?(?P<m>半|一刻|三刻|\d{{1,2}}\s*分?|{CN_NUM}\s*分?)?\s*(?:整)?"
)
EN_IDIOM = rx(
    r"\b(?:(?P<half>half)|(?:a\s+)?(?P<quarter>quarter)|(?P<n>five|ten|twenty|twenty[- ]five)|(?P<n3>\d{1,2}|" + EN_NUM + r")\s+minutes?)\s+"
    rf"(?P<dir>past|after|to|till|til)\s+(?P<h>{EN_H})\b(?:\s*(?P<ampm>a\.?m\.?|p\.?m\.?)(?![a-z]))?"
)
EN_AMPM = rx(r"(?<![\d.:])(?P<h>\d{1,2})(?:[:.](?P<m>[0-5]\d))?\s*(?P<ampm>a\.?m\.?|p\.?m\.?)(?![a-z])")
# A number with a length unit is never a time ("@ 0.06km", "1500m"): the heights are read before the clock.
NOT_LENGTH = r"(?!\s*(?:m\b|km\b|ft\b|meters?\b|metres?\b|kilomet|feet\b|foot\b|米|公里|千米|公尺|英尺|呎))"
HHMM = rx(
    r"(?<![\d.:/-])(?P<h>[01]?\d|2[0-3])\s*:\s*(?P<m>[0-5]\d)(?!\d|:\d)" + NOT_LENGTH + r"(?:\s*(?:h|hrs|hours)\b)?"
    r"|(?:(?<=\bat )|(?<=@)|(?<=@ )|(?<=klo )|(?<=\bkl ))\s*(?P<h2>[01]?\d|2[0-3])\.(?P<m2>[0-5]\d)(?![\d.])" + NOT_LENGTH
)
H24 = rx(
    r"(?<![\d.:/-])(?P<h>[01]\d|2[0-3])(?P<m>[0-5]\d)" + NOT_LENGTH + r"\s*(?P<suf>h\b|hrs\b|hours\b|hr\b|时)?(?![\d])"
    r"|(?<![\d.:/-])(?P<h2>1[3-9]|2[0-3]|0\d)\s*h(?:\s*(?P<m2>[0-5]\d))?\b" + NOT_LENGTH
    # a compact clock with a one-digit hour: "930h", "930 hrs" (the suffix makes it a time), "9h30", "12h15"
    + r"|(?<![\d.:/-])(?P<h3>[1-9])(?P<m3>[0-5]\d)\s*(?:h|hrs|hr|hours)\b"
    r"|(?<![\d.:/-])(?P<h4>[1-9]|1[0-2])\s*h\s*(?P<m4>[0-5]\d)\b" + NOT_LENGTH
)
EN_AT = rx(
    rf"\b(?:at|@|starting at|start at|from)\s+(?P<h>{EN_H})"
    r"(?:\s+(?P<mw>fifteen|thirty|forty[- ]five|o'?[- ]?five|ten|twenty|twenty[- ]five|thirty[- ]five|forty|fifty|fifty[- ]five)(?![- ]?(?:one|two|three|four|five|six|seven|eight|nine)\b))?"
    r"(?:\s*(?P<ampm>a\.?m\.?|p\.?m\.?)(?![a-z]))?(?:\s*o'?clock)?\b"
    r"(?!\s*(?:m\b|meters?|metres?|米|ft|feet|foot|%|km|mps|m/s|knots?|kts|degrees?|minutes?|mins?|hours?|hrs?|days?|drones?|:|\.\d))"
)
EN_OCLOCK = rx(rf"\b(?P<h>{EN_H})\s*o'?clock\b")
# An hour followed by the part of the day it is in ("Sunday 9 in the morning", "7.30 in the evening", "11 at night"):
# the part decides a.m. or p.m.; the part's words are claimed with the other part words.
EN_HOUR_PART = rx(
    rf"(?<![\d.:])\b(?P<h>{EN_H})(?:\s*[:.]\s*(?P<m>[0-5]\d))?(?:\s*o'?clock)?"
    r"(?=\s+(?:in\s+the\s+(?P<part>morning|afternoon|evening)|(?:at|in\s+the)\s+(?P<night>night)"
    r"|this\s+(?P<this>morning|afternoon|evening)|(?P<tonight>tonight))\b)"
)
AFTER_MOD = rx(
    r"\s*(?:以后|之后|过后|后|以前|之前|前|左右|前后|上下|光景|ish\b|or so\b|or later\b|or earlier\b|at the latest\b|latest\b"
    r"|(?:-|–|~|to|till|until|through|到|至)\s*(?:\d|[一二两三四五六七八九十]|noon|midnight|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve))"
)
# The other end of a window ("9点到11点", "14:00-16:00", "from 10 to 12", "between 2 and 4pm", "9-11am", 下午1点到3点之间):
# a window is asked as a whole, quoting both ends, so that an answer ("上午9点开始", "14:00") takes the place of the
# whole window and leaves no end behind ("到1" quoted, "1点" left over, was a follow-up about a fragment).
_TIME_END = (
    rf"(?:(?:{CN_QUAL})\s*)?(?:\d{{1,2}}(?:\s*[:.]\s*[0-5]\d)?|{CN_NUM}|noon|midnight|{EN_NUM})"
    r"(?:\s*(?:a\.?m\.?|p\.?m\.?)(?![a-z])|\s*(?:h|hrs?|hours)\b|\s*o'?clock\b)?"
    rf"(?:\s*(?:点|时)(?:钟)?\s*(?:半|一刻|三刻|\d{{1,2}}\s*分?|{CN_NUM}\s*分)?)?(?:\s*(?:之间|间))?"
)
RANGE_AFTER = rx(r"\s*(?:-|–|—|~|～|\bto\b|\btill\b|\btil\b|\buntil\b|\bthrough\b|\bthru\b|到|至)\s*" + _TIME_END)
BETWEEN_AND = rx(r"\s*(?:\band\b|-|–|~|\bto\b|和|与)\s*" + _TIME_END)
RANGE_BEFORE = rx(
    rf"(?:\bbetween\s+{_TIME_END}\s*(?:\band\b|-|–|~|\bto\b)|(?<![\d.:]){_TIME_END}\s*(?:-|–|—|~|～|\bto\b|\btill\b"
    r"|\btil\b|\buntil\b|到|至)|(?:在|从)\s*\S{1,8}?(?:到|至))\s*$"
)
BEFORE_MOD = rx(
    r"(?:大概|大约|约|差不多|估计|最晚|最迟|不晚于|不早于|\b(?:around|about|approx\.?|approximately|roughly|circa|ca\.?|before|after|by"
    r"|until|till|no later than|not before|not after|not later than|latest|between|sometime|some time)(?:\s+at)?)\s*$"
)
BARE_HOUR = rx(r"\s*,?\s*(?P<h>[01]?\d|2[0-3])(?![\d:.])(?!\s*(?:%|[a-z]|[\u4e00-\u9fff]|/))")
NOON = rx(r"\b12\s*noon\b|\bnoon\b|\bmidday\b|中午12点|正午12点")
MIDNIGHT = rx(r"\b(?:12\s*)?midnight\b|午夜(?:12点|十二点)?")
ASAP = rx(
    r"\basap\b|a\.s\.a\.p\.?|\bright (?:now|away)\b|\bimmediately\b|\bnow\b|\bat once\b|\bstraight away\b"
    r"|\bas soon as (?:possible|you can)\b|立刻|马上|立即|现在|赶紧|尽快|尽早|即刻|火速|赶快"
)
