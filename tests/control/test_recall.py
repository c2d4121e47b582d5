"""Recall in flight over real UDP: home to the dock or down in place, RECALLED once landed, the report says
what was not flown; a lost COMMAND_ACK is settled by the vehicle's state (never a second send), a lost command
is sent again; a recall racing a pending resume always wins.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from control.controlkit import FAST, NOW, OPERATOR, Flight
from flows.sim.flight import FlightFaults
from flows.usecases import control
from flows.usecases.report import build_report
from flows.vehicle.commands import distance_m
from flows.usecases.grounds import Grounds
from flows.errors import Conflict
from pymavlink.dialects.v20 import common as M

pytestmark = pytest.mark.timeout(90)


def test_recall_mid_mission_lands_at_the_dock_and_the_report_lists_what_was_not_flown(fly: Callable[..., Flight]) -> None:
    # (ArduPilot's RTL home to the dock: the lost-ACK test below)
    f = fly("px4")
    f.wait_reached(4)
    f.pace(20.0)
    out = control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW,
                         reason="fire brigade needs the airspace", options=FAST)
    assert out.changed and out.state == "RECALLING"
    assert out.vehicles[0]["outcome"] == "CONFIRMED" and out.vehicles[0]["vehicle"]["mode"] == "RTL"
    assert [c["command"] for c in f.commands] == [M.MAV_CMD_NAV_RETURN_TO_LAUNCH]
    # a second recall is idempotent: nothing sent, nothing recorded
    n_events = len([e for e in f.events() if e[2] == OPERATOR])
    again = control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    assert again.vehicles[0]["outcome"] in ("ALREADY", "ON_GROUND")  # still returning, or already down
    assert not again.changed and len(f.commands) == 1
    f.pace(150.0)
    assert len([e for e in f.events() if e[2] == OPERATOR]) == n_events  # (the monitor may record the landing)
    result = f.monitored()
    assert result.state == "RECALLED", result.reason
    flight = result.flights[0]
    assert flight.status == "RECALLED" and flight.recall is not None and flight.recall["mode"] == "RTL"
    assert f.flight.mode == "RTL" and not f.flight.armed and not f.flight.completed
    assert distance_m(f.flight.lat, f.flight.lon, *f.dock) < 1.0  # down at the dock
    steps = [(a, b) for a, b, _, _ in f.events()]
    assert steps[-2:] == [("IN_FLIGHT", "RECALLING"), ("RECALLING", "RECALLED")]
    recalled_by = [e for e in f.events() if e[1] == "RECALLING"][0]
    assert recalled_by[2] == OPERATOR and "fire brigade needs the airspace" in recalled_by[3]
    report = build_report(f.draft_id, f.version, with_map=False, grounds=Grounds(ledger=f.ledger))
    row = report.data["flown"]["drones"][0]
    assert row["status"] == "RECALLED" and row["items_not_flown"] and row["items_flown"]
    assert set(row["items_flown"]).isdisjoint(row["items_not_flown"])
    assert len(row["items_flown"]) + len(row["items_not_flown"]) == flight.nav_total
    assert f"not flown: {', '.join(map(str, row['items_not_flown']))}" in report.markdown
    assert "- **Recalled:**" in report.markdown and "## Stopped by an operator" in report.markdown
    assert report.data["coverage"]["points"]["missed"]  # hydrants left uninspected are named


def test_recall_land_here_and_wait_records_the_end_without_a_monitor(fly: Callable[..., Flight]) -> None:
    f = fly("px4", monitor=False)
    f.wait_reached(4)
    f.pace(20.0)
    out = control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, land_here=True, options=FAST,
                         wait_s=20.0)
    assert out.state == "RECALLED", out.message
    assert [c["command"] for c in f.commands] == [M.MAV_CMD_NAV_LAND]
    assert f.flight.mode == "LAND" and not f.flight.armed
    told = f.commands[0]
    assert distance_m(told["lat"], told["lon"], f.flight.lat, f.flight.lon) < 1.0  # straight down where it was
    assert distance_m(f.flight.lat, f.flight.lon, *f.dock) > 50
    assert out.vehicles[0]["landed"]["mode"] == "LAND"
    steps = [(a, b) for a, b, _, _ in f.events()]
    assert steps[-4:] == [("DISPATCHED", "LAUNCHED"), ("LAUNCHED", "IN_FLIGHT"), ("IN_FLIGHT", "RECALLING"),
                          ("RECALLING", "RECALLED")]


def test_a_landing_in_place_asked_after_an_rtl_recall_is_judged_where_it_began(fly: Callable[..., Flight]) -> None:
    """An operator recalls home, then asks it down where it is (Land here): RECALLED, landed in place — not
    ABORTED for landing away from the dock (the follower took the first recall's mode; found on the /ops page)."""
    f = fly("px4")
    f.wait_reached(4)
    f.pace(2.0)  # slow: the landing is asked while it is still far from the dock
    home = control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    assert home.state == "RECALLING" and f.flight.mode == "RTL", home.message
    down = control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, land_here=True,
                          options=FAST)
    assert down.state == "RECALLING" and [c["command"] for c in f.commands] == [M.MAV_CMD_NAV_RETURN_TO_LAUNCH,
                                                                               M.MAV_CMD_NAV_LAND], down.message
    f.pace(150.0)
    ended = f.monitored()
    assert ended.state == "RECALLED" and "landed in place" in ended.reason, ended.reason
    told = f.commands[1]
    assert distance_m(told["lat"], told["lon"], *f.dock) > 30  # asked down away from the dock, and came down there
    assert distance_m(told["lat"], told["lon"], f.flight.lat, f.flight.lon) < 5.0


