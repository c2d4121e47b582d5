"""intents.time.resolve: relative day + clock → local date and aware start, against an injected now."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from intents import PART_OF_DAY_CLOCK, PartOfDay, RelativeDay, TimeSpec, resolve_clock, resolve_date, resolve_start
from planner.errors import InvalidArgument

HEL = "Europe/Helsinki"
WED = datetime.fromisoformat("2026-12-02T07:30:00+02:00")  # a Wednesday


def spec(**kw: object) -> TimeSpec:
    return TimeSpec(**kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        ("TODAY", "2026-12-02"),
        ("TOMORROW", "2026-12-03"),
        ("DAY_AFTER_TOMORROW", "2026-12-04"),
        ("THIS_WEDNESDAY", "2026-12-02"),  # today itself
        ("THIS_FRIDAY", "2026-12-04"),
        ("THIS_MONDAY", "2026-12-07"),  # already past this week → the coming one
        ("NEXT_MONDAY", "2026-12-07"),  # 下周一 on a Wednesday
        ("NEXT_WEDNESDAY", "2026-12-09"),
        ("NEXT_SUNDAY", "2026-12-13"),
    ],
)
def test_days_from_a_wednesday(day: str, expected: str) -> None:
    assert resolve_date(spec(day=day), WED, HEL) == date.fromisoformat(expected)


@given(offset_days=st.integers(min_value=0, max_value=400), weekday=st.integers(min_value=0, max_value=6))
def test_this_and_next_weekday_rules(offset_days: int, weekday: int) -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=ZoneInfo(HEL)) + timedelta(days=offset_days)
    today = now.date()
    name = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")[weekday]
    this = resolve_date(spec(day=f"THIS_{name}"), now, HEL)
    nxt = resolve_date(spec(day=f"NEXT_{name}"), now, HEL)
    assert this.weekday() == weekday and nxt.weekday() == weekday
    assert 0 <= (this - today).days <= 6
    # NEXT_X lies in the Monday-based week after today's week
    monday_this_week = today - timedelta(days=today.weekday())
    assert monday_this_week + timedelta(days=7) <= nxt < monday_this_week + timedelta(days=14)


def test_clock_wins_over_part_of_day_and_asap() -> None:
    when = spec(day="TOMORROW", clock="20:30", part_of_day="MORNING", asap=True)
    assert resolve_start(when, WED, HEL) == datetime.fromisoformat("2026-12-03T20:30:00+02:00")


@pytest.mark.parametrize("part", list(PartOfDay))
def test_part_of_day_uses_its_documented_default(part: PartOfDay) -> None:
    when = spec(day="TOMORROW", part_of_day=part)
    assert resolve_clock(when) == PART_OF_DAY_CLOCK[part]
    start = resolve_start(when, WED, HEL)
    assert start is not None and start.strftime("%H:%M") == PART_OF_DAY_CLOCK[part]
    assert PART_OF_DAY_CLOCK[PartOfDay.EVENING] == "19:00"  # 今晚 / tonight


def test_today_without_a_time_and_asap_mean_now_in_the_users_zone() -> None:
    now_utc = datetime(2026, 12, 2, 5, 30, tzinfo=timezone.utc)
    for when in (spec(), spec(asap=True)):
        start = resolve_start(when, now_utc, HEL)
        assert start == now_utc
        assert start is not None and start.utcoffset() == timedelta(hours=2)
        assert resolve_clock(when) is None


def test_another_day_without_a_time_has_a_date_but_no_start() -> None:
    when = spec(day="TOMORROW")
    assert resolve_start(when, WED, HEL) is None
    assert resolve_date(when, WED, HEL) == date(2026, 12, 3)
    assert resolve_start(spec(day="TOMORROW", asap=True), WED, HEL) is None


def test_the_day_is_taken_in_the_users_timezone() -> None:
    late_utc = datetime.fromisoformat("2026-12-03T23:30:00+00:00")  # Friday 01:30 in Helsinki
    assert resolve_date(spec(), late_utc, HEL) == date(2026, 12, 4)
    assert resolve_date(spec(), late_utc, "UTC") == date(2026, 12, 3)
    assert resolve_start(spec(day="TOMORROW", clock="09:00"), late_utc, HEL) == datetime.fromisoformat(
        "2026-12-05T09:00:00+02:00"
    )
    shanghai = resolve_start(spec(clock="15:00"), datetime.fromisoformat("2026-12-01T08:00:00+08:00"), "Asia/Shanghai")
    assert shanghai == datetime.fromisoformat("2026-12-01T15:00:00+08:00")


def test_daylight_saving_gap_and_fold() -> None:
    # 2026-03-29 in Helsinki: 03:00 EET jumps to 04:00 EEST; 03:30 does not exist.
    spring = datetime.fromisoformat("2026-03-29T00:30:00+02:00")
    start = resolve_start(spec(clock="03:30"), spring, HEL)
    assert start == datetime.fromisoformat("2026-03-29T04:30:00+03:00")
    assert start is not None and start.strftime("%H:%M") == "04:30"
    # 2026-10-25: 04:00 EEST falls back to 03:00 EET; 03:30 happens twice, the first one is taken.
    autumn = datetime.fromisoformat("2026-10-25T00:30:00+03:00")
    first = resolve_start(spec(clock="03:30"), autumn, HEL)
    assert first is not None and first.utcoffset() == timedelta(hours=3)
    # (PEP 495: an ambiguous time never compares equal across zones, so compare instants)
    assert first.timestamp() == datetime.fromisoformat("2026-10-25T03:30:00+03:00").timestamp()


def test_past_times_are_returned_as_they_are() -> None:
    evening = datetime.fromisoformat("2026-12-02T20:00:00+02:00")
    assert resolve_start(spec(part_of_day="MORNING"), evening, HEL) == datetime.fromisoformat("2026-12-02T09:00:00+02:00")


def test_bad_inputs_are_invalid_argument() -> None:
    with pytest.raises(InvalidArgument):
        resolve_start(spec(), WED, "Mars/Olympus_Mons")
    with pytest.raises(InvalidArgument):
        resolve_date(spec(), datetime(2026, 12, 2, 7, 30), HEL)


@given(
    offset_min=st.integers(min_value=0, max_value=60 * 24 * 400),
    day=st.sampled_from(list(RelativeDay)),
    hh=st.integers(min_value=0, max_value=23),
    mm=st.integers(min_value=0, max_value=59),
)
def test_a_clock_time_lands_on_its_date_and_clock(offset_min: int, day: RelativeDay, hh: int, mm: int) -> None:
    now = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=offset_min)
    when = spec(day=day, clock=f"{hh:02d}:{mm:02d}")
    start = resolve_start(when, now, HEL)
    assert start is not None
    local = start.astimezone(ZoneInfo(HEL))
    assert local.date() == resolve_date(when, now, HEL)
    if local.strftime("%H:%M") != when.clock:  # only inside the one-hour spring-forward gap
        assert local.month == 3 and hh == 3


# ---------------------------------------------------------------- absolute dates, pinning, the plan's start (issue 16)


def test_an_absolute_date_wins_over_the_relative_day() -> None:
    when = spec(day="TOMORROW", date=date(2026, 12, 24), clock="10:00")
    assert resolve_date(when, WED, HEL) == date(2026, 12, 24)
    assert resolve_start(when, WED, HEL) == datetime.fromisoformat("2026-12-24T10:00:00+02:00")


def test_pinning_keeps_the_day_when_resolved_again_later() -> None:
    from intents.time.resolve import pinned

    when = pinned(spec(day="TOMORROW", clock="09:00"), WED, HEL)
    three_days_later = WED + timedelta(days=3)
    assert resolve_date(when, three_days_later, HEL) == date(2026, 12, 3)


def test_the_plans_start_is_the_day_default_when_a_later_day_has_no_time() -> None:
    from intents import planned_start
    from intents.time.resolve import DAY_DEFAULT_CLOCK

    assert planned_start(spec(day="TOMORROW"), WED, HEL) == datetime.fromisoformat(f"2026-12-03T{DAY_DEFAULT_CLOCK}:00+02:00")
    assert planned_start(spec(), WED, HEL) == WED  # today without a time: now
    assert planned_start(spec(date=date(2026, 12, 2)), WED, HEL) == WED


def test_an_extraction_resolves_once_and_replans_the_same_day() -> None:
    from intents import Intent
    from intents.extract import Extraction

    intent = Intent(mission_type="FIRE_LANE_PATROL", when=spec(day="TOMORROW"))
    first = Extraction.resolve(intent, "test", now=WED, timezone=HEL)
    assert first.intent.when.date == date(2026, 12, 3) and first.start_at is None
    assert first.planned_start == datetime.fromisoformat("2026-12-03T09:00:00+02:00")
    again = Extraction.resolve(first.intent, "ledger", now=WED + timedelta(days=1, hours=2), timezone=HEL)
    assert again.date == date(2026, 12, 3)  # not "tomorrow" of the replan
