"""Links bound to their vehicle (issue 38) and the vehicle's truth now (issue 42), at the hub, over real MAVLink
on 127.0.0.1: forged traffic is counted and never read, a rebooted vehicle's old session is dropped, a value past
its freshness limit is not read, PreArm texts and parameters are kept, foreign control holds the drone.

Each wait is bounded; the hub's limits are shortened so the module runs in seconds."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from flows.fleet.hub import VehicleHub  # noqa: E402
from flows.fleet.live import Freshness, LiveDrone  # noqa: E402
from flows.fleet.records import LedgerRecords  # noqa: E402
from flows.fleet.watch import HoldTimes  # noqa: E402
from flows.ledger import open_ledger  # noqa: E402
from testkit import sim_vehicle  # noqa: E402
from flows.vehicle.keys import write_signing_key  # noqa: E402
from flows.vehicle.link import VehicleLink, open_link  # noqa: E402
from flows.vehicle.mission_client import MissionClient  # noqa: E402
from flows.errors import DeviceUnavailable
from planner.flight.params import NavLimits  # noqa: E402
from planner.world.nav_params import NAV_PARAM_NAMES, NavParams  # noqa: E402
from planner.output.mission_items import FRAME_GLOBAL_RELATIVE_ALT, MISSION, MissionItem  # noqa: E402
from fleet.rawpeer import RawVehicle, forge_flight, forger  # noqa: E402
from testkit import bare_world, drone, free_port  # noqa: E402

M = mavutil.mavlink
HOME = (60.1700, 24.9410, 12.0)
KEY = bytes(range(1, 33))


class Feed:
    def __init__(self) -> None:
        self.events: list[tuple[str, str | None, dict[str, Any]]] = []

    def __call__(self, kind: str, tenant: str | None, data: dict[str, Any]) -> None:
        self.events.append((kind, tenant, data))

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [d for k, _, d in self.events if k == kind]


@pytest.fixture
def feed() -> Feed:
    return Feed()


@pytest.fixture
def make_hub(tmp_path: Path, feed: Feed) -> Iterator[Callable[..., VehicleHub]]:
    hubs: list[VehicleHub] = []

    def make(**kw: Any) -> VehicleHub:
        kw.setdefault("freshness", Freshness(1.5, 1.5, 1.5))
        hub = VehicleHub(now=lambda: datetime.now(timezone.utc), links=dict, key_store=tmp_path / "keys",
                         publish=feed, silent_after_s=1.5, times=HoldTimes(heartbeat_timeout_s=1.0), **kw)
        hubs.append(hub)
        return hub

    yield make
    for h in hubs:
        h.stop()


def until(what: Callable[[], Any], timeout_s: float) -> Any:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    return what()


def live(hub: VehicleHub, drone_id: str = "D1") -> LiveDrone:
    return hub.snapshot()[drone_id]


def hub_socket(hub: VehicleHub, drone_id: str = "D1") -> tuple[str, int]:
    watch = hub.watch_of(drone_id)
    assert watch is not None and until(lambda: watch.held is not None, 5)
    return tuple(watch.held.conn.port.getsockname()[:2])  # type: ignore[union-attr, return-value]


def test_forged_telemetry_from_another_source_is_counted_never_read(make_hub: Callable[..., VehicleHub],
                                                                    feed: Feed) -> None:
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, battery_pct=77.0, home=HOME) as sim:
        hub = make_hub()
        hub.follow(bare_world(drones=[drone("D1", link=sim.address)]))
        assert until(lambda: live(hub).battery_pct == 77.0 and live(hub).position() is not None, 10)
        bound = hub_socket(hub)
        assert bound[0] == "127.0.0.1"  # the route's address to the vehicle, never 0.0.0.0
        attacker = forger(bound)
        try:
            for _ in range(20):  # armed in AUTO at 480 m and 5 %, as issue 38's attacker sent
                forge_flight(attacker)
                time.sleep(0.05)
        finally:
            attacker.close()
        assert until(lambda: live(hub).foreign.get("other_source", 0) >= 60, 5), live(hub).foreign
        d = live(hub)
        assert (d.status, d.battery_pct, d.view.armed, d.view.mode) == ("ONLINE", 77.0, False, "STABILIZE")
        assert d.position() == {"lat": HOME[0], "lon": HOME[1], "alt_m": 0.0}
        assert d.to_dict()["intrusion"]["other_source"] >= 60
        events = until(lambda: feed.of("fleet.intrusion"), 3)
        assert events and events[0]["kind"] == "forged" and events[0]["other_source"] >= 1
        assert events[0]["sources"] and events[0]["sources"][0].startswith("127.0.0.1:")
        assert not feed.of("fleet.battery_low")


def test_a_signed_link_refuses_unsigned_frames_and_another_system_from_the_vehicles_own_socket(
        make_hub: Callable[..., VehicleHub], tmp_path: Path) -> None:
    write_signing_key(tmp_path / "keys", "d1", KEY)
    with RawVehicle(signing_key=KEY) as raw:
        hub = make_hub()
        hub.follow(bare_world(drones=[drone("D1", link=raw.address, mavlink_system_id=1, signing_key="d1")]))
        assert until(lambda: live(hub).status == "ONLINE", 5)
        raw.battery(81)
        assert until(lambda: live(hub).status == "ONLINE" and live(hub).battery_pct == 81.0, 8), live(hub)
        raw.conn.mav.signing.sign_outgoing = False
        for _ in range(5):
            raw.battery(4)  # unsigned, from the vehicle's own address
        raw.conn.mav.signing.sign_outgoing = True
        raw.conn.mav.srcSystem = 9
        for _ in range(5):
            raw.battery(3)  # signed, but another system id
        raw.conn.mav.srcSystem = 1
        assert until(lambda: live(hub).foreign.get("unsigned", 0) >= 5 and live(hub).foreign.get("other_system", 0) >= 5,
                     5), live(hub).foreign
        assert live(hub).battery_pct == 81.0 and live(hub).signed is True
        assert live(hub).to_dict()["intrusion"]["other_system"] >= 5


def test_a_udpin_link_latches_to_its_vehicle_and_refuses_other_senders(make_hub: Callable[..., VehicleHub]) -> None:
    listen = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listen.bind(("127.0.0.1", 0))
    port = listen.getsockname()[1]
    listen.close()
    link = VehicleLink(f"udpin:127.0.0.1:{port}")
    vehicle = mavutil.mavlink_connection(f"udpout:127.0.0.1:{port}", source_system=1, source_component=1)
    stop = threading.Event()

    def beat() -> None:
        while not stop.is_set():
            vehicle.mav.heartbeat_send(M.MAV_TYPE_QUADROTOR, M.MAV_AUTOPILOT_ARDUPILOTMEGA, 0, 0, 0)
            stop.wait(0.1)

    t = threading.Thread(target=beat, daemon=True)
    t.start()
    try:
        link.wait_vehicle(time.monotonic() + 3)
        assert link.conn.peer == ("127.0.0.1", vehicle.port.getsockname()[1])
        attacker = forger(("127.0.0.1", port))
        for _ in range(10):
            forge_flight(attacker)
        attacker.close()
        link.pump(0.5)
        assert link.foreign()["other_source"] >= 30 and not link.view.armed
    finally:
        stop.set()
        t.join(2)
        vehicle.close()
        link.close()


def test_a_reboot_drops_the_old_session_until_fresh_telemetry_arrives(make_hub: Callable[..., VehicleHub],
                                                                     feed: Feed) -> None:
    with RawVehicle(boot_ms=600_000) as raw:
        hub = make_hub(freshness=Freshness(1.5, 30.0, 30.0))
        world = bare_world(drones=[drone("D1", link=raw.address)])
        hub.follow(world)
        assert until(lambda: live(hub).status == "ONLINE", 5)
        raw.system_time()
        raw.battery(73)
        raw.text("PreArm: Need 3D Fix")
        assert until(lambda: live(hub).battery_pct == 73.0 and live(hub).view.prearm, 5), live(hub)
        assert live(hub).view.prearm == ("PreArm: Need 3D Fix",)
        raw.system_time(boot_ms=4_000)  # the vehicle rebooted: its boot clock starts again
        assert until(lambda: live(hub).view.session == 1, 5)
        d = live(hub)
        assert d.battery_pct is None and d.view.prearm == () and "battery" in d.stale
        assert hub.world(world).drone("D1").battery_pct == 0.0  # unknown: the rules never read the old 73 %
        assert until(lambda: feed.of("fleet.session"), 3)
        raw.battery(12)
        assert until(lambda: live(hub).battery_pct == 12.0, 5)
        assert hub.world(world).drone("D1").battery_pct == 12.0


def test_a_battery_older_than_its_limit_is_not_read(make_hub: Callable[..., VehicleHub]) -> None:
    with RawVehicle() as raw:
        hub = make_hub()  # battery fresh for 1.5 s
        world = bare_world(drones=[drone("D1", link=raw.address, battery_pct=99.0)])
        hub.follow(world)
        assert until(lambda: live(hub).status == "ONLINE", 5)
        raw.battery(64)
        assert until(lambda: live(hub).battery_pct == 64.0, 5)
        assert until(lambda: live(hub).battery_pct is None, 4)  # heartbeats go on, the battery stopped coming
        d = live(hub)
        assert d.status == "ONLINE" and d.stale == ("battery", "position")
        assert hub.world(world).drone("D1").battery_pct == 0.0


def test_the_hub_reads_the_vehicles_parameters(make_hub: Callable[..., VehicleHub]) -> None:
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, home=HOME) as sim:
        hub = make_hub()
        hub.follow(bare_world(drones=[drone("D1", link=sim.address)]))
        assert until(lambda: "RTL_ALT" in live(hub).view.params, 8), live(hub).view.params
        assert live(hub).view.params["RTL_ALT"] == sim.params["RTL_ALT"]
        assert live(hub).to_dict()["params"]["RTL_ALT"] == sim.params["RTL_ALT"]


def test_a_live_plan_is_timed_with_the_vehicles_navigation_parameters(make_hub: Callable[..., VehicleHub]) -> None:
    """The hub reads every parameter the flight model uses (PARAM_REQUEST_READ) and the live world's drone carries
    them over the fleet file's ``nav_params`` (issue 43): the vehicle's WPNAV_SPEED 6 m/s, not the file's 12."""
    vehicle = {"WPNAV_SPEED": 600.0, "WPNAV_ACCEL": 150.0, "RTL_LOIT_TIME": 0.0}
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, home=HOME, params=vehicle) as sim:
        hub = make_hub()
        filed = replace(drone("D1", link=sim.address), nav_params=NavParams.of({"WPNAV_SPEED": 1200.0, "WPNAV_RADIUS": 300.0}))
        world = bare_world(drones=[filed])
        hub.follow(world)
        names = NAV_PARAM_NAMES["ardupilot"]
        assert until(lambda: all(n in live(hub).view.params for n in names), 8), live(hub).view.params
        flown = hub.world(world).drone("D1")
        assert {n: flown.nav_params.given(n) for n in names} == {n: sim.params[n] for n in names}
        lim, file_lim = NavLimits.for_drone(flown), NavLimits.for_drone(filed)
        assert (lim.speed_mps, lim.accel_mss, lim.radius_m, lim.rtl_loiter_s) == (6.0, 1.5, sim.params["WPNAV_RADIUS"] / 100, 0.0)
        assert (file_lim.speed_mps, file_lim.radius_m) == (12.0, 3.0)


