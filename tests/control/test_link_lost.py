"""Issue 42: an 8 s telemetry gap leaves the flight LINK_LOST ("it may still be flying"), never an end, and a recall
during it reaches the vehicle.

The simulated vehicle stalls its link for 8 wall seconds in flight (nothing in or out on any port, the vehicle
flies on: the stall a real telemetry radio shows). The follower notices after ``link_lost_s`` and the ledger says
LINK_LOST; an operator's recall then is allowed (LINK_LOST → RECALLING recorded first), waits for the vehicle on
its own link, and is confirmed by the vehicle once the stall ends; the follower, hearing the vehicle again, follows
it home and the draft ends RECALLED — the gap kept with the flight, the RTL sent once.

A recall that gives up during the stall (the vehicle silent) is still recorded (RECALLING); when telemetry returns
the follower reads the vehicle's mode and, the vehicle still flying its mission, sends the recorded recall (RTL, or
LAND for a land in place) again — once (``flows.usecases.recall_resend``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import pytest

from control.controlkit import FAST, NOW, OPERATOR, Flight
from flows.sim.flight import FlightFaults
from flows.usecases import control
from flows.usecases.grounds import Grounds
from flows.usecases.monitoring import load_flight
from flows.usecases.recall_resend import RESEND_ACTOR
from flows.errors import DeviceUnavailable
from pymavlink.dialects.v20 import common as M

pytestmark = pytest.mark.timeout(120)

#: The recall waits for the vehicle longer than the stall (a real radio's gap): it reaches it when the link is back.
PATIENT = replace(FAST, connect_timeout_s=15.0)
#: The recall gives up within the stall: the vehicle never heard it.
IMPATIENT = replace(FAST, connect_timeout_s=1.0)


def _state(f: Flight) -> str:
    return f.ledger.get_draft(f.draft_id, f.version).state


def _link_lost(f: Flight) -> None:
    """Wait for LINK_LOST while the simulator's stall lasts (a loaded machine can take seconds to see it)."""
    deadline = time.monotonic() + 30.0
    while _state(f) != "LINK_LOST":
        assert time.monotonic() < deadline, f"never LINK_LOST: {f.events()[-3:]}"
        stall = f.flight.stall_until
        assert stall is None or stall > 0, f"the stall ended before the ledger said LINK_LOST: {f.events()[-3:]}"
        time.sleep(0.05)


def test_a_telemetry_gap_is_link_lost_and_a_recall_during_it_reaches_the_vehicle(fly: Callable[..., Flight]) -> None:
    f = fly("ardupilot", speedup=20.0, faults=FlightFaults(stall_after_s=20.0, stall_s=8.0))
    _link_lost(f)
    assert f.flight.armed and f.flight.stall_until is not None and f.flight.stall_until > time.monotonic()
    out = control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW,
                         reason="telemetry lost over the lake", options=PATIENT)
    assert out.state == "RECALLING" and out.vehicles[0]["outcome"] == "CONFIRMED", out
    assert [c["command"] for c in f.commands] == [M.MAV_CMD_NAV_RETURN_TO_LAUNCH]
    f.pace(150.0)
    result = f.monitored()
    assert result.state == "RECALLED", result.reason
    steps = [(a, b) for a, b, _, _ in f.events()]
    assert ("IN_FLIGHT", "LINK_LOST") in steps and ("LINK_LOST", "RECALLING") in steps
    assert steps[-1] == ("RECALLING", "RECALLED") and ("LINK_LOST", "ABORTED") not in steps
    lost = [e for e in f.events() if e[1] == "LINK_LOST"][0]
    assert "it may still be flying" in lost[3]
    gap = result.flights[0].gaps[0]
    assert gap["silent_s"] is not None and gap["silent_s"] >= 4.0 and gap["back_t_s"] >= gap["from_t_s"]
    # the follower read the vehicle in RTL when its telemetry returned: the recall was not sent twice
    assert [c["command"] for c in f.commands] == [M.MAV_CMD_NAV_RETURN_TO_LAUNCH]
    (resent,) = load_flight(f.draft_id, f.version, f.ledger.path.parent)["recall_resent"]
    assert resent["outcome"] == "ALREADY", resent


@pytest.mark.parametrize("land_here", [False, True])
def test_a_recall_the_stalled_link_never_carried_is_sent_again_when_telemetry_returns(
        fly: Callable[..., Flight], land_here: bool) -> None:
    # 12 s: the recall below must give up well within the stall, whatever the machine's load
    f = fly("ardupilot", speedup=20.0, faults=FlightFaults(stall_after_s=20.0, stall_s=12.0))
    _link_lost(f)
    f.pace(5.0)  # the vehicle flies its mission on meanwhile: slowly enough not to finish it within the stall
    assert f.flight.stall_until is not None and f.flight.stall_until - time.monotonic() > 2.0, "the stall is ending"
    with pytest.raises(DeviceUnavailable):
        control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, land_here=land_here,
                       reason="telemetry lost over the lake", options=IMPATIENT)
    assert _state(f) == "RECALLING" and f.commands == [] and f.flight.mode == "AUTO"  # recorded, never heard
    deadline = time.monotonic() + 30.0
    while not f.commands:
        assert time.monotonic() < deadline, f"the recall was not sent again: {f.events()[-3:]}"
        time.sleep(0.05)
    f.pace(150.0)
    result = f.monitored()
    assert result.state == "RECALLED", result.reason
    wanted = M.MAV_CMD_NAV_LAND if land_here else M.MAV_CMD_NAV_RETURN_TO_LAUNCH
    assert [c["command"] for c in f.commands] == [wanted]  # once
    again = [e for e in f.events() if e[2] == RESEND_ACTOR]
    assert [(e[0], e[1]) for e in again] == [("RECALLING", "RECALLING")] and "sent again" in again[0][3], again
    (resent,) = load_flight(f.draft_id, f.version, f.ledger.path.parent)["recall_resent"]
    assert resent["outcome"] == "CONFIRMED", resent
