"""``sortie sim-vehicle`` as a real process: a dispatch reaches it and it reports what it holds.

The process imports the whole CLI before it listens (15–20 s on a busy 2-core
machine), hence the ``slow`` mark and the long hello.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest
from shapely.geometry import Polygon

os.environ.setdefault("MAVLINK20", "1")

from flows.vehicle.upload import upload_plan  # noqa: E402
from planner.plan import Leg, Plan, Sortie, Waypoint  # noqa: E402
from planner.world.model import Camera, Dock, Drone, World  # noqa: E402
from testkit import bare_world, free_port, popen_ctrl_c  # noqa: E402

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
SORTIE = Path(sys.executable).with_name("sortie")


def _world(link: str) -> World:
    drone = Drone(
        id="D1", model="quad", dock_id="DOCK-A", tenant="t", capabilities=frozenset({"RGB_CAMERA"}),
        battery_wh=100.0, battery_pct=90.0, flight_time_s=1800.0, hover_time_s=1500.0, cruise_speed_mps=10.0,
        inspection_speed_mps=5.0, max_wind_mps=10.0, min_temp_c=-10.0, max_temp_c=40.0, ip_rating=None,
        camera=Camera(80.0, 60.0), status="ONLINE", last_telemetry_at=T0, autopilot="px4", link=link,
    )
    dock = Dock("DOCK-A", "dock", "t", 24.94, 60.17, 10.0, 2000.0, 10.0)
    return bare_world(name="cli", drones=(drone,), docks=(dock,))


def _plan() -> Plan:
    wps = (
        Waypoint(24.94, 60.17, 40.0, "TAKEOFF"),
        Waypoint(24.942, 60.171, 40.0, "INSPECT", 8.0, hold_s=5.0, target_id="P1"),
        Waypoint(24.94, 60.17, 0.0, "LAND"),
    )
    sortie = Sortie(0, "D1", "DOCK-A", T0, (Leg("inspect", wps, 300.0, 60.0, 2.0),), 300.0, 60.0, 2.0, 0.02)
    return Plan("points", T0, Polygon([(24.94, 60.17), (24.943, 60.17), (24.943, 60.172)]), 40.0, (sortie,))


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_sim_vehicle_command_takes_a_dispatch_and_reports_it() -> None:
    port = free_port("udp")
    proc = popen_ctrl_c(
        [str(SORTIE), "sim-vehicle", "--listen", f"udpin:127.0.0.1:{port}", "--dialect", "px4",
         "--heartbeat-s", "0.2", "--duration", "80", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        # The CLI imports every command module first: seconds on a busy machine, so a long hello.
        outcome = upload_plan(_plan(), _world(f"udpout:127.0.0.1:{port}"), timeout_s=60.0, retry_s=0.3, heartbeat_timeout_s=45.0)
        assert outcome.status == "ACCEPTED"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate(timeout=5)
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert report["dialect"] == "px4"
    commands = [i["command"] for i in report["missions"]["mission"]]
    # a waypoint where the take-off ends starts the waypoint controller, then the speed (planner.output.mission_items)
    assert commands == ["MAV_CMD_NAV_TAKEOFF", "MAV_CMD_NAV_WAYPOINT", "MAV_CMD_DO_CHANGE_SPEED", "MAV_CMD_NAV_WAYPOINT",
                        "MAV_CMD_NAV_LAND"]
    assert len(report["missions"]["fence"]) == 1 and len(report["missions"]["rally"]) == 1
    assert report["stats"]["uploads_completed"] == 3


def test_bad_simulator_options_are_invalid_arguments() -> None:
    from flows.sim.vehicle import result_code
    from testkit import sim_vehicle
    from planner.errors import InvalidArgument

    with pytest.raises(InvalidArgument):
        sim_vehicle("udpin:127.0.0.1:0", "inav")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        sim_vehicle("udpin:127.0.0.1:0", "px4", drop=1.0)
    with pytest.raises(InvalidArgument, match="MAV_MISSION_DENIED"):
        result_code("NOT_A_RESULT")
    assert result_code("no_space") == result_code("MAV_MISSION_NO_SPACE") == 4


@pytest.mark.slow
@pytest.mark.timeout(90)
def test_read_mission_command_prints_what_the_vehicle_holds(sortie_home: Path) -> None:
    from typer.testing import CliRunner

    from flows.cli import app
    from testkit import sim_vehicle

    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.1, home=(60.1, 24.9, 5.0)) as sim:
        upload_plan(_plan(), replace(_world(sim.address), drones=(replace(_world(sim.address).drones[0], autopilot="ardupilot"),)),
                    timeout_s=20.0, retry_s=0.2)
        result = CliRunner().invoke(app, ["read-mission", "--link", sim.address, "--json", "--timeout", "20"])
        uploads = sim.stats.uploads_completed
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["vehicle"]["dialect"] == "ardupilot"
    mission = report["missions"]["mission"]
    assert mission[0]["lat"] == 60.1, "ArduPilot hands back its home as seq 0"
    assert [m["command"] for m in mission[1:]] == ["MAV_CMD_NAV_TAKEOFF", "MAV_CMD_NAV_WAYPOINT", "MAV_CMD_DO_CHANGE_SPEED",
                                                   "MAV_CMD_NAV_WAYPOINT", "MAV_CMD_NAV_LAND"]
    assert uploads == 3, "reading back uploaded nothing"
