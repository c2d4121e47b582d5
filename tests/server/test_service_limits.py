"""Issue 27 against a real ``sortie server`` over HTTP: a token's share of event streams, a clear 429 beyond it,
and the safety lane and ``/v1/health`` answering while streams are held open.

A server of this module's own (``own_authority``), so the held streams reach no other module.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

import httpx
import pytest

from flows.server.token_quotas import STREAMS_PER_TOKEN

pytestmark = pytest.mark.slow


def test_a_token_holds_its_share_of_streams_the_next_gets_429_and_health_and_approve_still_answer(
        own_authority: Any) -> None:
    a = own_authority
    d = a.plan()
    token = a.token("chen.jing", "--scope", "read")
    with contextlib.ExitStack() as held:
        for _ in range(STREAMS_PER_TOKEN):
            c = held.enter_context(httpx.Client(base_url=a.url, headers={"Authorization": f"Bearer {token}"},
                                                timeout=30))
            r = held.enter_context(c.stream("GET", "/v1/events"))
            assert r.status_code == 200
        with httpx.Client(base_url=a.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
            r = c.get("/v1/events")
        assert r.status_code == 429 and r.json()["error"]["code"] == "TOO_MANY_REQUESTS", r.text
        assert "Retry-After" in r.headers or r.json()["error"]["details"], r.headers
        t0 = time.perf_counter()
        assert httpx.get(f"{a.url}/v1/health", timeout=10).status_code == 200
        r = a.call("chen.jing", "POST", f"/v1/drafts/{d['draft_id']}/approve",
                   json={"version": d["version"], "plan_hash": d["plan_hash"]})
        assert r.status_code == 200 and r.json()["status"] == "APPROVED", r.text
        assert time.perf_counter() - t0 < 10
        other = a.token("chen.jing", "--scope", "read")  # another token has its own share
        with httpx.Client(base_url=a.url, headers={"Authorization": f"Bearer {other}"}, timeout=30) as c:
            with c.stream("GET", "/v1/events") as s:
                assert s.status_code == 200
    # the streams closed: the token's share is free again (released when the client went away)
    deadline = time.monotonic() + 20
    while True:
        with httpx.Client(base_url=a.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c:
            with c.stream("GET", "/v1/events") as s:
                if s.status_code == 200 or time.monotonic() > deadline:
                    break
        time.sleep(0.5)
    assert s.status_code == 200
