"""Issue 42's vehicle behaviours, as FACTS.md records them, over real MAVLink against the simulator.

Each test flies (or boots) one simulated ArduCopter with a bare ground station (``sim.simkit``) and checks what a
ground station sees: the telemetry gap, home on arming, a reboot's new session, the PreArm reasons, the
failsafe parameters and what they do.
"""

from __future__ import annotations

import time

import pytest

from flows.sim.flight import FlightFaults, FlightOptions, SimFlight
from sim.simkit import LAT0, LON0, M, Station, square_mission
from testkit import sim_vehicle

pytestmark = pytest.mark.timeout(90)


def _flying(**kw: object) -> tuple[object, Station]:
    sim = sim_vehicle(home=(LAT0, LON0, 10.0), **kw).start()
    gs = Station(sim.address)
    assert gs.upload(square_mission()) == M.MAV_MISSION_ACCEPTED
    gs.launch()
    return sim, gs


def test_a_stalled_link_goes_silent_while_the_vehicle_flies_on() -> None:
    flight = SimFlight(FlightOptions(faults=FlightFaults(stall_after_s=15.0, stall_s=1.5)))
    sim, gs = _flying(speedup=10.0, flight=flight)
    try:
        first = gs.wait(lambda m: m.get_type() == "GLOBAL_POSITION_INT" and m.relative_alt > 15_000, 20.0)
        assert first is not None
        before = gs.wait(lambda m: m.get_type() == "GLOBAL_POSITION_INT", 2.0)
        t_last, gap = time.monotonic(), 0.0
        while gap < 1.0:  # the stall: nothing at all for more than a wall second
            msg = gs.wait(lambda m: m.get_srcSystem() == 1, 0.5)
            gap = time.monotonic() - t_last if msg is None else 0.0
            t_last = t_last if msg is None else time.monotonic()
        after = gs.wait(lambda m: m.get_type() == "GLOBAL_POSITION_INT", 5.0)
        assert after is not None, "the link came back"
        assert after.time_boot_ms - before.time_boot_ms > 10_000  # the vehicle's clock ran on through the gap
        assert (after.lat, after.lon) != (before.lat, before.lon)  # and it flew on
        assert flight.phase == "FLYING" and flight.mode == "AUTO"
    finally:
        gs.close()
        sim.stop()


def test_home_moves_to_where_the_vehicle_arms() -> None:
    sim = sim_vehicle(home=(LAT0, LON0, 10.0)).start()
    try:
        flight = sim.flight
        flight.body.pos = (300.0, 100.0, 0.0)  # it stands 316 m from where it booted (landed there earlier)
        gs = Station(sim.address)
        home = gs.wait(lambda m: m.get_type() == "HOME_POSITION", 5.0)
        assert home is not None and abs(home.latitude / 1e7 - LAT0) < 1e-6
        assert gs.upload(square_mission()) == M.MAV_MISSION_ACCEPTED
        assert gs.command(M.MAV_CMD_DO_SET_MODE, M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 4) == M.MAV_RESULT_ACCEPTED
        assert gs.command(M.MAV_CMD_COMPONENT_ARM_DISARM, 1) == M.MAV_RESULT_ACCEPTED
        moved = gs.wait(lambda m: m.get_type() == "HOME_POSITION" and abs(m.latitude / 1e7 - LAT0) > 1e-3, 5.0)
        assert moved is not None  # HOME_POSITION now says where it armed
        assert abs(sim.home[0] - flight.lat) < 1e-9 and abs(sim.home[1] - flight.lon) < 1e-9
        assert sim.missions[0][0].lat == pytest.approx(flight.lat, abs=1e-7)  # so does the mission's seq 0
        gs.close()
    finally:
        sim.stop()


