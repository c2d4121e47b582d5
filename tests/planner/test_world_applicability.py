"""planner.world.model: ``applies_during`` over a window agrees with ``applies_at`` at the instants in it.

Every limit the strategies draw (dates, slot starts and ends) falls on a whole
minute, except the loader's end of day (23:59:59.999999), so a window between
two whole minutes meets the applicable time iff one of its whole minutes is
applicable: sampling each minute is exhaustive, not a guess.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, time, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.errors import InvalidArgument
from planner.world.model import Applicability, Geozone, Restriction, WeeklySlot

UTC = timezone.utc
BASE = datetime(2026, 11, 30, tzinfo=UTC)  # a Monday
END_OF_DAY = time(23, 59, 59, 999999)  # what planner.world.geozones writes for 24:00

clock = st.builds(lambda m: time(m // 60, m % 60), st.integers(0, 24 * 60 - 1))
# any start/end pair: ordinary (start < end), crossing midnight (end < start), whole day (end == start),
# or ending at the loader's end of day
slots = st.builds(
    lambda days, start, end: WeeklySlot(frozenset(days), start, end),
    st.sets(st.integers(0, 6), min_size=1, max_size=3),
    clock,
    st.one_of(clock, st.just(END_OF_DAY)),
)
minutes = st.integers(0, 14 * 24 * 60)
entries = st.builds(
    lambda perm, s, e, sched: Applicability(
        permanent=perm,
        start=None if s is None else BASE + timedelta(minutes=s),
        end=None if e is None else BASE + timedelta(minutes=e),
        schedule=tuple(sched),
    ),
    st.sampled_from([False, False, False, True]),  # mostly not permanent
    st.one_of(st.none(), st.none(), minutes),  # mostly undated, so the schedule decides
    st.one_of(st.none(), st.none(), minutes),
    st.lists(slots, min_size=1, max_size=3) | st.just([]),
)


@settings(max_examples=300)
@given(entry=entries, a=minutes, length=st.integers(0, 36 * 60))
def test_applies_during_iff_some_minute_applies(entry: Applicability, a: int, length: int) -> None:
    start = BASE + timedelta(minutes=a)
    end = start + timedelta(minutes=length)
    sampled = any(entry.applies_at(start + timedelta(minutes=m)) for m in range(length + 1))
    assert entry.applies_during(start, end) is sampled
    assert entry.applies_during(end, start) is sampled  # a reversed window is the same window


@given(entry=entries, at=minutes, second=st.integers(0, 59))
def test_instant_window_is_applies_at(entry: Applicability, at: int, second: int) -> None:
    t = BASE + timedelta(minutes=at, seconds=second)
    assert entry.applies_during(t, t) is entry.applies_at(t)


@given(entries=st.lists(entries, max_size=3), a=minutes, length=st.integers(0, 600))
def test_zone_applies_during_iff_some_entry_does(entries: list[Applicability], a: int, length: int) -> None:
    zone = Geozone("Z", "Z", Restriction.PROHIBITED, (), tuple(entries), "", "test")
    start = BASE + timedelta(minutes=a)
    end = start + timedelta(minutes=length)
    sampled = any(zone.applies_at(start + timedelta(minutes=m)) for m in range(length + 1))
    assert zone.applies_during(start, end) is sampled
    if not entries:
        assert sampled  # a zone without applicability always applies


def test_slot_crossing_midnight_runs_into_the_next_day() -> None:
    fri_night = Applicability(False, schedule=(WeeklySlot(frozenset({4}), time(22), time(2)),))
    fri = datetime(2026, 12, 4, tzinfo=UTC)
    assert fri_night.applies_at(fri + timedelta(hours=23))
    assert fri_night.applies_at(fri + timedelta(hours=25, minutes=59))  # Saturday 01:59
    assert not fri_night.applies_at(fri + timedelta(hours=26))  # Saturday 02:00: the slot is half-open
    assert not fri_night.applies_at(fri + timedelta(hours=1))  # Friday 01:00: Thursday night is not listed
    # Saturday 01:00-03:00 meets the tail of Friday's night; Saturday 02:00-21:59 meets nothing
    assert fri_night.applies_during(fri + timedelta(hours=25), fri + timedelta(hours=27))
    assert not fri_night.applies_during(fri + timedelta(hours=26), fri + timedelta(hours=45, minutes=59))
    # Sunday night into Monday: the week wraps
    sun = Applicability(False, schedule=(WeeklySlot(frozenset({6}), time(23), time(1)),))
    mon_0030 = datetime(2026, 11, 30, 0, 30, tzinfo=UTC)
    assert sun.applies_at(mon_0030) and sun.applies_during(mon_0030, mon_0030)


def test_split_overnight_slots_of_the_loader_leave_no_gap() -> None:
    # planner.world.geozones turns FRI 22:00-02:00 into FRI 22:00-23:59:59.999999 and SAT 00:00-02:00
    split = Applicability(
        False,
        schedule=(WeeklySlot(frozenset({4}), time(22), END_OF_DAY), WeeklySlot(frozenset({5}), time(0), time(2))),
    )
    fri_2359 = datetime(2026, 12, 4, 23, 59, 59, tzinfo=UTC)
    assert split.applies_during(fri_2359, fri_2359 + timedelta(seconds=2))
    assert split.applies_at(fri_2359) and split.applies_at(fri_2359 + timedelta(seconds=1))


def test_dates_are_half_open() -> None:
    t = datetime(2026, 12, 4, 14, tzinfo=UTC)
    dated = Applicability(False, start=t, end=t + timedelta(hours=8))
    assert dated.applies_during(t - timedelta(hours=1), t)  # touches the opening instant
    assert not dated.applies_during(t + timedelta(hours=8), t + timedelta(hours=9))  # closed at its end
    assert dated.applies_during(t + timedelta(hours=7, minutes=59), t + timedelta(hours=9))


def test_helx003_shape_opens_ten_minutes_into_a_window() -> None:
    """The demo's temporary zone (Fri/Sat 14-22 UTC, 4-7 Dec 2026): a sortie taking off at 13:50 meets it."""
    helx003 = Applicability(
        False,
        start=datetime(2026, 12, 4, tzinfo=UTC),
        end=datetime(2026, 12, 7, tzinfo=UTC),
        schedule=(WeeklySlot(frozenset({4, 5}), time(14), time(22)),),
    )
    take_off = datetime(2026, 12, 4, 13, 50, tzinfo=UTC)
    assert not helx003.applies_at(take_off)
    assert helx003.applies_during(take_off, take_off + timedelta(minutes=10))
    assert not helx003.applies_during(take_off, take_off + timedelta(minutes=9, seconds=59))
    sun = datetime(2026, 12, 6, 14, tzinfo=UTC)  # inside the dates, but Sunday is not scheduled
    assert not helx003.applies_during(sun, sun + timedelta(hours=8))


