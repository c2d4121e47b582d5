"""Turn a ``TimeSpec`` into a local date and an aware start time: the one definition.

Every caller that needs to know *when* (extraction, ``sortie plan``, a replan of
a recorded draft) goes through this module; nothing else combines a day and a
clock time.

Extractors only say *which* day and *which* clock time the user meant
("明天上午9点" → TOMORROW, 09:00); this module, given an injected ``now`` and
the user's IANA timezone, says *when* that is. Nothing here reads the clock.

Conventions (documented because the corpus labels and the LLM prompt rely on them):

* The day is taken in the user's timezone: ``now`` is first converted to ``tz``.
* An absolute ``date`` wins over the relative ``day`` (extraction pins the date
  it resolved, so a replan on a later day still flies the day that was asked).
* ``THIS_<WEEKDAY>`` ("周五", "on Friday") is the next such weekday on or after
  today (today itself when it matches).
* ``NEXT_<WEEKDAY>`` ("下周一", "next Monday") is that weekday in the following
  calendar week (weeks start on Monday), so on a Wednesday both "下周一" and
  "next Monday" are five days later, and on a Monday "下周三" is nine days later.
* A clock time wins over a part of the day, which wins over ``asap``.
* A part of the day without a clock time starts at a default clock time
  (``PART_OF_DAY_CLOCK``): MORNING 09:00, NOON 12:00, AFTERNOON 15:00,
  EVENING 19:00 (今晚, tonight), NIGHT 22:00.
* Today with no clock time and no part of the day (``asap`` or no time given)
  means *now*.
* Another day with no clock time and no part of the day has no start time
  (``resolve_start`` returns ``None``); ``resolve_date`` still gives the date.
* A time in the past is returned as is: deciding whether that is acceptable
  belongs to the caller, not to the resolver.
* Wall-clock times that do not exist (the spring-forward gap) are shifted
  forward by the gap; ambiguous ones (the autumn fold) take the first occurrence.
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from intents.intent import PartOfDay, RelativeDay, TimeSpec
from planner.errors import InvalidArgument

__all__ = [
    "DAY_DEFAULT_CLOCK",
    "PART_OF_DAY_CLOCK",
    "day_start",
    "local_zone",
    "pinned",
    "planned_start",
    "resolve_clock",
    "resolve_date",
    "resolve_relative",
    "resolve_start",
]

DAY_DEFAULT_CLOCK = "09:00"
"""Start of a later day named without any time ("明天巡一遍"): what the planner plans for."""

PART_OF_DAY_CLOCK: dict[PartOfDay, str] = {
    PartOfDay.MORNING: "09:00",
    PartOfDay.NOON: "12:00",
    PartOfDay.AFTERNOON: "15:00",
    PartOfDay.EVENING: "19:00",
    PartOfDay.NIGHT: "22:00",
}

_WEEKDAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")


def local_zone(tz: str) -> ZoneInfo:
    """The IANA zone ``tz``; an unknown name is the caller's mistake (``INVALID_ARGUMENT``)."""
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidArgument(f"unknown timezone {tz!r}: {exc}") from None


def _local_now(now: datetime, tz: str) -> datetime:
    if now.tzinfo is None:
        raise InvalidArgument(f"now {now.isoformat()!r} needs an offset; a naive time is ambiguous")
    return now.astimezone(local_zone(tz))


def resolve_relative(day: RelativeDay, today: date) -> date:
    """The date a relative day names, seen from ``today``: the one rule for the reader and for planning."""
    if day is RelativeDay.TODAY:
        return today
    if day is RelativeDay.TOMORROW:
        return today + timedelta(days=1)
    if day is RelativeDay.DAY_AFTER_TOMORROW:
        return today + timedelta(days=2)
    which, _, name = day.value.partition("_")
    target = _WEEKDAYS.index(name)
    if which == "THIS":
        return today + timedelta(days=(target - today.weekday()) % 7)
    # NEXT: the weekday of the following Monday-based calendar week.
    next_monday = today + timedelta(days=7 - today.weekday())
    return next_monday + timedelta(days=target)


def resolve_date(when: TimeSpec, now: datetime, tz: str) -> date:
    """The local calendar date ``when.day`` names, seen from ``now`` in ``tz``."""
    today = _local_now(now, tz).date()
    if when.date is not None:
        return when.date
    return resolve_relative(when.day or RelativeDay.TODAY, today)


def resolve_clock(when: TimeSpec) -> str | None:
    """The local "HH:MM" the spec names: its clock time, else its part of the day's default."""
    if when.clock is not None:
        return when.clock
    if when.part_of_day is not None:
        return PART_OF_DAY_CLOCK[when.part_of_day]
    return None


def _combine(day: date, clock: str, zone: ZoneInfo) -> datetime:
    hh, mm = (int(part) for part in clock.split(":"))
    naive = datetime.combine(day, time(hh, mm))
    aware = naive.replace(tzinfo=zone, fold=0)
    # A round trip through UTC normalises a wall time in the spring-forward gap.
    return aware.astimezone(timezone.utc).astimezone(zone)


def resolve_start(when: TimeSpec, now: datetime, tz: str) -> datetime | None:
    """The aware local start time ``when`` means, or ``None`` for "some time that day".

    Today without a clock time or part of the day (``asap`` or no time at all) is
    ``now`` itself, in ``tz``; ``asap`` on another day has no start time.
    """
    zone = local_zone(tz)
    local_now = _local_now(now, tz)
    clock = resolve_clock(when)
    if clock is not None:
        return _combine(resolve_date(when, now, tz), clock, zone)
    if when.date is None and when.day is RelativeDay.TODAY or when.date == local_now.date():
        return local_now
    return None


def day_start(day: date, tz: str) -> datetime:
    """``DAY_DEFAULT_CLOCK`` on ``day`` in ``tz``: where a plan starts on a day named without a time."""
    return _combine(day, DAY_DEFAULT_CLOCK, local_zone(tz))


def planned_start(when: TimeSpec, now: datetime, tz: str) -> datetime:
    """The start a plan uses: ``resolve_start``, or ``DAY_DEFAULT_CLOCK`` on a later day named without a time."""
    start = resolve_start(when, now, tz)
    if start is not None:
        return start
    return day_start(resolve_date(when, now, tz), tz)


def pinned(when: TimeSpec, now: datetime, tz: str) -> TimeSpec:
    """``when`` with its resolved date made absolute, so resolving it again later gives the same day. A relative
    day that is not the date named beside it (TODAY beside next week's date) is dropped: the date says the day."""
    day = when.day
    if when.date is not None and day is not None and resolve_relative(day, _local_now(now, tz).date()) != when.date:
        day = None
    return when.model_copy(update={"date": resolve_date(when, now, tz), "day": day})
