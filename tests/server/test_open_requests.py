"""The clarification dialogue through ``sortie server``: real tokens, real HTTP, the server's ledger and clock.

``POST /v1/plan`` keeps a request that needs clarification open (422 ``NEEDS_CLARIFICATION`` naming it,
``request.open`` on the feed); ``GET /v1/requests/{id}`` and ``POST /v1/requests/{id}/answers`` are tenant-scoped like
drafts (another tenant's request is 404), need the planner role to answer (an approver is 403), refuse a service
token answering as itself, and accept an operator's answers relayed by a worker with their one-time code (proven,
judged at submission). The answered request is planned as a draft whose record shows each question with its answer,
who gave it and when; answering twice is 409. The CLI as a client of the server does the same.
"""

from __future__ import annotations

import json
import threading
import time
from datetime import datetime, timezone
from typing import Any

import pytest

from flows.client.http import SortieClient

TEXT = "patrol the fire lanes now at 40 m above the roofs, especially the north gate"
KINDS = "巡查消防通道，明天9点，海拔120米，速度每秒8米，重点看北门"


@pytest.fixture(scope="module")
def server(own_authority: Any) -> Any:
    return own_authority


def _feed(server: Any, user: str, n: int, timeout_s: float) -> tuple[threading.Thread, list[dict[str, Any]]]:
    got: list[dict[str, Any]] = []
    t = threading.Thread(target=lambda: got.extend(
        SortieClient(server.url, server.tokens[user]).events(max_events=n, timeout_s=timeout_s)), daemon=True)
    t.start()
    return t, got