def test_a_reboot_is_a_new_session_with_boot_time_back_and_the_battery_read_afresh() -> None:
    sim = sim_vehicle(home=(LAT0, LON0, 10.0), battery_pct=73.0, up_s=500.0).start()
    try:
        gs = Station(sim.address)
        assert gs.upload(square_mission()) == M.MAV_MISSION_ACCEPTED
        old = gs.wait(lambda m: m.get_type() == "SYS_STATUS", 5.0)
        assert old is not None and old.battery_remaining == 73
        t_old = gs.wait(lambda m: m.get_type() == "GLOBAL_POSITION_INT", 5.0).time_boot_ms
        assert t_old >= 500_000
        assert gs.command(M.MAV_CMD_COMPONENT_ARM_DISARM, 1) == M.MAV_RESULT_ACCEPTED
        assert gs.command(M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, 1) == M.MAV_RESULT_FAILED  # not while armed
        assert gs.command(M.MAV_CMD_COMPONENT_ARM_DISARM, 0) == M.MAV_RESULT_ACCEPTED
        sim.flight.pack.charge_ah *= 12.0 / 73.0  # the pack drained while it stood (a swap would do the same)
        assert gs.command(M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, 1) == M.MAV_RESULT_ACCEPTED
        gs.close()
        time.sleep(1.2)
        gs = Station(sim.address)  # the new session forgot this station's streams: ask again
        new = gs.wait(lambda m: m.get_type() == "GLOBAL_POSITION_INT", 5.0)
        assert new is not None and new.time_boot_ms < t_old  # boot time went back
        status = gs.wait(lambda m: m.get_type() == "SYS_STATUS", 5.0)
        assert status is not None and status.battery_remaining == 12  # the battery as it is now, not as it was
        assert len(sim.missions[0]) == len(square_mission())  # the mission survives (EEPROM)
        assert sim.reboots == 1
        gs.close()
    finally:
        sim.stop()


def test_a_refused_arm_says_why_in_prearm_texts() -> None:
    sim = sim_vehicle(home=(LAT0, LON0, 10.0), prearm_s=None, prearm_reason="GPS 1: Bad fix", speedup=40.0).start()
    try:
        gs = Station(sim.address)
        assert gs.command(M.MAV_CMD_COMPONENT_ARM_DISARM, 1) == M.MAV_RESULT_FAILED
        said = gs.wait(lambda m: m.get_type() == "STATUSTEXT" and m.text.startswith("PreArm:"), 3.0)
        assert said is not None and said.text == "PreArm: GPS 1: Bad fix" and said.severity == M.MAV_SEVERITY_CRITICAL
        status = gs.wait(lambda m: m.get_type() == "SYS_STATUS", 3.0)
        assert not status.onboard_control_sensors_health & M.MAV_SYS_STATUS_PREARM_CHECK
        again = gs.wait(lambda m: m.get_type() == "STATUSTEXT" and m.text.startswith("PreArm:"), 3.0)
        assert again is not None  # every PREARM_DISPLAY_PERIOD (30 s of its clock; 0.75 s here)
        gs.close()
    finally:
        sim.stop()


def test_the_boot_and_pre_arm_delays_are_the_vehicles_own_by_default() -> None:
    sim = sim_vehicle(ready_at_once=False, speedup=10.0, home=(LAT0, LON0, 10.0)).start()  # 10 s boot, 35 s pre-arm
    try:
        gs = Station(sim.address)
        gs.mav.mission_count_send(1, 1, len(square_mission()), 0)
        ack = gs.wait(lambda m: m.get_type() == "MISSION_ACK", 3.0)
        assert ack is not None and ack.type == M.MAV_MISSION_NO_SPACE
        assert gs.upload(square_mission()) == M.MAV_MISSION_ACCEPTED  # after ~1 s wall (10 s of its clock)
        assert not gs.prearm_ok(1.0)
        assert gs.command(M.MAV_CMD_COMPONENT_ARM_DISARM, 1) == M.MAV_RESULT_FAILED
        assert gs.prearm_ok(5.0)  # 35 s of its clock
        gs.close()
    finally:
        sim.stop()


