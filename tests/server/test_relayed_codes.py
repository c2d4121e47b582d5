"""One-time codes relayed by a worker are judged at the moment they were submitted, within the server's bounds.

A real ``sortie server`` over HTTP (the session's, ``conftest``), the worker's service token relaying an
approver's code the way the approval form's run does (``totp: {user, code, submitted_at}``), codes made from the
enrolled secret as the approver's phone makes them. The bounds (``flows.server.totp.judged_at``): at most
``RELAY_MAX_AGE_S`` old, never in the server's future; a code that was late when typed is "expired", not
"wrong"; a code is used once. Each refusal is audited (``server.approve.totp``).
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from typing import Any

import pytest

from flows.errors import Unauthenticated
from flows.server.totp import LATE_STEPS, RELAY_MAX_AGE_S, judged_at
from planner.errors import InvalidArgument

STEP_S = 30


@pytest.fixture(scope="module")
def approver(authority: Any) -> Any:
    import pyotp

    p = authority.sortie(["admin", "totp", "enroll", "demo.approver", "--home", str(authority.home), "--world",
                          str(authority.world), "--json"])
    assert p.returncode == 0, p.stderr
    return pyotp.parse_uri(json.loads(p.stdout)["otpauth_uri"])


def _relay(authority: Any, d: dict[str, Any], code: str, submitted: float | None) -> Any:
    totp: dict[str, Any] = {"user": "demo.approver", "code": code}
    if submitted is not None:
        totp["submitted_at"] = datetime.fromtimestamp(submitted, timezone.utc).isoformat()
    return authority.call("worker", "POST", f"/v1/drafts/{d['draft_id']}/approve",
                          json={"version": d["version"], "plan_hash": d["plan_hash"], "totp": totp})


def test_the_bounds_of_a_submission_time() -> None:
    now = 1_800_000_000.0
    assert judged_at(None, now_s=now) == now
    assert judged_at(datetime.fromtimestamp(now - 70, timezone.utc), now_s=now) == now - 70
    assert judged_at(datetime.fromtimestamp(now + 3, timezone.utc), now_s=now) == now + 3  # two hosts, one NTP apart
    with pytest.raises(InvalidArgument, match="future"):
        judged_at(datetime.fromtimestamp(now + 60, timezone.utc), now_s=now)
    with pytest.raises(Unauthenticated, match="expired"):
        judged_at(datetime.fromtimestamp(now - RELAY_MAX_AGE_S - 1, timezone.utc), now_s=now)
    with pytest.raises(InvalidArgument, match="offset"):
        judged_at(datetime(2026, 11, 29, 7, 0), now_s=now)


def test_a_code_typed_seventy_seconds_ago_approves_when_judged_at_its_submission(authority: Any, approver: Any) -> None:
    from flows.ledger import open_ledger

    d = authority.plan()
    submitted = time.time() - 70
    code = approver.at(submitted)
    assert not approver.verify(code, valid_window=1)  # judged now it would be refused
    r = _relay(authority, d, code, submitted)
    assert r.status_code == 200 and r.json()["status"] == "APPROVED" and r.json()["identity"] == "totp", r.text
    (a,) = open_ledger(authority.home).approvals(d["draft_id"], d["version"])
    assert a.evidence["submitted_at"] == datetime.fromtimestamp(submitted, timezone.utc).isoformat()
    assert a.evidence["relayed_by"] == "chen.jing" and a.approver == "demo.approver"
    replay = _relay(authority, d, code, submitted)
    assert replay.status_code == 401 and "already used" in replay.json()["error"]["message"], replay.text


def test_late_future_and_stale_submissions_are_refused_by_name_and_audited(authority: Any, approver: Any) -> None:
    from flows.ledger import open_ledger

    d = authority.plan()
    now = time.time()
    late = _relay(authority, d, approver.at(now - 3 * STEP_S), now)  # the code of 90 s before it was typed
    assert late.status_code == 401 and "expired when it was submitted" in late.json()["error"]["message"], late.text
    wrong = _relay(authority, d, f"{(int(approver.at(now)) + 500_000) % 1_000_000:06d}", now)
    assert wrong.status_code == 401 and "is wrong" in wrong.json()["error"]["message"], wrong.text
    ancient = _relay(authority, d, approver.at(now - (LATE_STEPS + 3) * STEP_S), now)  # beyond what is recognised
    assert ancient.status_code == 401 and "is wrong" in ancient.json()["error"]["message"], ancient.text
    stale = _relay(authority, d, approver.at(now - 400), now - 400)
    assert stale.status_code == 401 and "expired: it was submitted 4" in stale.json()["error"]["message"], stale.text
    future = _relay(authority, d, approver.at(now + 120), now + 120)
    assert future.status_code == 422 and "future" in future.json()["error"]["message"], future.text
    bad = authority.call("worker", "POST", f"/v1/drafts/{d['draft_id']}/approve", json={
        "version": d["version"], "totp": {"user": "demo.approver", "code": approver.at(now), "submitted_at": "soon"}})
    assert bad.status_code == 422, bad.text
    led = open_ledger(authority.home)
    rows = [(r.command, r.result_code) for r in led.audit_rows(limit=500)
            if r.draft_id == d["draft_id"] and r.command == "server.approve.totp"]
    assert rows.count(("server.approve.totp", "UNAUTHENTICATED")) == 4, rows
    assert rows.count(("server.approve.totp", "INVALID_ARGUMENT")) == 2, rows
    assert led.approvals(d["draft_id"], d["version"]) == [] and led.get_draft(d["draft_id"]).state == "DRAFT"


def test_a_form_input_the_worker_refused_before_asking_is_audited_by_the_server(authority: Any) -> None:
    """Junk or a wrong plan hash never reaches a decision route; the worker sends it for the server's audit, the
    input's user id kept as an unproven claim, never as the actor."""
    from flows.authority.remote import RemoteAuthority
    from flows.client.http import SortieClient
    from flows.ledger import open_ledger

    d = authority.plan()
    worker = RemoteAuthority(SortieClient(authority.url, authority.tokens["worker"]))
    worker.record_attempt(d["draft_id"], d["version"], command="prefect.approve", actor="mallory",
                          args={"attempt": 1, "flow_run_id": "run-1"}, code="INVALID_ARGUMENT",
                          message="plan hash 00 is not the hash of the draft")
    worker.record_attempt(d["draft_id"], d["version"], command="prefect.approve", actor="chen.jing",
                          args={"attempt": 2, "judged_by_authority": True}, code="UNAUTHENTICATED", message="x")
    (row,) = [r for r in open_ledger(authority.home).audit_rows(limit=500)
              if r.draft_id == d["draft_id"] and r.command == "server.prefect.approve"]
    assert (row.actor, row.result_code, row.args_redacted["claimed_by"], row.args_redacted["attempt"]) == (
        "chen.jing", "INVALID_ARGUMENT", "mallory", 1), row
    user = authority.call("li.wei", "POST", f"/v1/drafts/{d['draft_id']}/attempts",
                          json={"version": 1, "command": "prefect.approve", "code": "INVALID_ARGUMENT"})
    assert user.status_code == 403, user.text  # only a service token relays a form
