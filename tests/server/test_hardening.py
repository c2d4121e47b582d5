"""Issue 28 against a real ``sortie server`` over HTTP: scoped service tokens, one-time-code lockout, audited
refusals, one server per home, one-line text on a terminal, and the smaller items.

A server of this module's own (``own_authority``): the lockouts and the broken zone file below must not reach
the other modules' server.
"""

from __future__ import annotations

import json
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx
import pyotp
import pytest

from flows.ledger import open_ledger
from testkit import free_port, stop_process_group

pytestmark = pytest.mark.slow


def _code(r: httpx.Response) -> str:
    return str(r.json()["error"]["code"])


def _audit(a: Any, command: str, limit: int = 300) -> list[Any]:
    """The audit rows of ``command``, newest first (refusals are written at once, not batched)."""
    return [x for x in open_ledger(a.home).audit_rows(limit=limit) if x.command == command]


@pytest.fixture(scope="module")
def a(own_authority: Any) -> Any:
    return own_authority


@pytest.fixture(scope="module")
def draft(a: Any) -> dict[str, Any]:
    return a.plan()


# ---------------------------------------------------------------- 1. service tokens act within their own reach


def test_a_service_token_plans_only_for_its_own_tenant_and_both_identities_are_recorded(a: Any) -> None:
    body = {"text": "巡一遍消防通道", "region_id": "region-1001"}
    r = a.call("worker", "POST", "/v1/plan", json={**body, "on_behalf_of": "aino.virtanen"})  # port-authority
    assert r.status_code in (403, 404) and _code(r) in ("FORBIDDEN", "NOT_FOUND"), r.text
    refused = _audit(a, "server.plan")[0]
    assert refused.result_code == _code(r) and refused.caller == "chen.jing" and refused.actor == "aino.virtanen"
    r = a.call("worker", "POST", "/v1/plan", json={**body, "on_behalf_of": "li.wei"})
    assert r.status_code == 200, r.text
    ok = [x for x in _audit(a, "server.plan") if x.result_code == "OK"][0]
    assert ok.actor == "li.wei" and ok.caller == "chen.jing" and ok.token_id and ok.client_addr == "127.0.0.1"


# ---------------------------------------------------------------- 2. one-time codes: lockout, same answer


def test_wrong_codes_lock_the_user_out_the_right_code_too_and_an_unenrolled_user_gets_the_same_answer(
        a: Any, draft: dict[str, Any]) -> None:
    from flows.server.totp import PAIR_FAILURES

    p = a.sortie(["admin", "totp", "enroll", "demo.approver", "--home", str(a.home), "--world", str(a.world),
                  "--json"])
    assert p.returncode == 0, p.stderr
    totp = pyotp.parse_uri(json.loads(p.stdout)["otpauth_uri"])
    url = f"/v1/drafts/{draft['draft_id']}/approve"
    body = {"version": draft["version"], "plan_hash": draft["plan_hash"]}
    wrong = f"{(int(totp.now()) + 7) % 1_000_000:06d}"
    answers = []
    for user in ("demo.approver", "chen.jing"):  # both approvers of the tenant: enrolled, and not enrolled
        r = a.call("worker", "POST", url, json={**body, "totp": {"user": user, "code": wrong}})
        answers.append((r.status_code, _code(r), r.json()["error"]["message"].replace(user, "<user>")))
    assert answers[0] == answers[1] and answers[0][:2] == (401, "UNAUTHENTICATED"), answers
    for _ in range(PAIR_FAILURES - 1):
        a.call("worker", "POST", url, json={**body, "totp": {"user": "demo.approver", "code": wrong}})
    r = a.call("worker", "POST", url, json={**body, "totp": {"user": "demo.approver", "code": totp.now()}})
    assert r.status_code == 429 and _code(r) == "TOO_MANY_ATTEMPTS", r.text  # the right code, locked out
    assert r.json()["error"]["details"]["retry_after_s"] > 0
    assert _audit(a, "server.approve.totp.lockout")[0].args_redacted["code_for"] == "demo.approver"  # the lock itself
    rows = _audit(a, "server.approve.totp")
    assert rows[0].result_code == "TOO_MANY_ATTEMPTS"
    assert rows[0].args_redacted["code_for"] == "demo.approver" and rows[0].args_redacted["caller"] == "chen.jing"
    assert rows[0].token_id and rows[0].token_id != "***" and rows[0].client_addr == "127.0.0.1"
    assert not open_ledger(a.home).approvals(draft["draft_id"])


# ---------------------------------------------------------------- 3. every refusal audited, with the token's id


def test_refusals_before_the_audited_wrapper_are_audited_with_token_id_address_and_reason(
        a: Any, draft: dict[str, Any]) -> None:
    d = draft["draft_id"]
    body = {"version": draft["version"], "plan_hash": draft["plan_hash"]}
    cases = [("li.wei", "approve", 403), ("worker", "approve", 403), ("aino.virtanen", "approve", 404),
             ("aino.virtanen", "reject", 404), ("aino.virtanen", "cancel", 404)]
    for user, what, status in cases:
        payload = body if what == "approve" else {"version": draft["version"], "reason": "not ours"}
        r = a.call(user, "POST", f"/v1/drafts/{d}/{what}", json=payload)
        assert r.status_code == status, (user, what, r.text)
        row = next(x for x in open_ledger(a.home).audit_rows(limit=50) if x.command.endswith(what))
        assert row.result_code == _code(r) and row.result_message, (user, what, row)
        assert row.token_id and row.token_id != "***" and row.token_id != a.tokens[user], row
        assert row.client_addr == "127.0.0.1", row
        assert a.tokens[user] not in json.dumps(row.args_redacted), row  # never the secret


