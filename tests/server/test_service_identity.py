"""Whom a service token may name, and what a response says about the server's disk (issue 38), over real HTTP.

A service token (the Prefect worker's: chen.jing's, scope ``service``) plans on behalf of the requester a flow
names. It may not name an administrator (``admin`` holds every tenant: naming it would reach them all); a name
that is no user of the world is refused, and both refusals are audited under the *claimed* name with the caller
beside it. ``files`` in a response are references relative to the server's home, never absolute server paths.
"""

from __future__ import annotations

from typing import Any

from flows.ledger import open_ledger

BODY = {"text": "巡一遍消防通道", "region_id": "region-1001"}


def _refused_row(a: Any, actor: str) -> Any:
    rows = [x for x in open_ledger(a.home).audit_rows(limit=300) if x.command == "server.plan" and x.actor == actor]
    return rows[0] if rows else None


def test_a_service_token_may_not_plan_on_behalf_of_an_administrator(authority: Any) -> None:
    r = authority.call("worker", "POST", "/v1/plan", json={**BODY, "on_behalf_of": "admin"})
    assert r.status_code == 403 and r.json()["error"]["code"] == "FORBIDDEN", r.text
    assert "admin" in r.json()["error"]["message"]
    row = _refused_row(authority, "admin")
    assert row is not None and row.result_code == "FORBIDDEN" and row.caller == "chen.jing", row


def test_a_refusal_for_a_made_up_user_is_audited_under_the_claimed_name_with_the_caller(authority: Any) -> None:
    r = authority.call("worker", "POST", "/v1/plan", json={**BODY, "on_behalf_of": "nobody.at.all"})
    assert r.status_code in (403, 404), r.text
    row = _refused_row(authority, "nobody.at.all")
    assert row is not None and row.caller == "chen.jing" and row.result_code == r.json()["error"]["code"], row


def test_files_in_responses_are_relative_references(authority: Any) -> None:
    draft = authority.plan()
    got = authority.call("li.wei", "GET", f"/v1/drafts/{draft['draft_id']}").json()
    for out in (draft, got):
        files = out["files"]
        assert files, out
        for name, ref in files.items():
            assert not ref.startswith("/") and str(authority.home) not in ref and ".." not in ref, (name, ref)
            assert (authority.home / ref).is_file(), (name, ref)
