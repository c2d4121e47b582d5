"""QGroundControl ``.plan`` files through MAVSDK's own importer (mavsdk-grpc ships mavsdk_server).

MAVSDK imports a ``.plan`` only for a connected system, so the simulated
vehicle plays that system on a free UDP port; mavsdk_server gets its own free
gRPC port (its default 50051 may be taken). The imported mission, fence and
rally rows must equal the ones sortie uploads (``planner.output.mission_items``).
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

os.environ.setdefault("MAVLINK20", "1")

mavsdk = pytest.importorskip("mavsdk_grpc")

from testkit import sim_vehicle  # noqa: E402
from planner.output.export_files import qgc_plan  # noqa: E402
from planner.output.mission_items import FENCE, MISSION, RALLY, MissionItem, mission_set  # noqa: E402
from planner.output.mission_wire import compare_items  # noqa: E402
from testkit import free_port, wire_plan, wire_world  # noqa: E402



def _row(it: object, mission_type: int) -> MissionItem:
    return MissionItem(
        seq=it.seq, command=it.command, frame=it.frame, lat=it.x / 1e7, lon=it.y / 1e7, alt_m=it.z,  # type: ignore[attr-defined]
        param1=it.param1, param2=it.param2, param3=it.param3, param4=it.param4,  # type: ignore[attr-defined]
        autocontinue=it.autocontinue, mission_type=mission_type,  # type: ignore[attr-defined]
    )


async def _import_with_mavsdk(plan_path: Path, vehicle: str) -> object:
    system = mavsdk.System(port=free_port())
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
    world, plan = wire_world(dialect, name="mavsdk-test", docks=2), wire_plan()
    path = tmp_path / "mission.plan"
    path.write_text(qgc_plan(plan, world))
    with sim_vehicle("udpin:127.0.0.1:0", dialect, heartbeat_s=0.2) as sim:  # type: ignore[arg-type]
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
