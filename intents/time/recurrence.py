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
# "every (single|other|second …) (2|two|a couple of|half an) UNIT (morning)", "every Monday morning",
# "each evening", and the idioms that say only "now and again".
_EN = (
    rf"\b(?:every|each)\s+(?:(?:single|other|second|third|fourth|alternate)\s+)?"
    rf"(?:(?:\d+(?:\.\d+)?(?:st|nd|rd|th)?|{EN_NUM}|a\s+couple\s+of|couple\s+of|a\s+few|few|half\s+an?|half\s+a|half)\s*-?\s*)?"
    rf"(?:{_EN_UNIT}|{_EN_WEEKDAY}|{_EN_PART})\b(?:\s+{_EN_PART}\b)?"
    r"|\b(?:every\s+)?(?:now\s+and\s+(?:then|again)|once\s+in\s+a\s+while)\b|\bevery\s+so\s+often\b|\bfrom\s+time\s+to\s+time\b"
    # A plural weekday or part of the day says the same without "every": "on Mondays", "mornings".
    r"|\b(?:on\s+|in\s+the\s+)?(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days|mornings|afternoons|evenings|nights|weekdays)\b"
)
_ZH_PART = r"(?:凌晨|清晨|早上|早晨|上午|中午|正午|午后|下午|傍晚|晚上|夜里|夜间|半夜|深夜|白天|夜晚)"
_ZH_UNIT = r"(?:天|日|晚|早|夜|月|年|季度|季|小时|钟头|分钟|刻钟|次|回|班|工作日|周末|(?:周|星期|礼拜)[一二三四五六日天七]?)"
# 每天, 每日, 每周一, 每个早上, 每两天, 每隔两小时, 每2小时, 每半小时, 每逢周一, 每天早上: never 每秒 (a speed,
# "5米每秒") nor 每个消防栓 (a target).
# 天天 and 定期 say it without 每 (never the 天天 of 明天天气).
_ZH = (
    rf"每(?:逢|隔)?\s*(?:(?:\d+(?:\.\d+)?|{CN_NUM}|半)\s*)?个?\s*(?:{_ZH_PART}|{_ZH_UNIT})(?:\s*{_ZH_PART})?"
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
