"""The Authority's answers have one type each (``flows.authority.results``), checked where they leave the server (the
drafts list: its shape published, its rows those ``show`` checks), and the server's JSON is what it was: every key the
authority put in an answer goes out, each value as it was.

Against the real server of ``conftest.py`` over HTTP: each answer (a plan, the draft shown, the drafts list, an
approval, a dry-run dispatch, whoami, the fleet, what is pending; a diff, the log, an export, the report, an expiry, a
cancel; an open request shown, answered and expired; a ledger backup; and on a server of its own, a flight over the
vehicle simulator: dispatch, the vehicle read back, reconcile, launch, pause, resume, recall, the follower's end) has
every key its type says is always there, and validated against that type it comes back the very same object (nothing
dropped, nothing converted: an int stays an int); the published OpenAPI schema names the type of each route's answer;
a shape that lacks a key the type requires is refused by the same type. The server's own answers
(``flows.server.answers``) the same way: ``/v1/health``, a relayed refused attempt, the control room's map and flights,
and every event a plan and an approval put on the feed, read from a real Server-Sent Events stream.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import fields
from typing import Any

import pydantic
import pytest
from typing_extensions import is_typeddict

from flows.authority import results
from flows.authority.results import (BackupView, ControlView, DiffView, DispatchView, DraftList, DraftView, ExpiryView,
                                     ExportSent, FleetView, FollowView, LogView, MonitorView, PendingView, ReconcileView,
                                     ReportView, RequestExpiry, RequestView, SortieRow, Stamped, VehicleHolds, WhoAmI)
from flows.server.answers import AttemptRecorded, FeedEvent, HealthView, OpsFlights, OpsMap
from flows.usecases.control_kit import ControlResult
from flows.usecases.views import DispatchSummary, DraftSummary, SortieSummary
from flows.vehicle.flight_record import MonitorResult


#: a request that needs two answers (height reference, focus): kept open, then answered (tests/server/test_open_requests)
OPEN_TEXT = "patrol the fire lanes now at 40 m above the roofs, especially the north gate"
HYDRANTS = {"text": "inspect the hydrants today", "region_id": "region-1002"}  # one sortie, M3TD-01 (PX4)


def _required(shape: Any) -> frozenset[str]:
    return frozenset(shape.__required_keys__)


def _same_through(shape: Any, answer: dict[str, Any]) -> None:
    """``answer`` has every key ``shape`` requires and is unchanged by validating it against ``shape``."""
    missing = _required(shape) - answer.keys()
    assert not missing, (shape.__name__, sorted(missing))
    again = pydantic.TypeAdapter(shape).validate_python(answer)
    assert again == answer, shape.__name__
    assert [type(again[k]) for k in answer] == [type(answer[k]) for k in answer], shape.__name__


@pytest.mark.timeout(300)
def test_the_answers_have_their_types_and_keep_every_key(authority: Any) -> None:
    authority.end_flights()
    planned = authority.plan()
    _same_through(DraftView, planned)
    assert {"mode", "identity", "clock", "server_time"} <= planned.keys()  # the stamps go out as before
    assert all(isinstance(s["index"], int) for s in planned["sorties"])

    shown = authority.call("li.wei", "GET", f"/v1/drafts/{planned['draft_id']}").json()
    _same_through(DraftView, shown)
    assert shown["plan_hash"] == planned["plan_hash"]

    listed = authority.call("li.wei", "GET", "/v1/drafts", params={"limit": 5}).json()
    _same_through(DraftList, listed)
    for row in listed["drafts"]:
        _same_through(DraftView, row)

    approved = authority.call("chen.jing", "POST", f"/v1/drafts/{planned['draft_id']}/approve",
                              json={"version": planned["version"], "plan_hash": planned["plan_hash"]})
    assert approved.status_code == 200, approved.text
    _same_through(DraftView, approved.json())
    assert approved.json()["state"] == "APPROVED" and "resumed_run" in approved.json()

    dry = authority.call("chen.jing", "POST", f"/v1/drafts/{planned['draft_id']}/dispatch",
                         json={"version": planned["version"], "dry_run": True})
    assert dry.status_code == 200, dry.text
    _same_through(DispatchView, dry.json())
    assert dry.json()["dry_run"] is True

    who = authority.call("chen.jing", "GET", "/v1/whoami").json()
    _same_through(WhoAmI, who)
    assert {"scopes", "token_id"} <= who.keys()  # the server's own keys pass through

    for path, shape in (("/v1/fleet", FleetView), ("/v1/pending", PendingView)):
        _same_through(shape, authority.call("chen.jing", "GET", path).json())


def _ok(authority: Any, user: str, method: str, path: str, **kw: Any) -> dict[str, Any]:
    r = authority.call(user, method, path, **kw)
    assert r.status_code == 200, (path, r.text)
    return r.json()  # type: ignore[no-any-return]


@pytest.mark.timeout(300)
def test_the_reading_deciding_and_request_answers_keep_every_key(authority: Any, tmp_path: Any) -> None:
    first = authority.plan()
    d, v1 = first["draft_id"], first["version"]
    again = _ok(authority, "li.wei", "POST", f"/v1/drafts/{d}/replan", json={})
    _same_through(DraftView, again)
    v2 = again["version"]

    diff = _ok(authority, "li.wei", "GET", f"/v1/drafts/{d}/diff", params={"v1": v1, "v2": v2})
    _same_through(DiffView, diff)
    assert (diff["from"], diff["to"]) == (v1, v2)  # the keyword-named keys go out as they are
    _same_through(LogView, _ok(authority, "li.wei", "GET", f"/v1/drafts/{d}/log"))
    sent = _ok(authority, "li.wei", "GET", f"/v1/drafts/{d}/export", params={"format": "geojson", "version": v2})
    _same_through(ExportSent, sent)
    assert sent["bytes"] > 0 and sent["suffix"] == ".geojson"
    _same_through(ReportView, _ok(authority, "li.wei", "GET", f"/v1/drafts/{d}/report", params={"version": v2}))

    expiry = _ok(authority, "chen.jing", "POST", f"/v1/drafts/{d}/expire", json={"version": v2})
    _same_through(ExpiryView, expiry)
    assert expiry["status"] == "DRAFT"  # not overdue on the server's clock: unchanged
    cancelled = _ok(authority, "chen.jing", "POST", f"/v1/drafts/{d}/cancel", json={"version": v2, "reason": "typed"})
    _same_through(ControlView, cancelled)
    assert (cancelled["action"], cancelled["state"], cancelled["changed"]) == ("cancel", "CANCELLED", True)

    # an open request: shown while it waits, answered (a draft), then "expired" (it was planned: unchanged)
    authority.report_in()
    r = authority.call("li.wei", "POST", "/v1/plan", json={"text": OPEN_TEXT, "region_id": "region-1001"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "NEEDS_CLARIFICATION", r.text
    rid = r.json()["error"]["details"]["request_id"]
    shown = _ok(authority, "li.wei", "GET", f"/v1/requests/{rid}")
    _same_through(RequestView, shown)
    assert shown["state"] == "OPEN" and "answer_with" in shown
    answered = _ok(authority, "li.wei", "POST", f"/v1/requests/{rid}/answers",
                   json={"answers": ["above ground", "evenly"]})
    _same_through(DraftView, answered)
    assert answered["request_id"] == rid
    _same_through(RequestView, _ok(authority, "li.wei", "GET", f"/v1/requests/{rid}"))
    closed = _ok(authority, "li.wei", "POST", f"/v1/requests/{rid}/expire", json={})
    _same_through(RequestExpiry, closed)
    assert closed["state"] == "PLANNED" and closed["draft_id"] == answered["draft_id"]

    if "admin" not in authority.tokens:
        authority.tokens["admin"] = authority.token("admin", "--scope", "read,admin")
    backup = _ok(authority, "admin", "POST", "/v1/ledger/backup", json={"include_files": True})
    _same_through(BackupView, backup)
    assert backup["verified"] is True and backup["files"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_flight_answers_keep_every_key(own_authority: Any) -> None:
    """One flight of the vehicle simulator through a server of this test's own (its link record is changed): each
    control's answer, the vehicle read back, reconcile and the follower's end keep their types."""
    server = own_authority
    server.report_in()
    planned = _ok(server, "li.wei", "POST", "/v1/plan", json=HYDRANTS)
    d, v = planned["draft_id"], planned["version"]
    _ok(server, "chen.jing", "POST", f"/v1/drafts/{d}/approve", json={"version": v, "plan_hash": planned["plan_hash"]})
    with server.flying("M3TD-01") as (_, flight):
        server.report_in()
        sent = _ok(server, "chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"version": v})
        _same_through(DispatchView, sent)
        assert sent["status"] == "ACKED", sent
        holds = _ok(server, "chen.jing", "POST", "/v1/fleet/M3TD-01/read", json={})
        _same_through(VehicleHolds, holds)
        assert holds["missions"]["mission"], holds
        _same_through(ReconcileView, _ok(server, "chen.jing", "POST", f"/v1/drafts/{d}/reconcile", json={}))
        launched = _ok(server, "chen.jing", "POST", f"/v1/drafts/{d}/launch", json={"version": v})
        _same_through(ControlView, launched)
        assert launched["state"] == "LAUNCHED", launched
        deadline = time.monotonic() + 60
        while flight.alt_m < 5.0:  # in the air: a pause of a vehicle on the ground is refused
            assert time.monotonic() < deadline, "the vehicle never climbed"
            time.sleep(0.1)
        held = _ok(server, "chen.jing", "POST", f"/v1/drafts/{d}/pause", json={"force": True, "reason": "typed"})
        _same_through(ControlView, held)
        assert held["action"] == "pause" and held["vehicles"], held
        _same_through(ControlView, _ok(server, "chen.jing", "POST", f"/v1/drafts/{d}/resume", json={}))
        recalled = _ok(server, "chen.jing", "POST", f"/v1/drafts/{d}/recall", json={"land_here": True, "wait_s": 60})
        _same_through(ControlView, recalled)
        assert recalled["action"] == "recall", recalled
        followed = _ok(server, "chen.jing", "POST", f"/v1/drafts/{d}/monitor", json={"wait_s": 60})
        _same_through(FollowView, followed)
        assert followed["following"] is False and followed["result"] is not None, followed
        _same_through(MonitorView, followed["result"])


def test_the_published_schema_names_each_answers_type_and_the_type_refuses_a_short_answer(authority: Any) -> None:
    schema = authority.call("li.wei", "GET", "/openapi.json").json()
    answers = {
        ("/v1/plan", "post"): "DraftView", ("/v1/drafts/{draft_id}", "get"): "DraftView",
        ("/v1/drafts", "get"): "DraftList", ("/v1/drafts/{draft_id}/approve", "post"): "DraftView",
        ("/v1/drafts/{draft_id}/reject", "post"): "DraftView", ("/v1/drafts/{draft_id}/dispatch", "post"): "DispatchView",
        ("/v1/whoami", "get"): "WhoAmI", ("/v1/fleet", "get"): "FleetView", ("/v1/pending", "get"): "PendingView",
        ("/v1/drafts/{draft_id}/replan", "post"): "DraftView", ("/v1/drafts/{draft_id}/diff", "get"): "DiffView",
        ("/v1/drafts/{draft_id}/log", "get"): "LogView", ("/v1/drafts/{draft_id}/export", "get"): "ExportSent",
        ("/v1/drafts/{draft_id}/report", "get"): "ReportView", ("/v1/requests/{request_id}", "get"): "RequestView",
        ("/v1/requests/{request_id}/answers", "post"): "DraftView",
        ("/v1/requests/{request_id}/expire", "post"): "RequestExpiry",
        ("/v1/drafts/{draft_id}/expire", "post"): "ExpiryView", ("/v1/drafts/{draft_id}/cancel", "post"): "ControlView",
        ("/v1/drafts/{draft_id}/launch", "post"): "ControlView", ("/v1/drafts/{draft_id}/pause", "post"): "ControlView",
        ("/v1/drafts/{draft_id}/resume", "post"): "ControlView", ("/v1/drafts/{draft_id}/recall", "post"): "ControlView",
        ("/v1/drafts/{draft_id}/monitor", "post"): "FollowView",
        ("/v1/drafts/{draft_id}/reconcile", "post"): "ReconcileView",
        ("/v1/fleet/{drone_id}/read", "post"): "VehicleHolds", ("/v1/fleet/{drone_id}/clear", "post"): "HeldCleared",
        ("/v1/ledger/backup", "post"): "BackupView",
    }
    for (path, method), name in answers.items():
        ok = schema["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": f"#/components/schemas/{name}"}, (path, ok)
    draft = schema["components"]["schemas"]["DraftView"]
    assert {"draft_id", "version", "state", "plan_hash", "sorties"} <= set(draft["required"])

    assert all(is_typeddict(getattr(results, name)) for name in results.__all__ if name != "Number")
    follow = schema["components"]["schemas"]["FollowView"]["properties"]["result"]
    assert {"$ref": "#/components/schemas/MonitorView"} in follow["anyOf"], follow  # the follower's end, typed too
    with pytest.raises(pydantic.ValidationError, match="version"):
        pydantic.TypeAdapter(DraftView).validate_python({"draft_id": "d-1", "state": "DRAFT"})


def test_the_answer_types_name_every_field_of_the_views_they_carry() -> None:
    """The boundary's types mirror the use cases' views key for key (they are written twice on purpose: pydantic at
    the boundary, dataclasses inside): a field added to one and not the other fails here, not in a client."""
    def keys(shape: Any) -> set[str]:
        return set(shape.__annotations__) - set(Stamped.__annotations__)

    assert keys(DraftView) == {f.name for f in fields(DraftSummary)} | {"state", "resumed_run"}
    assert keys(SortieRow) == {f.name for f in fields(SortieSummary)}
    assert keys(DispatchView) == {f.name for f in fields(DispatchSummary)}
    assert keys(ControlView) == {f.name for f in fields(ControlResult)}
    assert keys(MonitorView) == {f.name for f in fields(MonitorResult)} | {"launch"}


@pytest.mark.timeout(300)
def test_health_attempts_and_events_have_their_types(authority: Any) -> None:
    health = authority.call("li.wei", "GET", "/v1/health")
    assert health.status_code == 200, health.text
    _same_through(HealthView, health.json())

    events: list[dict[str, Any]] = []
    opened = threading.Event()

    def listen() -> None:
        with authority.client("chen.jing") as c, c.stream("GET", "/v1/events",
                                                          params={"max_events": 3, "timeout_s": 120}) as s:
            opened.set()
            for line in s.iter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line[len("data: "):]))

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert opened.wait(60), "the event stream did not open"
    authority.end_flights()
    d = authority.plan()
    approved = authority.call("chen.jing", "POST", f"/v1/drafts/{d['draft_id']}/approve",
                              json={"version": d["version"], "plan_hash": d["plan_hash"]})
    assert approved.status_code == 200, approved.text
    listener.join(150)
    assert [e["type"] for e in events] == ["draft.recorded", "approval.needed", "draft.approved"], events
    for e in events:
        _same_through(FeedEvent, e)
        assert e["draft_id"] == d["draft_id"] and "plan" not in e and "files" not in e

    relayed = authority.call("worker", "POST", f"/v1/drafts/{d['draft_id']}/attempts",
                             json={"version": d["version"], "command": "prefect.approve", "code": "INVALID_ARGUMENT"})
    assert relayed.status_code == 200, relayed.text
    _same_through(AttemptRecorded, relayed.json())

    for path, shape in (("/v1/ops/map", OpsMap), ("/v1/ops/flights", OpsFlights)):
        ops = authority.call("chen.jing", "GET", path)
        assert ops.status_code == 200, ops.text
        _same_through(shape, ops.json())
    schema = authority.call("li.wei", "GET", "/openapi.json").json()
    for path, method, name in (("/v1/health", "get", "HealthView"),
                               ("/v1/drafts/{draft_id}/attempts", "post", "AttemptRecorded"),
                               ("/v1/ops/map", "get", "OpsMap"), ("/v1/ops/flights", "get", "OpsFlights")):
        ok = schema["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok == {"$ref": f"#/components/schemas/{name}"}, (path, ok)
    with pytest.raises(pydantic.ValidationError, match="safety_gate"):
        pydantic.TypeAdapter(HealthView).validate_python({k: v for k, v in health.json().items() if k != "safety_gate"})
