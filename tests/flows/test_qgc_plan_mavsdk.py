"""QGroundControl ``.plan`` files through MAVSDK's own importer (mavsdk-grpc ships mavsdk_server).

MAVSDK imports a ``.plan`` only for a connected system, so the simulated
vehicle plays that system on a free UDP port; mavsdk_server gets its own free
gRPC port (its default 50051 may be taken). The imported mission, fence and
rally rows must equal the ones sortie uploads (``planner.mission_items``).
"""

from __future__ import annotations

import asyncio
import os
import socket
from collections import Counter
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest
from shapely.geometry import Polygon

os.environ.setdefault("MAVLINK20", "1")

mavsdk = pytest.importorskip("mavsdk_grpc")

from flows.simulator import SimVehicle  # noqa: E402
from planner.export_files import qgc_plan  # noqa: E402
from planner.mission_items import FENCE, MISSION, RALLY, MissionItem, compare_items, mission_set  # noqa: E402
from planner.plan import Leg, Plan, Sortie, Waypoint  # noqa: E402
from planner.world import (  # noqa: E402
    Camera, CircleArea, Dock, Drone, Geozone, Restriction, VerticalReference, Weather, World, WorldDefaults, ZoneVolume,
)

T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


def small_world(autopilot: str) -> World:
    drone = Drone(
        id="M30T-01", model="DJI Matrice 30T", dock_id="DOCK-A", tenant="city-fire",
        capabilities=frozenset({"RGB_CAMERA"}), battery_wh=263.2, battery_pct=96.0,
        flight_time_s=2460.0, hover_time_s=2160.0, cruise_speed_mps=12.0, inspection_speed_mps=7.0,
        max_wind_mps=12.0, min_temp_c=-20.0, max_temp_c=50.0, ip_rating="IP55",
        camera=Camera(hfov_deg=84.0, vfov_deg=66.0), status="ONLINE", last_telemetry_at=T0,
        autopilot=autopilot, link="udpout:127.0.0.1:9",  # type: ignore[arg-type]
    )
    docks = (
        Dock("DOCK-A", "Fire station roof", "city-fire", 24.9410, 60.1700, 12.0, 3000.0, 12.0),
        Dock("DOCK-B", "Depot", "city-fire", 24.9600, 60.1750, 4.0, 3000.0, 12.0),
    )
    vol = ZoneVolume(
        horizontal=Polygon([(24.945, 60.171), (24.947, 60.171), (24.947, 60.172), (24.945, 60.172)]),
        lower_m=None, lower_ref=VerticalReference.AGL, upper_m=120.0, upper_ref=VerticalReference.AGL,
    )
    zones = (
        Geozone("NFZ-POLY", "NFZ-POLY", Restriction.PROHIBITED, (vol,), (), "", "test"),
        Geozone("NFZ-CIRCLE", "NFZ-CIRCLE", Restriction.PROHIBITED, (replace(vol, horizontal=CircleArea(24.935, 60.168, 150.0)),), (), "", "test"),
    )
    return World(
        name="mavsdk-test", timezone="Europe/Helsinki", defaults=WorldDefaults(), attribution="test",
        drones=(drone,), docks=docks, zones=zones, lanes=(), regions=(), pois=(), weather=Weather(()), users=(),
    )


def small_plan() -> Plan:
    lon0, lat0 = 24.9410, 60.1700
    legs = (
        Leg("takeoff", (Waypoint(lon0, lat0, 50.0, "TAKEOFF"),), 50.0, 10.0, 1.0),
        Leg("sweep", (
            Waypoint(24.94301, 60.17101, 50.0, "CAMERA_ON", 7.0),
            Waypoint(24.94302, 60.17163, 50.0, "WAYPOINT", 7.0),
            Waypoint(24.94343, 60.17164, 50.0, "CAMERA_OFF", 7.0),
        ), 300.0, 45.0, 5.0, target_id="AREA-1"),
        Leg("inspect", (Waypoint(24.94401, 60.17021, 40.0, "INSPECT", 7.0, hold_s=10.5, target_id="POI-1"),),
            50.0, 20.0, 2.0, target_id="POI-1"),
        Leg("landing", (Waypoint(lon0, lat0, 40.0, "WAYPOINT", 12.0), Waypoint(lon0, lat0, 0.0, "LAND")), 200.0, 30.0, 3.0),
    )
    sortie = Sortie(0, "M30T-01", "DOCK-A", T0, legs, 600.0, 105.0, 11.0, 0.05)
    area = Polygon([(24.9428, 60.1708), (24.9448, 60.1708), (24.9448, 60.1718), (24.9428, 60.1718)])
    return Plan("survey", T0, area, 50.0, (sortie,), coverage_fraction=0.98)


def _free_tcp_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _row(it: object, mission_type: int) -> MissionItem:
    return MissionItem(
        seq=it.seq, command=it.command, frame=it.frame, lat=it.x / 1e7, lon=it.y / 1e7, alt_m=it.z,  # type: ignore[attr-defined]
        param1=it.param1, param2=it.param2, param3=it.param3, param4=it.param4,  # type: ignore[attr-defined]
        autocontinue=it.autocontinue, mission_type=mission_type,  # type: ignore[attr-defined]
    )


async def _import_with_mavsdk(plan_path: Path, vehicle: str) -> object:
    system = mavsdk.System(port=_free_tcp_port())
    try:
        await system.connect(system_address=vehicle.replace("udpout:", "udpout://"))

        async def connected() -> None:
            async for state in system.core.connection_state():
                if state.is_connected:
                    return

        await asyncio.wait_for(connected(), 20)
        return await asyncio.wait_for(system.mission_raw.import_qgroundcontrol_mission(str(plan_path)), 20)
    finally:
        system._stop_mavsdk_server()


def _key(i: MissionItem) -> tuple[int, int, int, float]:
    return (i.command, round(i.lat * 1e7), round(i.lon * 1e7), round(i.param1, 3))


@pytest.mark.timeout(90)
@pytest.mark.parametrize("dialect", ["px4", "ardupilot"])
def test_mavsdk_imports_our_plan_file_as_the_rows_we_upload(dialect: str, tmp_path: Path) -> None:
    world, plan = small_world(dialect), small_plan()
    path = tmp_path / "mission.plan"
    path.write_text(qgc_plan(plan, world))
    with SimVehicle("udpin:127.0.0.1:0", dialect, heartbeat_s=0.2) as sim:  # type: ignore[arg-type]
        data = asyncio.run(_import_with_mavsdk(path, sim.address))
    ms = mission_set(plan, 0, world)
    mission = tuple(_row(i, MISSION) for i in data.mission_items)  # type: ignore[attr-defined]
    # A .plan has no home slot; for ArduPilot MAVSDK rebuilds it from plannedHomePosition,
    # which gives back exactly our placeholder (the dock, frame GLOBAL, its ground altitude).
    expected = ms.mission
    renumbered = tuple(replace(m, seq=n) for n, m in enumerate(expected))
    assert compare_items(renumbered, mission, dialect="px4", mission_type=MISSION) == ()
    rally = tuple(_row(i, RALLY) for i in data.rally_items)  # type: ignore[attr-defined]
    assert compare_items(ms.rally, rally, dialect="px4", mission_type=RALLY) == ()
    fence = [_row(i, FENCE) for i in data.geofence_items]  # type: ignore[attr-defined]
    assert Counter(_key(i) for i in fence) == Counter(_key(i) for i in ms.fence), "same fence shapes (MAVSDK lists polygons first)"
