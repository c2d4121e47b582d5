"""Speeds, durations and line spacings: told apart from heights and clock times by their units and words, and asked.

"速度每秒6米" is a speed: its "6米" is no height (read as one, it was asked as "6 m is
outside 10–120 m", a question about something the operator never said). "fly for about 20
minutes", 续航20分钟, "hover 10 seconds over each" are durations: no clock time, no offset
("in 20 minutes" is one, read by ``intents.time``). The plan sets neither — each drone flies
at its own cruise speed, and how long a flight lasts follows from the area, the targets and
the fleet — so each is claimed whole, before the heights and the residual numbers can take a
piece of it, and asked once as a ``parameter`` the operator can answer away ("drop", 去掉).

A spacing between survey lines ("间距10米", "10 m apart") is a length but no height either: claimed and asked
the same way. Speeds and spacings run before the heights (``intents.grammar.heights``); durations after the time reader,
which reads offsets ("两小时后", "in 2 hours") first.
"""

from __future__ import annotations

from intents.text.numbers import CN_NUM, EN_NUM
from intents.text.patterns import LazyPattern
from intents.text.scan import Scan
from intents.time.reading import Problem
from intents.time.words import rx

__all__ = ["DURATION", "DURATION_QUESTION", "SPACING", "SPACING_QUESTION", "SPEED", "SPEED_QUESTION", "rates"]

