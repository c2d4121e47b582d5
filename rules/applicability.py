"""Does a zone apply at some moment of a time window? Interval overlap, not sampling.

``Geozone.applies_at`` answers for one instant; a leg is a window
``[start, end]``, and a zone that opens one minute into the leg must count.
This module intersects the window with each applicability entry's
``[start, end)`` and then with each weekly slot's occurrences (UTC) on the
days the window touches.

A weekly slot whose ``end`` is not after its ``start`` (for example 22:00–02:00,
or 18:00–00:00 for "until midnight") is read as running past midnight into the
next day. ``Applicability.applies_at`` in ``planner.world`` compares
``start <= t < end`` and so never matches such a slot; here it applies — the
safe reading.

Example::

    >>> from datetime import datetime, time, timezone
    >>> from planner.world import Applicability, WeeklySlot
    >>> fri = Applicability(permanent=False, schedule=(WeeklySlot(frozenset({4}), time(14), time(22)),))
    >>> utc = timezone.utc
    >>> applicability_overlaps(fri, datetime(2026, 12, 4, 13, 50, tzinfo=utc), datetime(2026, 12, 4, 14, 0, tzinfo=utc))
    True
    >>> applicability_overlaps(fri, datetime(2026, 12, 4, 13, 0, tzinfo=utc), datetime(2026, 12, 4, 13, 59, tzinfo=utc))
    False
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from planner.world import Applicability, Geozone

__all__ = ["applicability_overlaps", "zone_applies_during"]


def applicability_overlaps(entry: Applicability, start: datetime, end: datetime) -> bool:
    """Whether ``entry`` applies at some instant of the closed window ``[start, end]``."""
    if end < start:
        start, end = end, start
    if entry.permanent:
        return True
    lo, hi = start, end
    if entry.start is not None:
        if hi < entry.start:
            return False
        lo = max(lo, entry.start)
    if entry.end is not None and lo >= entry.end:  # the entry is half-open: [entry.start, entry.end)
        return False
    if not entry.schedule:
        return True
    lo_utc = lo.astimezone(timezone.utc)
    hi_utc = hi.astimezone(timezone.utc)
    entry_end = entry.end.astimezone(timezone.utc) if entry.end is not None else None
    day = (lo_utc - timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    last_day = hi_utc.replace(hour=0, minute=0, second=0, microsecond=0)
    while day <= last_day:
        for slot in entry.schedule:
            if day.weekday() not in slot.days:
                continue
            s = day.replace(hour=slot.start.hour, minute=slot.start.minute, second=slot.start.second)
            e = day.replace(hour=slot.end.hour, minute=slot.end.minute, second=slot.end.second)
            if e <= s:
                e += timedelta(days=1)
            if entry_end is not None:
                e = min(e, entry_end)
            # slot occurrence [s, e) meets window [lo, hi]
            if s <= hi_utc and lo_utc < e:
                return True
        day += timedelta(days=1)
    return False


def zone_applies_during(zone: Geozone, start: datetime, end: datetime) -> bool:
    """Whether ``zone`` applies at some instant of ``[start, end]`` (a zone without entries always does)."""
    if not zone.applicability:
        return True
    return any(applicability_overlaps(a, start, end) for a in zone.applicability)