def test_a_mission_uploaded_by_another_client_holds_the_drone_until_cleared(
        make_hub: Callable[..., VehicleHub], feed: Feed, tmp_path: Path) -> None:
    ledger = open_ledger(tmp_path / "home")
    records = LedgerRecords(ledger, lambda: datetime.now(timezone.utc))
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, home=HOME) as sim:
        hub = make_hub(records=records)
        world = bare_world(drones=[drone("D1", link=sim.address, tenant="city-fire")])
        hub.follow(world)
        assert until(lambda: live(hub).status == "ONLINE" and live(hub).view.mission_count_said is not None, 8)
        other = VehicleLink(sim.address, system_id=254, streams={})  # another ground station, its own socket
        try:
            other.connect(time.monotonic() + 3)
            items = tuple(MissionItem(seq=i, command=M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL_RELATIVE_ALT,
                                      lat=HOME[0] + i * 1e-4, lon=HOME[1], alt_m=30.0) for i in range(4))
            tr = MissionClient(other, retry_s=0.2).upload(items, MISSION, time.monotonic() + 5)
            assert tr.outcome == "ACCEPTED", tr
        finally:
            other.close()
        assert until(lambda: live(hub).status == "HELD", 6), live(hub)
        d = live(hub)
        assert d.fault is not None and d.fault.code == "INTRUSION" and "mission" in d.fault.message
        assert hub.world(world).drone("D1").status == "HELD"  # not eligible: the rules read the status
        assert until(lambda: feed.of("fleet.intrusion"), 5), feed.events
        event = feed.of("fleet.intrusion")[0]
        assert event["kind"] == "foreign_control" and event["what"] == ["mission"]
        rows = ledger.audit_of(("fleet.intrusion",))
        assert rows and rows[-1].actor == "authority:hub" and rows[-1].args_redacted["drone_id"] == "D1"
        assert records.holds().keys() == {"D1"}  # a restarted server holds it still
        hub.clear("D1", by="chen.jing", reason="our own technician re-flashed the mission; checked on site")
        assert until(lambda: live(hub).status == "ONLINE", 3)
        assert records.holds() == {} and ledger.audit_of(("fleet.cleared",))[-1].actor == "chen.jing"
        assert feed.of("fleet.cleared")[0]["reason"].startswith("our own technician")


