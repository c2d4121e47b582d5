"""What the time reader returns (the reading, the spans it could not read exactly) and its state.

Its own module so both halves of the reader (``intents.time.dates``,
``intents.time.clocks``) and ``intents.time.parse`` share the types without a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from intents.intent import PartOfDay, RelativeDay
from intents.text.scan import Scan
from intents.time.zones import NamedZone

__all__ = ["Clock", "Problem", "ReaderState", "TimeReading"]


@dataclass(frozen=True)
class Problem:
    """A span the reader recognised as a parameter but could not read exactly.

    ``choices``: for a question whose short answers need more words than themselves to be read exactly, each
    short answer ("am", "yes") with the words it puts in place of the span ("quarter to five am tomorrow"): "am"
    to "16:45 today or 04:45 tomorrow?" means the morning *and* tomorrow (``intents.dialogue.answers``).
    """

    kind: str  # an ``intents.questions.QuestionKind`` value: time, day, part_of_day, altitude, …
    start: int
    end: int
    why_en: str
    why_zh: str
    choices: tuple[tuple[str, str], ...] = ()


@dataclass
class TimeReading:
    day: RelativeDay | None = None
    date: date | None = None
    clock: str | None = None
    part: PartOfDay | None = None
    asap: bool = False
    found: bool = False
    problems: list[Problem] = field(default_factory=list)
    said_in: str | None = None  # "09:00 UTC": the clock as said in another zone, when it was converted
    notes: list[str] = field(default_factory=list)  # which rule decided a reading ("03:00 has passed today")


@dataclass(frozen=True)
class Clock:
    """A clock time found in the text. ``twelve_hour``: said without a part of the day, so ``value`` (the
    morning reading, "03:00") and the same time twelve hours later are both possible. ``explicit``: the words of
    the clock itself fix its half of the day (9pm, 2 a.m., 21:00, 02:00, 凌晨2点, 夜里2点), not a part of the day said
    beside it ("tonight at 11" is 23:00 only because of "tonight")."""

    start: int
    end: int
    value: str
    twelve_hour: bool = False
    explicit: bool = False


class ReaderState:
    """The state both halves of the reader work on; ``intents.time.parse``'s reader sets it up."""

    scan: Scan
    now: datetime | None
    today: date | None
    out: TimeReading
    days: list[tuple[int, int, RelativeDay | date]]
    clocks: list[Clock]
    parts: list[tuple[int, int, PartOfDay]]
    offset: tuple[int, int, datetime] | None
    zones: list[tuple[int, int, NamedZone]]

    def problem(self, start: int, end: int, why_en: str, why_zh: str, kind: str = "time",
                choices: tuple[tuple[str, str], ...] = ()) -> None:
        raise NotImplementedError
