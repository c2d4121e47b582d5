"""Recurrences ("every morning", "each Monday", "every 2 hours", 每天, 每周一, 每隔两小时): asked, never a one-off.

A request plans one flight. "Patrol the fire lanes every Monday" names a schedule, and
reading its "Monday" as this Monday would plan one patrol and drop the rest without a
word, so the recurrence is claimed as a whole, before the day and clock readers can take
its day or part of the day, and asked about. What makes "every" or 每 a recurrence is
the word it governs: a time unit, a day, a weekday, a part of the day, or a number of
them ("every other day", "every 2 hours", 每隔两小时, 每个早上). "Every hydrant" and 每个
消防栓 govern a target: they say which targets, not when, and are no recurrence
(``intents.grammar.quantifiers``); "every" before anything else is left to the
reader's last step, which asks about it (fail closed).

One repetition is one question, quoting the whole phrase the operator wrote: the
interval with its fraction or its minutes ("every hour and a half", "every one and a
half hours", "every quarter of an hour", "every 1h30", "every 2-3 hours", 每隔一个半小时,
每隔一个小时三十分钟), what hedges it ("once", "roughly", "or so", "on the hour", 左右)
and the end of its window ("until noon", "from 9 until noon", "for 3 hours", 从上午9点到
12点). A quote cut short would leave "and a half" to the unread-number check, a second
question no operator can answer, and the answer (which takes the quote's place,
``intents.dialogue``) would leave it behind to be asked again. A start alone beside the
interval ("starting 10:00", "from 09:00", 从十点开始) is not taken: a one-off flight can
keep it, so the clock reader reads it as the start and an answer "just once" keeps it.
"""

from __future__ import annotations

from intents.text.numbers import CN_NUM, EN_NUM
from intents.text.scan import Scan
from intents.time.reading import Problem
from intents.time.words import rx

__all__ = ["RECURRENCE", "recurrences"]

