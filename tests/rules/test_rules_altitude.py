"""altitude_ceiling: ceiling in metres or feet and a floor, equality passes."""

from __future__ import annotations

import pytest

from rules.evaluate import evaluate
from testkit import ctx, one_rule, simple_plan, world


def run(rules, alt_m: float):  # type: ignore[no-untyped-def]
    return evaluate(simple_plan([(0, 0, 50), (100, 0, alt_m), (200, 0, 50)]), world(), rules, context=ctx())


@pytest.mark.parametrize(("alt_m", "blocked"), [(119.99, False), (120.0, False), (120.01, True)])
def test_ceiling_metres(alt_m: float, blocked: bool) -> None:
    v = run(one_rule("altitude_ceiling", params="{ceiling_m: 120}"), alt_m)
    assert v.blocked is blocked
    if blocked:
        (f,) = v.findings
        assert (f.leg_index, f.measured, f.limit, f.unit) == (1, 120.01, 120.0, "m AGL")
        assert "120" in f.message_en and "米" in f.message_zh


@pytest.mark.parametrize(("alt_m", "blocked"), [(121.92, False), (121.93, True)])
def test_ceiling_feet(alt_m: float, blocked: bool) -> None:
    v = run(one_rule("altitude_ceiling", params="{ceiling_ft: 400}"), alt_m)
    assert v.blocked is blocked
    if blocked:
        assert v.findings[0].limit == 121.92 and "400 ft" in v.findings[0].message_en


@pytest.mark.parametrize(("alt_m", "blocked"), [(9.99, True), (10.0, False)])
def test_floor_exempts_takeoff_and_landing(alt_m: float, blocked: bool) -> None:
    # takeoff and landing waypoints at 0 m are exempt; the transit waypoint is not
    v = run(one_rule("altitude_ceiling", params="{ceiling_m: 120, floor_m: 10}"), alt_m)
    assert v.blocked is blocked
    if blocked:
        assert [(f.leg_index, f.measured, f.limit) for f in v.findings] == [(1, 9.99, 10.0)]


def test_warn_severity_does_not_block() -> None:
    v = run(one_rule("altitude_ceiling", severity="warn", params="{ceiling_m: 100}"), 110)
    assert not v.blocked and v.findings[0].severity == "warn"