@pytest.mark.parametrize("params,action", [({}, None), ({"BATT_FS_LOW_ACT": 2.0}, "RTL"), ({"BATT_FS_LOW_ACT": 1.0}, "LAND")])
def test_the_battery_failsafe_does_what_its_parameters_say(params: dict[str, float], action: str | None) -> None:
    """BATT_LOW_MAH reached: "Battery 1 is low …" always; RTL or LAND with "Battery Failsafe" only when asked."""
    flight = SimFlight(FlightOptions(battery_pct=100.0, faults=FlightFaults(drain_factor=50.0)))
    sim, gs = _flying(speedup=50.0, flight=flight, params={"BATT_LOW_MAH": 20000.0, **params})
    try:
        low = gs.wait(lambda m: m.get_type() == "STATUSTEXT" and m.text.startswith("Battery 1 is low"), 20.0)
        assert low is not None and low.severity == M.MAV_SEVERITY_WARNING
        if action is None:
            assert gs.wait(lambda m: m.get_type() == "STATUSTEXT" and "Failsafe" in m.text, 1.0) is None
            assert flight.mode == "AUTO"  # SITL's defaults: it flies on
        else:
            said = gs.wait(lambda m: m.get_type() == "STATUSTEXT" and m.text == "Battery Failsafe", 2.0)
            assert said is not None
            from flows.vehicle.modes import custom_mode

            mode = gs.wait(lambda m: m.get_type() == "HEARTBEAT" and m.custom_mode == custom_mode(action, "ardupilot"), 5.0)
            assert mode is not None and flight.battery_failsafe == "low"
        gs.close()
    finally:
        sim.stop()


def test_the_gcs_failsafe_returns_the_vehicle_when_its_ground_station_falls_silent() -> None:
    sim, gs = _flying(speedup=10.0, params={"FS_GCS_ENABLE": 1.0, "FS_GCS_TIMEOUT": 1.0})
    try:
        assert gs.wait(lambda m: m.get_type() == "GLOBAL_POSITION_INT" and m.relative_alt > 10_000, 20.0) is not None
        gs.heartbeats = False  # the ground station stops sending heartbeats (its link is still up)
        said = gs.wait(lambda m: m.get_type() == "STATUSTEXT" and m.text == "GCS Failsafe", 5.0)
        assert said is not None
        from flows.vehicle.modes import custom_mode

        rtl = gs.wait(lambda m: m.get_type() == "HEARTBEAT" and m.custom_mode == custom_mode("RTL", "ardupilot"), 5.0)
        assert rtl is not None and sim.flight.battery_failsafe == "gcs"
        gs.close()
    finally:
        sim.stop()


def test_the_vehicles_parameters_are_read_and_set() -> None:
    sim = sim_vehicle(home=(LAT0, LON0, 10.0)).start()
    try:
        gs = Station(sim.address)
        gs.mav.param_request_read_send(1, 1, b"WPNAV_SPEED", -1)
        value = gs.wait(lambda m: m.get_type() == "PARAM_VALUE" and m.param_id == "WPNAV_SPEED", 3.0)
        assert value is not None and value.param_value == 1000.0  # ArduCopter's default, cm/s
        gs.mav.param_set_send(1, 1, b"WPNAV_SPEED", 500.0, M.MAV_PARAM_TYPE_REAL32)
        assert gs.wait(lambda m: m.get_type() == "PARAM_VALUE" and m.param_id == "WPNAV_SPEED"
                       and m.param_value == 500.0, 3.0) is not None
        assert sim.params["WPNAV_SPEED"] == 500.0
        for name in ("FS_GCS_ENABLE", "BATT_FS_LOW_ACT", "BATT_FS_CRT_ACT", "BATT_LOW_VOLT", "BATT_LOW_MAH", "RTL_ALT"):
            gs.mav.param_request_read_send(1, 1, name.encode(), -1)
            assert gs.wait(lambda m, n=name: m.get_type() == "PARAM_VALUE" and m.param_id == n, 3.0) is not None
        gs.close()
    finally:
        sim.stop()