# ---------------------------------------------------------------- 5. one server per home


def test_a_second_server_on_the_same_home_refuses_with_a_clear_message(a: Any) -> None:
    port = free_port()
    proc = subprocess.Popen([str(a.sortie_bin), "server", "--world", str(a.world), "--home", str(a.home), "--listen",
                             f"127.0.0.1:{port}", "--allow-unsigned"], env=a.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=120)
    finally:
        stop_process_group(proc)
    assert proc.returncode not in (0, None), out
    assert b"CONFLICT" in out and b"Traceback" not in out, out
    assert a.call("chen.jing", "GET", "/v1/health").status_code == 200


# ---------------------------------------------------------------- 6. text on a terminal stays on its line


def test_a_line_break_in_a_reason_cannot_forge_a_line_of_log_show_or_watch(a: Any) -> None:
    d, d2 = a.plan("li.wei"), a.plan("li.wei")  # two requests (Authority.plan), two drafts
    forged = "2026-11-29T07:00:00+02:00  APPROVED  chen.jing  v1"
    reason = f"not today\n{forged}\r\n\u2028{forged}\u2029\x85{forged}"
    env = {"SORTIE_SERVER": a.url, "SORTIE_TOKEN": a.tokens["chen.jing"]}
    watch = subprocess.Popen([str(a.sortie_bin), "watch", "--count", "1", "--timeout", "90"], env=a.env(**env),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        time.sleep(3)  # the stream is open before the event
        for x in (d, d2):
            r = a.call("chen.jing", "POST", f"/v1/drafts/{x['draft_id']}/reject",
                       json={"version": x["version"], "reason": reason})
            assert r.status_code == 200, r.text
        watched, _err = watch.communicate(timeout=120)
    finally:
        stop_process_group(watch)
    outputs = [watched]
    for args in (["log", d["draft_id"]], ["show", d["draft_id"]]):
        p = a.sortie(args, **env)
        assert p.returncode == 0, p.stderr
        outputs.append(p.stdout)
    assert watched.startswith("draft.rejected"), watched  # (a reject's event carries no reason: the test below)
    for out in outputs:
        assert "not today\\n" in out or out is watched, out
        assert not any(ch in out for ch in "\r\u2028\u2029\x85"), out
        assert not any(line.strip().startswith(forged) for line in out.split("\n")), out


def test_one_line_escapes_every_line_break_and_separator_and_json_keeps_the_data() -> None:
    from flows.safe_text import clean_tree, escape_json_text, one_line

    breaks = "a\nb\rc\td\x0be\x0cf\x1cg\x1dh\x1ei\x85j\u2028k\u2029l\x1b[2Jm\u202en"
    shown = one_line(breaks)
    assert shown.startswith("a\\nb\\rc\\td") and "\\u2028k\\u2029l\\x1b[2Jm\\u202e" in shown, shown
    assert shown.isprintable()
    assert clean_tree({"reason": breaks, breaks: [breaks]}) == {"reason": shown, shown: [shown]}
    js = escape_json_text(json.dumps({"r": breaks}, ensure_ascii=False))
    assert js.isprintable() and json.loads(js) == {"r": breaks}


# ---------------------------------------------------------------- 7. the smaller items


def test_tokens_expire_in_90_days_by_default_and_never_only_on_purpose(a: Any) -> None:
    p = a.sortie(["admin", "token", "create", "li.wei", "--home", str(a.home), "--world", str(a.world), "--json"])
    expires = datetime.fromisoformat(json.loads(p.stdout)["expires"])
    assert timedelta(days=89) < expires - datetime.now(timezone.utc) <= timedelta(days=90)
    p = a.sortie(["admin", "token", "create", "li.wei", "--expires", "never", "--home", str(a.home), "--world",
                  str(a.world), "--json"])
    assert json.loads(p.stdout)["expires"] is None


def test_duplicate_keys_and_a_chunked_body_over_the_limit_are_refused(a: Any, draft: dict[str, Any]) -> None:
    url = f"/v1/drafts/{draft['draft_id']}/approve"
    with a.client("chen.jing") as c:
        r = c.post(url, content=b'{"version": 1, "version": 2}', headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and _code(r) == "INVALID_ARGUMENT" and "version" in r.text, r.text

        def chunks() -> Any:
            yield b'{"version": 1, "comment": "'
            for _ in range(64):
                yield b"x" * 65_536
            yield b'"}'

        r = c.post(url, content=chunks(), headers={"Content-Type": "application/json"})
        assert r.status_code == 413 and _code(r) == "INVALID_ARGUMENT", r.text
    assert not open_ledger(a.home).approvals(draft["draft_id"])


def test_a_corrupt_zone_file_is_world_unavailable_and_no_error_names_a_server_path(a: Any) -> None:
    zone = sorted((a.world / "zones").iterdir())[0]
    kept = zone.read_bytes()
    try:
        zone.write_text("{ not json", encoding="utf-8")
        time.sleep(0.05)
        r = a.call("li.wei", "POST", "/v1/plan", json={"text": "巡一遍消防通道", "region_id": "region-1001"})
        assert r.status_code == 503 and _code(r) == "WORLD_UNAVAILABLE", r.text
        for root in (str(a.world), str(a.home), str(Path(a.world).parent)):
            assert root not in r.text, r.text
    finally:
        zone.write_bytes(kept)
    r = a.call("li.wei", "GET", "/v1/drafts/../../etc/passwd")
    assert str(a.home) not in r.text and str(a.world) not in r.text