_N = rf"(?:\d+(?:\.\d+)?|{CN_NUM}|{EN_NUM}|半)"
_HEDGE_EN = r"(?:(?:about|around|approx\.?|approximately|roughly|max(?:imum)?|at\s+most|at\s+least|up\s+to|no\s+more\s+than|under|over)\s+)?"
_HEDGE_ZH = r"(?:约|大约|大概|不超过|不低于|最多|至少|控制在|保持在?|设为|设成|设置为|为|是|在|:|：|=)?\s*(?:约|大约)?"
_SPEED_UNIT_EN = (
    r"(?:m/s|mps|km/h|kmh|kph|km/hr|mph|knots?\b|kts?\b|kt\b"
    r"|(?:meters?|metres?|m|km|kilomet(?:er|re)s?|miles?)\s*(?:per|an?|/|every)\s*(?:second|sec|s|hour|hr|h|minute|min)\b)"
)
_SPEED_UNIT_ZH = r"(?:米|公里|千米|公尺|m|km)\s*(?:每秒|/秒|每小时|/小时|每分钟|/分钟|一秒|/s|/h)"
SPEED = rx(
    rf"(?:飞行|巡航|巡查|航行|飞|平均|最大|最高|最低)?(?:速度|航速|时速|秒速|飞速)\s*{_HEDGE_ZH}\s*(?:每秒|每小时|每分钟)?\s*{_N}"
    r"\s*(?:米|公里|千米|公尺|m\b|km\b)?\s*(?:每秒|/秒|每小时|/小时|每分钟|/s|/h)?(?:\s*(?:左右|以内|以下|以上))?"
    rf"|(?:以|用|按)?\s*(?:每秒|每小时|每分钟)\s*{_N}\s*(?:米|公里|千米|公尺|m\b|km\b)(?:\s*的\s*(?:速度|航速))?"
    rf"|{_N}\s*{_SPEED_UNIT_ZH}(?:\s*的\s*(?:速度|航速))?"
    rf"|\b(?:(?:ground|cruise|cruising|flight|flying|air|max(?:imum)?|top|average)\s+)?speed\s*(?:of|at|:|=|is|to|should\s+be|set\s+to)?\s*"
    rf"{_HEDGE_EN}{_N}\s*(?:{_SPEED_UNIT_EN}|(?:m|meters?|metres?|km)\b)?"
    rf"|\b(?:at\s+|@\s*)?{_HEDGE_EN}{_N}\s*{_SPEED_UNIT_EN}"
)
SPEED_QUESTION = (
    "the plan flies each drone at its own cruise speed and cannot set a speed; plan without it (answer \"drop\"), "
    "or restate?",
    "规划按各无人机自己的巡航速度飞行，无法设定速度；不按它规划（回答“去掉”），还是重新说明？",
)
_LENGTH_UNIT = r"(?:米|公尺|m\b|meters?\b|metres?\b|ft\b|feet\b)"
SPACING = rx(  # "间距10米", "航线间隔15米", "10 m spacing", "lines 10 m apart": a length between lines, no height
    rf"(?:航线|航带|扫描线|测线|行|线)?(?:间距|间隔|行距|线距|相距)\s*{_HEDGE_ZH}\s*{_N}\s*{_LENGTH_UNIT}(?:\s*(?:左右|以内|以下|以上))?"
    rf"|\b(?:(?:line|lane|track|pass|row|flight[- ]line)\s+)?(?:spacing|separation|spaced|distance\s+between\s+(?:lines|passes|tracks))"
    rf"\s*(?:of|at|:|=|is|to)?\s*{_HEDGE_EN}{_N}\s*{_LENGTH_UNIT}"
    rf"|\b{_HEDGE_EN}{_N}\s*{_LENGTH_UNIT}\s*(?:(?:line|lane|track|pass|row)\s+)?(?:spacing|separation|apart)\b"
)
SPACING_QUESTION = (
    "the plan sets the distance between survey lines from the sensor's footprint and the coverage, and cannot set it; "
    "plan without it (answer \"drop\"), or restate?",
    "规划按传感器的覆盖宽度和覆盖率确定航线间距，无法设定间距；不按它规划（回答“去掉”），还是重新说明？",
)
_TIME_UNIT_EN = r"(?:hours?|hrs?|h|minutes?|mins?|seconds?|secs?)\b"
DURATION = rx(
    rf"(?:飞行|飞|续航|持续|巡查|巡逻|巡|悬停|停留|盘旋|用时|时长|航时|工作)\s*(?:时间|时长)?\s*{_HEDGE_ZH}\s*{_N}\s*(?:个\s*)?(?:半\s*)?"
    r"(?:小时|钟头|分钟|秒钟?)(?:\s*(?:左右|以内|之内|内|以上))?"
    rf"|{_N}\s*(?:个\s*)?(?:半\s*)?(?:小时|钟头|分钟|秒钟?)\s*(?:左右|以内|之内|内)?\s*(?:的)?\s*(?:飞行|续航|航时|悬停|巡查|任务)"
    r"|\b(?:(?:fly|flying|hover(?:ing)?|loiter(?:ing)?|stay(?:ing)?(?:\s+(?:up|aloft|airborne|out|over\s+each))?|patrol(?:ling)?"
    r"|orbit(?:ing)?|circle|circling)\s+(?:for\s+)?|\bfor\s+|\blasting\s+|\b(?:flight\s+time|duration|endurance)\s*(?:of|:|=|is)?\s*)"
    rf"{_HEDGE_EN}(?:an?|half\s+an?|{_N})(?:\s+and\s+a\s+half)?\s*{_TIME_UNIT_EN}(?:\s+and\s+a\s+half\b)?"
    r"(?:\s+(?:over|at|above)\s+each(?:\s+\w+)?)?"
    rf"|\b(?:an?\s+)?{_N}[- ]?(?:minute|min|hour|hr|second)s?\s+(?:flight|patrol|survey|hover|loiter|mission|sortie|window|pass)\b"
)
DURATION_QUESTION = (
    "the plan cannot set how long the flight or a hover lasts (it follows from the area, the targets and the fleet); "
    "plan without it (answer \"drop\"), or restate?",
    "规划无法设定飞行或悬停的时长（由区域、目标和机队决定）；不按它规划（回答“去掉”），还是重新说明？",
)


def rates(scan: Scan, pattern: LazyPattern, question: tuple[str, str]) -> list[Problem]:
    """Each open speed (or duration, by ``pattern``) of ``scan``, claimed whole, as a ``parameter`` question."""
    out = []
    for m in scan.finditer(pattern):
        start = m.start() + len(m.group(0)) - len(m.group(0).lstrip())
        if start < m.end() and scan.is_open(start, m.end()):
            scan.claim(start, m.end())
            out.append(Problem("parameter", start, m.end(), *question))
    return out
