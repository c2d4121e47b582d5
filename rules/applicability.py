"""Does a zone apply at some moment of a time window? The rules' names for the world model's answer.

``Geozone.applies_at`` answers for one instant; a leg is a window
``[start, end]``, and a zone that opens one minute into the leg must count.
The interval arithmetic lives in ``planner.world.model``
(``Applicability.applies_during`` / ``Geozone.applies_during``) so that the
planner, which keeps a job's whole flight window clear, and the rules, which
judge each leg's window, share one definition. This module keeps the names the
evaluators and their tests import.

A weekly slot whose ``end`` is not after its ``start`` (22:00–02:00, or
18:00–00:00 for "until midnight") runs past midnight into the next day — the
safe reading, the same in ``applies_at`` and ``applies_during``.

Example::

    >>> from datetime import datetime, time, timezone
    >>> from planner.world.model import Applicability, WeeklySlot
    >>> fri = Applicability(permanent=False, schedule=(WeeklySlot(frozenset({4}), time(14), time(22)),))
    >>> utc = timezone.utc
    >>> applicability_overlaps(fri, datetime(2026, 12, 4, 13, 50, tzinfo=utc), datetime(2026, 12, 4, 14, 0, tzinfo=utc))
    True
    >>> applicability_overlaps(fri, datetime(2026, 12, 4, 13, 0, tzinfo=utc), datetime(2026, 12, 4, 13, 59, tzinfo=utc))
    False
"""

from __future__ import annotations

from datetime import datetime

from planner.world.model import Applicability, Geozone

__all__ = ["applicability_overlaps", "zone_applies_during"]


def applicability_overlaps(entry: Applicability, start: datetime, end: datetime) -> bool:
    """Whether ``entry`` applies at some instant of the closed window ``[start, end]``."""
    return entry.applies_during(start, end)


def zone_applies_during(zone: Geozone, start: datetime, end: datetime) -> bool:
    """Whether ``zone`` applies at some instant of ``[start, end]`` (a zone without entries always does)."""
    return zone.applies_during(start, end)
