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

from datetime import date, datetime

from intents.intent import PartOfDay, RelativeDay
from intents.text.scan import Scan
from intents.time.clocks import ClockReading
from intents.time.dates import DateReading
from intents.time.resolve import resolve_relative
from intents.time.reading import Problem, TimeReading
from intents.time.words import WEEKDAYS, rx

__all__ = ["Problem", "TimeReading", "read_time", "resolve_relative"]


class _Reader(DateReading, ClockReading):
    """Reads one scan: the day (``intents.time.dates``), the clock (``intents.time.clocks``), then settles."""

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

    # --------------------------------------------------------------- putting it together

    def settle(self) -> TimeReading:
        out = self.out
        days = self.days
        absolute = [d for _, _, d in days if isinstance(d, date)]
        if absolute:
            # "Friday 11 December": a weekday beside a date checks the date, it does not name another day.
            weekdays = [x for x in days if isinstance(x[2], RelativeDay) and x[2].value.startswith(("THIS_", "NEXT_"))]
            if weekdays and all(WEEKDAYS.index(w[2].value.split("_", 1)[1]) == absolute[0].weekday() for w in weekdays):
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


_GREETING = rx(
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
