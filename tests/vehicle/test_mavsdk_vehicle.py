"""A second, independent vehicle: MAVSDK's MissionRawServer (``mavsdk_server`` from mavsdk-grpc) on 127.0.0.1.

``mavsdk_server --sysid 1 --compid 1`` plays the autopilot's mission protocol
(MAVSDK's own ``MavlinkMissionTransferServer``, C++, not ours). Two things
make it run here:

- ``mavsdk_server`` serves nothing until it has discovered an *autopilot*
  (``connection_initiator.hpp``: "Waiting to discover system"), and a ground
  station is not one; a bare heartbeat from a peer system (id 200) lets it start.
- its ParamServer answers PARAM_SET with PARAM_ERROR "non-existing parameter"
  even for parameters provided through ``provide_param_float`` (mavsdk-grpc
  4.0.5, ``mavlink_parameter_server.cpp:255``), so the fence ceiling, which is
  a parameter and not part of the mission protocol, is left out here (the
  simulator tests cover it);
- it reports ``MAV_AUTOPILOT_GENERIC``, so the binding here names its system
  and component but no autopilot type; the items are PX4-shaped (0-based, no
  home slot), which is what MAVSDK stores.

The same uploads the simulator gets must be accepted and read back equal; a
lossy UDP relay in between (random drops both ways) is the fault matrix for
this implementation: ACCEPTED → it holds exactly the plan, otherwise an honest
FAILED/UNCERTAIN.
"""

from __future__ import annotations

import asyncio
import os
import random
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

os.environ.setdefault("MAVLINK20", "1")

mavsdk = pytest.importorskip("mavsdk_grpc")

from pymavlink import mavutil  # noqa: E402

from flows.errors import DispatchFailed, DispatchUncertain
from flows.vehicle.link import open_link  # noqa: E402
from flows.vehicle.mission_client import MissionClient  # noqa: E402
from flows.vehicle.upload import UploadResult, VehicleBinding, read_back, upload_mission_set  # noqa: E402
from planner.output.mission_items import FENCE, MISSION, RALLY, mission_set  # noqa: E402
from planner.output.mission_wire import compare_items  # noqa: E402
from testkit import free_port, wire_plan, wire_world  # noqa: E402

M = mavutil.mavlink
BINDING = VehicleBinding(system_id=1, component_id=1, autopilot=None)
FAST = dict(retry_s=0.3, max_retries=10, heartbeat_timeout_s=5.0)


class MavsdkVehicle:
    """mavsdk_server as vehicle (system 1, component 1) with its MissionRawServer subscribed, on its own loop."""

    def __init__(self) -> None:
        self.udp_port = free_port()
        self.grpc_port = free_port()
        self.ready = threading.Event()
        self.stop = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    @property
    def address(self) -> str:
        return f"udpout:127.0.0.1:{self.udp_port}"

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as exc:  # noqa: BLE001 - reported to the test through self.error
            self.error = exc
            self.ready.set()

    async def _main(self) -> None:
        system = mavsdk.System(port=self.grpc_port, sysid=1, compid=1)
        peer = mavutil.mavlink_connection(f"udpout:127.0.0.1:{self.udp_port}", source_system=200, source_component=1)
        try:
            connect = asyncio.ensure_future(system.connect(system_address=f"udpin://127.0.0.1:{self.udp_port}"))
            end = time.monotonic() + 60
            while not connect.done() and time.monotonic() < end:
                peer.mav.heartbeat_send(M.MAV_TYPE_QUADROTOR, M.MAV_AUTOPILOT_GENERIC, 0, 0, 0)
                await asyncio.sleep(0.3)
            await asyncio.wait_for(connect, 5)

            async def incoming() -> None:
                async for _ in system.mission_raw_server.incoming_mission():
                    pass

            listener = asyncio.ensure_future(incoming())
            await asyncio.sleep(1.0)
            self.ready.set()
            while not self.stop.is_set():
                await asyncio.sleep(0.1)
            listener.cancel()
        finally:
            peer.close()
            system._stop_mavsdk_server()