@pytest.mark.parametrize("dialect", ["px4", "ardupilot"])
def test_a_lost_ack_is_settled_by_the_vehicle_state_and_never_sent_twice(fly: Callable[..., Flight], dialect: str) -> None:
    # every ACK of the hold, of the resume and of the RTL is lost once (PX4 holds and resumes with SET_MODE;
    # ArduPilot pauses and resumes with DO_PAUSE_CONTINUE, on a waypoint leg)
    lost = (M.MAV_CMD_DO_SET_MODE, M.MAV_CMD_DO_SET_MODE, M.MAV_CMD_DO_PAUSE_CONTINUE, M.MAV_CMD_DO_PAUSE_CONTINUE,
            M.MAV_CMD_NAV_RETURN_TO_LAUNCH)
    f = fly(dialect, faults=FlightFaults(lose_ack_of=lost))
    f.wait_reached(3)
    f.pace(10.0)
    f.wait_on_leg()
    held = control.pause(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    go = control.resume(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    f.pace(10.0)
    f.wait_on_leg()  # (ArduCopter pauses only on a waypoint leg)
    held_again = control.pause(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW,
                               options=FAST)  # no hurry for the recall
    back = control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    f.pace(150.0)
    settled = [r.vehicles[0] for r in (held, go, back)]
    assert [v["outcome"] for v in settled] == ["SETTLED"] * 3, [(v["outcome"], v["detail"]) for v in settled]
    assert all("ACK was lost" in v["detail"] and v["acks"] == 0 and v["attempts"] == 1 for v in settled)
    assert held.vehicles[0]["vehicle"]["paused"] and not go.vehicles[0]["vehicle"]["paused"]
    assert held_again.vehicles[0]["in_effect"] and back.vehicles[0]["vehicle"]["mode"] == "RTL"
    # settled on the first send: a lost ACK never caused a second send (the vehicle saw exactly what was sent)
    sent = [v for r in (held, go, held_again, back) for v in r.vehicles[0]["sent"]]
    assert len(f.commands) == len(sent)
    assert [c["command"] for c in f.commands].count(M.MAV_CMD_NAV_RETURN_TO_LAUNCH) == 1
    ended = f.monitored()
    assert ended.state == "RECALLED", ended.reason


def test_a_recall_wins_over_a_pending_resume(fly: Callable[..., Flight]) -> None:
    # the pause's first command is lost on the way: the vehicle shows no hold, so it is sent again (confirmation 1)
    f = fly("px4", faults=FlightFaults(lose_command_of=(M.MAV_CMD_DO_SET_MODE,)))
    f.wait_reached(3)
    f.pace(20.0)
    held = control.pause(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    v = held.vehicles[0]
    assert v["outcome"] == "CONFIRMED" and v["attempts"] == 2 and v["vehicle"]["paused"]
    assert [s["confirmation"] for s in v["sent"]] == [0, 1]
    assert [(c["command"], c["confirmation"]) for c in f.commands] == [(M.MAV_CMD_DO_SET_MODE, 1)]
    # from now on the resume's first command is lost: the resume is pending, waiting for an ACK on a slow link
    f.flight.options = replace(f.flight.options, faults=FlightFaults(lose_command_of=(M.MAV_CMD_DO_SET_MODE,) * 2))
    slow_link = replace(FAST, ack_timeout_s=2.0)
    results: dict[str, Any] = {}

    def resume() -> None:
        try:
            results["resume"] = control.resume(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW,
                                               options=slow_link)
        except Conflict as exc:
            results["resume"] = exc

    t = threading.Thread(target=resume)
    t.start()
    deadline = time.monotonic() + 5
    while f.flight._lost_commands[M.MAV_CMD_DO_SET_MODE] < 2:
        assert time.monotonic() < deadline, "the resume never sent its command"
        time.sleep(0.005)
    back = control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    t.join(20)
    f.pace(150.0)
    assert isinstance(results["resume"], Conflict), results["resume"]
    assert "a recall always wins" in str(results["resume"])
    assert back.state == "RECALLING" and back.vehicles[0]["vehicle"]["mode"] == "RTL"
    # the resume was never sent again: the vehicle went from its hold straight to RTL
    assert [c["command"] for c in f.commands] == [M.MAV_CMD_DO_SET_MODE, M.MAV_CMD_NAV_RETURN_TO_LAUNCH]
    assert f.monitored().state == "RECALLED"
    with pytest.raises(Conflict, match="recall"):
        control.resume(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    audit = [(a.command, a.result_code) for a in f.ledger.audit_rows(limit=5) if a.command.startswith("control.")]
    assert ("control.resume", "CONFLICT") in audit and ("control.recall", "OK") in audit


def test_a_recall_of_a_mission_that_never_took_off_says_not_started_and_sends_nothing(
        fly: Callable[..., Flight]) -> None:
    """`sortie recall` of a dispatched mission whose vehicle never took off: NOT_STARTED (exit 2), not "recalled"."""
    from typer.testing import CliRunner

    from flows.cli import app

    f = fly("ardupilot", monitor=False, launch=False)
    assert f.flight.phase == "READY" and not f.flight.armed  # the simulator, like ArduCopter, waits for a launch
    shown = CliRunner().invoke(app, ["recall", f.draft_id, "--as", OPERATOR, "--now", NOW.isoformat(),
                                     "--reason", "weather"])
    assert shown.exit_code == 2, shown.output
    said = " ".join(shown.output.split())
    assert f"{f.draft_id} v{f.version}: NOT_STARTED (ABORTED) — nothing to recall: the mission never took off" in said
    assert "M3TD-01 on the ground, disarmed, mode STABILIZE" in said, said  # ArduCopter boots in STABILIZE
    assert "still loaded on the vehicle" in said and "will not be launched" in said, said
    assert "recalled" not in said.replace("recalled by", ""), said  # never "(already) recalled"
    assert f.flight.commands == [] and f.flight.phase == "READY"  # nothing was sent to the vehicle
    steps = [(a, b) for a, b, _, _ in f.events()]
    assert steps[-1] == ("DISPATCHED", "ABORTED") and "never took off" in f.events()[-1][3]
    assert f.events()[-1][2] == OPERATOR and "weather" in f.events()[-1][3]
    # the draft ended before take-off: a second recall asks the vehicle (whatever the ledger says, issue 42), finds
    # it on the ground and sends nothing; a launch is refused
    again = CliRunner().invoke(app, ["recall", f.draft_id, "--as", OPERATOR, "--now", NOW.isoformat(), "--json"])
    said = " ".join(again.output.split())
    assert '"ON_GROUND"' in said and "nothing was sent; the mission ended ABORTED" in said, again.output
    assert f.flight.commands == []
    with pytest.raises(Conflict):
        f.launch_with()
    assert f.flight.commands == [] and not f.flight.armed


def test_a_landing_whose_position_was_never_sent_is_judged_without_formatting_it() -> None:
    """The ``recall --land-here`` crash of issue 31 (``NoneType.__format__``): a vehicle that sent no position."""
    from types import SimpleNamespace

    from flows.usecases.recalling import _verdict
    from flows.vehicle.view import VehicleView

    dock = SimpleNamespace(id="DOCK-A", lat=60.17, lon=24.94)
    blind = VehicleView(mode="LAND", armed=False)
    ok, why, off = _verdict("M3TD-01", blind, dock, (), land_here=True)
    assert ok is True and off is None and "sent no position" in why
    ok, why, off = _verdict("M3TD-01", VehicleView(mode="RTL"), dock, (), land_here=False)
    assert ok is None and "not known" in why  # undecided: the follower ends it, nothing is claimed
    ok, why, off = _verdict("M3TD-01", VehicleView(mode="RTL", lat=60.17001, lon=24.94), dock, (), land_here=False)
    assert ok is True and off is not None and off < 2 and "in mode RTL" in why


def test_a_take_off_the_follower_recorded_first_is_not_a_conflict_for_a_recall(fly: Callable[..., Flight]) -> None:
    # the race seen under load: the recall read LAUNCHED, the follower moved it to IN_FLIGHT, then the recall's
    # own "airborne" transition found IN_FLIGHT — the same fact, recorded once, and the recall goes on
    from flows.usecases.control_kit import take_off_seen

    f = fly("px4", monitor=False)
    stale = f.ledger.get_draft(f.draft_id, f.version)
    assert stale.state == "LAUNCHED"
    f.ledger.transition(f.draft_id, f.version, expected_state="LAUNCHED", expected_row_version=stale.row_version,
                        to_state="IN_FLIGHT", actor="monitor", reason="airborne (follower)", now=NOW)
    fresh = take_off_seen(f.ledger, stale, OPERATOR, NOW)
    assert fresh.state == "IN_FLIGHT" and [e[1] for e in f.events()].count("IN_FLIGHT") == 1
    out = control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, reason="storm", options=FAST)
    assert out.changed and out.state == "RECALLING" and out.vehicles[0]["outcome"] == "CONFIRMED"
