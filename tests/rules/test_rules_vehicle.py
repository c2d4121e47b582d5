"""vehicle_at_dock and vehicle_failsafes: the vehicle's own position and failsafe parameters, judged when live."""

from __future__ import annotations

import math

import pytest

from rules.evaluate import evaluate
from testkit import DOCK_LAT, DOCK_LON, ctx, drone, one_rule, simple_plan, world

CONFIGURED = {"BATT_FS_LOW_ACT": 2.0, "BATT_FS_CRT_ACT": 1.0, "BATT_LOW_VOLT": 0.0, "BATT_LOW_MAH": 4000.0,
              "FS_GCS_ENABLE": 1.0, "RTL_ALT": 6000.0}
PLAN = simple_plan([(0, 0, 50), (200, 0, 50), (0, 10, 50)])


def _north(m: float) -> tuple[float, float]:
    return (DOCK_LAT + m / 111_320.0, DOCK_LON)


@pytest.mark.parametrize(("away_m", "blocked"), [(0.0, False), (29.0, False), (31.0, True), (329.0, True)])
def test_a_live_vehicle_away_from_its_dock_is_refused(away_m: float, blocked: bool) -> None:
    w = world(drones=[drone(live=True, position=_north(away_m))])
    v = evaluate(PLAN, w, one_rule("vehicle_at_dock", params="{max_distance_m: 30}"), context=ctx(phase="launch"))
    assert v.blocked is blocked
    if blocked:
        (f,) = v.findings
        assert f.unit == "m" and f.limit == 30.0 and math.isclose(float(f.measured), away_m, abs_tol=0.5)
        assert "would take off where it is" in f.message_en


def test_an_unknown_position_blocks_a_live_vehicle_and_a_file_drone_is_left_to_the_launch() -> None:
    rules = one_rule("vehicle_at_dock")
    assert evaluate(PLAN, world(drones=[drone(live=True)]), rules, context=ctx()).findings[0].measured == "UNKNOWN"
    assert not evaluate(PLAN, world(), rules, context=ctx()).findings  # fleet.json knows no position


def test_configured_failsafes_pass_and_each_missing_one_is_named() -> None:
    rules = one_rule("vehicle_failsafes")
    ok = world(drones=[drone(live=True, vehicle_params=CONFIGURED)])
    assert not evaluate(PLAN, ok, rules, context=ctx(phase="launch")).findings
    sitl = {**CONFIGURED, "BATT_FS_LOW_ACT": 0.0, "BATT_FS_CRT_ACT": 0.0, "FS_GCS_ENABLE": 0.0, "RTL_ALT": 1500.0}
    v = evaluate(PLAN, world(drones=[drone(live=True, vehicle_params=sitl)]), rules, context=ctx(phase="launch"))
    named = sorted(f.message_en.split(" has ")[1].split(" = ")[0] for f in v.findings)
    assert v.blocked and named == ["BATT_FS_CRT_ACT", "BATT_FS_LOW_ACT", "FS_GCS_ENABLE", "RTL_ALT"]
    rtl = next(f for f in v.findings if "RTL_ALT" in f.message_en)
    assert rtl.measured == 15.0 and "at least 50 m" in rtl.message_en


def test_a_low_battery_action_without_a_trigger_never_acts_and_is_refused() -> None:
    params = {**CONFIGURED, "BATT_LOW_MAH": 0.0, "BATT_LOW_VOLT": 0.0}
    v = evaluate(PLAN, world(drones=[drone(live=True, vehicle_params=params)]), one_rule("vehicle_failsafes"),
                 context=ctx(phase="launch"))
    (f,) = v.findings
    assert "BATT_LOW_VOLT and BATT_LOW_MAH are 0" in f.message_en and "never triggers" in f.message_en


def test_parameters_the_vehicle_did_not_report_block_by_name() -> None:
    v = evaluate(PLAN, world(drones=[drone(live=True, vehicle_params={"FS_GCS_ENABLE": 1.0})]),
                 one_rule("vehicle_failsafes"), context=ctx(phase="launch"))
    assert sorted(f.message_en.split(" did not report ")[1].split(":")[0] for f in v.findings) == [
        "BATT_FS_CRT_ACT", "BATT_FS_LOW_ACT", "RTL_ALT"]


def test_px4_names_its_own_parameters() -> None:
    params = {"COM_LOW_BAT_ACT": 0.0, "BAT_LOW_THR": 0.15, "NAV_DLL_ACT": 0.0, "RTL_RETURN_ALT": 60.0}
    v = evaluate(PLAN, world(drones=[drone(live=True, autopilot="px4", vehicle_params=params)]),
                 one_rule("vehicle_failsafes"), context=ctx(phase="launch"))
    assert sorted(f.message_en.split(" has ")[1].split(" = ")[0] for f in v.findings) == ["COM_LOW_BAT_ACT", "NAV_DLL_ACT"]
