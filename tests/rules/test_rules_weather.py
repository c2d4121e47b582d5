"""weather: wind at flight level, gusts, precipitation, temperature; equality passes."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from planner.world.model import Weather
from rules.evaluate import evaluate
from rules.evaluators.weather import wind_at_altitude
from testkit import T0, calm_weather, ctx, dock, drone, hour, one_rule, simple_plan, world


def run(params: str, alt_m: float = 50.0, severity: str = "block", drones=None, docks=None, **weather):  # type: ignore[no-untyped-def]
    w = world(drones=drones, docks=docks, weather=calm_weather(**weather))
    return evaluate(simple_plan([(0, 0, alt_m), (100, 0, alt_m)]), w, one_rule("weather", severity, params), context=ctx())


WIND = "{checks: [wind], wind_margin_mps: 2}"


@pytest.mark.parametrize(("speed", "blocked"), [(9.99, False), (10.0, False), (10.01, True)])
def test_wind_margin_boundary_at_flight_level(speed: float, blocked: bool) -> None:
    # flying at 100 m: the 120 m level is nearest (|100-120| < |100-80|)
    v = run(WIND, alt_m=100, wind_speed_120m_mps=speed, wind_speed_80m_mps=1.0)
    assert v.blocked is blocked
    if blocked:
        assert (v.findings[0].measured, v.findings[0].limit, v.findings[0].unit) == (10.01, 10.0, "m/s")
        assert "120 m level" in v.findings[0].message_en and "风速" in v.findings[0].message_zh


def test_wind_level_nearest_the_altitude_and_missing_levels() -> None:
    h = hour(T0, wind_speed_10m_mps=1.0, wind_speed_80m_mps=8.0, wind_speed_120m_mps=None)
    assert wind_at_altitude(h, 30.0) == (1.0, 10.0)
    assert wind_at_altitude(h, 100.0) == (8.0, 80.0)
    assert wind_at_altitude(h, 119.0) == (8.0, 80.0)  # 120 m missing
    assert wind_at_altitude(hour(T0, wind_speed_10m_mps=None, wind_speed_80m_mps=None, wind_speed_120m_mps=None), 50) is None


def test_limit_is_the_lower_of_drone_and_dock() -> None:
    v = run(WIND, wind_speed_80m_mps=8.5, drones=[drone(max_wind_mps=15.0)], docks=[dock(max_wind_mps=10.0)])
    assert v.blocked and v.findings[0].limit == 8.0


@pytest.mark.parametrize(("gust", "blocked"), [(14.0, False), (14.01, True)])
def test_gust_negative_margin_tolerates_gusts_above_sustained_limit(gust: float, blocked: bool) -> None:
    assert run("{checks: [gust], gust_margin_mps: -2}", wind_gusts_10m_mps=gust).blocked is blocked


@pytest.mark.parametrize(("mm", "n"), [(0.5, 0), (0.51, 1)])
def test_precipitation_warns(mm: float, n: int) -> None:
    v = run("{checks: [precipitation], max_precipitation_mm: 0.5}", severity="warn", precipitation_mm=mm)
    assert not v.blocked and len(v.findings) == n


@pytest.mark.parametrize(("t", "blocked"), [(-18.0, False), (-18.01, True), (43.0, False), (43.01, True)])
def test_temperature_range_with_margin(t: float, blocked: bool) -> None:
    # drone range -20..45, margin 2 → -18..43
    assert run("{checks: [temperature], temperature_margin_c: 2}", temperature_2m_c=t).blocked is blocked


def test_missing_forecast_policy() -> None:
    w = world(weather=Weather(()))
    p = simple_plan([(0, 0, 50)])
    assert evaluate(p, w, one_rule("weather", params="{missing_forecast: block}"), context=ctx()).blocked
    v = evaluate(p, w, one_rule("weather", params="{missing_forecast: warn}"), context=ctx())
    assert not v.blocked and len(v.findings) == 1
    assert evaluate(p, w, one_rule("weather", params="{missing_forecast: ignore}"), context=ctx()).findings == ()


def test_all_checks_pass_in_calm_weather() -> None:
    assert run("{}").findings == ()


def test_the_forecast_hours_are_those_of_the_flight_not_of_a_claimed_time() -> None:
    """A plan not timed by the planner's model (200 legs of 10 m claimed as 3 minutes from 10:50) is flown again by
    the rules (``Env.flown``): it is still in the air in the windy 11:00 hour, which the claimed time never reaches."""
    start = T0 + timedelta(minutes=50)
    windy = Weather((hour(T0, wind_speed_80m_mps=3.0), hour(T0 + timedelta(hours=1), wind_speed_80m_mps=14.0)))
    zigzag = [(10.0 * (i % 2), 10.0 * i, 50.0) for i in range(200)]
    claimed = simple_plan(zigzag, start_at=start)
    assert claimed.sorties[0].end_at < T0 + timedelta(hours=1)
    w = world(weather=windy)
    assert not evaluate(claimed, w, one_rule("weather", params=WIND), context=ctx()).blocked
    v = evaluate(replace(claimed, parameters={}), w, one_rule("weather", params=WIND), context=ctx())
    assert v.blocked and v.findings[0].measured == 14.0
