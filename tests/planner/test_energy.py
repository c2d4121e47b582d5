"""Energy model: calibration to the spec, wind as vector airspeed, climb/hover, bad input."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.energy import EnergyModel, LegCost, wind_at_altitude
from planner.errors import InvalidArgument
from planner.world.model import WeatherHour
from testkit import m30t

T0 = datetime(2026, 12, 1, 9, tzinfo=timezone.utc)
M30T = m30t(last_telemetry_at=T0)


def hour(speed10=None, speed80=None, speed120=None, direction=None) -> WeatherHour:
    return WeatherHour(T0, speed10, speed80, speed120, direction, None, None, None)


def test_calibrated_to_spec() -> None:
    m = EnergyModel.for_drone(M30T, None)
    assert m.power_w(0) == pytest.approx(263.2 * 3600 / 2160)  # ≈ 439 W
    assert m.power_w(12.0) == pytest.approx(263.2 * 3600 / 2460)  # ≈ 385 W
    # flying the whole spec endurance at cruise speed uses the whole battery
    cost = m.leg(12.0 * 2460, 12.0, heading_deg=0)
    assert cost.duration_s == pytest.approx(2460)
    assert cost.energy_wh == pytest.approx(263.2)
    assert m.battery_fraction(cost.energy_wh) == pytest.approx(1.0)


def test_head_wind_costs_more_than_tail_wind() -> None:
    # wind FROM the north (0°) at 8 m/s: flying north is into the wind
    m = EnergyModel.for_drone(M30T, hour(speed10=5, speed80=8, direction=0.0), altitude_m=60)
    assert m.wind_speed_mps == pytest.approx(8.0)
    north = m.leg(1000, 10, heading_deg=0)
    south = m.leg(1000, 10, heading_deg=180)
    calm = EnergyModel.for_drone(M30T, None).leg(1000, 10, heading_deg=0)
    assert north.duration_s == south.duration_s == calm.duration_s == pytest.approx(100)
    assert north.energy_wh > calm.energy_wh
    assert m.airspeed_mps(10, 0) == pytest.approx(18)
    assert m.airspeed_mps(10, 180) == pytest.approx(2)
    assert m.airspeed_mps(10, 90) == pytest.approx(math.hypot(10, 8))
    assert m.segment((0, 0), (0, 1000), 10) == north  # local y is north


def test_wind_level_closest_to_altitude() -> None:
    h = hour(speed10=3, speed80=6, speed120=9, direction=270)
    assert wind_at_altitude(h, 20) == (3, 270)
    assert wind_at_altitude(h, 60) == (6, 270)
    assert wind_at_altitude(h, 110) == (9, 270)
    assert wind_at_altitude(hour(speed10=3), 110) == (3, 0.0)
    assert wind_at_altitude(None, 50) == (0.0, 0.0)


def test_climb_descent_hover() -> None:
    m = EnergyModel.for_drone(M30T, None)
    up = m.leg(0, 1, climb_m=40)
    down = m.leg(0, 1, climb_m=-30)
    hold = m.leg(0, 1, hold_s=20)
    assert up.duration_s == pytest.approx(10) and down.duration_s == pytest.approx(10)
    assert up.energy_wh > hold.energy_wh * 10 / 20 > 0
    assert down.energy_wh < up.energy_wh
    assert hold.energy_wh == pytest.approx(m.power_w(0) * 20 / 3600)
    assert up + down == LegCost(up.duration_s + down.duration_s, up.energy_wh + down.energy_wh)


@given(st.floats(0, 3000), st.floats(1, 20), st.floats(0, 360), st.floats(0, 15), st.floats(0, 360))
def test_energy_is_positive_and_linear_in_distance(d, v, heading, wind, wind_from) -> None:
    m = EnergyModel.for_drone(M30T, hour(speed10=wind, direction=wind_from), altitude_m=10)
    one = m.leg(d, v, heading_deg=heading)
    two = m.leg(2 * d, v, heading_deg=heading)
    assert one.energy_wh >= 0 and one.duration_s >= 0
    assert two.energy_wh == pytest.approx(2 * one.energy_wh, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("kwargs", [{"distance_m": -1, "speed_mps": 5}, {"distance_m": 10, "speed_mps": 0},
                                    {"distance_m": 0, "speed_mps": 5, "hold_s": -2},
                                    {"distance_m": float("nan"), "speed_mps": 5}])
def test_bad_legs(kwargs) -> None:
    with pytest.raises(InvalidArgument):
        EnergyModel.for_drone(M30T, None).leg(**kwargs)


def test_bad_drone_spec() -> None:
    from dataclasses import replace

    with pytest.raises(InvalidArgument, match="hover_time_s"):
        EnergyModel.for_drone(replace(M30T, hover_time_s=0), None)