def test_a_tcp_peer_that_accepts_and_closes_is_retried_with_backoff_and_nothing_listening_is_said(
        make_hub: Callable[..., VehicleHub]) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    port = server.getsockname()[1]
    accepted = 0
    stop = threading.Event()

    def accept_and_close() -> None:
        nonlocal accepted
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted += 1
            conn.close()

    t = threading.Thread(target=accept_and_close, daemon=True)
    t.start()
    try:
        link = VehicleLink(f"tcp:127.0.0.1:{port}", heartbeat_timeout_s=4.0)
        with pytest.raises(DeviceUnavailable) as caught:
            link.wait_vehicle(time.monotonic() + 4.0)
        link.close()
        assert accepted <= 4, accepted  # 1 + reconnections after 1 and 2 s: never thousands a second
        assert "held by another client" in caught.value.message  # something listens: it may be busy
    finally:
        stop.set()
        t.join(2)
        server.close()
    with pytest.raises(DeviceUnavailable) as nobody:
        open_link(f"tcp:127.0.0.1:{port}", heartbeat_timeout_s=1.0)
    assert "nothing listens" in nobody.value.message and "held by another client" not in nobody.value.message


def test_one_holder_per_link_another_drone_or_process_is_told_who_holds_it(make_hub: Callable[..., VehicleHub],
                                                                         tmp_path: Path) -> None:
    import subprocess
    import sys

    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, battery_pct=70.0) as sim:
        hub = make_hub()
        hub.follow(bare_world(drones=[drone("D1", link=sim.address), drone("D2", link=sim.address)]))
        assert until(lambda: live(hub, "D1").status == "ONLINE" and live(hub, "D2").fault is not None, 8)
        d2 = live(hub, "D2")
        assert d2.status == "OFFLINE" and d2.fault is not None and d2.fault.code == "LINK_HELD"
        assert "another drone of this authority for D1" in d2.fault.message
    other = f"udpout:127.0.0.1:{free_port('udp')}"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from flows.fleet.link_claim import claim_link; "
        f"c = claim_link({other!r}, drone_id='M3TD-02', owner='sortie server, home /srv/other'); "
        "print('held', flush=True); time.sleep(60)")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        hub2 = make_hub()
        hub2.follow(bare_world(drones=[drone("M3TD-02", link=other)]))
        assert until(lambda: live(hub2, "M3TD-02").fault is not None, 5)
        fault = live(hub2, "M3TD-02").fault
        assert fault is not None and fault.code == "LINK_HELD" and f"pid {holder.pid}" in fault.message
        assert "/srv/other" in fault.message
    finally:
        holder.kill()
        holder.wait(5)
