"""A vehicle that refuses a command is reported as refusing it, named, never as a silent link.

Each refusal MAVLink has (DENIED, TEMPORARILY_REJECTED, UNSUPPORTED, FAILED) is answered by the simulated
vehicle (``FlightFaults.refuse_with``: the one COMMAND_ACK a refusing handler sends, nothing executed) to a
pause, a recall and a launch step over real UDP; the operator gets a ``Conflict`` (or a REFUSED launch) naming
the answer, never ``DeviceUnavailable`` / NO_ANSWER.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from control.controlkit import FAST, NOW, OPERATOR, Flight
from flows.sim.flight import FlightFaults
from flows.usecases import control
from flows.usecases.grounds import Grounds
from flows.errors import Conflict, PreflightFailed
from planner.errors import SortieError
from pymavlink.dialects.v20 import common as M

pytestmark = pytest.mark.timeout(120)

REFUSALS = {"DENIED": M.MAV_RESULT_DENIED, "TEMPORARILY_REJECTED": M.MAV_RESULT_TEMPORARILY_REJECTED,
            "UNSUPPORTED": M.MAV_RESULT_UNSUPPORTED, "FAILED": M.MAV_RESULT_FAILED}


@pytest.mark.parametrize("name", list(REFUSALS))
def test_a_refused_pause_and_recall_are_named_never_a_timeout(fly: Callable[..., Flight], name: str) -> None:
    result = REFUSALS[name]
    f = fly("px4", monitor=False, faults=FlightFaults(refuse_with=((M.MAV_CMD_DO_SET_MODE, result),
                                                                   (M.MAV_CMD_NAV_RETURN_TO_LAUNCH, result))))
    f.wait_reached(2)
    f.pace(20.0)
    with pytest.raises(SortieError) as held:
        control.pause(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    with pytest.raises(SortieError) as back:
        control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST, wait_s=0.0)
    for exc in (held.value, back.value):
        assert isinstance(exc, Conflict), (type(exc).__name__, str(exc))
        assert "refused" in str(exc) and name in str(exc), str(exc)
        v = exc.details["vehicles"][0]
        assert v["outcome"] == "REFUSED" and v["result"] == name, v
    assert f.flight.mode == "AUTO" and f.flight.armed  # nothing was executed: it flies on with its mission
    sent = [c["command"] for c in f.commands]
    assert set(sent) == {M.MAV_CMD_DO_SET_MODE, M.MAV_CMD_NAV_RETURN_TO_LAUNCH}
    # a refusal is the vehicle's answer: sent once; only TEMPORARILY_REJECTED is asked again (bounded)
    assert len(sent) == (2 * FAST.max_attempts if name == "TEMPORARILY_REJECTED" else 2), sent


@pytest.mark.parametrize("name", list(REFUSALS))
def test_a_refused_launch_step_is_named_and_the_mission_stays_dispatched(fly: Callable[..., Flight],
                                                                          name: str) -> None:
    f = fly("px4", monitor=False, launch=False)
    refusal = FlightFaults(refuse_with=((M.MAV_CMD_MISSION_START, REFUSALS[name]),))
    f.flight.options = replace(f.flight.options, faults=refusal)
    with pytest.raises(PreflightFailed) as stopped:
        f.launch_with()
    said = str(stopped.value)
    assert "mission_start" in said and f"refused it: answered {name}" in said, said
    step = stopped.value.details["vehicles"][0]["steps"][0]
    assert step["outcome"] == "REFUSED" and step["result"] == name, step
    assert not f.flight.armed and f.ledger.get_draft(f.draft_id, f.version).state == "DISPATCHED"