class LossyRelay:
    """UDP between the station and the vehicle, dropping a seeded fraction of datagrams each way."""

    def __init__(self, target_port: int, drop: float, seed: int = 3) -> None:
        self.front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.front.bind(("127.0.0.1", 0))
        self.back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.back.bind(("127.0.0.1", 0))
        self.target = ("127.0.0.1", target_port)
        self.drop, self.rng = drop, random.Random(seed)
        self.station: tuple[str, int] | None = None
        self.stop = threading.Event()
        self.dropped = 0
        self.threads = [threading.Thread(target=self._pump, args=(d,), daemon=True) for d in ("up", "down")]

    @property
    def address(self) -> str:
        return f"udpout:127.0.0.1:{self.front.getsockname()[1]}"

    def _pump(self, direction: str) -> None:
        sock = self.front if direction == "up" else self.back
        sock.settimeout(0.05)
        while not self.stop.is_set():
            try:
                data, addr = sock.recvfrom(65536)
            except (TimeoutError, OSError):
                continue
            if direction == "up":
                self.station = addr
            if self.rng.random() < self.drop:
                self.dropped += 1
                continue
            if direction == "up":
                self.back.sendto(data, self.target)
            elif self.station is not None:
                self.front.sendto(data, self.station)

    def __enter__(self) -> "LossyRelay":
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(2)
        self.front.close()
        self.back.close()


@pytest.fixture(scope="module")
def vehicle() -> Iterator[MavsdkVehicle]:
    v = MavsdkVehicle()
    v.thread.start()
    if not v.ready.wait(90) or v.error is not None:
        v.stop.set()
        pytest.fail(f"mavsdk_server did not come up as a vehicle: {v.error!r}")
    yield v
    v.stop.set()
    v.thread.join(10)


def _upload(address: str, timeout_s: float) -> tuple[UploadResult, Exception | None]:
    ms = replace(mission_set(wire_plan(), 0, wire_world("px4")), params={})  # see the module docstring
    result = UploadResult(drone_id=ms.drone_id, sortie_index=0, link=address, dialect="px4")
    try:
        upload_mission_set(ms, address, result, timeout_s=timeout_s, binding=BINDING, **FAST)  # type: ignore[arg-type]
    except (DispatchFailed, DispatchUncertain) as exc:
        return result, exc
    return result, None


def _clear(address: str) -> None:
    with open_link(address, BINDING, streams={}, heartbeat_timeout_s=10.0) as link:
        ml = MissionClient(link, retry_s=FAST["retry_s"], max_retries=FAST["max_retries"])  # type: ignore[arg-type]
        for t in (FENCE, MISSION, RALLY):
            assert ml.clear(t, time.monotonic() + 5).outcome == "CLEARED"
    assert all(items == () for items in _held(address).values())


def _held(address: str) -> dict[int, tuple[Any, ...]]:
    held, who = read_back(address, binding=BINDING, timeout_s=10.0, **FAST)  # type: ignore[arg-type]
    assert who["system"] == 1 and who["component"] == 1
    return held


@pytest.mark.timeout(120)
def test_mavsdk_vehicle_accepts_our_uploads_and_reads_them_back_equal(vehicle: MavsdkVehicle) -> None:
    result, exc = _upload(vehicle.address, 15.0)
    assert exc is None and result.status == "ACCEPTED", result.detail
    ms = mission_set(wire_plan(), 0, wire_world("px4"))
    held = _held(vehicle.address)
    for t in (FENCE, MISSION, RALLY):
        assert compare_items(ms.items_of(t), held[t], dialect="px4", mission_type=t) == (), t


@pytest.mark.timeout(120)
@pytest.mark.parametrize("drop", [0.1, 0.3])
def test_mavsdk_vehicle_behind_a_lossy_link_holds_the_plan_or_we_say_not(vehicle: MavsdkVehicle, drop: float) -> None:
    ms = mission_set(wire_plan(), 0, wire_world("px4"))
    _clear(vehicle.address)  # start empty: a read-back must not be fooled by the same items from an earlier case
    with LossyRelay(vehicle.udp_port, drop) as relay:
        result, exc = _upload(relay.address, 20.0)
    assert relay.dropped > 0
    held = _held(vehicle.address)  # read over the clean link: the truth
    same = {t: not compare_items(ms.items_of(t), held[t], dialect="px4", mission_type=t) for t in (FENCE, MISSION, RALLY)}
    if exc is None:
        assert result.status == "ACCEPTED" and all(same.values()), (result.detail, same)
        return
    assert result.status in ("FAILED", "UNCERTAIN") and result.holds is not None
    for name, t in (("fence", FENCE), ("mission", MISSION), ("rally", RALLY)):
        h = result.holds[name]
        if h is not None:
            assert h["count"] == len(held[t]), (name, h, len(held[t]))
