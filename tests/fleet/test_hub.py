"""The hub holds one link per drone against the real simulator over UDP on 127.0.0.1: live state, named faults,
events. Each wait is bounded; the hub's limits are shortened (silent after 1.5 s) so the module runs in seconds."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from flows.fleet.hub import VehicleHub
from flows.fleet.live import LiveDrone
from flows.fleet.watch import HoldTimes
from flows.sim.state import IN_AIR
from testkit import sim_vehicle
from flows.vehicle.keys import write_signing_key
from testkit import bare_world, drone, free_port

HOME = (60.1700, 24.9410, 12.0)


class Feed:
    def __init__(self) -> None:
        self.events: list[tuple[str, str | None, dict[str, Any]]] = []

    def __call__(self, kind: str, tenant: str | None, data: dict[str, Any]) -> None:
        self.events.append((kind, tenant, data))

    def kinds(self, drone_id: str) -> list[str]:
        return [k for k, _, d in self.events if d.get("drone_id") == drone_id]


@pytest.fixture
def feed() -> Feed:
    return Feed()


@pytest.fixture
def make_hub(tmp_path: Path, feed: Feed) -> Iterator[Callable[..., VehicleHub]]:
    hubs: list[VehicleHub] = []

    def make(**kw: Any) -> VehicleHub:
        hub = VehicleHub(now=lambda: datetime.now(timezone.utc), links=dict, key_store=tmp_path / "keys",
                         publish=feed, silent_after_s=1.5, times=HoldTimes(heartbeat_timeout_s=1.0), **kw)
        hubs.append(hub)
        return hub

    yield make
    for h in hubs:
        h.stop()


def until(what: Callable[[], bool], timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if what():
            return True
        time.sleep(0.1)
    return what()


def live_of(hub: VehicleHub, drone_id: str) -> LiveDrone:
    return hub.snapshot()[drone_id]


def test_a_talking_vehicle_is_online_with_its_own_battery_and_position_then_offline_when_it_stops(
        make_hub: Callable[..., VehicleHub], feed: Feed) -> None:
    sim = sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, battery_pct=77.0, home=HOME).start()
    try:
        hub = make_hub()
        world = bare_world(drones=[drone("D1", link=sim.address, battery_pct=10.0, status="OFFLINE")])
        hub.follow(world)
        # ArduPilot streams nothing but HEARTBEAT until asked: battery and position prove the hub asked
        assert until(lambda: live_of(hub, "D1").battery_pct == 77.0 and live_of(hub, "D1").position() is not None, 10)
        d = live_of(hub, "D1")
        assert d.status == "ONLINE" and d.fault is None and d.view.mode == "STABILIZE" and not d.view.armed
        assert d.position() == {"lat": HOME[0], "lon": HOME[1], "alt_m": 0.0}
        t0 = time.perf_counter()
        seen = hub.world(world).drone("D1")
        assert time.perf_counter() - t0 < 0.2  # a request copies values; it never waits on a vehicle
        assert (seen.status, seen.battery_pct) == ("ONLINE", 77.0)  # the vehicle's, not the file's OFFLINE and 10 %
        assert abs((datetime.now(timezone.utc) - seen.last_telemetry_at).total_seconds()) < 3
        assert feed.kinds("D1") == ["fleet.online"]
    finally:
        sim.stop()
    t0 = time.monotonic()
    assert until(lambda: live_of(hub, "D1").status == "OFFLINE", 6)
    assert time.monotonic() - t0 < 4.0
    d = live_of(hub, "D1")
    assert d.fault is not None and d.fault.code == "SILENT"
    assert hub.world(world).drone("D1").status == "OFFLINE"
    assert until(lambda: feed.kinds("D1") == ["fleet.online", "fleet.offline"], 2), feed.events


def test_a_vehicle_that_comes_back_on_its_port_is_online_again(make_hub: Callable[..., VehicleHub],
                                                              feed: Feed) -> None:
    port = free_port("udp")
    hub = make_hub()
    world = bare_world(drones=[drone("D1", link=f"udpout:127.0.0.1:{port}")])
    with sim_vehicle(f"udpin:127.0.0.1:{port}", "ardupilot", heartbeat_s=0.2, battery_pct=60.0):
        hub.follow(world)
        assert until(lambda: live_of(hub, "D1").battery_pct == 60.0, 10)
    assert until(lambda: live_of(hub, "D1").status == "OFFLINE", 6)
    with sim_vehicle(f"udpin:127.0.0.1:{port}", "ardupilot", heartbeat_s=0.2, battery_pct=58.0):
        # the same held link hears it again and asks for its streams again (rates are kept per port and process)
        assert until(lambda: live_of(hub, "D1").status == "ONLINE" and live_of(hub, "D1").battery_pct == 58.0, 10)
    assert feed.kinds("D1")[:3] == ["fleet.online", "fleet.offline", "fleet.online"]


def test_a_vehicle_silent_while_armed_is_offline_as_silent_in_flight(make_hub: Callable[..., VehicleHub],
                                                                   feed: Feed) -> None:
    sim = sim_vehicle("udpin:127.0.0.1:0", "px4", heartbeat_s=0.2, battery_pct=50.0, home=HOME).start()
    sim.ground.armed, sim.ground.landed_state, sim.ground.alt_m = True, IN_AIR, 30.0
    hub = make_hub()
    try:
        hub.follow(bare_world(drones=[drone("D1", link=sim.address, autopilot="px4")]))
        assert until(lambda: live_of(hub, "D1").status == "IN_FLIGHT", 10)
    finally:
        sim.stop()
    assert until(lambda: live_of(hub, "D1").status == "OFFLINE", 6)
    fault = live_of(hub, "D1").fault
    assert fault is not None and fault.code == "SILENT_IN_FLIGHT", fault


@pytest.mark.parametrize("case", ["other_system", "other_autopilot", "unsigned_vehicle", "signed_vehicle", "nobody",
                                  "no_key"])
def test_each_fault_of_a_link_is_named_and_the_drone_is_offline(case: str, make_hub: Callable[..., VehicleHub],
                                                                feed: Feed, tmp_path: Path) -> None:
    sim_kw: dict[str, Any] = {"heartbeat_s": 0.2}
    drone_kw: dict[str, Any] = {}
    want = {"other_system": "DEVICE_MISMATCH", "other_autopilot": "DEVICE_MISMATCH",
            "unsigned_vehicle": "SIGNING_MISMATCH", "signed_vehicle": "SIGNING_MISMATCH", "nobody": "LINK_UNAVAILABLE",
            "no_key": "KEY_UNAVAILABLE"}[case]
    if case == "other_system":
        sim_kw["system_id"], drone_kw["mavlink_system_id"] = 7, 1
    if case == "other_autopilot":
        drone_kw["autopilot"] = "px4"
    if case == "unsigned_vehicle":
        write_signing_key(tmp_path / "keys", "d1", bytes(range(1, 33)))
        drone_kw["signing_key"] = "d1"
    if case == "no_key":
        drone_kw["signing_key"] = "absent"
    ports = ["udpin:127.0.0.1:0"]
    if case == "signed_vehicle":  # the drone's link on a second port: unsigned requests are dropped there (FACTS.md)
        sim_kw["signing_key"], ports = bytes(range(1, 33)), ["udpin:127.0.0.1:0", "udpin:127.0.0.1:0"]
    with sim_vehicle(ports, "ardupilot", **sim_kw) as sim:
        link = f"udpout:127.0.0.1:{free_port('udp')}" if case == "nobody" else sim.addresses[-1]
        hub = make_hub()
        hub.follow(bare_world(drones=[drone("D1", link=link, **drone_kw)]))
        assert until(lambda: live_of(hub, "D1").fault is not None, 8)
        d = live_of(hub, "D1")
        assert d.status == "OFFLINE" and d.fault is not None and d.fault.code == want, d.fault
        assert hub.world(bare_world(drones=[drone("D1", link=link, **drone_kw)])).drone("D1").status == "OFFLINE"
        assert until(lambda: feed.kinds("D1") == ["fleet.offline"], 2), feed.events
        assert feed.events[0][2]["fault"]["code"] == want


def test_a_changed_link_replaces_the_watch_without_waiting_for_the_old_one(
        make_hub: Callable[..., VehicleHub]) -> None:
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, battery_pct=55.0) as sim:
        hub = make_hub()
        hub.follow(bare_world(drones=[drone("D1", link=f"udpout:127.0.0.1:{free_port('udp')}")]))
        t0 = time.perf_counter()
        hub.follow(bare_world(drones=[drone("D1", link=sim.address)]))  # `sortie admin link set`, seen by a request
        assert time.perf_counter() - t0 < 0.2
        assert until(lambda: live_of(hub, "D1").battery_pct == 55.0, 10)
        assert live_of(hub, "D1").link == sim.address


def test_a_low_battery_is_an_event_once(make_hub: Callable[..., VehicleHub], feed: Feed) -> None:
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, battery_pct=18.0) as sim:
        hub = make_hub()
        hub.follow(bare_world(drones=[drone("D1", link=sim.address, tenant="city-fire")]))
        assert until(lambda: "fleet.battery_low" in feed.kinds("D1"), 10)
        time.sleep(1.0)
        assert feed.kinds("D1") == ["fleet.online", "fleet.battery_low"]
        kind, tenant, data = feed.events[-1]
        assert tenant == "city-fire" and data["battery_pct"] == 18.0
