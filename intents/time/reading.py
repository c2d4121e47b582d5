"""What the time reader returns (the reading, the spans it could not read exactly) and its state.

Its own module so both halves of the reader (``intents.time.dates``,
``intents.time.clocks``) and ``intents.time.parse`` share the types without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from intents.intent import PartOfDay, RelativeDay
from intents.text.scan import Scan

__all__ = ["Problem", "ReaderState", "TimeReading"]


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


class ReaderState:
    """The state both halves of the reader work on; ``intents.time.parse``'s reader sets it up."""

    scan: Scan
    now: datetime | None
    today: date | None
    out: TimeReading
    days: list[tuple[int, int, RelativeDay | date]]
    clocks: list[tuple[int, int, str]]
    parts: list[tuple[int, int, PartOfDay]]
    offset: tuple[int, int, datetime] | None

    def problem(self, start: int, end: int, why_en: str, why_zh: str, kind: str = "time") -> None:
        raise NotImplementedError
