"""Every vehicle command is journaled before it is sent, and a crash in the middle of a launch is settled from the
vehicle's state by the next server (issue 38, item 5).

A real ``sortie server`` (live fleet, real clock, real tokens) dispatches to a simulated PX4 over UDP and launches
it; the server is SIGKILLed by its own kill point after the vehicle accepted MISSION_START and before the answer
reached the ledger (``journal:before_answer:launch:mission_start``). The vehicle flies; the ledger says
DISPATCHED with a ``sent`` journal entry and no answer. A new server on the same home finds the unanswered launch,
asks the vehicle, and records DISPATCHED → LAUNCHED with the crash named, and a ``settled`` entry. The hash chain
(with the journal in it) verifies afterwards.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from fleet.fleetkit import DOCK_B, HYDRANTS, day_old_world, start_server, until
from flows.ledger import Ledger
from flows.sim.flight import FlightOptions, SimFlight
from flows.usecases.common import load_world_at
from testkit import sim_vehicle

pytestmark = pytest.mark.timeout(300)


def test_a_launch_cut_by_a_crash_is_journaled_and_settled_from_the_vehicle_by_the_next_server(tmp_path: Path) -> None:
    ports = day_old_world(tmp_path / "world")
    drone = load_world_at(tmp_path / "world").drone("M3TD-01")
    flight = SimFlight(FlightOptions(speedup=10.0, default_speed_mps=drone.cruise_speed_mps))
    sim = sim_vehicle(f"udpin:127.0.0.1:{ports['M3TD-01']}", "px4", home=DOCK_B, heartbeat_s=0.2, flight=flight).start()
    ledger = Ledger(tmp_path / "home" / "ledger.duckdb")
    try:
        with start_server(tmp_path, env={"SORTIE_TEST_KILL_AT": "journal:before_answer:launch:mission_start"}) as s:
            assert until(lambda: s.fleet()["M3TD-01"]["status"] == "ONLINE", 30), s.fleet()["M3TD-01"]
            draft = s.plan(HYDRANTS)
            d, v = draft["draft_id"], draft["version"]
            s.ok("chen.jing", "POST", f"/v1/drafts/{d}/approve", json={"version": v, "plan_hash": draft["plan_hash"]})
            assert s.ok("chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"version": v})["status"] == "ACKED"
            with pytest.raises(httpx.HTTPError):  # the server dies mid-launch
                s.call("chen.jing", "POST", f"/v1/drafts/{d}/launch", json={"version": v})
        assert until(lambda: flight.armed, 10, 0.1), flight.phase  # the vehicle took the command and flies

        # what the crash left: DISPATCHED, the command written before it went out, no answer
        assert ledger.get_draft(d, v).state == "DISPATCHED"
        [open_cmd] = ledger.unsettled_commands()
        assert (open_cmd.draft_id, open_cmd.drone_id, open_cmd.action, open_cmd.command) == (d, "M3TD-01", "launch",
                                                                                            "mission_start")

        with start_server(tmp_path) as s:
            assert until(lambda: s.ok("li.wei", "GET", f"/v1/drafts/{d}")["status"] == "LAUNCHED", 60), \
                s.ok("li.wei", "GET", f"/v1/drafts/{d}")
            assert s.fleet()["M3TD-01"]["status"] != "HELD"  # its own launch, not foreign control
        entries = ledger.journal(draft_id=d)
        settled = [e for e in entries if e["change"] == "settled"]
        assert [(e["command"], e["outcome"]) for e in settled] == [("mission_start", "LAUNCHED")], entries
        assert "cut short" in settled[0]["detail"]["detail"] and settled[0]["detail"]["vehicle"]["armed"] is True
        assert not ledger.unsettled_commands()
        events = [e for e in ledger.events(d) if e.to_state == "LAUNCHED"]
        assert events and events[-1].actor == "authority:settler" and "settled after a crash" in events[-1].reason
        assert not ledger.verify().breaks  # the journal's entries are in the hash chain, unbroken
    finally:
        sim.stop()
