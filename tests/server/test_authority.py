"""The authority over real HTTP: who (tokens, roles, tenants, one-time codes), when (its clock), what (its world).

Every test talks to a real ``sortie server`` process on 127.0.0.1 (``conftest``)
with tokens issued by ``sortie admin token create``.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyotp
import pytest

from flows.ledger import open_ledger

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def draft(authority: Any) -> dict[str, Any]:
    """One draft planned through the server by li.wei (planner of city-fire)."""
    return authority.plan()


def _code(r: Any) -> str:
    return r.json()["error"]["code"]


# --------------------------------------------------------------------------- who


def test_reads_need_a_token_and_forged_tokens_get_401(authority: Any, draft: dict[str, Any]) -> None:
    for token in (None, "not-a-token", "sortie_0123456789abcdef_" + "x" * 43, authority.tokens["li.wei"] + "x"):
        with authority.client(token=token) as c:
            for path in ("/v1/drafts", f"/v1/drafts/{draft['draft_id']}", f"/v1/drafts/{draft['draft_id']}/log"):
                r = c.get(path)
                assert r.status_code == 401 and _code(r) == "UNAUTHENTICATED", (token, path, r.text)
    r = authority.call("li.wei", "GET", f"/v1/drafts/{draft['draft_id']}")
    assert r.status_code == 200 and r.json()["mode"] == "server" and r.json()["identity"] == "token"
    assert draft["requested_by"] == "li.wei" and draft["created_time"].startswith("2026-11-29T07:0")


def test_expired_and_revoked_tokens_get_401(authority: Any) -> None:
    short = authority.token("li.wei", "--expires", "1s")
    with authority.client(token=short) as c:
        assert c.get("/v1/drafts").status_code in (200, 401)  # may already be past its one second
        time.sleep(1.2)
        r = c.get("/v1/drafts")
        assert r.status_code == 401 and "expired" in r.json()["error"]["message"]
    tok = authority.token("li.wei")
    with authority.client(token=tok) as c:
        assert c.get("/v1/drafts").status_code == 200
        token_id = tok.split("_")[1]
        p = authority.sortie(["admin", "token", "revoke", token_id, "--home", str(authority.home), "--json"])
        assert p.returncode == 0 and json.loads(p.stdout)["revoked"] == [token_id], p.stderr
        r = c.get("/v1/drafts")
        assert r.status_code == 401 and "revoked" in r.json()["error"]["message"]


def test_a_planners_token_cannot_approve(authority: Any, draft: dict[str, Any]) -> None:
    body = {"version": draft["version"], "plan_hash": draft["plan_hash"]}
    r = authority.call("li.wei", "POST", f"/v1/drafts/{draft['draft_id']}/approve", json=body)
    assert r.status_code == 403 and _code(r) == "FORBIDDEN", r.text
    r = authority.call("worker", "POST", f"/v1/drafts/{draft['draft_id']}/approve", json=body)
    assert r.status_code == 403 and "scopes" in r.json()["error"]["message"], r.text
    assert authority.call("li.wei", "GET", f"/v1/drafts/{draft['draft_id']}").json()["status"] == "DRAFT"


def test_the_plan_body_sets_the_coverage_target_of_a_survey(authority: Any) -> None:
    r = authority.call("li.wei", "POST", "/v1/plan",
                       json={"text": "今天航测这块地", "region_id": "region-1001", "coverage_target": 0.995})
    assert r.status_code == 200, r.text
    cov = r.json()["coverage"]
    assert cov["target"] == 0.995 and cov["met"] == (cov["reached"] >= 0.995)


def test_only_a_service_token_plans_on_behalf_of_someone_else_and_it_cannot_approve(authority: Any) -> None:
    r = authority.call("chen.jing", "POST", "/v1/plan",
                       json={"text": "巡一遍消防通道", "region_id": "region-1001", "on_behalf_of": "li.wei"})
    assert r.status_code == 403 and _code(r) == "FORBIDDEN" and "service token" in r.json()["error"]["message"], r.text
    p = authority.sortie(["admin", "token", "create", "chen.jing", "--scope", "service,approve", "--home",
                          str(authority.home), "--world", str(authority.world), "--json"])
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["code"] == "INVALID_ARGUMENT", p.stdout


def test_another_tenants_token_gets_404_not_403(authority: Any, draft: dict[str, Any]) -> None:
    d = draft["draft_id"]
    for method, path, body in (
        ("GET", f"/v1/drafts/{d}", None),
        ("GET", f"/v1/drafts/{d}/log", None),
        ("POST", f"/v1/drafts/{d}/approve", {"version": 1}),
        ("POST", f"/v1/drafts/{d}/dispatch", {"dry_run": True}),
    ):
        r = authority.call("aino.virtanen", method, path, json=body)
        assert r.status_code == 404 and _code(r) == "NOT_FOUND", (path, r.text)
    listed = authority.call("aino.virtanen", "GET", "/v1/drafts").json()["drafts"]
    assert d not in [x["draft_id"] for x in listed]


def test_wrong_or_replayed_one_time_code_is_refused_and_audited_the_right_one_approves_once(
    authority: Any, draft: dict[str, Any]
) -> None:
    p = authority.sortie(["admin", "totp", "enroll", "chen.jing", "--home", str(authority.home), "--world", str(authority.world),
                "--json"])
    assert p.returncode == 0, p.stderr
    totp = pyotp.parse_uri(json.loads(p.stdout)["otpauth_uri"])
    url = f"/v1/drafts/{draft['draft_id']}/approve"
    right = totp.now()
    wrong = f"{(int(right) + 1) % 1_000_000:06d}"
    body = {"version": draft["version"], "plan_hash": draft["plan_hash"], "comment": "at the shared screen"}
    r = authority.call("worker", "POST", url, json={**body, "totp": {"user": "chen.jing", "code": wrong}})
    assert r.status_code == 401 and _code(r) == "UNAUTHENTICATED", r.text
    r = authority.call("worker", "POST", url, json={**body, "totp": {"user": "chen.jing", "code": right}})
    assert r.status_code == 200 and r.json()["status"] == "APPROVED" and r.json()["identity"] == "totp", r.text
    (a,) = r.json()["notes"]["approvals"]
    assert a["approver"] == "chen.jing" and a["evidence"]["identity"] == "totp" and a["evidence"]["mode"] == "server"
    assert a["evidence"]["relayed_by"] == "chen.jing" and a["evidence"]["policy"]["four_eyes"] is True
    r = authority.call("worker", "POST", url, json={**body, "totp": {"user": "chen.jing", "code": right}})
    assert r.status_code == 401 and "already used" in r.json()["error"]["message"], r.text
    audit = [(x.command, x.result_code) for x in open_ledger(authority.home).audit_rows(limit=200)]
    assert audit.count(("server.approve.totp", "UNAUTHENTICATED")) == 2
    assert ("server.approve", "OK") in audit
    assert len(open_ledger(authority.home).approvals(draft["draft_id"])) == 1


# --------------------------------------------------------------------------- when and what


def test_caller_supplied_world_or_time_is_refused(authority: Any, draft: dict[str, Any]) -> None:
    d = draft["draft_id"]
    for extra in ({"now": "2026-12-06T07:00:00+02:00"}, {"world": str(authority.world)}, {"approver": "chen.jing"}):
        r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/approve", json={"version": 1, **extra})
        assert r.status_code == 422 and _code(r) == "INVALID_ARGUMENT", r.text
        r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"dry_run": True, **extra})
        assert r.status_code == 422 and _code(r) == "INVALID_ARGUMENT", r.text
    env = {"SORTIE_SERVER": authority.url, "SORTIE_TOKEN": authority.tokens["chen.jing"]}
    for args in (["approve", d, "--version", "1", "--now", "2026-12-06T07:00:00+02:00"],
                 ["dispatch", d, "--dry-run", "--world", str(authority.world)],
                 ["approve", d, "--version", "1", "--as", "chen.jing"]):
        p = authority.sortie([*args, "--json"], **env)
        assert p.returncode == 2 and json.loads(p.stdout)["error"]["code"] == "OVERRIDE_REFUSED", p.stdout
    p = authority.sortie(["show", d, "--json"], **env)
    assert p.returncode == 0 and json.loads(p.stdout)["mode"] == "server", p.stderr
    p = authority.sortie(["approve", d, "--version", "1", "--json"],
                         **{**env, "SORTIE_TOKEN": authority.tokens["li.wei"]})
    assert p.returncode == 2 and json.loads(p.stdout)["error"]["code"] in ("FORBIDDEN", "CONFLICT"), p.stdout


def _zone_over(authority: Any, region: str) -> dict[str, Any]:
    from flows.usecases.common import load_world_at

    minx, miny, maxx, maxy = load_world_at(authority.world).region(region).area.buffer(0.01).bounds
    ring = [[minx, miny], [maxx, miny], [maxx, maxy], [minx, maxy], [minx, miny]]
    return {"title": "added after approval", "features": [{
        "identifier": "TEST-NEW-1", "country": "FIN", "name": "New prohibited zone", "type": "COMMON",
        "restriction": "PROHIBITED", "region": 0, "reason": ["EMERGENCY"], "regulationExemption": "NO",
        "applicability": [{"permanent": "YES"}],
        "zoneAuthority": [{"name": "Test", "purpose": "AUTHORIZATION"}],
        "geometry": [{"uomDimensions": "M", "lowerLimit": 0, "lowerVerticalReference": "AGL", "upperLimit": 500,
                      "upperVerticalReference": "AGL", "horizontalProjection": {"type": "Polygon", "coordinates": [ring]}}],
    }]}


def test_a_zone_added_after_approval_blocks_dispatch_and_missing_zones_block_everything(
    authority: Any, draft: dict[str, Any]
) -> None:
    d = draft["draft_id"]
    assert authority.call("chen.jing", "GET", f"/v1/drafts/{d}").json()["status"] == "APPROVED"
    authority.report_in()
    r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"dry_run": True})
    assert r.status_code == 200 and r.json()["status"] == "DRY_RUN", r.text
    new = authority.world / "zones" / "new.json"
    new.write_text(json.dumps(_zone_over(authority, "region-1001")), encoding="utf-8")
    try:
        r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"dry_run": True})
        assert r.status_code == 409 and _code(r) == "AIRSPACE_BLOCKED", r.text
    finally:
        new.unlink()
    away = authority.world.parent / "zones-away"
    shutil.move(str(authority.world / "zones"), away)
    try:
        for method, path, body in (("GET", "/v1/drafts", None), ("GET", f"/v1/drafts/{d}", None),
                                   ("POST", "/v1/plan", {"text": "巡一遍", "region_id": "region-1001"}),
                                   ("POST", f"/v1/drafts/{d}/dispatch", {"dry_run": True})):
            r = authority.call("chen.jing", method, path, json=body)
            assert r.status_code == 503 and _code(r) == "WORLD_UNAVAILABLE", (path, r.text)
    finally:
        shutil.move(str(away), authority.world / "zones")
    authority.report_in()
    r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"dry_run": True})
    assert r.status_code == 200 and r.json()["status"] == "DRY_RUN", r.text


def test_bad_input_is_a_4xx_with_a_stable_code_and_writes_nothing(authority: Any, draft: dict[str, Any]) -> None:
    d = draft["draft_id"]
    ledger = open_ledger(authority.home)
    before = (len(ledger.approvals(d)), len(ledger.events(d)), len(ledger.list_drafts()))
    url = f"/v1/drafts/{d}/approve"
    with authority.client("chen.jing") as c:
        cases = [
            c.post(url, json={"version": "1"}),                              # wrong type
            c.post(url, json={"version": 1, "surprise": True}),              # unknown field
            c.post(url, json=[1, 2]),                                        # not an object
            c.post(url, content=b"{not json", headers={"Content-Type": "application/json"}),
            c.post(url, json={"version": 1, "comment": "x" * 400_000}),      # oversize
            c.post("/v1/plan", json={"text": "", "region_id": None}),
            c.post("/v1/plan", json={"text": 5}),
            c.post("/v1/plan", json={"text": "今天航测这块地", "region_id": "region-1001", "coverage_target": 1.5}),
            c.post("/v1/plan", json={"text": "今天航测这块地", "region_id": "region-1001", "coverage_target": "0.99"}),
            c.post(f"/v1/drafts/{d}/dispatch", json={"version": -1}),
            c.get("/v1/drafts", params={"limit": "many"}),
            c.get(f"/v1/drafts/{d}/export", params={"format": "docx"}),
            c.get("/v1/drafts/no-such-draft"),
        ]
    for r in cases:
        assert 400 <= r.status_code < 500, r.text
        assert r.json()["error"]["code"] in ("INVALID_ARGUMENT", "NOT_FOUND"), r.text
    assert cases[4].status_code == 413
    assert (len(ledger.approvals(d)), len(ledger.events(d)), len(ledger.list_drafts())) == before


def test_openapi_is_published(authority: Any) -> None:
    import httpx

    spec = httpx.get(f"{authority.url}/openapi.json", timeout=30).json()
    assert {"/v1/plan", "/v1/drafts/{draft_id}/approve", "/v1/drafts/{draft_id}/dispatch", "/v1/events"} <= set(spec["paths"])


# --------------------------------------------------------------------------- races and events


def test_racing_clients_settle_to_one_decision_and_one_dispatch(authority: Any) -> None:
    from testkit import sim_vehicle
    from flows.usecases.common import load_world_at

    events: list[dict[str, Any]] = []

    def follow() -> None:
        from flows.client.http import SortieClient

        c = SortieClient(authority.url, authority.tokens["li.wei"])
        for ev in c.events(max_events=3, timeout_s=200):
            events.append(ev)

    watcher = threading.Thread(target=follow, daemon=True)
    watcher.start()
    time.sleep(1.0)
    draft = authority.plan()
    d, v = draft["draft_id"], draft["version"]
    results: list[Any] = []

    def race(user: str, path: str, body: dict[str, Any]) -> None:
        r = authority.call(user, "POST", path, json=body)
        results.append((r.status_code, r.json()))

    body = {"version": v, "plan_hash": draft["plan_hash"]}
    threads = [threading.Thread(target=race, args=("chen.jing", f"/v1/drafts/{d}/approve", body)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
    ok = [r for s, r in results if s == 200]
    assert len(ok) == 1 and all(s == 409 for s, _ in results if s != 200), results
    assert len(open_ledger(authority.home).approvals(d, v)) == 1

    world = load_world_at(authority.world)
    sims, links = [], {}
    for drone_id in sorted({s["drone"] for s in draft["sorties"]}):
        dock = world.dock(world.drone(drone_id).dock_id)
        sim = sim_vehicle("udpin:127.0.0.1:0", world.drone(drone_id).autopilot, home=(dock.lat, dock.lon, dock.ground_alt_m))
        sims.append(sim.start())
        links[drone_id] = sim.address
    try:
        for drone_id, conn in links.items():  # the server owns the vehicles' addresses: an admin records them
            p = authority.sortie(["admin", "link", "set", drone_id, conn, "--home", str(authority.home), "--world",
                                  str(authority.world), "--json"])
            assert p.returncode == 0, p.stdout + p.stderr
        authority.report_in()
        results.clear()
        body = {"version": v, "link": links}  # a link that matches the server's record is accepted
        users = ["chen.jing", "worker"] * 3
        threads = [threading.Thread(target=race, args=(u, f"/v1/drafts/{d}/dispatch", body)) for u in users]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=240)
    finally:
        for sim in sims:
            sim.stop()
    assert all(s == 200 for s, _ in results), results
    firsts = [r for _, r in results if r["first"]]
    assert len(firsts) == 1 and firsts[0]["status"] == "ACKED", results
    assert len(open_ledger(authority.home).dispatches(d)) == 1
    watcher.join(timeout=60)
    types = [e["type"] for e in events]
    assert types[:3] == ["draft.recorded", "approval.needed", "draft.approved"], events
    assert all(e["draft_id"] == d for e in events)


# --------------------------------------------------------------------------- Prefect workers as clients


def test_prefect_tasks_are_clients_with_a_narrow_service_token(authority: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The flow tasks' bodies in server mode: plan on behalf, read, relay a one-time code, dispatch; no ledger."""
    from flows.orchestration import mission_tasks as f
    from flows.errors import Unauthenticated
    from planner.errors import InvalidArgument

    p = authority.sortie(["admin", "totp", "enroll", "demo.approver", "--home", str(authority.home), "--world",
                          str(authority.world), "--json"])
    assert p.returncode == 0, p.stderr
    totp = pyotp.parse_uri(json.loads(p.stdout)["otpauth_uri"])
    monkeypatch.setenv("SORTIE_SERVER", authority.url)
    monkeypatch.setenv("SORTIE_TOKEN", authority.tokens["worker"])
    monkeypatch.setenv("SORTIE_HOME", str(authority.home.parent / "not-the-ledger"))
    with pytest.raises(InvalidArgument, match="refused"):
        f.plan_draft_task.fn("巡一遍消防通道", "region-1001", None, "li.wei", None, "2026-12-06T07:00:00+02:00")
    d = f.plan_draft_task.fn("这块地今天巡一遍消防通道", "region-1001", None, "li.wei", None, None)
    assert d["requested_by"] == "li.wei" and d["mode"] == "server", d
    state = f.read_draft_task.fn(d["draft_id"], d["version"])
    assert state["state"] == d["status"] and state["plan_hash"] == d["plan_hash"]
    # what the approval form shows: the request as written and who read it, in server mode too (it was lost)
    assert state["request_text"] == "这块地今天巡一遍消防通道" and state["extractor"], state
    if d["status"] != "DRAFT" or d["verdict"] == "block":
        pytest.skip(f"the second request planned {d['status']}/{d['verdict']}: nothing to approve")
    decision = {"draft_id": d["draft_id"], "version": d["version"], "plan_hash": d["plan_hash"], "decision": "approve",
                "approver": "demo.approver", "comment": "from the Prefect form"}
    # a refusal is the task's answer (the run answers it and waits again), not an exception with a traceback
    no_code = f.record_decision_task.fn(decision, None, None)
    assert no_code["refused"] == "INVALID_ARGUMENT" and "one-time code" in no_code["message"], no_code
    wrong = f.record_decision_task.fn({**decision, "code": f"{(int(totp.now()) + 7) % 1_000_000:06d}"}, None, None)
    assert wrong["refused"] == Unauthenticated.code, wrong
    assert f.record_decision_task.fn({**decision, "code": totp.now()}, None, None) == {"state": "APPROVED"}
    (a,) = open_ledger(authority.home).approvals(d["draft_id"], d["version"])
    assert a.approver == "demo.approver" and a.evidence["identity"] == "totp" and a.evidence["relayed_by"] == "chen.jing"
    assert f.last_approver(f.authority_for("read-draft").show(d["draft_id"], d["version"])) == "demo.approver"
    # A drone flies one mission at a time (DEVICE_BUSY otherwise): the racing test's mission ends first.
    led = open_ledger(authority.home)
    for r in led.list_drafts():
        if r.state == "DISPATCHED":
            led.transition(r.draft_id, r.version, expected_state="DISPATCHED", expected_row_version=r.row_version,
                           to_state="ABORTED", actor="test", reason="cancelled before take-off",
                           now=datetime.now(timezone.utc))
    authority.report_in()
    out = f.dispatch_task.fn(d["draft_id"], d["version"], "ignored", None, None, True, None)
    assert out["status"] == "DRY_RUN" and out["mode"] == "server", out
    assert not (authority.home.parent / "not-the-ledger").exists()