def test_naive_window_is_refused() -> None:
    entry = Applicability(True)
    with pytest.raises(InvalidArgument):
        entry.applies_during(datetime(2026, 12, 4, 14), datetime(2026, 12, 4, 15, tzinfo=UTC))
    with pytest.raises(InvalidArgument):
        Geozone("Z", "Z", Restriction.PROHIBITED, (), (), "", "t").applies_during(
            datetime(2026, 12, 4, 14), datetime(2026, 12, 4, 15)
        )


def test_dates_ending_when_a_slot_starts_do_not_apply_during_a_window_over_it() -> None:
    """The boundary the property test found: validity ends at 14:00, the Monday slot starts at 14:00.

    ``[start, end)`` dates and ``[14:00, 22:00)`` slot share no instant, so no window applies.
    """
    slot = WeeklySlot(frozenset({0}), time(14), time(22))
    entry = Applicability(False, start=BASE, end=BASE + timedelta(hours=14), schedule=(slot,))
    assert not entry.applies_at(BASE + timedelta(hours=14))
    assert not entry.applies_during(BASE + timedelta(hours=13), BASE + timedelta(hours=15))
    assert not entry.applies_during(BASE + timedelta(hours=14), BASE + timedelta(hours=14))
    # a minute more of validity and the window meets it
    longer = dataclasses.replace(entry, end=BASE + timedelta(hours=14, minutes=1))
    assert longer.applies_during(BASE + timedelta(hours=13), BASE + timedelta(hours=15))
