"""Zone applicability over a time window agrees with ``Geozone.applies_at`` at every instant."""

from __future__ import annotations

from datetime import datetime, time, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from planner.world.model import Applicability, WeeklySlot
from rules.applicability import applicability_overlaps

UTC = timezone.utc
BASE = datetime(2026, 11, 30, tzinfo=UTC)  # a Monday

slots = st.builds(
    lambda days, h, dur: WeeklySlot(frozenset(days), time(h), time(h + dur)),
    st.sets(st.integers(0, 6), min_size=1, max_size=3),
    st.integers(0, 20),
    st.integers(1, 3),
)
entries = st.builds(
    lambda perm, s, e, sched: Applicability(
        permanent=perm,
        start=None if s is None else BASE + timedelta(hours=s),
        end=None if e is None else BASE + timedelta(hours=e),
        schedule=tuple(sched),
    ),
    st.booleans(),
    st.one_of(st.none(), st.integers(0, 200)),
    st.one_of(st.none(), st.integers(0, 300)),
    st.lists(slots, max_size=2),
)
minutes = st.integers(0, 14 * 24 * 60)


@given(entry=entries, at=minutes)
def test_instant_window_matches_applies_at(entry: Applicability, at: int) -> None:
    t = BASE + timedelta(minutes=at)
    assert applicability_overlaps(entry, t, t) == entry.applies_at(t)


@given(entry=entries, a=minutes, length=st.integers(0, 600))
def test_window_overlaps_iff_some_minute_applies(entry: Applicability, a: int, length: int) -> None:
    start = BASE + timedelta(minutes=a)
    end = start + timedelta(minutes=length)
    # every limit in the strategy is on a whole hour, so checking each minute is exhaustive
    sampled = any(entry.applies_at(start + timedelta(minutes=m)) for m in range(length + 1))
    assert applicability_overlaps(entry, start, end) == sampled


def test_overnight_slot_runs_past_midnight() -> None:
    entry = Applicability(permanent=False, schedule=(WeeklySlot(frozenset({4}), time(22), time(2)),))
    fri_23 = datetime(2026, 12, 4, 23, 0, tzinfo=UTC)
    sat_01 = datetime(2026, 12, 5, 1, 0, tzinfo=UTC)
    sat_03 = datetime(2026, 12, 5, 3, 0, tzinfo=UTC)
    assert applicability_overlaps(entry, fri_23, fri_23)
    assert applicability_overlaps(entry, sat_01, sat_01)
    assert not applicability_overlaps(entry, sat_03, sat_03)
