"""geozone_clearance: 3D and time conflicts, restriction → severity, boundaries included."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.world.model import Restriction, VerticalReference
from rules.evaluate import evaluate
from testkit import (
    UTC,
    box_zone,
    circle_zone,
    ctx,
    fri_sat_14_22,
    leg,
    one_rule,
    plan,
    simple_plan,
    sortie,
    world,
)

RULES = one_rule("geozone_clearance", params="{buffer_m: 30}")
RULES0 = one_rule("geozone_clearance", params="{buffer_m: 0}")


def run(p, zones, rules=RULES, **kw):  # type: ignore[no-untyped-def]
    return evaluate(p, world(zones=zones), rules, context=ctx(**kw))


@pytest.mark.parametrize(
    ("offset_m", "blocked"),
    [(-1.0, True), (-0.01, True), (-0.001, True), (0.0, False), (0.01, False), (1.0, False)],
)
def test_circle_buffer_boundary(offset_m: float, blocked: bool) -> None:
    # circle r=150 at (1000, 0); buffer 30 → a pass at y = 180 + offset; distances are measured to the mm;
    # exactly at the buffer is clear (where the planner's transit graph flies)
    z = circle_zone("Z1", 1000, 0, 150)
    y = 180 + offset_m
    v = run(simple_plan([(0, y, 50), (2000, y, 50)]), [z])
    assert v.blocked is blocked
    if blocked:
        (f,) = v.findings
        assert (f.zone_id, f.kind, f.leg_index, f.unit) == ("Z1", "geozone_clearance", 1, "m")
        assert f.measured == pytest.approx(30 + offset_m, abs=1e-9) and f.limit == 30.0


@pytest.mark.parametrize(("offset_m", "blocked"), [(-0.01, True), (-0.001, True), (0.0, False), (0.01, False)])
def test_polygon_buffer_boundary(offset_m: float, blocked: bool) -> None:
    z = box_zone("P1", 500, 100, 900, 400)
    y = 100 - 30 - offset_m  # parallel pass south of the box
    assert run(simple_plan([(0, y, 50), (1500, y, 50)]), [z]).blocked is blocked


@pytest.mark.parametrize(("gap_m", "blocked"), [(0.0, True), (0.001, False)])
def test_zero_buffer_touching_conflicts(gap_m: float, blocked: bool) -> None:
    z = box_zone("P0", 500, 100, 900, 400)
    y = 100 - gap_m
    assert run(simple_plan([(0, y, 50), (1500, y, 50)]), [z], rules=RULES0).blocked is blocked


def test_inside_zone_measures_zero() -> None:
    v = run(simple_plan([(900, 0, 50), (1100, 0, 50)]), [circle_zone("Z1", 1000, 0, 150)])
    assert v.blocked and v.findings[0].measured == 0.0
    assert "Z1" in v.findings[0].message_en and "禁飞区" in v.findings[0].message_zh


@pytest.mark.parametrize(("alt_m", "blocked"), [(49.99, False), (50.0, True), (120.0, True), (120.01, False)])
def test_altitude_band_boundary_touching_counts(alt_m: float, blocked: bool) -> None:
    z = box_zone("Z2", 500, -200, 900, 200, lower_m=50.0, upper_m=120.0)
    assert run(simple_plan([(0, 0, alt_m), (1500, 0, alt_m)]), [z]).blocked is blocked


@pytest.mark.parametrize(("alt_m", "blocked"), [(46.0, True), (46.01, False)])
def test_amsl_limit_uses_dock_ground_altitude(alt_m: float, blocked: bool) -> None:
    # upper 60 m AMSL, dock ground 14 m → 46 m AGL
    z = box_zone("Z3", 500, -200, 900, 200, lower_m=None, upper_m=60.0, ref=VerticalReference.AMSL)
    assert run(simple_plan([(0, 0, alt_m), (1500, 0, alt_m)]), [z]).blocked is blocked


def test_climbing_segment_uses_altitude_where_it_is_in_the_zone() -> None:
    z = box_zone("Z4", 500, -200, 900, 200, lower_m=50.0, upper_m=120.0)  # x 500..900
    # 0 → 1000 m east climbing 10 → 90 m: at x=500 alt 50 (touch) → conflict
    assert run(simple_plan([(0, 0, 10), (1000, 0, 90)]), [z], rules=RULES0).blocked
    # descending 90 → 10 from x=-1000 to x=600: inside the zone (x≥500) alt ≤ 15 → clear,
    # although the segment as a whole reaches 90 m
    assert not run(simple_plan([(-1000, 0, 90), (600, 0, 10)]), [z], rules=RULES0).blocked


def test_req_authorisation_blocks_unless_authorised() -> None:
    z = box_zone("AUTH1", 500, -200, 900, 200, restriction=Restriction.REQ_AUTHORISATION)
    p = simple_plan([(0, 0, 60), (1500, 0, 60)])
    v = run(p, [z])
    assert v.blocked and v.findings[0].severity == "block"
    v2 = run(p, [z], auth={"AUTH1": "ANSP-2026-0042"})
    assert not v2.blocked
    (f,) = v2.findings
    assert f.severity == "warn" and "ANSP-2026-0042" in f.message_en and "ANSP-2026-0042" in f.message_zh
    # an authorisation for another zone does not help
    assert run(p, [z], auth={"OTHER": "X"}).blocked


def test_conditional_warns_with_zone_message() -> None:
    z = box_zone("C1", 500, -200, 900, 200, restriction=Restriction.CONDITIONAL, message="below 30 m AGL")
    v = run(simple_plan([(0, 0, 60), (1500, 0, 60)]), [z])
    assert not v.blocked and v.findings[0].severity == "warn" and "below 30 m AGL" in v.findings[0].message_en


def test_no_restriction_zone_is_ignored() -> None:
    z = box_zone("N1", 500, -200, 900, 200, restriction=Restriction.NO_RESTRICTION)
    assert run(simple_plan([(0, 0, 60), (1500, 0, 60)]), [z]).findings == ()


def _timed_plan(start: datetime, transit_s: float):  # type: ignore[no-untyped-def]
    legs = [
        leg([(0, 0, 0), (0, 0, 50)], kind="takeoff", duration_s=60),
        leg([(0, 0, 50), (1500, 0, 50)], duration_s=transit_s),
        leg([(1500, 0, 50), (0, 0, 50)], duration_s=transit_s),
        leg([(0, 0, 50), (0, 0, 0)], kind="landing", duration_s=60),
    ]
    return plan([sortie(legs, start_at=start)])


def test_schedule_window_overlap_is_checked_per_leg() -> None:
    z = box_zone("T1", 500, -200, 900, 200, applicability=fri_sat_14_22())
    fri = datetime(2026, 12, 4, 13, 0, tzinfo=UTC)
    # leg 1 runs 13:01:00..13:59:00, leg 2 13:59:00..14:57:00 → only leg 2 meets the zone
    v = run(_timed_plan(fri, 3480), [z])
    assert [(f.leg_index, f.zone_id) for f in v.findings] == [(2, "T1")]
    # leg 1 ends exactly at 14:00:00 → it meets the slot (closed leg window)
    v = run(_timed_plan(fri, 3540), [z])
    assert [f.leg_index for f in v.findings] == [1, 2]
    # a Thursday: nothing
    assert run(_timed_plan(fri - timedelta(days=1), 3540), [z]).findings == ()


def test_overnight_slot_is_checked_past_midnight() -> None:
    """A hand-built FRI 22:00-02:00 slot (end before start) runs into Saturday, as in the planner."""
    from datetime import time

    from planner.world.model import Applicability, WeeklySlot

    night = (Applicability(permanent=False, schedule=(WeeklySlot(frozenset({4}), time(22), time(2)),)),)
    z = box_zone("T3", 500, -200, 900, 200, applicability=night)
    sat = datetime(2026, 12, 5, tzinfo=UTC)
    # take-off at Saturday 01:00, transit out 01:01..01:31 → inside Friday night's slot
    assert [f.leg_index for f in run(_timed_plan(sat + timedelta(hours=1), 1800), [z]).findings] == [1, 2]
    # take-off at 01:00, 60-min legs: transit out 01:01..02:01 still meets the slot, the way back does not
    assert [f.leg_index for f in run(_timed_plan(sat + timedelta(hours=1), 3600), [z]).findings] == [1]
    assert run(_timed_plan(sat + timedelta(hours=2), 1800), [z]).findings == ()  # the slot ended at 02:00
    assert run(_timed_plan(datetime(2026, 12, 4, 1, tzinfo=UTC), 1800), [z]).findings == ()  # Friday 01:00: Thursday is not listed


def test_temporary_zone_end_is_exclusive() -> None:
    end = datetime(2026, 12, 4, 11, 0, tzinfo=UTC)
    z = box_zone("T2", 500, -200, 900, 200, applicability=(replace(fri_sat_14_22()[0], schedule=(), end=end),))
    assert run(_timed_plan(end - timedelta(seconds=61), 30), [z]).blocked  # takeoff leg ends 1 s before end
    assert not run(_timed_plan(end - timedelta(seconds=60), 30), [z]).blocked  # transit starts at end


def test_one_finding_per_leg_and_zone_and_sorted() -> None:
    zones = [circle_zone("ZB", 1000, 0, 100), circle_zone("ZA", 1000, 0, 100)]
    p = simple_plan([(0, 0, 50), (1500, 0, 50), (1500, 10, 50), (0, 10, 50)])
    v = run(p, zones)
    assert [(f.leg_index, f.zone_id) for f in v.findings] == [(1, "ZA"), (1, "ZB")]
    assert run(p, list(reversed(zones))) == v


def test_empty_world_and_clear_path() -> None:
    p = simple_plan([(0, 0, 50), (1500, 0, 50)])
    assert run(p, []).findings == ()
    assert run(p, [circle_zone("FAR", 1000, 3000, 100)]).findings == ()


_coord = st.floats(-1500, 1500, allow_nan=False)


@st.composite
def zones_strategy(draw):  # type: ignore[no-untyped-def]
    kind = draw(st.sampled_from(["circle", "box"]))
    restriction = draw(st.sampled_from(list(Restriction)))
    lower = draw(st.one_of(st.none(), st.floats(0, 100)))
    upper = draw(st.one_of(st.none(), st.floats(20, 200)))
    i = draw(st.integers(0, 10_000))
    if kind == "circle":
        return circle_zone(f"H{i}", draw(_coord), draw(_coord), draw(st.floats(5, 400)), restriction, lower, upper)
    x, y = draw(_coord), draw(_coord)
    return box_zone(f"H{i}", x, y, x + draw(st.floats(5, 600)), y + draw(st.floats(5, 600)), restriction, lower, upper)


@given(
    points=st.lists(st.tuples(_coord, _coord, st.floats(5, 130)), min_size=1, max_size=6),
    base=st.lists(zones_strategy(), max_size=4),
    extra=zones_strategy(),
)
def test_adding_a_zone_never_unblocks(points, base, extra) -> None:  # type: ignore[no-untyped-def]
    p = simple_plan(points)
    before = run(p, base)
    after = run(p, [*base, extra])
    if before.blocked:
        assert after.blocked
    assert set(before.blocking) <= set(after.blocking)


@pytest.mark.parametrize("shape", ["circle", "box"])
def test_vertical_climb_beside_a_zone_counts_its_whole_height(shape: str) -> None:
    # the dock sits 10 m outside a zone that starts at 50 m AGL; climbing to 60 m there conflicts
    z = circle_zone("V1", 160, 0, 150, lower_m=50.0) if shape == "circle" else box_zone("V1", 10, -100, 300, 100, lower_m=50.0)
    p = simple_plan([(0, 0, 60), (0, -500, 60)])
    v = run(p, [z])
    assert [(f.leg_index, f.zone_id) for f in v.findings][:1] == [(0, "V1")]
    assert not run(simple_plan([(0, 0, 45), (0, -500, 45)]), [z]).blocked