def test_a_request_planned_through_a_question_and_its_answers_over_the_api(server: Any) -> None:
    from flows.integrity.verify import verify_ledger
    from flows.ledger import open_ledger

    server.report_in()
    mine, mine_got = _feed(server, "li.wei", 5, 120)
    theirs, theirs_got = _feed(server, "aino.virtanen", 1, 20)
    time.sleep(0.5)  # subscribed before anything happens
    r = server.call("li.wei", "POST", "/v1/plan", json={"text": TEXT, "region_id": "region-1001"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "NEEDS_CLARIFICATION", r.text
    rid = r.json()["error"]["details"]["request_id"]
    path = f"/v1/requests/{rid}"
    shown = server.call("li.wei", "GET", path)
    assert shown.status_code == 200 and shown.json()["state"] == "OPEN" and shown.json()["mode"] == "server"
    # tenant-scoped like drafts; the planner role answers; a service token never answers as itself
    for user, method, body in (("aino.virtanen", "GET", None), ("aino.virtanen", "POST", {"answers": ["x"]})):
        r = server.call(user, method, path + ("/answers" if method == "POST" else ""), json=body)
        assert r.status_code == 404 and r.json()["error"]["code"] == "NOT_FOUND", r.text
    r = server.call("chen.jing", "POST", path + "/answers", json={"answers": ["above ground", "evenly"]})
    assert r.status_code == 403 and "may not plan" in r.json()["error"]["message"], r.text
    r = server.call("worker", "POST", path + "/answers", json={"answers": ["above ground", "evenly"]})
    assert r.status_code == 403 and r.json()["error"]["code"] == "FORBIDDEN", r.text
    r = server.call("li.wei", "POST", path + "/answers", json={"answers": ["above ground"], "world": "x"})
    assert r.status_code == 422, r.text  # a closed body
    # one answer: the other question stays open
    r = server.call("li.wei", "POST", path + "/answers", json={"answers": ["above ground"]})
    assert r.status_code == 422 and [q["id"] for q in r.json()["error"]["details"]["asked"]] == ["focus-51"], r.text
    r = server.call("li.wei", "POST", path + "/answers", json={"answers": ["focus-51=evenly"]})
    assert r.status_code == 200, r.text
    draft = r.json()
    assert draft["request_id"] == rid and draft["requested_by"] == "li.wei" and draft["identity"] == "token"
    assert [(c["id"], c["answer"], c["answered_by"]) for c in draft["clarifications"]] == [
        ("height_reference-29", "above ground", "li.wei"), ("focus-51", "evenly", "li.wei")]
    assert all(c["answered_time"].startswith("2026-11-29") for c in draft["clarifications"])  # the server's clock
    seen = server.call("chen.jing", "GET", f"/v1/drafts/{draft['draft_id']}").json()
    assert seen["clarifications"] == draft["clarifications"]  # the approver sees both
    r = server.call("li.wei", "POST", path + "/answers", json={"answers": ["evenly"]})
    assert r.status_code == 409 and r.json()["error"]["code"] == "CONFLICT", r.text
    mine.join(60)
    theirs.join(30)
    kinds = [(e["type"], e.get("request_id"), e.get("draft_id")) for e in mine_got]
    assert kinds[:4] == [("request.open", rid, None), ("request.answered", rid, None),
                         ("request.answered", rid, draft["draft_id"]), ("draft.recorded", rid, draft["draft_id"])], kinds
    assert theirs_got == []  # another tenant's screen sees none of it
    led = open_ledger(server.home)
    audit = [(a.command, a.actor, a.result_code) for a in reversed(led.audit_rows(limit=30))
             if a.command in ("server.answer", "server.request")]
    assert ("server.answer", "li.wei", "OK") in audit and ("server.answer", "aino.virtanen", "NOT_FOUND") in audit
    assert verify_ledger(led).ok


def test_a_worker_relays_an_operators_answers_with_their_code_and_the_cli_answers_through_the_server(
        server: Any) -> None:
    import pyotp

    server.report_in()
    p = server.sortie(["admin", "totp", "enroll", "li.wei", "--home", str(server.home), "--world", str(server.world),
                       "--json"])
    assert p.returncode == 0, p.stderr
    otp = pyotp.parse_uri(json.loads(p.stdout)["otpauth_uri"])
    r = server.call("li.wei", "POST", "/v1/plan", json={"text": "这块地今天巡一遍消防通道，重点看北门那段",
                                                        "region_id": "region-1001"})
    rid = r.json()["error"]["details"]["request_id"]
    relayed = {"user": "li.wei", "code": "000000", "submitted_at": datetime.now(timezone.utc).isoformat()}
    r = server.call("worker", "POST", f"/v1/requests/{rid}/answers", json={"answers": ["均匀"], "totp": relayed})
    assert r.status_code == 401 and r.json()["error"]["code"] == "UNAUTHENTICATED", r.text  # a wrong code
    relayed["code"] = otp.now()
    r = server.call("worker", "POST", f"/v1/requests/{rid}/answers", json={"answers": ["均匀"], "totp": relayed})
    assert r.status_code == 200, r.text
    assert r.json()["identity"] == "totp" and r.json()["clarifications"][0]["answered_by"] == "li.wei"
    # the CLI as a client of the server: the same dialogue, the server's clock and world
    env = {"SORTIE_SERVER": server.url, "SORTIE_TOKEN": server.tokens["li.wei"]}
    p = server.sortie(["plan", TEXT.replace("north", "south"), "--region", "region-1001", "--json"], **env)
    assert p.returncode == 2, p.stderr
    rid = json.loads(p.stdout)["error"]["details"]["request_id"]
    p = server.sortie(["plan", "--continue", rid, "--answer", "above ground", "--answer", "evenly", "--json"], **env)
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout)
    assert out["mode"] == "server" and out["request_id"] == rid and len(out["clarifications"]) == 2
    p = server.sortie(["plan", "--continue", rid, "--answer", "evenly", "--now", "2026-11-29T08:00:00+02:00"], **env)
    assert p.returncode == 2 and p.stderr.startswith("OVERRIDE_REFUSED"), p.stderr


def test_every_kind_of_answer_continues_the_request_in_one_turn_over_the_api(server: Any) -> None:
    """Issue 41: answers that answer every question fully plan the request in one ``POST …/answers``."""
    from flows.ledger import open_ledger

    server.report_in()
    r = server.call("li.wei", "POST", "/v1/plan", json={"text": KINDS, "region_id": "region-1001"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "NEEDS_CLARIFICATION", r.text
    details = r.json()["error"]["details"]
    ids = {q["kind"]: q["id"] for q in details["asked"]}
    said = {"part_of_day": "上午", "height_reference": "离地60米", "parameter": "去掉", "focus": "均匀"}
    assert set(ids) == set(said), details["asked"]
    r = server.call("li.wei", "POST", f"/v1/requests/{details['request_id']}/answers",
                    json={"answers": [f"{ids[kind]}={text}" for kind, text in said.items()]})
    assert r.status_code == 200, r.text
    draft = r.json()
    assert [c["read_as"] for c in draft["clarifications"]] == ["上午9点", "高度60米", "dropped", "dropped"]
    read = open_ledger(server.home).get_draft(draft["draft_id"]).intent
    assert (read["intent"]["altitude_m"], read["start_time"]) == (60, "09:00")