# --------------------------------------------------------------------------- the CLI as a client


def test_cli_plans_through_the_server_and_watch_prints_the_event(authority: Any) -> None:
    """`sortie plan` with SORTIE_SERVER records on the server (not locally); `sortie watch` sees it;
    `sortie plan --what-if` takes a world and a time and records nothing anywhere."""
    import subprocess

    env = {"SORTIE_SERVER": authority.url, "SORTIE_TOKEN": authority.tokens["li.wei"],
           "SORTIE_HOME": str(authority.home.parent / "client-home")}
    watch = subprocess.Popen([str(authority.sortie_bin), "watch", "--count", "1", "--timeout", "200", "--json"],
                             env=authority.env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3.0)
        before = {d.draft_id for d in open_ledger(authority.home).list_drafts()}
        p = authority.sortie(["plan", "巡一遍消防通道 (from a terminal)", "--region", "region-1001", "--json"], **env)
        assert p.returncode == 0, p.stdout + p.stderr
        d = json.loads(p.stdout)
        assert d["mode"] == "server" and d["requested_by"] == "li.wei" and d["clock"].startswith("simulated")
        assert {x.draft_id for x in open_ledger(authority.home).list_drafts()} - before == {d["draft_id"]}
        out, err = watch.communicate(timeout=120)
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.wait(timeout=10)
    assert watch.returncode == 0, err
    (ev,) = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert ev["type"] == "draft.recorded" and ev["draft_id"] == d["draft_id"]
    assert not (authority.home.parent / "client-home" / "ledger.duckdb").exists()
    count = len(open_ledger(authority.home).list_drafts())
    p = authority.sortie(["plan", "巡一遍消防通道", "--region", "region-1001", "--what-if", "--world",
                          str(authority.world), "--now", "2026-11-29T07:00:00+02:00", "--as", "li.wei", "--json"], **env)
    assert p.returncode == 0, p.stdout + p.stderr
    w = json.loads(p.stdout)
    assert w["status"] == "WHAT_IF" and w["mode"] == "what-if" and w["what_if"] is True
    assert len(open_ledger(authority.home).list_drafts()) == count


