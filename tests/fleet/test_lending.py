"""The hub's held link is lent to every part that opens the same address through the hub's ``Vehicles`` port
(``VehicleHub.vehicles``, which the authority's grounds carry): no second connection to a vehicle.

Against the simulator on a TCP port, which serves ONE client (a second one
connects and hears nothing: FACTS.md, ArduCopter SITL observed): with the hub
holding the port, a read-back through the port succeeds only because it
speaks through the held link; the lease comes back and the hub keeps reading.
A link opened per call (``OpenPerCall``) is a second client and hears nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from flows.fleet.hub import VehicleHub
from testkit import sim_vehicle
from flows.vehicle.binding import VehicleBinding
from flows.vehicle.read_back import read_back
from flows.vehicle.vehicles import PER_CALL
from flows.errors import DeviceMismatch, DeviceUnavailable
from testkit import bare_world, drone, free_port


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[VehicleHub, str]]:
    port = free_port()
    sim = sim_vehicle(f"tcpin:127.0.0.1:{port}", "ardupilot", heartbeat_s=0.2, rerequest_s=0.1).start()
    hub = VehicleHub(now=lambda: datetime.now(timezone.utc), links=dict, key_store=tmp_path / "keys",
                     silent_after_s=5.0)
    link = f"tcp:127.0.0.1:{port}"
    hub.follow(bare_world(drones=[drone("D1", link=link, mavlink_system_id=1)]))
    end = time.monotonic() + 15
    while time.monotonic() < end and (hub.watch_of("D1") is None or hub.watch_of("D1").held is None  # type: ignore[union-attr]
                                      or hub.snapshot()["D1"].status != "ONLINE"):
        time.sleep(0.1)
    watch = hub.watch_of("D1")
    assert watch is not None and watch.held is not None, "the hub held no link to the vehicle within 15 s"
    try:
        yield hub, link
    finally:
        hub.stop()
        sim.stop()


def test_a_part_opening_a_held_address_speaks_through_the_held_link(held: tuple[VehicleHub, str]) -> None:
    hub, link = held
    watch = hub.watch_of("D1")
    assert watch is not None and watch.held is not None and hub.vehicles.held(link) is watch.held
    rows, vehicle = read_back(link, binding=VehicleBinding(system_id=1), timeout_s=15, vehicles=hub.vehicles)
    assert vehicle["system"] == 1 and vehicle["dialect"] == "ardupilot" and 0 in rows  # a second TCP client hears nothing
    assert watch.held.leases == 0 and watch.opens == 1  # the lease came back; the hub never reopened
    time.sleep(2.5)
    assert hub.snapshot()["D1"].status == "ONLINE"  # the hub reads again: the vehicle is still heard


def test_a_borrower_with_another_binding_is_refused_and_nothing_is_sent(held: tuple[VehicleHub, str]) -> None:
    hub, link = held
    with pytest.raises(DeviceMismatch, match="another system id"):
        read_back(link, binding=VehicleBinding(system_id=9), timeout_s=5, vehicles=hub.vehicles)
    watch = hub.watch_of("D1")
    assert watch is not None and watch.held is not None and watch.held.leases == 0


def test_nothing_is_lent_once_the_hub_stops(held: tuple[VehicleHub, str]) -> None:
    hub, link = held
    hub.stop()
    assert hub.vehicles.held(link) is None


def test_a_borrower_that_keeps_its_lease_and_stops_reading_does_not_silence_the_drone(
        held: tuple[VehicleHub, str]) -> None:
    hub, link = held
    borrowed = hub.vehicles.open(link, VehicleBinding(system_id=1))
    watch = hub.watch_of("D1")
    assert watch is not None and borrowed is watch.held and borrowed.leases == 1
    time.sleep(8.0)  # longer than the hub's silence limit (5 s): nobody reads but the hub
    assert hub.snapshot()["D1"].status == "ONLINE"
    borrowed.close()
    assert watch.held is not None and watch.held.leases == 0


def test_a_link_changed_while_lent_stays_open_for_its_borrower_until_it_is_done(
        held: tuple[VehicleHub, str]) -> None:
    hub, link = held
    borrowed = hub.vehicles.open(link, VehicleBinding(system_id=1))  # say, the follower of a flight
    hub.follow(bare_world(drones=[drone("D1", link=f"udpout:127.0.0.1:{free_port('udp')}", mavlink_system_id=1)]))
    time.sleep(1.0)  # the old watch has stopped; its link is no longer lent to newcomers
    assert hub.vehicles.held(link) is None
    rows, vehicle = read_back(borrowed, timeout_s=15)  # still speaks to the vehicle
    assert vehicle["system"] == 1 and 0 in rows
    borrowed.close()  # the last lease: now the old link closes
    end = time.monotonic() + 5
    while time.monotonic() < end and borrowed.conn.port.fileno() != -1:
        time.sleep(0.1)
    assert borrowed.conn.port.fileno() == -1


def test_a_link_opened_per_call_is_a_second_client_and_hears_nothing(held: tuple[VehicleHub, str]) -> None:
    """What the port is for: outside it (the embedded mode's ``OpenPerCall``), a second TCP client of the held port
    connects and hears no heartbeat, as a real ArduPilot's second client does."""
    hub, link = held
    with pytest.raises(DeviceUnavailable, match="held by another client"):
        read_back(link, binding=VehicleBinding(system_id=1), timeout_s=3, heartbeat_timeout_s=1.5, vehicles=PER_CALL)
    assert hub.snapshot()["D1"].status == "ONLINE"


def test_a_drone_is_announced_online_only_once_its_link_is_lent(tmp_path: Path) -> None:
    """A part that acts on ``fleet.online`` (a dispatch waiting for the drone) opens the address at once: the link
    must already be lent then, or the part opens a second TCP client and hears nothing. Checked in the announcement
    itself, on the watch's thread, so no scheduling hides the order."""
    port = free_port()
    sim = sim_vehicle(f"tcpin:127.0.0.1:{port}", "ardupilot", heartbeat_s=0.2, rerequest_s=0.1).start()
    link = f"tcp:127.0.0.1:{port}"
    lent_when_announced: list[bool] = []
    hub: VehicleHub | None = None

    def publish(kind: str, tenant: str, data: dict[str, object]) -> None:
        if kind == "fleet.online" and hub is not None:
            lent_when_announced.append(hub.vehicles.held(link) is not None)

    hub = VehicleHub(now=lambda: datetime.now(timezone.utc), links=dict, key_store=tmp_path / "keys",
                     silent_after_s=5.0, publish=publish)
    try:
        hub.follow(bare_world(drones=[drone("D1", link=link, mavlink_system_id=1)]))
        end = time.monotonic() + 15
        while time.monotonic() < end and not lent_when_announced:
            time.sleep(0.05)
        assert lent_when_announced == [True], lent_when_announced
    finally:
        hub.stop()
        sim.stop()
