"""The authority expires overdue drafts itself: ``sortie server``'s sweeper on its own clock and policy.

A real server (``--sweep-s 1``) with a 2 s approval window: a draft nobody decides becomes EXPIRED by
``authority:sweeper`` within a few rounds, stamped with the server's clock, published on the event feed, gone
from ``GET /v1/pending``; a decided draft is left alone. No Prefect here: waking and UI cancels are
``tests/control/test_control_room.py``'s.
"""

from __future__ import annotations

import time
from typing import Any

import pytest


@pytest.fixture(scope="module")
def swept(sweeping_authority: Any) -> Any:
    return sweeping_authority


def test_a_draft_nobody_decides_is_expired_by_the_sweeper_and_a_decided_one_is_not(swept: Any) -> None:
    import json
    import threading

    from flows.ledger import open_ledger

    waiting, decided = swept.plan(), swept.plan()
    r = swept.call("chen.jing", "POST", f"/v1/drafts/{decided['draft_id']}/approve",
                   json={"version": 1, "plan_hash": decided["plan_hash"]})
    assert r.status_code == 200, r.text
    feed: list[dict[str, Any]] = []

    def listen() -> None:
        with swept.client("chen.jing") as c, c.stream("GET", "/v1/events",
                                                       params={"max_events": 1, "timeout_s": 30}) as got:
            feed.extend(json.loads(line[6:]) for line in got.iter_lines() if line.startswith("data: "))

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    time.sleep(0.5)  # subscribed before anything can expire
    p = swept.sortie(["admin", "policy", "set", "--approval-window", "2s", "--home", str(swept.home), "--json"])
    assert p.returncode == 0, p.stderr
    led = open_ledger(swept.home)
    deadline = time.monotonic() + 30
    while led.get_draft(waiting["draft_id"], 1).state != "EXPIRED":
        assert time.monotonic() < deadline, "the sweeper never expired the draft"
        time.sleep(0.3)
    event = led.events(waiting["draft_id"])[-1]
    assert (event.from_state, event.to_state, event.actor) == ("DRAFT", "EXPIRED", "authority:sweeper"), event
    assert event.event_time.startswith("2026-11-29"), event  # the server's clock (started at the world's time)
    assert led.get_draft(decided["draft_id"], 1).state == "APPROVED"
    pending = swept.call("chen.jing", "GET", "/v1/pending").json()
    assert waiting["draft_id"] not in str(pending), pending
    listener.join(35)
    assert [(e.get("type"), e.get("draft_id"), e.get("status")) for e in feed] == [
        ("draft.expired", waiting["draft_id"], "EXPIRED")], feed
