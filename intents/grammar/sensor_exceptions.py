"""All the equipment but some ("all sensors except thermal", 除了热成像都带上) and none but some (除了热成像都不带).

A plan's sensors are required: the mission goes to a drone that carries each of them. "All sensors except the
thermal" names no sensor the plan can require — every other sensor of the fleet (no drone carries them all) or
whichever the drone has — so it is one ``sensor`` question quoting the whole phrase; an answer naming the sensors
takes its place, "drop" plans without any. Before, the sensor after "except" was read alone: 除了热成像都带上 planned
no sensor without a question, 除热成像外全部带上 and "with every sensor but lidar" required the very sensor excepted.

"No sensors except thermal", 除了热成像都不带, 除了热成像别的都不要 say the sensor alone: the words around it are read
and the sensor is read as wanted (除了热成像都不带 planned no sensor: 除了 and 不带 both read as refusing it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from intents.grammar.vocabulary import SENSOR_PATTERNS
from intents.text.patterns import LazyPattern
from intents.text.scan import Scan

__all__ = ["ALL_BUT_QUESTION", "SensorException", "sensor_exceptions"]

ALL_BUT_QUESTION = (
    "all the sensors but these: a plan requires each sensor it names; which sensors are wanted?",
    "除这些以外的所有传感器：规划会要求所列的每一种传感器，具体要带哪几种？",
)

_ONE = "(?:" + "|".join(f"(?:{pattern})" for _, pattern in SENSOR_PATTERNS) + r")(?:\s*(?:cameras?|cams?|sensors?|相机|镜头))?"
_LIST = rf"(?:the\s+)?{_ONE}(?:\s*(?:,|\band\b|\bor\b|&|\+|/|和|、|跟|及|或|以及)\s*(?:the\s+)?{_ONE})*"
_ALL_EN = (r"\b(?:(?:with|bring|use|take|carry|fit)\s+)?(?:all|every|each|any)\s+(?:of\s+)?(?:the\s+|our\s+|your\s+)?"
           r"(?:other\s+)?(?:sensors?|cameras?|payloads?|equipment|kit|gear)\b|\beverything\b"
           r"|\b(?:the\s+)?full\s+(?:payload|kit|sensor\s+(?:suite|set))\b")
_NONE_EN = r"\b(?:no|none\s+of\s+the|zero)\s+(?:other\s+)?(?:sensors?|cameras?|payloads?|equipment)\b|\bnothing\b"
_EXCEPT_EN = (r"\s*,?\s*(?:except(?:\s+for)?|but(?:\s+not)?|apart\s+from|other\s+than|besides|save\s+for|excluding"
              r"|minus|bar)\s+")
_REST_ZH = r"\s*(?:之外|以外|外)?\s*[，,]?\s*(?:其他|其它|其余|别的|剩下的|剩下)?\s*的?\s*(?:传感器|设备|载荷|相机)?\s*"
_ALL_ZH = r"(?:都|全|全部|全都|统统|一律)\s*(?:要|带上?|装上?|用上?|开上?|带着)"
_NONE_ZH = r"(?:都|全|全部|一律|一概|统统)?\s*(?:不要|不用|不带|不需要|别带|别用|不开|不装|免了)"

_ALL_BUT = LazyPattern(
    rf"(?:{_ALL_EN}){_EXCEPT_EN}(?P<list>{_LIST})"
    rf"|除了?\s*(?P<list2>{_LIST}){_REST_ZH}{_ALL_ZH}"
    rf"|(?P<list3>{_LIST})\s*(?:之外|以外)的?\s*(?:传感器|设备|载荷|相机)?\s*{_ALL_ZH}",
    re.ASCII,
)
_NONE_BUT = LazyPattern(
    rf"(?P<lead>(?:{_NONE_EN}){_EXCEPT_EN})(?P<list>{_LIST})"
    rf"|(?P<lead2>除了?\s*)(?P<list2>{_LIST})(?P<tail>{_REST_ZH}{_NONE_ZH})",
    re.ASCII,
)


@dataclass(frozen=True)
class SensorException:
    """A phrase "all but these" (asked, ``[start, end)`` quoted); for "none but these" nothing is asked. ``choices``:
    "yes" puts the phrase back as it was — it names no sensor, so it is asked again (it was "with with every …")."""

    start: int
    end: int
    choices: tuple[tuple[str, str], ...] = ()


def sensor_exceptions(scan: Scan) -> list[SensorException]:
    """Claim "none but these" frames (their sensors stay open, read as wanted) and return the "all but these" phrases
    the reader asks about (not claimed here: the reader's ``ask`` claims them)."""
    asked: list[SensorException] = []
    for m in scan.finditer(_ALL_BUT):
        if scan.is_open(m.start(), m.end()):
            asked.append(SensorException(m.start(), m.end(), (("yes", scan.quote(m.start(), m.end())),)))
    for m in scan.finditer(_NONE_BUT):
        if not scan.is_open(m.start(), m.end()) or any(a.start < m.end() and m.start() < a.end for a in asked):
            continue
        list_start = m.start("list") if m.group("list") is not None else m.start("list2")
        list_end = m.end("list") if m.group("list") is not None else m.end("list2")
        scan.claim(m.start(), list_start)
        if list_end < m.end():
            scan.claim(list_end, m.end())
    return asked
