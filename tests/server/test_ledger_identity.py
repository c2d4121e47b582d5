"""No confirmed write is lost (issue 38): the server checks that the ledger it holds open is the file at its path
(device and inode) before every transaction. A replaced file is 503 for every request and ``ok: false`` in
health — nothing is answered 200 into a file nobody will read again — and once the file is back, everything
confirmed before is there. A real ``sortie server`` over real HTTP; the file replaced on disk as an operator
(or an attacker) would."""

from __future__ import annotations

import os
import shutil
from typing import Any

import httpx

from server.conftest import Authority


def test_a_replaced_ledger_file_is_503_and_nothing_confirmed_is_lost(own_authority: Authority) -> None:
    a = own_authority
    confirmed = a.plan()
    path = a.home / "ledger.duckdb"
    kept = a.home / "ledger-held.duckdb"
    os.link(path, kept)  # a second name for the file the server holds, so it can be put back
    other = a.home / "other.duckdb"
    shutil.copyfile(path, other)
    os.replace(other, path)  # the file at the path is another one now
    try:
        refused = a.call("li.wei", "POST", "/v1/plan", json={"text": "inspect the hydrants today",
                                                             "region_id": "region-1002"})
        assert refused.status_code == 503, refused.text
        err: dict[str, Any] = refused.json()["error"]
        assert err["code"] == "LEDGER_UNAVAILABLE" and "replaced" in err["message"]
        assert str(a.home) not in refused.text  # no server path in an answer
        assert a.call("chen.jing", "GET", f"/v1/drafts/{confirmed['draft_id']}").status_code == 503
        health = httpx.get(f"{a.url}/v1/health", timeout=10)
        assert health.status_code == 503 and health.json()["ok"] is False
        assert "replaced" in health.json()["ledger"] and str(a.home) not in health.text
    finally:
        os.replace(kept, path)  # the held file is the file at the path again
    health = httpx.get(f"{a.url}/v1/health", timeout=10)
    assert health.status_code == 200 and health.json()["ok"] is True and health.json()["ledger"] == "ok"
    shown = a.call("chen.jing", "GET", f"/v1/drafts/{confirmed['draft_id']}")
    assert shown.status_code == 200 and shown.json()["draft_id"] == confirmed["draft_id"]
    assert a.plan()["status"] == "DRAFT"  # writes go on into the file at the path
