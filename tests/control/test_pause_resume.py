"""Pause → resume → finish over real UDP, in both dialects, with the monitor following throughout.

ArduPilot holds with MAV_CMD_DO_PAUSE_CONTINUE (mode stays AUTO, MISSION_CURRENT
says PAUSED — which a port only sends when asked, so the controller asks);
PX4, which does not implement it, is held in AUTO.LOITER with
MAV_CMD_DO_SET_MODE. Either way the vehicle must stop moving, the monitor must
show PAUSED and go on following, and the mission must still end SUCCEEDED
with every item flown. A pause ArduCopter refuses (during take-off) is
reported as refused and nothing else is sent: the vehicle keeps climbing. A
vehicle that signs its messages is paused, resumed and recalled through a port
that drops unsigned ones.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from control.controlkit import FAST, NOW, OPERATOR, Flight
from flows.usecases import control
from flows.vehicle.commands import distance_m
from flows.usecases.grounds import Grounds
from flows.errors import Conflict, DeviceUnavailable
from pymavlink.dialects.v20 import common as M

pytestmark = pytest.mark.timeout(90)

#: Vehicle seconds from the pause to a vehicle at rest: the stop (v/a, with PX4's jerk ramp) and, for PX4, the
#: flight back to where AUTO.LOITER was entered (``flows.sim.px4`` ``_hold``, after ``Loiter::on_activation``).
SETTLE_S = 8.0


def _vehicle_time_passes(f: Flight, seconds: float, timeout_s: float = 20.0) -> None:
    """Until the vehicle's own clock has run ``seconds`` on. Counted in its time, not the wall's: a starved
    simulator thread runs behind its pace, and a wall-clock sleep then judged a vehicle still braking."""
    until = f.flight.sim_t + seconds
    deadline = time.monotonic() + timeout_s
    while f.flight.sim_t < until:
        assert time.monotonic() < deadline, f"the simulator ran {seconds} s of vehicle time in no {timeout_s} s"
        time.sleep(0.02)


@pytest.mark.parametrize("dialect", ["px4", "ardupilot"])
def test_pause_holds_the_vehicle_and_resume_finishes_the_mission(fly: Callable[..., Flight], dialect: str) -> None:
    f = fly(dialect)
    f.wait_reached(3)
    f.pace(10.0)
    f.wait_on_leg()  # then real time while the operator's link connects: still on its leg when the pause lands
    held = control.pause(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, reason="crane in the way",
                         options=FAST)
    assert held.changed and held.state == "IN_FLIGHT"
    v = held.vehicles[0]
    assert v["outcome"] == "CONFIRMED" and v["result"] == "ACCEPTED" and v["vehicle"]["paused"], v
    expected = M.MAV_CMD_DO_SET_MODE if dialect == "px4" else M.MAV_CMD_DO_PAUSE_CONTINUE
    sent = [c["command"] for c in f.commands]
    assert sent == [expected]
    f.pace(20.0)
    # the vehicle brakes (v²/2a at 2.5 m/s², AC_WPNav's WPNAV_ACCEL; PX4's MPC_ACC_HOR is 3) and then holds: no
    # progress, no movement, while simulated time runs on
    speed_mps = f.flight.speed_mps
    reached, paused_at = list(f.flight.reached), (f.flight.lat, f.flight.lon)
    _vehicle_time_passes(f, SETTLE_S)
    stopped_at = (f.flight.lat, f.flight.lon)
    assert distance_m(*paused_at, *stopped_at) <= speed_mps**2 / (2 * 2.5) + 0.5, speed_mps
    _vehicle_time_passes(f, 4.0)
    assert f.flight.reached == reached and distance_m(*stopped_at, f.flight.lat, f.flight.lon) < 0.01
    assert f.wait_update("paused")["seq"] is not None
    # a repeated pause sends nothing: the vehicle already shows it
    again = control.pause(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    assert not again.changed and again.vehicles[0]["outcome"] == "ALREADY" and len(f.commands) == len(sent)
    go = control.resume(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
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
    assert ("DISPATCHED", "LAUNCHED") in [(e[0], e[1]) for e in events]
    holds = [e for e in events if e[0] == e[1] == "IN_FLIGHT"]
    assert [e[2] for e in holds] == [OPERATOR, OPERATOR]
    assert holds[0][3].startswith(f"paused by {OPERATOR}: crane in the way") and holds[1][3].startswith("resumed by")
    assert events[-1][:2] == ("IN_FLIGHT", "SUCCEEDED")
    audit = [(a.command, a.result_code, a.actor) for a in f.ledger.audit_rows(limit=10) if a.command.startswith("control.")]
    assert audit[:3] == [("control.resume", "OK", OPERATOR), ("control.pause", "OK", OPERATOR),
                         ("control.pause", "OK", OPERATOR)]


def test_a_pause_refused_during_take_off_is_reported_and_the_vehicle_keeps_climbing(fly: Callable[..., Flight]) -> None:
    # ArduCopter answers FAILED to DO_PAUSE_CONTINUE in NAV_TAKEOFF (ModeAuto::pause: not SubMode::WP); LOITER is
    # never tried: without a pilot's throttle it descends (FACTS.md: it hit the ground and disarmed)
    f = fly("ardupilot", speedup=1.0, climb_mps=1.0)
    assert f.flight.items[f.flight.cur].command == M.MAV_CMD_NAV_TAKEOFF
    alt = f.flight.alt_m
    with pytest.raises(Conflict) as info:
        control.pause(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, reason="bird", options=FAST)
    err = info.value
    assert "refused the pause" in err.message and "FAILED" in err.message and "flies on" in err.message
    assert err.details["refused"] is True and err.details["vehicles"][0]["refused"]["result"] == "FAILED"
    assert [c["command"] for c in f.commands] == [M.MAV_CMD_DO_PAUSE_CONTINUE]  # nothing else was sent
    # ArduCopter spools its motors up before it leaves the ground (the simulator's take-off, as SITL's 3.1 s), so
    # "still climbing" is read as: the altitude rises within a bounded wait, in AUTO, armed, never paused
    deadline = time.monotonic() + 10.0
    while f.flight.alt_m <= alt and time.monotonic() < deadline:
        assert f.flight.mode == "AUTO" and f.flight.armed and not f.flight.paused
        time.sleep(0.1)
    assert f.flight.mode == "AUTO" and f.flight.armed and not f.flight.paused and f.flight.alt_m > alt  # still climbing
    assert f.flight.items[f.flight.cur].command == M.MAV_CMD_NAV_TAKEOFF
    assert "Failed to pause" in f.flight.texts_sent
    audit = [(a.command, a.result_code) for a in f.ledger.audit_rows(limit=5) if a.command.startswith("control.")]
    assert audit[0] == ("control.pause", "CONFLICT")
    # forced (`sortie pause --force`, through the authority): held in BRAKE, which holds by itself, and the answer
    # says so; resume continues the climb in AUTO
    held = _cli_json(["pause", f.draft_id, "--force", "--reason", "bird", "--as", OPERATOR, "--now", NOW.isoformat(),
                      "--world", str(f.world_dir)])
    assert held["changed"] and "BRAKE" in held["message"] and held["vehicles"][0]["forced_hold"], held
    assert held["mode"] == "local" and held["identity"] == "asserted"
    assert f.flight.mode == "BRAKE" and [c["command"] for c in f.commands][-1] == M.MAV_CMD_DO_SET_MODE
    alt = f.flight.alt_m
    time.sleep(0.3)
    assert abs(f.flight.alt_m - alt) < 0.01 and f.flight.armed  # BRAKE holds: no descent without a pilot
    go = control.resume(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    assert go.vehicles[0]["outcome"] == "CONFIRMED" and f.flight.mode == "AUTO"
    f.pace(300.0)
    assert f.monitored().state == "SUCCEEDED"


def test_a_signed_vehicle_is_paused_resumed_and_recalled_through_a_port_that_drops_unsigned_messages(
        fly: Callable[..., Flight]) -> None:
    from flows.vehicle.commands import VehicleController, rtl_command

    f = fly("signed")
    f.wait_reached(2)
    f.pace(10.0)
    f.wait_on_leg()
    serial1 = f.sim.ports[1]
    refused_before = f.sim.stats.refused_unsigned
    held = control.pause(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    assert held.vehicles[0]["outcome"] == "CONFIRMED" and f.flight.paused
    go = control.resume(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    assert go.vehicles[0]["outcome"] == "CONFIRMED" and not f.flight.paused
    assert serial1.conn.mav.signing.goodsig_count > 0 and f.sim.stats.refused_unsigned == refused_before
    # the same command unsigned on that port is dropped without a word, and the link says why
    with VehicleController(f.sim.addresses[1], FAST) as unsigned:
        with pytest.raises(DeviceUnavailable, match="signs its messages"):
            unsigned.connect()
    assert f.sim.stats.refused_unsigned > refused_before and f.flight.mode == "AUTO"
    assert rtl_command().command not in [c["command"] for c in f.commands]
    back = control.recall(Grounds(ledger=f.ledger), f.draft_id, actor=OPERATOR, now=NOW, options=FAST)
    assert back.state == "RECALLING" and back.vehicles[0]["outcome"] == "CONFIRMED"
    f.pace(300.0)
    assert f.monitored().state == "RECALLED"


def _cli_json(args: list[str]) -> dict[str, Any]:
    """``sortie ARGS --json`` in this process (the embedded authority on the test's SORTIE_HOME); exit 0 required."""
    import json

    from typer.testing import CliRunner

    from flows.cli import app

    out = CliRunner().invoke(app, [*args, "--json"], env={"SORTIE_SERVER": "", "PREFECT_API_URL": ""})
    assert out.exit_code == 0, out.output
    return dict(json.loads(out.output))
