"""Bound vehicles: the fleet entry's system id, autopilot and signing key decide who gets a mission.

Real UDP on 127.0.0.1 against the simulator. "Gets nothing" is checked on the
vehicle's side: a recorder part sees every message the vehicle accepts, and
no MISSION_* message may be among them (a wrongly signed message never even
parses there).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("MAVLINK20", "1")

from flows.sim.vehicle import SimVehicle  # noqa: E402
from testkit import sim_vehicle  # noqa: E402
from flows.vehicle.keys import load_signing_key, write_signing_key  # noqa: E402
from flows.vehicle.upload import read_back, binding_for, upload_plan  # noqa: E402
from flows.errors import DeviceMismatch, DeviceUnavailable
from planner.errors import InvalidArgument, NotFound
from planner.output.mission_items import MISSION, mission_set  # noqa: E402
from planner.output.mission_wire import compare_items  # noqa: E402
from planner.world.model import World  # noqa: E402
from testkit import wire_plan, wire_world  # noqa: E402

FAST = dict(timeout_s=8.0, retry_s=0.05, max_retries=10, heartbeat_timeout_s=1.0)
SIM_FAST = dict(heartbeat_s=0.05, rerequest_s=0.05, transfer_timeout_s=0.6)
KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))


class Recorder:
    """A vehicle part that records the type of every message the vehicle accepted."""

    def __init__(self) -> None:
        self.types: list[str] = []

    def on_message(self, vehicle: SimVehicle, msg: Any) -> bool:
        self.types.append(msg.get_type())
        return False

    def on_mission_stored(self, vehicle: SimVehicle, mission_type: int, items: tuple[Any, ...]) -> None:
        return None

    def tick(self, vehicle: SimVehicle, now_s: float) -> None:
        return None

    @property
    def mission_messages(self) -> list[str]:
        return [t for t in self.types if t.startswith("MISSION_")]


def _bound(world: World, **fields: Any) -> World:
    return replace(world, drones=(replace(world.drones[0], **fields),) + world.drones[1:])


def _sim(dialect: str = "px4", **kwargs: Any) -> tuple[SimVehicle, Recorder]:
    """A vehicle with two ports: SERIAL0 (which ArduPilot keeps open to unsigned messages) and SERIAL1 (which
    drops them once a key is set: ``accept_unsigned_callback``, GCS_Signing.cpp); the signing cases use SERIAL1."""
    rec = Recorder()
    ports = ["udpin:127.0.0.1:0", "udpin:127.0.0.1:0"]
    return sim_vehicle(ports, dialect, flight=rec, **{**SIM_FAST, **kwargs}), rec  # type: ignore[arg-type]


@pytest.mark.timeout(20)
def test_the_bound_vehicle_gets_the_mission_and_another_system_id_gets_nothing() -> None:
    world = _bound(wire_world("px4"), mavlink_system_id=7, mavlink_component_id=1)
    sim, rec = _sim(system_id=7)
    with sim:
        outcome = upload_plan(wire_plan(), world, link=sim.address, **FAST)  # type: ignore[arg-type]
    assert outcome.status == "ACCEPTED" and outcome.uploads[0].binding["system_id"] == 7
    impostor, rec2 = _sim(system_id=1)
    with impostor:
        with pytest.raises(DeviceMismatch, match="system 1") as info:
            upload_plan(wire_plan(), world, link=impostor.address, **FAST)  # type: ignore[arg-type]
    assert info.value.details["uploads"][0]["status"] == "FAILED"
    assert rec2.mission_messages == [] and impostor.stats.uploads_completed == 0
    assert all(items == () for items in impostor.missions.values())


@pytest.mark.timeout(20)
def test_another_component_or_autopilot_gets_nothing() -> None:
    world = _bound(wire_world("px4"), mavlink_system_id=1, mavlink_component_id=1)
    sim, rec = _sim(component_id=2)
    with sim:
        with pytest.raises(DeviceMismatch, match="component 2"):
            upload_plan(wire_plan(), world, link=sim.address, **FAST)  # type: ignore[arg-type]
    assert rec.mission_messages == []
    ardupilot, rec2 = _sim("ardupilot")
    with ardupilot:
        with pytest.raises(DeviceMismatch, match="MAV_AUTOPILOT_ARDUPILOTMEGA"):
            upload_plan(wire_plan(), world, link=ardupilot.address, **FAST)  # type: ignore[arg-type]
    assert rec2.mission_messages == []


@pytest.mark.timeout(30)
def test_a_signing_drone_signs_everything_and_refuses_other_keys_and_unsigned_vehicles(tmp_path: Path) -> None:
    store = tmp_path / "keys"
    write_signing_key(store, "m30t-01", KEY)
    world = _bound(wire_world("ardupilot"), mavlink_system_id=1, signing_key="m30t-01")
    assert binding_for(world.drones[0], store).signing_key == KEY
    # the right key: the vehicle parses (and so accepts) only signed messages, and the upload goes through
    sim, rec = _sim("ardupilot", signing_key=KEY)
    with sim:
        serial1 = sim.addresses[1]
        outcome = upload_plan(wire_plan(), world, link=serial1, key_store=store, **FAST)  # type: ignore[arg-type]
        assert outcome.status == "ACCEPTED" and outcome.uploads[0].binding["signed"] is True
        signing = sim.ports[1].conn.mav.signing
        assert signing.goodsig_count > 0 and signing.badsig_count == 0 and signing.reject_count == 0
        held = sim.missions[MISSION]
    assert compare_items(mission_set(wire_plan(), 0, world).mission, held, dialect="ardupilot") == ()
    assert "MISSION_COUNT" in rec.mission_messages
    # another key: neither side can read the other; nothing reaches the vehicle's mission protocol on SERIAL1
    other, rec2 = _sim("ardupilot", signing_key=OTHER_KEY)
    with other:
        with pytest.raises(DeviceMismatch, match="not signed with this drone's key"):
            upload_plan(wire_plan(), world, link=other.addresses[1], key_store=store, **FAST)  # type: ignore[arg-type]
    assert rec2.types == [] and other.stats.uploads_completed == 0 and other.stats.refused_unsigned > 0
    # an unsigned vehicle on the link of a drone that should sign: its replies are ignored
    unsigned, rec3 = _sim("ardupilot")
    with unsigned:
        with pytest.raises(DeviceMismatch, match="not signed"):
            upload_plan(wire_plan(), world, link=unsigned.address, key_store=store, **FAST)  # type: ignore[arg-type]
        assert rec3.mission_messages == [] and unsigned.stats.uploads_completed == 0
        with pytest.raises(DeviceMismatch):
            read_back(unsigned.address, binding=binding_for(world.drones[0], store), timeout_s=3.0, retry_s=0.05,
                      heartbeat_timeout_s=1.0)


@pytest.mark.timeout(30)
def test_a_signing_vehicle_drops_unsigned_uploads_except_on_serial0() -> None:
    """FACTS.md: with a key set "SERIAL0 always accepts unsigned messages", other ports "silently drop" them;
    unsigned clients can still read the signed frames."""
    world = wire_world("ardupilot")  # no signing key in the fleet entry
    sim, rec = _sim("ardupilot", signing_key=KEY)
    with sim:
        with pytest.raises(DeviceUnavailable) as info:  # heard (signed frames parse), but every request dropped
            upload_plan(wire_plan(), world, link=sim.addresses[1], **{**FAST, "timeout_s": 3.0})  # type: ignore[arg-type]
        assert rec.mission_messages == [] and sim.stats.refused_unsigned > 0
        assert "signs its messages" in info.value.message and "SERIAL0" in info.value.message
        outcome = upload_plan(wire_plan(), world, link=sim.address, **FAST)  # type: ignore[arg-type]
        assert outcome.status == "ACCEPTED" and sim.stats.uploads_completed == 3


def test_key_store_refuses_paths_missing_keys_and_bad_keys(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument):
        load_signing_key(tmp_path, "../secret")
    with pytest.raises(NotFound):
        load_signing_key(tmp_path, "absent")
    (tmp_path / "short.key").write_text("abcd\n")
    with pytest.raises(InvalidArgument, match="32"):
        load_signing_key(tmp_path, "short")
    path = write_signing_key(tmp_path, "ok", KEY)
    assert path.stat().st_mode & 0o777 == 0o600 and load_signing_key(tmp_path, "ok") == KEY
