"""Every vehicle command is journaled before it is sent, and a crash in the middle of a launch is settled from the
vehicle's state by the next server (issue 38, item 5).

A real ``sortie server`` (live fleet, real clock, real tokens) dispatches to a simulated vehicle over UDP and
launches it; the server is SIGKILLed by its own kill point after the vehicle answered a launch step and before
the answer reached the ledger (``journal:before_answer:launch:<step>``). The ledger says DISPATCHED with a
``sent`` journal entry and no answer. A new server on the same home finds the unanswered launch, asks the
vehicle, and settles it from what the vehicle shows:

- PX4 cut after MISSION_START: the vehicle flies — DISPATCHED → LAUNCHED, the crash named;
- ArduPilot cut after the arm (before AUTO and MISSION_START): nothing flew — it is not left armed, the version
  stays DISPATCHED, and a launch again flies it.

The hash chain (with the journal in it) verifies afterwards.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from fleet.fleetkit import DOCK_B, HYDRANTS, Server, day_old_world, start_server, until
from flows.ledger import Ledger
from flows.sim.flight import FlightOptions, SimFlight
from flows.usecases.common import load_world_at
from testkit import sim_vehicle

pytestmark = pytest.mark.timeout(300)


def _crash_mid_launch(tmp_path: Path, dialect: str, step: str) -> tuple[Any, SimFlight, str, int, Ledger]:
    """A dispatched hydrant inspection on M3TD-01 (``dialect``), its launch killed after ``step`` was answered."""
    ports = day_old_world(tmp_path / "world", lambda d: d.update(autopilot=dialect) if d["id"] == "M3TD-01" else None)
    drone = load_world_at(tmp_path / "world").drone("M3TD-01")
    flight = SimFlight(FlightOptions(speedup=10.0, default_speed_mps=drone.cruise_speed_mps))
    sim = sim_vehicle(f"udpin:127.0.0.1:{ports['M3TD-01']}", dialect, home=DOCK_B, heartbeat_s=0.2,
                      flight=flight).start()
    try:
        with start_server(tmp_path, env={"SORTIE_TEST_KILL_AT": f"journal:before_answer:launch:{step}"}) as s:
            assert until(lambda: s.fleet()["M3TD-01"]["status"] == "ONLINE", 30), s.fleet()["M3TD-01"]
            draft = s.plan(HYDRANTS)
            d, v = draft["draft_id"], draft["version"]
            s.ok("chen.jing", "POST", f"/v1/drafts/{d}/approve", json={"version": v, "plan_hash": draft["plan_hash"]})
            assert s.ok("chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"version": v})["status"] == "ACKED"
            with pytest.raises(httpx.HTTPError):  # the server dies mid-launch
                s.call("chen.jing", "POST", f"/v1/drafts/{d}/launch", json={"version": v})
    except BaseException:
        sim.stop()
        raise
    ledger = Ledger(tmp_path / "home" / "ledger.duckdb")
    assert ledger.get_draft(d, v).state == "DISPATCHED"  # what the crash left: the command written, no answer
    [open_cmd] = ledger.unsettled_commands()
    assert (open_cmd.draft_id, open_cmd.drone_id, open_cmd.action, open_cmd.command) == (d, "M3TD-01", "launch", step)
    return sim, flight, d, v, ledger


def _settled(ledger: Ledger, d: str) -> list[dict[str, Any]]:
    return [e for e in ledger.journal(draft_id=d) if e["change"] == "settled"]


def _settling(s: Server) -> dict[str, int]:
    """The server's settler as ``/v1/health`` says it, after its first round (counts only)."""
    got = httpx.get(f"{s.url}/v1/health", timeout=10).json()["vehicle_commands"]
    return {k: got[k] for k in ("unsettled", "settled")} if got["rounds"] else {}


def _state(s: Server, d: str) -> str:
    return str(s.ok("li.wei", "GET", f"/v1/drafts/{d}")["status"])


def test_a_launch_cut_after_mission_start_is_settled_launched_by_the_next_server(tmp_path: Path) -> None:
    sim, flight, d, v, ledger = _crash_mid_launch(tmp_path, "px4", "mission_start")
    try:
        assert until(lambda: flight.armed, 10, 0.1), flight.phase  # the vehicle took the command and flies
        with start_server(tmp_path) as s:
            assert until(lambda: _state(s, d) == "LAUNCHED", 60), _state(s, d)
            assert until(lambda: _settling(s) == {"unsettled": 0, "settled": 1}, 10), _settling(s)
            assert s.fleet()["M3TD-01"]["status"] != "HELD"  # its own launch, not foreign control
        settled = _settled(ledger, d)
        assert [(e["command"], e["outcome"]) for e in settled] == [("mission_start", "LAUNCHED")], settled
        assert "cut short" in settled[0]["detail"]["detail"] and settled[0]["detail"]["vehicle"]["armed"] is True
        assert not ledger.unsettled_commands()
        launched = [e for e in ledger.events(d) if e.to_state == "LAUNCHED"]
        assert launched and launched[-1].actor == "authority:settler" and "settled after a crash" in launched[-1].reason
        assert not ledger.verify().breaks  # the journal's entries are in the hash chain, unbroken
    finally:
        sim.stop()


def test_a_launch_cut_after_the_arm_is_settled_not_launched_and_launches_again(tmp_path: Path) -> None:
    sim, flight, d, v, ledger = _crash_mid_launch(tmp_path, "ardupilot", "arm")
    try:
        with start_server(tmp_path) as s:
            assert until(lambda: _settling(s) == {"unsettled": 0, "settled": 1}, 60), _settling(s)
            assert until(lambda: not flight.armed, 10, 0.1), flight.phase  # never left armed on its pad
            assert _state(s, d) == "DISPATCHED"
            out = s.ok("chen.jing", "POST", f"/v1/drafts/{d}/launch", json={"version": v})
            assert out["state"] == "LAUNCHED", out
        settled = _settled(ledger, d)
        assert [(e["command"], e["outcome"]) for e in settled] == [("arm", "NOT_LAUNCHED")], settled
        answered = [(e["action"], e["command"]) for e in ledger.journal(draft_id=d) if e["change"] == "answered"]
        assert answered[0] == ("launch", "guided") and answered[-1] == ("launch", "mission_start"), answered
        assert not ledger.verify().breaks
    finally:
        sim.stop()
