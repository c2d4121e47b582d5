"""A ``sortie sim-fleet`` vehicle flies: dispatched, launched and followed as a real one, with nothing attached.

Before, a sim-fleet vehicle answered UNSUPPORTED to the launch (only ``sortie demo`` gave its vehicles a
flight), so the documented control room stopped at DISPATCHED. Now every simulated vehicle has its flight, with
its drone's battery and power figures (``flows.sim.fleet``), and boots and passes pre-arm like a real one.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from flows.ledger import open_ledger
from flows.sim.fleet import sim_fleet
from flows.usecases import dispatching, reading
from flows.usecases.common import load_world_at
from flows.usecases.flying import launch_and_follow
from flows.usecases.grounds import Grounds
from flows.vehicle.flight_record import MonitorOptions
from flows.context import resolve_now
from testkit import approved_draft_home

NOW = resolve_now("2026-11-29T06:58:00+02:00")  # the demo world's drones reported at 06:57:30
APPROVER = "chen.jing"


@pytest.mark.timeout(180)  # planning, dispatch and a 100x flight: ~30 s idle, over 120 s at load 18
def test_a_sim_fleet_vehicle_boots_is_dispatched_launched_and_flies_to_success(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    template = tmp_path / "template"
    with approved_draft_home(template, now=NOW) as d:
        draft_id, version = d.draft_id, d.version
    home = tmp_path / "home"
    shutil.copytree(template, home)
    monkeypatch.setenv("SORTIE_HOME", str(home))
    world = load_world_at(None)
    drone_id = reading.show_draft(draft_id, version, ledger=open_ledger()).sorties[0].drone
    # the vehicle as sim-fleet starts it: its own clock (100×), its boot and pre-arm delays, its flight. Not faster:
    # the follower judges each 20 s hold at a hydrant from the positions it hears, and at 200× on a loaded 2-core
    # machine a hold (0.1 s of wall time) could pass between two of them (a point judged missed)
    sims = sim_fleet(world, home / "keys", only=[drone_id], links={drone_id: "udpout:127.0.0.1:0"}, speedup=100.0)
    sim = sims[drone_id]
    try:
        disp = dispatching.dispatch(draft_id, version, actor=APPROVER, now=NOW, link=sim.address, timeout_s=20.0,
                                    grounds=Grounds(ledger=open_ledger()))
        assert disp.status == "ACKED", disp
        launched, result = launch_and_follow(draft_id, version, launch_as=APPROVER, grounds=Grounds(ledger=open_ledger()),
                                             now=NOW,
                                             link=sim.address,
                                             options=MonitorOptions(timeout_s=60.0, start_wait_s=20.0))
        assert launched.get("state") == "LAUNCHED", launched
        assert result.outcome == "SUCCEEDED", result.reason
        flight = sim.flight
        assert flight.configured and flight.phase == "LANDED" and not flight.armed
        assert flight.options.battery_wh == world.drone(drone_id).battery_wh  # its drone's pack
        assert flight.battery_pct < world.drone(drone_id).battery_pct  # and it drained
    finally:
        for s in sims.values():
            s.stop()
