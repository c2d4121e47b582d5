"""battery_reserve: energy against usable charge, cold derating below a temperature."""

from __future__ import annotations

import pytest

from rules.evaluate import evaluate
from testkit import calm_weather, ctx, drone, one_rule, simple_plan, world
from planner.world.model import Weather

# 200 Wh × 80 % charge × (1 − 0.25) = 120 Wh usable; × 0.8 in the cold = 96 Wh
RULES = one_rule("battery_reserve", params="{reserve_fraction: 0.25, cold_below_c: 0.0, cold_derating: 0.8}")


def run(energy_wh: float, temperature_c: float | None = 5.0, rules=RULES):  # type: ignore[no-untyped-def]
    weather = calm_weather(temperature_2m_c=temperature_c)
    w = world(drones=[drone(battery_pct=80.0)], weather=weather)
    return evaluate(simple_plan([(0, 0, 50), (100, 0, 50)], energy_wh=energy_wh), w, rules, context=ctx())


@pytest.mark.parametrize(("energy_wh", "blocked"), [(119.99, False), (120.0, False), (120.01, True)])
def test_reserve_boundary(energy_wh: float, blocked: bool) -> None:
    v = run(energy_wh)
    assert v.blocked is blocked
    if blocked:
        (f,) = v.findings
        assert (f.measured, f.limit, f.unit, f.sortie_index, f.leg_index) == (120.01, 120.0, "Wh", 0, None)
        assert "25 % reserve" in f.message_en and "Wh" in f.message_zh


@pytest.mark.parametrize(("temperature_c", "limit_wh"), [(0.0, 120.0), (-0.1, 96.0), (None, 96.0)])
def test_cold_derating_below_threshold_or_unknown(temperature_c: float | None, limit_wh: float) -> None:
    v = run(200.0, temperature_c)
    assert v.findings[0].limit == limit_wh
    assert run(limit_wh, temperature_c).findings == ()
    assert run(limit_wh + 0.01, temperature_c).blocked


def test_unknown_temperature_without_derating_when_configured() -> None:
    rules = one_rule("battery_reserve", params="{derate_when_temperature_unknown: false}")
    w = world(drones=[drone(battery_pct=80.0)], weather=Weather(()))
    p = simple_plan([(0, 0, 50)], energy_wh=120.0)
    assert evaluate(p, w, rules, context=ctx()).findings == ()


def test_unknown_drone_is_left_to_drone_available() -> None:
    w = world(drones=[drone("OTHER")])
    assert evaluate(simple_plan([(0, 0, 50)], energy_wh=1e6), w, RULES, context=ctx()).findings == ()


def test_a_plan_timed_elsewhere_is_judged_on_its_flight() -> None:
    """A plan not timed by the planner's model (made before it, or by hand: 200 legs of 10 m claimed at
    1 Wh) is flown again by the rules: the vehicle stops and turns at every corner, and that is what the
    battery pays for."""
    from dataclasses import replace

    zigzag = [(10.0 * (i % 2), 10.0 * i, 50.0) for i in range(200)]
    claimed = simple_plan(zigzag, energy_wh=1.0)
    untimed = replace(claimed, parameters={})
    w = world(drones=[drone(battery_pct=40.0)])  # 200 Wh × 40 % × 0.75 = 60 Wh usable
    assert evaluate(claimed, w, RULES, context=ctx()).findings == ()
    v = evaluate(untimed, w, RULES, context=ctx())
    (f,) = v.findings
    assert v.blocked and f.limit == 60.0 and 70.0 < f.measured < 90.0  # ~13 min, mostly slow
