"""The sweeper's round on the embedded authority: overdue drafts expire, nothing else moves.

A real ledger (DuckDB in a temporary ``SORTIE_HOME``), a real plan of the demo world, the round judged at
chosen instants of the authority's clock (``sweep(now=…)``): before the deadline nothing changes; after it
the DRAFT version is EXPIRED by ``authority:sweeper`` at that instant; an APPROVED one is left alone; a second
round finds nothing. ``sortie server``'s rounds over HTTP are ``tests/server/test_sweeper.py``'s.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from flows.authority.local import LocalAuthority
from flows.authority.session import Session
from flows.authority.sweeper import SWEEPER_ACTOR, sweep
from flows.ledger import open_ledger
from flows.usecases.actor import Actor, Policy
from flows.usecases.grounds import Grounds

NOW = datetime.fromisoformat("2026-11-29T06:58:10+02:00")
WINDOW = timedelta(minutes=30)


def _authority(home: Path, actor: str | None, now: datetime) -> LocalAuthority:
    return LocalAuthority(Grounds(ledger=open_ledger(home)), Session(
        actor=Actor(actor) if actor else None, now_given=now, policy=Policy(four_eyes=True, approval_ttl=WINDOW),
        audit_by="use case"))


def test_a_round_expires_what_is_overdue_and_nothing_else(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    home = tmp_path / "home"
    planner = _authority(home, "li.wei", NOW)
    waiting = planner.plan("巡一遍消防通道", region_id="region-1001")
    decided = planner.plan("inspect the hydrants today", region_id="region-1002")
    _authority(home, "chen.jing", NOW).approve(decided["draft_id"], 1, plan_hash=decided["plan_hash"])
    early = NOW + WINDOW - timedelta(seconds=1)
    assert sweep(_authority(home, SWEEPER_ACTOR, early), now=early, window=WINDOW).expired == []
    late = NOW + WINDOW + timedelta(seconds=5)
    report = sweep(_authority(home, SWEEPER_ACTOR, late), now=late, window=WINDOW)
    assert report.expired == [f"{waiting['draft_id']} v1"] and report.cancelled == []
    led = open_ledger(home)
    event = led.events(waiting["draft_id"])[-1]
    assert (event.to_state, event.actor, datetime.fromisoformat(event.event_time)) == ("EXPIRED", SWEEPER_ACTOR, late)
    assert led.get_draft(decided["draft_id"], 1).state == "APPROVED"
    assert sweep(_authority(home, SWEEPER_ACTOR, late), now=late, window=WINDOW).expired == []