def test_policy_is_server_config_changed_by_an_audited_admin_act_and_expiry_follows_it(authority: Any) -> None:
    """`sortie admin policy set` is audited; the worker's expiry call is judged on the server's clock and policy."""
    drafts = authority.call("li.wei", "GET", "/v1/drafts", params={"limit": 50}).json()["drafts"]
    waiting = [d for d in drafts if d["status"] == "DRAFT"]
    assert waiting, drafts
    d = waiting[0]
    r = authority.call("worker", "POST", f"/v1/drafts/{d['draft_id']}/expire", json={"version": d["version"]})
    assert r.status_code == 200 and r.json()["status"] == "DRAFT", r.text  # 30 min have not passed on its clock
    late = waiting[1] if len(waiting) > 1 else authority.plan()
    p = authority.sortie(["admin", "policy", "set", "--approval-window", "1s", "--home", str(authority.home), "--json"])
    assert p.returncode == 0 and json.loads(p.stdout)["after"]["approval_ttl_s"] == 1, p.stderr
    try:
        # no expiry call at all: the deadline is the ledger's, so a late approval is refused and EXPIRES the version
        time.sleep(1.1)
        r = authority.call("chen.jing", "POST", f"/v1/drafts/{late['draft_id']}/approve",
                           json={"version": late["version"], "plan_hash": late["plan_hash"]})
        assert r.status_code == 409 and r.json()["error"]["code"] == "APPROVAL_STALE", r.text
        assert "deadline" in r.json()["error"]["message"] and r.json()["error"]["details"]["state"] == "EXPIRED"
        led = open_ledger(authority.home)
        assert led.get_draft(late["draft_id"], late["version"]).state == "EXPIRED"
        assert led.events(late["draft_id"])[-1].actor == "ledger:deadline"
        (refusal,) = led.refusals(late["draft_id"], late["version"])
        assert (refusal.actor, refusal.command, refusal.args_redacted["identity"], refusal.result_code) == (
            "chen.jing", "server.approve", "token", "APPROVAL_STALE")
        assert "deadline" in (refusal.result_message or "")
        r = authority.call("worker", "POST", f"/v1/drafts/{d['draft_id']}/expire", json={"version": d["version"]})
        assert r.status_code == 200 and r.json()["status"] == "EXPIRED", r.text
        r = authority.call("chen.jing", "POST", f"/v1/drafts/{d['draft_id']}/approve", json={"version": d["version"]})
        assert r.status_code == 409 and r.json()["error"]["code"] == "CONFLICT", r.text
        r = authority.call("li.wei", "POST", f"/v1/drafts/{d['draft_id']}/expire", json={"version": d["version"], "now": "x"})
        assert r.status_code == 422
    finally:
        authority.sortie(["admin", "policy", "set", "--approval-window", "30m", "--home", str(authority.home)])
    audit = [(a.command, a.args_redacted) for a in open_ledger(authority.home).audit_rows(limit=500)]
    changes = [args for cmd, args in audit if cmd == "admin.policy.set"]
    assert {"before": {"four_eyes": True, "approval_ttl_s": 1800}, "after": {"four_eyes": True, "approval_ttl_s": 1}} \
        in [{k: a[k] for k in ("before", "after")} for a in changes]


