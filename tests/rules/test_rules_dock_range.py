"""dock_range: every waypoint within the dock radius minus the margin; equality passes."""

from __future__ import annotations

import pytest

from rules.evaluate import evaluate
from testkit import ctx, dock, drone, one_rule, simple_plan, world


@pytest.mark.parametrize(("x_m", "blocked"), [(4899.99, False), (4900.0, False), (4900.001, True), (4900.01, True)])
def test_radius_minus_margin_boundary(x_m: float, blocked: bool) -> None:
    w = world(docks=[dock(radius_m=5000.0)])
    p = simple_plan([(0, 0, 50), (x_m, 0, 50), (0, 10, 50)])
    v = evaluate(p, w, one_rule("dock_range", params="{margin_m: 100}"), context=ctx())
    assert v.blocked is blocked
    if blocked:
        (f,) = v.findings
        assert (f.leg_index, f.limit, f.unit) == (1, 4900.0, "m")
        assert f.measured == x_m


def test_unknown_dock_blocks() -> None:
    w = world(drones=[drone(dock_id="NOPE")], docks=[dock()])
    v = evaluate(simple_plan([(0, 0, 50)], dock_id="NOPE"), w, one_rule("dock_range"), context=ctx())
    assert v.blocked and v.findings[0].measured == "UNKNOWN"
