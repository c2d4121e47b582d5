"""A telemetry gap: the vehicle's clock rate, its remaining endurance, and LOST only past it (issue 42)."""

from __future__ import annotations

import pytest

from flows.vehicle.link_gaps import clock_rate, close_gap, endurance_left_s, lost_reason, open_gap

BEFORE = {"t_s": 120.0, "seq": 7, "mode": "AUTO", "armed": True, "battery_pct": 50.0, "reached": 6,
          "airborne": True, "lat": 60.1, "lon": 24.9, "alt_m": 40.0}


def test_a_simulators_speed_up_is_the_vehicles_clock_rate() -> None:
    assert clock_rate((100.0, 10.0), (300.0, 20.0)) == 20.0
    assert clock_rate((100.0, 10.0), (101.0, 11.0)) == 1.0  # a real clock under 2 wall s: not measured yet
    assert clock_rate((100.0, 10.0), (200.0, 10.2)) == pytest.approx(500.0)  # a simulator at 500x: plain at once
    assert clock_rate(None, (1.0, 1.0)) == 1.0


def test_silence_is_lost_only_past_the_endurance_left_on_the_vehicles_clock() -> None:
    left = endurance_left_s(50.0, 1200.0, 1.0, 30.0)
    assert left == 630.0
    gap, message = open_gap(dict(BEFORE), t_s=120.0, silent_s=5.2, lost_wall=1000.0, rate=20.0, left_s=left,
                            nav_total=12)
    assert "it may still be flying" in message and "6 of 12 items" in message
    assert lost_reason(gap, 31.0) is None  # 620 vehicle s: it may still fly
    why = lost_reason(gap, 32.0)  # 640 vehicle s > 630
    assert why is not None and why.startswith("ENDURANCE_EXCEEDED") and "50.0 % of its battery" in why
    close_gap(gap, now_wall=1008.0, t_s=280.0)
    assert (gap["silent_s"], gap["back_t_s"]) == (8.0, 280.0) and "lost_wall" not in gap


def test_an_unknown_battery_never_declares_a_vehicle_lost() -> None:
    assert endurance_left_s(None, 1200.0, 1.0, 30.0) is None
    gap, _ = open_gap(dict(BEFORE), t_s=1.0, silent_s=5.0, lost_wall=0.0, rate=1.0, left_s=None, nav_total=3)
    assert lost_reason(gap, 1e6) is None
