"""What the time reader returns: the reading, and the spans it could not read exactly.

Its own module so both halves of the reader (``intents.timedates``,
``intents.timeclocks``) and ``intents.timeparse`` share the types without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date

from intents.intent import PartOfDay, RelativeDay

__all__ = ["Problem", "TimeReading"]


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
