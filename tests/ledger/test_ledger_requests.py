"""flows.ledger.requests: an open request's turns are written once each, one answer wins, and each is in the chain.

A real DuckDB file per test; the race runs two threads of this process against the one file (each write waits
its turn at the file, ``flows.ledger.file_lock``), the way two CLI processes or two server requests meet it.
"""

from __future__ import annotations

import threading
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from flows.errors import Conflict, LedgerTampered
from flows.integrity.verify import verify_ledger
from flows.ledger import Ledger, NewVersion, RequestTurn
from planner.errors import NotFound

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


def _opened(ledger: Ledger, request_id: str = "r-1") -> RequestTurn:
    return ledger.open_request(RequestTurn(
        request_id=request_id, turn=1, state="OPEN", tenant="city-fire", region_id="region-1001", requested_by="li.wei",
        request_text="patrol the fire lanes at 3", request={"read_at": NOW.isoformat(), "timezone": "Europe/Helsinki"},
        questions=[{"id": "part_of_day-23", "kind": "part_of_day", "quote": "at 3", "text": "03:00 or 15:00?"}],
        answers=[], actor="li.wei", reason="asked", created_time=NOW.isoformat(),
        expires_time="2026-11-29T11:00:00+02:00", turn_time=NOW.isoformat()))


def _version(draft_id: str) -> NewVersion:
    return NewVersion(draft_id=draft_id, version=1, state="WAITING_RESOURCE", request_key=draft_id, tenant="city-fire",
                      region_id="region-1001", requested_by="li.wei", request_text="patrol the fire lanes at 3",
                      intent=None, plan=None, plan_hash=None, findings=[], verdict="waiting", missing=["x"],
                      world_name="w", world_dir="w", world_hash="wh")


def _answered(first: RequestTurn, who: str, draft_id: str) -> RequestTurn:
    return first.next(state="PLANNED", actor=who, reason="answered", draft_id=draft_id, questions=[],
                      answers=[{"id": "part_of_day-23", "answer": "pm", "answered_by": who}], turn_time=NOW.isoformat())


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "ledger.duckdb")


def test_the_turns_are_read_back_whole_and_the_open_ones_listed(ledger: Ledger) -> None:
    first = _opened(ledger)
    with pytest.raises(Conflict):
        _opened(ledger)  # turn 1 once
    follow = ledger.add_turn(first.next(state="OPEN", actor="chen.jing", reason="a follow-up", turn_time=NOW.isoformat()))
    assert [t.turn for t in ledger.request_turns("r-1")] == [1, 2]
    assert ledger.latest_request("r-1") == follow and [t.request_id for t in ledger.open_requests()] == ["r-1"]
    with pytest.raises(Conflict, match="turn 2"):
        ledger.add_turn(first.next(state="EXPIRED", actor="x", reason="late", turn_time=NOW.isoformat()))
    with pytest.raises(NotFound):
        ledger.latest_request("r-unknown")
    assert verify_ledger(ledger).ok


def test_two_answers_at_once_settle_to_one_plan(ledger: Ledger) -> None:
    first = _opened(ledger)
    results: dict[str, object] = {}
    gate = threading.Barrier(2)

    def answer(who: str, draft_id: str) -> None:
        gate.wait(10)
        try:
            results[who] = ledger.record_answered(_answered(first, who, draft_id), [_version(draft_id)], actor=who,
                                                  now=NOW)
        except Conflict as exc:
            results[who] = exc

    threads = [threading.Thread(target=answer, args=(w, d)) for w, d in (("li.wei", "d-a"), ("jussi.koski", "d-b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    lost = [w for w, r in results.items() if isinstance(r, Conflict)]
    won = [w for w, r in results.items() if not isinstance(r, Conflict)]
    assert len(won) == 1 and len(lost) == 1
    assert f"by {won[0]}" in str(results[lost[0]])  # the loser is told who answered first
    latest = ledger.latest_request("r-1")
    assert (latest.state, latest.actor) == ("PLANNED", won[0])
    assert [d.draft_id for d in ledger.list_drafts()] == [latest.draft_id]  # the loser's draft was never recorded
    assert ledger.open_requests() == []
    assert verify_ledger(ledger).ok


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        ("UPDATE request_turns SET answers_json = replace(answers_json, 'pm', 'am') WHERE turn = 2",
         "request r-1 turn 2 PLANNED by li.wei: its content was changed"),
        ("UPDATE request_turns SET questions_json = '[]' WHERE turn = 1", "request r-1 turn 1 OPEN"),
        ("INSERT INTO request_turns SELECT request_id, 3, 'OPEN', tenant, region_id, requested_by, request_text, "
         "request_json, questions_json, answers_json, actor, reason, NULL, created_time, expires_time, turn_time, NULL, "
         "NULL, NULL FROM request_turns WHERE turn = 1", "is not in the hash chain"),
        ("DELETE FROM request_turns WHERE turn = 1", "entry"),
    ],
)
def test_an_edited_added_or_deleted_turn_is_named(ledger: Ledger, tamper: str, expected: str) -> None:
    first = _opened(ledger)
    ledger.record_answered(_answered(first, "li.wei", "d-a"), [_version("d-a")], actor="li.wei", now=NOW)
    con = duckdb.connect(str(ledger.path))
    con.execute(tamper)
    con.close()
    with pytest.raises(LedgerTampered) as err:
        verify_ledger(ledger)
    assert expected in err.value.details["first_break"]