# --------------------------------------------------------------------------- fuzzed input


def test_random_bodies_never_get_a_500_and_never_write(authority: Any) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    ledger = open_ledger(authority.home)
    drafts = authority.call("chen.jing", "GET", "/v1/drafts").json()["drafts"]
    d = drafts[0]["draft_id"]
    before = (len(ledger.approvals(d)), len(ledger.events(d)), len(ledger.dispatches(d)))
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                        st.text(max_size=30))
    values = st.recursive(scalars, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                          st.dictionaries(st.text(max_size=10), kids, max_size=4)),
                          max_leaves=12)
    keys = st.sampled_from(["version", "plan_hash", "comment", "totp", "reason", "dry_run", "link", "now", "world"])
    bodies = st.one_of(values, st.dictionaries(keys, values, max_size=5))
    paths = st.sampled_from([f"/v1/drafts/{d}/approve", f"/v1/drafts/{d}/reject", f"/v1/drafts/{d}/dispatch",
                             f"/v1/drafts/{d}/expire", f"/v1/drafts/{d}/replan"])

    with authority.client("li.wei") as c:  # a planner: nothing here may succeed in writing
        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
        @given(path=paths, body=bodies)
        def check(path: str, body: Any) -> None:
            if path.endswith("/replan") and body == {}:
                return  # a valid replan by a planner would (rightly) write a version
            r = c.post(path, content=json.dumps(body, allow_nan=True).encode(),
                       headers={"Content-Type": "application/json"})
            if r.status_code == 200:  # only a well-formed expiry that is not due may be answered (and writes nothing)
                assert path.endswith("/expire"), (path, body, r.text)
                return
            assert 400 <= r.status_code < 500, (path, body, r.status_code, r.text)
            assert r.json()["error"]["code"] in ("INVALID_ARGUMENT", "FORBIDDEN", "NOT_FOUND", "CONFLICT",
                                                 "UNAUTHENTICATED", "APPROVAL_STALE", "APPROVAL_REQUIRED")

        check()
    assert (len(ledger.approvals(d)), len(ledger.events(d)), len(ledger.dispatches(d))) == before


