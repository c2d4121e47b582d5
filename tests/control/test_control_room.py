"""The control room goes through the authority (issue 25): real Prefect server, real ``sortie server``, a worker.

The parts (``roomkit``): a Prefect server on 127.0.0.1; ``sortie server`` knowing it (it wakes waiting runs and
runs its sweeper every second); a ``prefect.serve`` worker holding the service token and no ledger, so a waiting
run suspends and is restarted by the worker when resumed; the vehicle simulators at the server's link record.
Inputs go through Prefect's API exactly as the UI's Submit, Run and Cancel send them. One-time codes come from
the enrolled secrets (pyotp), as an approver's phone shows them.

- A code typed just before its 30 s step ended, read after the step changed (the worker frozen meanwhile), is
  judged when it was submitted: it approves; the dispatch's ``monitor-mission`` run launches the mission through
  the server (the worker's token, a dispatcher) and follows the flight to a named SUCCEEDED with its report.
- A wrong code is "wrong", a code already late when typed is "expired"; a UI cancel then withdraws the draft
  (CANCELLED, expiry run gone) and a later approval is refused.
- ``recall-mission`` recalls through the server as the operator its code proves; without a code, or with a
  wrong one, it ends named by the refusal and the vehicle flies on.
- An input submitted while the worker is down for over a minute, with a code current at submission, approves.
- A busy drone waits while the approval is valid, then ends DEVICE_BUSY; a draft nobody decides is expired by
  the server's sweeper and its run ends EXPIRED; no traceback in any run's log.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest

from control.roomkit import REPO, Room, load_conftest, open_room, wait_for

pytestmark = [pytest.mark.prefect, pytest.mark.slow, pytest.mark.timeout(900)]

STEP_S = 30


def _no_traceback(room: Room, run_id: Any) -> None:
    text = "\n".join(room.logs(run_id))
    assert "Traceback" not in text and "Unexpected result" not in text and "exited with status" not in text, text


def _code(totp: Any, steps_back: int = 0) -> str:
    return str(totp.at(time.time() - steps_back * STEP_S))


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Room]:
    kit = load_conftest(REPO / "tests" / "orchestration" / "conftest.py", "sortie_prefect_server_kit_room")
    with kit.pointed_at(*kit.start_server(tmp_path_factory.mktemp("prefect"))) as server:
        r = open_room(tmp_path_factory.mktemp("room"), {k: v for k, v in server.env.items()
                                                         if k.startswith("PREFECT_")})
        try:
            yield r
        finally:
            r.close()


@pytest.fixture(scope="module")
def sims(room: Room) -> Iterator[dict[str, Any]]:
    """A simulator per drone at the server's link record (M30T-01 ArduPilot, M3TD-01 PX4); like a real autopilot,
    each waits on the ground with what it was sent until a ground station launches it."""
    from flows.server.links import LinkStore
    from flows.sim.flight import FlightOptions, SimFlight
    from testkit import sim_vehicle
    from flows.usecases.common import load_world_at

    world = load_world_at(room.world)
    out: dict[str, Any] = {}
    # M30T-01's sortie is ~130 s of vehicle time: at 5x it is still flying when the server's follower starts, a
    # request after the launch (at 200x it had landed before a loaded server followed it: NOT_STARTED).
    # M3TD-01 flies on while recalls are refused.
    for drone_id, speedup in (("M30T-01", 5.0), ("M3TD-01", 1.0)):
        drone = world.drone(drone_id)
        dock = world.dock(drone.dock_id)
        flight = SimFlight(FlightOptions(speedup=speedup, default_speed_mps=drone.cruise_speed_mps))
        out[drone_id] = sim_vehicle("udpin:127.0.0.1:0", drone.autopilot, home=(dock.lat, dock.lon, dock.ground_alt_m),
                                   heartbeat_s=0.1, rerequest_s=0.1, flight=flight).start()
        LinkStore(room.home).set(drone_id, out[drone_id].address)  # `sortie admin link set`
    yield out
    for sim in out.values():
        sim.stop()


def test_a_code_is_judged_when_it_was_submitted_and_the_flight_ends_named(room: Room, sims: dict[str, Any]) -> None:
    from prefect.artifacts import Artifact

    d = room.plan("region-1003")  # M30T-01
    assert [s["drone"] for s in d["sorties"]] == ["M30T-01"], d["sorties"]
    run = room.start_run("dispatch-mission", draft_id=d["draft_id"], version=d["version"])
    room.wait_suspended(run.id, 0)
    # the approver types the code their app showed a moment ago (the previous 30 s step): valid now, with one step
    # of drift; the worker is frozen until the step has changed, so the run reads it when it is no longer valid
    room.freeze_worker(True)
    try:
        code = _code(room.totp["demo.approver"], steps_back=1)
        submitted = time.time()
        assert room.totp["demo.approver"].verify(code, for_time=submitted, valid_window=1)
        assert room.submit(run.id, d, "demo.approver", code) == "ACCEPT"
        time.sleep(STEP_S - submitted % STEP_S + 1.0)  # into the next step: a few seconds to half a minute
        assert not room.totp["demo.approver"].verify(code, valid_window=1), "judged now, the code would be wrong"
    finally:
        room.freeze_worker(False)
    final = room.wait_final(run.id, 240)
    assert (final.state.type.value, final.state.name) == ("COMPLETED", "DISPATCHED"), final.state
    (a,) = room.ledger().approvals(d["draft_id"], d["version"])
    assert (a.approver, a.decision, a.evidence["identity"]) == ("demo.approver", "APPROVED", "totp"), a
    assert abs(datetime.fromisoformat(a.evidence["submitted_at"]).timestamp() - submitted) < 5
    _no_traceback(room, run.id)
    # the dispatch started monitor-mission, which follows the flight to its end: a named SUCCEEDED, and the report
    # (the server's, in server mode) as the run's artifact
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterIdempotencyKey

    def monitor_run() -> Any:
        with get_client(sync_client=True) as c:
            runs = c.read_flow_runs(flow_run_filter=FlowRunFilter(idempotency_key=FlowRunFilterIdempotencyKey(
                any_=[f"monitor-{d['draft_id']}-v{d['version']}"])))
        return runs[0] if runs else None

    mon = room.wait_final(wait_for("the monitor run", monitor_run, 60).id, 240)
    assert (mon.state.type.value, mon.state.name) == ("COMPLETED", "SUCCEEDED"), mon.state
    assert mon.state.result(raise_on_failure=False)["state"] == "SUCCEEDED"
    report = Artifact.get(f"report-{d['draft_id']}-v{d['version']}")
    assert report is not None and "SUCCEEDED" in str(report.data), report
    _no_traceback(room, mon.id)
    events = room.ledger().events(d["draft_id"])
    launched = next(e for e in events if e.to_state == "LAUNCHED")  # by the monitor run, as the worker's token
    assert launched.actor == "chen.jing" and [e.to_state for e in events][-3:] == ["LAUNCHED", "IN_FLIGHT",
                                                                                    "SUCCEEDED"], events
    took_off = next(e for e in events if e.to_state == "IN_FLIGHT")
    assert "vehicle time" in took_off.reason and took_off.event_time.startswith("2026-11-29"), took_off


def test_wrong_and_late_codes_are_told_apart_and_a_ui_cancel_withdraws_the_draft(room: Room) -> None:
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterIdempotencyKey
    from prefect.states import Cancelling

    d = room.plan("region-1001")
    run = room.start_run("dispatch-mission", draft_id=d["draft_id"], version=d["version"], dry_run=True)
    room.wait_suspended(run.id, 0)
    totp = room.totp["demo.approver"]
    wrong = f"{(int(_code(totp)) + 500_000) % 1_000_000:06d}"
    assert room.submit(run.id, d, "demo.approver", wrong) == "ACCEPT"
    room.wait_suspended(run.id, 1)
    assert room.submit(run.id, d, "demo.approver", _code(totp, steps_back=4)) == "ACCEPT"  # two minutes old
    room.wait_suspended(run.id, 2)
    room.logged(run.id, "refused: one-time-code", "is wrong")
    room.logged(run.id, "refused: code-expired", "expired when it was submitted")
    refused = [(r.command, r.result_code) for r in room.ledger().audit_rows(limit=500)
               if r.draft_id == d["draft_id"] and r.command == "server.approve.totp"]
    assert refused == [("server.approve.totp", "UNAUTHENTICATED")] * 2, refused

    def expiry_runs() -> list[Any]:
        with get_client(sync_client=True) as c:
            return list(c.read_flow_runs(flow_run_filter=FlowRunFilter(idempotency_key=FlowRunFilterIdempotencyKey(
                any_=[f"expire-{d['draft_id']}-v{d['version']}"]))))

    assert [r.state.name for r in expiry_runs()] == ["Scheduled"]
    with get_client(sync_client=True) as c:  # what the UI's Cancel does
        c.set_flow_run_state(run.id, Cancelling(message="cancelled from the UI"))
    wait_for("the draft to be CANCELLED", lambda: room.ledger().get_draft(d["draft_id"], 1).state == "CANCELLED", 30)
    assert room.run(run.id).state.type.value == "CANCELLED"
    event = room.ledger().events(d["draft_id"])[-1]
    assert event.to_state == "CANCELLED" and event.actor == f"prefect:run {run.id}", event
    wait_for("the expiry run to go", lambda: [r.state.type.value for r in expiry_runs()] == ["CANCELLED"], 30)
    r = room.http("chen.jing", "POST", f"/v1/drafts/{d['draft_id']}/approve",
                  json={"version": 1, "plan_hash": d["plan_hash"]})
    assert r.status_code == 409 and r.json()["error"]["code"] == "CONFLICT", r.text
    assert room.ledger().approvals(d["draft_id"], 1) == []


def test_the_recall_deployment_acts_as_the_operator_its_code_proves(room: Room, sims: dict[str, Any]) -> None:
    d = room.plan("region-1002", "inspect the hydrants today")  # M3TD-01, PX4
    assert [s["drone"] for s in d["sorties"]] == ["M3TD-01"], d["sorties"]
    room.ok("chen.jing", "POST", f"/v1/drafts/{d['draft_id']}/approve", json={"version": 1, "plan_hash": d["plan_hash"]})
    assert room.ok("chen.jing", "POST", f"/v1/drafts/{d['draft_id']}/dispatch", json={})["status"] == "ACKED"
    assert room.ok("chen.jing", "POST", f"/v1/drafts/{d['draft_id']}/launch", json={})["state"] == "LAUNCHED"
    flight = sims["M3TD-01"].flight
    wait_for("the vehicle to take off", lambda: flight.phase == "FLYING", 30, 0.1)
    # a service token never commands a vehicle as itself
    r = room.http("worker", "POST", f"/v1/drafts/{d['draft_id']}/recall", json={"reason": "as the worker"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "FORBIDDEN", r.text
    # the code is a required field of the run form: Prefect refuses to create a run without one
    with pytest.raises(Exception, match="code"):
        room.start_run("recall-mission", draft_id=d["draft_id"], operator="chen.jing", reason="recall with no code")
    run = room.start_run("recall-mission", draft_id=d["draft_id"], operator="chen.jing", code="000000",
                         reason="recall with a wrong code", wait_s=60)
    wrong = room.wait_final(run.id, 120).state
    _no_traceback(room, run.id)
    assert (wrong.type.value, wrong.name) == ("FAILED", "UNAUTHENTICATED"), wrong
    assert room.ledger().get_draft(d["draft_id"], 1).state in ("LAUNCHED", "IN_FLIGHT") and flight.phase == "FLYING"
    run = room.start_run("recall-mission", draft_id=d["draft_id"], operator="chen.jing",
                         code=_code(room.totp["chen.jing"]), reason="from the UI", wait_s=120)
    wait_for("the recall to be recorded", lambda: room.ledger().get_draft(d["draft_id"], 1).state == "RECALLING", 120)
    flight.options = replace(flight.options, speedup=30.0)  # the way home goes faster
    final = room.wait_final(run.id, 240)
    assert (final.state.type.value, final.state.name) == ("CANCELLED", "RECALLED"), final.state
    _no_traceback(room, run.id)
    led = room.ledger()
    recalling = next(e for e in led.events(d["draft_id"]) if e.to_state == "RECALLING")
    assert recalling.actor == "chen.jing", recalling
    rows = [(r.command, r.result_code, r.args_redacted.get("identity")) for r in led.audit_rows(limit=500)
            if r.draft_id == d["draft_id"] and r.command.startswith("server.recall")]
    # a code that did not prove anyone is audited under the caller's token, naming whose code it claimed to be
    assert ("server.recall", "OK", "totp") in rows and ("server.recall.totp", "UNAUTHENTICATED", "token") in rows, rows
    refused = [r.args_redacted for r in led.audit_rows(limit=500)
               if r.draft_id == d["draft_id"] and r.command == "server.recall.totp"]
    assert refused and all(a.get("code_for") == "chen.jing" for a in refused), refused
    assert ("server.recall", "FORBIDDEN", "token") in rows, rows


def test_an_input_submitted_while_the_worker_is_down_over_a_minute_approves(room: Room) -> None:
    d = room.plan("region-1001")
    run = room.start_run("dispatch-mission", draft_id=d["draft_id"], version=d["version"], dry_run=True)
    room.wait_suspended(run.id, 0)
    room.stop_worker()
    try:
        code = _code(room.totp["demo.approver"])  # the code the app shows now
        submitted = time.time()
        assert room.submit(run.id, d, "demo.approver", code) == "ACCEPT"
        time.sleep(max(0.0, submitted + 65.0 - time.time()))
        assert not room.totp["demo.approver"].verify(code, valid_window=1), "judged now, the code would be wrong"
    finally:
        room.start_worker()
    final = room.wait_final(run.id, 300)
    assert (final.state.type.value, final.state.name) == ("COMPLETED", "DRY_RUN"), final.state
    (a,) = room.ledger().approvals(d["draft_id"], 1)
    assert a.approver == "demo.approver" and a.evidence["identity"] == "totp" and "submitted_at" in a.evidence
    _no_traceback(room, run.id)


def test_a_busy_drone_and_an_overdue_draft_end_named(room: Room, sims: dict[str, Any]) -> None:
    """The server's policy window is shortened to 75 s for this test (and restored): long enough for a loaded worker
    to start the run and ask for the first dispatch, short enough to see the approval lapse and a draft expire."""
    from flows.server.config import PolicyStore

    # A flies M30T-01 and never ends (the vehicle is dispatched, the mission never followed): the drone stays busy.
    # B is planned for M30T-01 before A's dispatch (a drone committed to a dispatch is no longer planned: issue 42),
    # so B's dispatch is the one that finds the drone busy.
    a, b = room.plan("region-1003"), room.plan("region-1003")
    assert [s["drone"] for s in b["sorties"]] == ["M30T-01"]
    room.ok("chen.jing", "POST", f"/v1/drafts/{a['draft_id']}/approve", json={"version": 1, "plan_hash": a["plan_hash"]})
    assert room.ok("chen.jing", "POST", f"/v1/drafts/{a['draft_id']}/dispatch", json={})["status"] == "ACKED"
    policy = PolicyStore(room.home)
    before, _ = policy.set(approval_ttl=timedelta(seconds=75))
    try:
        c = room.plan("region-1001")
        room.ok("chen.jing", "POST", f"/v1/drafts/{b['draft_id']}/approve",
                json={"version": 1, "plan_hash": b["plan_hash"]})
        busy = room.start_run("dispatch-mission", draft_id=b["draft_id"], version=1)
        waits = room.start_run("dispatch-mission", draft_id=c["draft_id"], version=1)
        ended = {name: room.wait_final(r.id, 180).state for name, r in (("busy", busy), ("waits", waits))}
    finally:
        policy.set(approval_ttl=before.approval_ttl)
    assert (ended["busy"].type.value, ended["busy"].name) == ("FAILED", "DEVICE_BUSY"), ended
    assert "busy" in ended["busy"].message and a["draft_id"] in ended["busy"].message
    room.logged(busy.id, "asking again")
    assert (ended["waits"].type.value, ended["waits"].name) == ("CANCELLED", "EXPIRED"), ended
    expired = room.ledger().events(c["draft_id"])[-1]
    assert expired.to_state == "EXPIRED" and expired.actor == "authority:sweeper", expired
    for r in (busy, waits):
        _no_traceback(room, r.id)
    assert room.ledger().dispatches(b["draft_id"]) == []
    assert c["draft_id"] not in str(room.ok("chen.jing", "GET", "/v1/pending"))
