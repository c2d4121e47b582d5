"""A whole flight through ``sortie server``'s ONE held link per vehicle, signed: dispatch, launch, the follower,
pause, resume and recall.

The vehicle is the simulator with two ports: SERIAL0 (unused here) and a TCP
port — the drone's link — that serves ONE client (a second one connects and
hears nothing: FACTS.md) and, with a signing key set, silently drops every
unsigned command and stream request (ArduPilot's behaviour on every port but
SERIAL0, FACTS.md; ``flows.sim.ports``). The hub holds that port from the
server's start; the upload, the launch, the server's follower and each
control command succeed only by speaking through it, signed with the drone's
key. An unsigned ground station on the same port is answered nothing.
Real clock, real tokens, real HTTP and MAVLink on 127.0.0.1; about a minute and a half on a shared 2-core
machine.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fleet.fleetkit import DOCK_B, HYDRANTS, Server, day_old_world, start_server, until
from flows.sim.flight import FlightOptions, SimFlight
from flows.sim.vehicle import SimVehicle
from testkit import sim_vehicle
from flows.usecases.common import load_world_at
from flows.vehicle.keys import write_signing_key
from pymavlink.dialects.v20 import common as M
from testkit import free_port

pytestmark = pytest.mark.timeout(300)
KEY = bytes(range(100, 132))


@pytest.fixture
def signed(tmp_path: Path) -> Iterator[tuple[Server, SimVehicle, SimFlight]]:
    port = free_port()

    def bind(d: dict[str, Any]) -> None:
        if d["id"] == "M3TD-01":
            d.update(link=f"tcp:127.0.0.1:{port}", signing_key="m3td-01", mavlink_system_id=1)

    day_old_world(tmp_path / "world", bind)
    write_signing_key(tmp_path / "home" / "keys", "m3td-01", KEY)  # the server's key store
    drone = load_world_at(tmp_path / "world").drone("M3TD-01")
    flight = SimFlight(FlightOptions(speedup=10.0, default_speed_mps=drone.cruise_speed_mps))
    sim = sim_vehicle([f"udpin:127.0.0.1:{free_port('udp')}", f"tcpin:127.0.0.1:{port}"], "px4", signing_key=KEY,
                     home=DOCK_B, heartbeat_s=0.2, rerequest_s=0.1, flight=flight).start()
    try:
        with start_server(tmp_path) as s:
            yield s, sim, flight
    finally:
        sim.stop()


def test_dispatch_launch_follow_pause_resume_recall_all_speak_signed_through_the_one_held_link(
        signed: tuple[Server, SimVehicle, SimFlight]) -> None:
    server, sim, flight = signed
    assert until(lambda: server.fleet()["M3TD-01"]["status"] == "ONLINE", 30), server.fleet()["M3TD-01"]
    draft = server.plan(HYDRANTS)
    d, v = draft["draft_id"], draft["version"]
    assert draft["status"] == "DRAFT" and {s["drone"] for s in draft["sorties"]} == {"M3TD-01"}, draft
    server.ok("chen.jing", "POST", f"/v1/drafts/{d}/approve", json={"version": v, "plan_hash": draft["plan_hash"]})
    out = server.ok("chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"version": v})
    assert out["status"] == "ACKED" and sim.stats.uploads_completed >= 1, out
    out = server.ok("chen.jing", "POST", f"/v1/drafts/{d}/launch", json={"version": v})
    assert out["state"] == "LAUNCHED", out
    server.ok("chen.jing", "POST", f"/v1/drafts/{d}/monitor", json={"wait_s": 1})  # the server's follower starts
    assert until(lambda: server.ok("li.wei", "GET", f"/v1/drafts/{d}")["status"] == "IN_FLIGHT", 60)
    assert until(lambda: flight.on_leg(), 60, 0.05), flight.phase
    flight.options = FlightOptions(speedup=1.0, default_speed_mps=flight.options.default_speed_mps)  # time to talk

    def control(action: str, **body: Any) -> dict[str, Any]:
        out = server.ok("chen.jing", "POST", f"/v1/drafts/{d}/{action}", json={"version": v, **body})
        assert out["changed"] and out["vehicles"][0]["outcome"] == "CONFIRMED", out
        return out

    control("pause", reason="a crane in the way")
    assert until(lambda: server.fleet()["M3TD-01"]["mode"] == "LOITER", 10), json.dumps(server.fleet())  # Hold
    control("resume", reason="clear")
    assert until(lambda: server.fleet()["M3TD-01"]["mode"] == "AUTO", 10), json.dumps(server.fleet())  # Mission
    out = control("recall", reason="fire brigade needs the airspace")
    assert out["state"] == "RECALLING"
    live = server.fleet()["M3TD-01"]
    assert (live["status"], live["source"], live["fault"]) == ("IN_FLIGHT", "live", None), live

    # the same port does not answer an unsigned ground station: what made every step above work was the key
    from flows.vehicle.link import open_link
    from flows.errors import DeviceUnavailable

    with pytest.raises(DeviceUnavailable):
        open_link(f"tcp:127.0.0.1:{sim.ports[1].address.rsplit(':', 1)[-1]}", heartbeat_timeout_s=2.0)