_EN_PART = r"(?:morning|afternoon|evening|night|noon|midday|lunch\s*time|dawn|dusk|sunrise|sunset)s?"
_EN_WEEKDAY = (
    r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)"
)
_EN_UNIT = (
    r"(?:hours?|hrs?|h|minutes?|mins?|days?|weeks?|weekdays?|weekends?|work\s*days?|working\s+days?|business\s+days?"
    r"|months?|years?|fortnights?|shifts?|times?|quarters?|seasons?)"
)
_EN_N = rf"(?:\d+(?:\.\d+)?(?:\u2044\d+)?|{EN_NUM})"  # "1½" is "11⁄2" after NFKC: quoted as written, never read
_EN_FRACTION = r"(?:[\s-]+and[\s-]+(?:an?[\s-]+(?:half|quarter|third)|three[\s-]+quarters))"
# How many: "2", "two and a half", "2-3", "20 to 30", "half an", "a quarter of an", "three quarters of an",
# "a couple of".
_EN_AMOUNT = (
    r"(?:(?:(?:a\s+|one\s+|three\s+|3\s+)?quarters?(?:\s+of\s+an?|\s*-|\s+)(?=\s*(?:hour|hr|h)\b)"
    rf"|{_EN_N}{_EN_FRACTION}?(?:\s*(?:-|–|to|or)\s*{_EN_N}{_EN_FRACTION}?)?(?:st|nd|rd|th)?"
    r"|a\s+couple\s+of|couple\s+of|a\s+few|few|several|half\s+an?|half\s+a|half)\s*-?\s*)"
)
# The minutes after an hour: "1h30", "1 hour 30 minutes", "an hour and 15 minutes" (only after an hour, so "every
# day 30 minutes before sunset" keeps its own "30 minutes before sunset").
_EN_HOUR = r"(?:hours?|hrs?|h)"
_EN_MINUTES = rf"(?:(?<=\dh)\d{{2}}(?:m(?:ins?)?)?|\s+(?:and\s+)?(?:\d+|{EN_NUM})\s*(?:minutes?|mins?)(?=\W|$))"
# A clock said loosely, only where it bounds a repetition ("until noon", "from 9 until 11:30", "between 9 and 11").
_EN_CLOCK = (
    rf"(?:(?:\d{{1,2}}(?:[:.]\d{{2}})?|{EN_NUM})(?:\s*(?:a\.?m\.?|p\.?m\.?|h|hrs?|o'?clock))?"
    r"|noon|midday|midnight|dawn|dusk|sunrise|sunset|sundown|nightfall|dark|lunch\s*time|lunch"
    r"|(?:the\s+)?end\s+of\s+(?:the\s+)?(?:day|shift))(?![\w:.]|\s*(?:m|meters?|metres?|ft|feet|%)\b)"
)
_EN_UNTIL = r"(?:until|till|til|up\s+to|through|thru)"
# What the phrase says beside the interval that belongs to the repetition only: "or so", "on the hour", the end of
# the window ("until noon", "from 9 until noon", "between 9 and 11", "for 3 hours", "all day"). A start alone
# ("starting 10:00", "from 09:00") is not taken: a one-off flight keeps it, and the clock reader reads it.
_EN_TAIL = (
    r"(?:\s+or\s+(?:so|thereabouts|two|three|2|3|more|less)\b|\s*-?\s*ish\b)?"
    r"(?:\s+(?:on\s+the\s+(?:hour|half[\s-]hour|quarter[\s-]hour)|past\s+the\s+hour"
    r"|(?:at|on)\s+the\s+(?:top|bottom)\s+of\s+the\s+hour)\b)?"
    rf"(?:\s+(?:(?:from|starting(?:\s+at|\s+from)?|beginning(?:\s+at)?)\s+{_EN_CLOCK}\s+(?:{_EN_UNTIL}|to|-)"
    rf"|{_EN_UNTIL})\s+{_EN_CLOCK}"
    rf"|\s+between\s+{_EN_CLOCK}\s+and\s+{_EN_CLOCK}"
    rf"|\s+for\s+(?:the\s+next\s+)?(?:{_EN_N}|an?|a\s+couple\s+of|a\s+few)\s+(?:{_EN_HOUR}|minutes?|mins?|days?)\b"
    r"|\s+(?:all|the\s+whole|throughout\s+the)\s+(?:day|night|morning|afternoon|evening|shift)\b)?"
)
# "every (single|other|second …) (2|two and a half|a couple of|half an) UNIT (and a half) (or so) (until noon)",
# "(once|roughly) every 90 minutes", "every Monday morning", "each evening", and the idioms that say only
# "now and again".
_EN = (
    r"(?:\b(?:once|twice|thrice|(?:about|around|roughly|approximately|approx\.?)(?:\s+once)?)\s+)?"
    rf"\b(?:every|each)\s+(?:(?:single|other|second|third|fourth|alternate)\s+)?{_EN_AMOUNT}?"
    rf"(?:{_EN_HOUR}(?:{_EN_FRACTION}|{_EN_MINUTES})?|{_EN_UNIT}{_EN_FRACTION}?|{_EN_WEEKDAY}|{_EN_PART})\b"
    rf"(?:\s+{_EN_PART}\b)?{_EN_TAIL}"
    r"|\b(?:every\s+)?(?:now\s+and\s+(?:then|again)|once\s+in\s+a\s+while)\b|\bevery\s+so\s+often\b|\bfrom\s+time\s+to\s+time\b"
    # A plural weekday or part of the day says the same without "every": "on Mondays", "mornings".
    r"|\b(?:on\s+|in\s+the\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days|mornings|afternoons|evenings|nights|weekdays)\b"
)
_ZH_PART = r"(?:凌晨|清晨|早上|早晨|上午|中午|正午|午后|下午|傍晚|晚上|夜里|夜间|半夜|深夜|白天|夜晚)"
_ZH_UNIT = r"(?:天|日|晚|早|夜|月|年|季度|季|小时|钟头|分钟|刻钟|次|回|班|工作日|周末|(?:周|星期|礼拜)[一二三四五六日天七]?)"
_ZH_N = rf"(?:\d+(?:\.\d+)?|{CN_NUM})"
# How many: 两, 1.5, 一个半, 一个多, 两三个, 2到3, 十几, 半个.
_ZH_AMOUNT = rf"(?:{_ZH_N}(?:\s*(?:到|至|-|~|或)\s*{_ZH_N})?\s*几?\s*个?\s*[半多]?|半)\s*个?"
# After 小时/钟头: 三十分钟, 零一刻钟, 又一刻, 半 (一小时半).
_ZH_MORE = rf"(?:(?<=小时|钟头)\s*(?:[零又]\s*)?(?:{_ZH_N}\s*(?:分钟|分)|{_ZH_N}?\s*刻钟?|半))"
_ZH_CLOCK = (
    rf"(?:(?:今天|明天|后天|今早|明早)?\s*{_ZH_PART}?\s*(?:{_ZH_N}\s*(?:点钟?|时)\s*(?:半|一刻|三刻|{_ZH_N}\s*分?)?"
    r"|\d{1,2}:\d{2})|中午|正午|午夜|天黑|天亮)"
)
# 每天, 每日, 每周一, 每个早上, 每两天, 每隔两小时, 每隔一个半小时, 每2小时, 每半小时, 每45分钟左右, 每逢周一,
# 每天早上, 从上午9点到12点每小时 (a window that ends belongs to the repetition; a start alone, 从十点开始, is the
# clock reader's): never 每秒 (a speed, "5米每秒") nor 每个消防栓 (a target).
# 天天 and 定期 say it without 每 (never the 天天 of 明天天气).
_ZH = (
    rf"(?:从\s*{_ZH_CLOCK}\s*(?:到|至|直到)\s*{_ZH_CLOCK}\s*(?:之间|为止)?\s*[,，]?\s*)?"
    rf"每(?:逢|隔)?\s*(?:{_ZH_AMOUNT}\s*)?个?\s*(?:{_ZH_PART}|{_ZH_UNIT}{_ZH_MORE}?)(?:\s*{_ZH_PART})?"
    r"(?:\s*(?:左右|上下))?"
    r"|(?<![今明昨前后当整半几每])天天(?![气亮黑])|定期|周期性地?"
)
RECURRENCE = rx(rf"{_EN}|{_ZH}")

_WHY_EN = "this repeats, and one request plans one flight; when exactly?"
_WHY_ZH = "这是重复的时间，一个请求只规划一次飞行，具体是什么时间？"


def recurrences(scan: Scan) -> list[Problem]:
    """Claim each recurrence in the open text and return one ``time`` problem for each."""
    problems = []
    for m in scan.finditer(RECURRENCE):
        if not m.group(0).strip() or not scan.is_open(m.start(), m.end()):
            continue
        scan.claim(m.start(), m.end())
        problems.append(Problem("time", m.start(), m.end(), _WHY_EN, _WHY_ZH))
    return problems
