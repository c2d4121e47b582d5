"""A stop nobody can block (issue 38): wrong one-time codes from another tenant, or relayed through the Prefect
worker's service token, leave the victim's approval and recall working. Codes are counted per (person, caller)
only after role and tenant pass; a relaying service is never locked as a whole; a lock is audited; a recall
with the right code goes through a lock. A real ``sortie server`` over real HTTP, real tokens, real TOTP."""

from __future__ import annotations

import json
import time
from typing import Any

import pyotp

from flows.ledger import open_ledger


def _enroll(a: Any, user: str) -> pyotp.TOTP:
    p = a.sortie(["admin", "totp", "enroll", user, "--home", str(a.home), "--world", str(a.world), "--json"])
    assert p.returncode == 0, p.stderr
    return pyotp.parse_uri(json.loads(p.stdout)["otpauth_uri"])  # type: ignore[return-value]


def _wrong(totp: pyotp.TOTP, k: int) -> str:
    """A code that is none of the drift window's (a guess)."""
    now = time.time()
    right = {totp.at(now + d * 30) for d in (-2, -1, 0, 1, 2)}
    code = f"{(int(totp.now()) + 7 + k) % 1_000_000:06d}"
    while code in right:
        code = f"{(int(code) + 1) % 1_000_000:06d}"
    return code


def test_twenty_wrong_codes_from_another_tenant_or_through_the_worker_leave_approval_and_recall_working(
        own_authority: Any) -> None:
    a = own_authority
    chen, other = _enroll(a, "chen.jing"), _enroll(a, "demo.approver")
    first, second = a.plan(), a.plan()
    approve = lambda d: (f"/v1/drafts/{d['draft_id']}/approve",  # noqa: E731
                         {"version": d["version"], "plan_hash": d["plan_hash"]})
    url, body = approve(first)

    # another tenant's planner names chen.jing 20 times: it cannot see the draft, nothing is judged or counted
    for k in range(20):
        r = a.call("aino.virtanen", "POST", url, json={**body, "totp": {"user": "chen.jing", "code": _wrong(chen, k)}})
        assert r.status_code == 404, r.text
    # through the worker, for someone who does not hold the role: refused before any code is judged
    r = a.call("worker", "POST", url, json={**body, "totp": {"user": "jussi.koski", "code": "123456"}})
    assert r.status_code == 403 and "no code was judged" in r.text, r.text
    # the worker's form path: the right code still approves for chen.jing
    ok = a.call("worker", "POST", url, json={**body, "totp": {"user": "chen.jing", "code": chen.now()}})
    assert ok.status_code == 200 and ok.json()["status"] == "APPROVED", ok.text

    # 20 wrong codes for chen.jing through the worker (someone at the form): that pair locks after five
    url2, body2 = approve(second)
    answers = [a.call("worker", "POST", url2, json={**body2, "totp": {"user": "chen.jing", "code": _wrong(chen, k)}})
               .status_code for k in range(20)]
    assert answers[:4] == [401] * 4 and set(answers[4:]) == {429}, answers
    lock = [r for r in open_ledger(a.home).audit_rows(limit=400) if r.command == "server.approve.totp.lockout"]
    assert lock and lock[0].args_redacted["code_for"] == "chen.jing" and lock[0].args_redacted["caller"] == "chen.jing"
    # the lock is shown to the admin on the host
    p = a.sortie(["admin", "totp", "locks", "--home", str(a.home), "--json"])
    assert p.returncode == 0, p.stderr
    assert [(x["user"], x["caller"]) for x in json.loads(p.stdout)["locks"]] == [("chen.jing", "chen.jing")]
    # ... the worker is not locked as a whole: another approver's code through it approves
    by_other = a.call("worker", "POST", url2, json={**body2, "totp": {"user": "demo.approver", "code": other.now()}})
    assert by_other.status_code == 200 and by_other.json()["status"] == "APPROVED", by_other.text
    # ... and chen.jing's recall with her right code goes through the lock (it reaches the use case: the approved
    # draft does not fly, which is the only refusal left); her right code proves her, so the pair is unlocked
    recall = a.call("worker", "POST", f"/v1/drafts/{first['draft_id']}/recall",
                    json={"totp": {"user": "chen.jing", "code": chen.at(time.time() + 30)}})
    assert recall.status_code == 409 and recall.json()["error"]["code"] == "CONFLICT", recall.text
    rows = [r for r in open_ledger(a.home).audit_rows(limit=400) if r.command == "server.recall"]
    assert rows and rows[0].actor == "chen.jing" and rows[0].args_redacted["identity"] == "totp"
    # ... and her own token approves, lock or no lock
    third = a.plan()
    url3, body3 = approve(third)
    assert a.call("chen.jing", "POST", url3, json=body3).status_code == 200
