"""Pause → resume → finish over real UDP, in both dialects, with the monitor following throughout.

ArduPilot holds with MAV_CMD_DO_PAUSE_CONTINUE (mode stays AUTO, MISSION_CURRENT
says PAUSED); PX4, which does not implement it, is held in AUTO.LOITER with
MAV_CMD_DO_SET_MODE. Either way the vehicle must stop moving, the monitor must
show PAUSED and go on following, and the mission must still end SUCCEEDED
with every item flown.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from control.controlkit import FAST, NOW, OPERATOR, Flight
from flows.usecases import control
from flows.vehicle.commands import distance_m
from pymavlink.dialects.v20 import common as M

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize("dialect", ["px4", "ardupilot"])
def test_pause_holds_the_vehicle_and_resume_finishes_the_mission(fly: Callable[..., Flight], dialect: str) -> None:
    f = fly(dialect)
    f.wait_reached(3)
    f.pace(20.0)
    held = control.pause(f.ledger, f.draft_id, actor=OPERATOR, now=NOW, reason="crane in the way", options=FAST)
    assert held.changed and held.state == "IN_FLIGHT"
    v = held.vehicles[0]
    assert v["outcome"] == "CONFIRMED" and v["result"] == "ACCEPTED" and v["vehicle"]["paused"], v
    expected = M.MAV_CMD_DO_SET_MODE if dialect == "px4" else M.MAV_CMD_DO_PAUSE_CONTINUE
    sent = [c["command"] for c in f.flight.commands]
    assert sent == [expected] or (dialect == "ardupilot" and sent == [expected, M.MAV_CMD_DO_SET_MODE])
    # the vehicle holds: no progress, no movement, while simulated time runs on
    reached, pos, t_sim = list(f.flight.reached), (f.flight.lat, f.flight.lon), f.flight.sim_t
    time.sleep(0.4)
    assert f.flight.sim_t > t_sim + 4
    assert f.flight.reached == reached and distance_m(*pos, f.flight.lat, f.flight.lon) < 0.01
    assert f.wait_update("paused")["seq"] is not None
    # a repeated pause sends nothing: the vehicle already shows it
    again = control.pause(f.ledger, f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    assert not again.changed and again.vehicles[0]["outcome"] == "ALREADY" and len(f.flight.commands) == len(sent)
    go = control.resume(f.ledger, f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    assert go.changed and go.vehicles[0]["outcome"] == "CONFIRMED"
    f.wait_update("resumed")
    f.pace(200.0)
    result = f.monitored()
    assert result.state == "SUCCEEDED", result.reason
    flight = result.flights[0]
    assert [p["what"] for p in flight.pauses] == ["paused", "resumed"]
    assert sorted(flight.reached) == sorted(set(flight.reached)) and len(flight.reached) == flight.nav_total
    assert not [a for a in flight.alerts if a["kind"] == "mode_change"]  # a hold is not an anomaly
    events = f.events()
    holds = [e for e in events if e[0] == e[1] == "IN_FLIGHT"]
    assert [e[2] for e in holds] == [OPERATOR, OPERATOR]
    assert holds[0][3].startswith(f"paused by {OPERATOR}: crane in the way") and holds[1][3].startswith("resumed by")
    assert events[-1][:2] == ("IN_FLIGHT", "SUCCEEDED")
    audit = [(a.command, a.result_code, a.actor) for a in f.ledger.audit_rows(limit=10) if a.command.startswith("control.")]
    assert audit[:3] == [("control.resume", "OK", OPERATOR), ("control.pause", "OK", OPERATOR),
                         ("control.pause", "OK", OPERATOR)]