def test_pending_lists_what_waits_for_the_tokens_tenant_and_needs_a_token(authority: Any) -> None:
    """GET /v1/pending (and `sortie pending` with SORTIE_SERVER) is tenant-scoped, on the server's clock and policy."""
    # a draft of its own: the module's `draft` was approved by the one-time-code test above, so it waits no more
    r = authority.call("li.wei", "POST", "/v1/plan", json={"text": "巡一遍消防通道 (waiting)", "region_id": "region-1001"})
    assert r.status_code == 200 and r.json()["status"] == "DRAFT", r.text
    draft = r.json()
    with authority.client(token=None) as c:
        assert c.get("/v1/pending").status_code == 401
    mine = authority.call("chen.jing", "GET", "/v1/pending").json()
    assert draft["draft_id"] in [p["draft_id"] for p in mine["pending"]] and mine["mode"] == "server"
    item = next(p for p in mine["pending"] if p["draft_id"] == draft["draft_id"])
    assert "li.wei" not in item["approvers"] and "chen.jing" in item["approvers"] and item["seconds_left"] > 0
    other = authority.call("aino.virtanen", "GET", "/v1/pending").json()
    assert draft["draft_id"] not in [p["draft_id"] for p in other["pending"]]
    env = {"SORTIE_SERVER": authority.url, "SORTIE_TOKEN": authority.tokens["demo.approver"]}
    p = authority.sortie(["pending", "--json"], **env)
    assert p.returncode == 0, p.stderr
    assert draft["draft_id"] in [x["draft_id"] for x in json.loads(p.stdout)["pending"]]
    from typer.testing import CliRunner

    from flows.cli import app

    # refused before any request, by the same rule as every other command (OVERRIDE_REFUSED, an INVALID_ARGUMENT)
    refused = CliRunner().invoke(app, ["pending", "--as", "chen.jing"], env=env)
    assert refused.exit_code == 2 and "OVERRIDE_REFUSED" in refused.output and "--as" in refused.output
