"""Sessions end when their token does (issue 38): an open event stream ends within a second of its token being
revoked (``sortie admin token revoke`` on the host) or reaching its expiry, with a last ``session.ended`` event
naming why. A real ``sortie server`` over real HTTP, real tokens."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest

from flows.server.tokens import TokenStore


class Stream:
    """An event stream read on a thread: its events and when it ended (monotonic)."""

    def __init__(self, url: str, token: str) -> None:
        self.events: list[dict[str, Any]] = []
        self.ended_at: float | None = None
        self.opened = threading.Event()
        self._t = threading.Thread(target=self._run, args=(url, token), daemon=True)
        self._t.start()

    def _run(self, url: str, token: str) -> None:
        try:
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as c, \
                    c.stream("GET", "/v1/events") as r:
                assert r.status_code == 200
                for line in r.iter_lines():
                    self.opened.set()
                    if line.startswith("data: "):
                        self.events.append(json.loads(line[6:]))
        except httpx.HTTPError:
            pass
        finally:
            self.ended_at = time.monotonic()


@pytest.mark.parametrize("how", ["revoked", "expired"])
def test_a_token_that_ends_ends_its_open_stream_within_a_second(authority: Any, how: str) -> None:
    store = TokenStore(authority.home)  # what `sortie admin token create/revoke` does on the host
    from datetime import timedelta

    created = time.monotonic()
    info, token = store.create("chen.jing", expires=timedelta(seconds=4) if how == "expired" else None,
                               scopes=("read",), label=f"stream {how}")
    stream = Stream(authority.url, token)
    assert stream.opened.wait(10), "the stream did not open"
    if how == "revoked":
        time.sleep(0.5)
        store.revoke(info.token_id)
        ended_by = time.monotonic()
    else:
        ended_by = created + 4.0  # the expiry (a second-resolution stamp: it falls within this instant's second)
    deadline = ended_by + 6
    while stream.ended_at is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert stream.ended_at is not None, "the stream is still open"
    assert stream.ended_at - ended_by <= 1.0, stream.ended_at - ended_by
    last = stream.events[-1]
    assert last["type"] == "session.ended" and how in last["reason"], stream.events
    r = httpx.get(f"{authority.url}/v1/fleet", headers={"Authorization": f"Bearer {token}"}, timeout=10)
    assert r.status_code == 401
