"""Open requests: a request that needs clarification, and every turn of its dialogue, as ledger entries.

Why a room of its own: a request the reader cannot plan as written used to be
refused and forgotten; now it is recorded (``OPEN``, with its questions) and
the operator answers it later, from any client. Each turn is one row that is
never changed afterwards — asked (turn 1), answered with follow-up questions
(``OPEN`` again), answered and planned (``PLANNED``, naming the draft), or
``EXPIRED`` — and each row is an entry of the hash chain
(``flows.ledger.chain.request_content``), so a question, an answer, who gave it
or when cannot be edited or deleted unseen.

**One answer wins.** A new turn is written only if the request's latest turn is
still the one the answerer read and is ``OPEN`` (checked in the writing
transaction; the primary key ``(request_id, turn)`` backs it up): two operators
answering at once settle to one turn, and the other gets ``Conflict`` naming
who answered first. The turn that plans and the draft it plans are written in
one transaction (``record_answered``), so a request is never PLANNED without
its draft, nor a draft recorded for a request someone else answered.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

import duckdb

from flows.errors import Conflict
from flows.ledger.chain import REQUEST_HASHED, chain_values, request_content
from flows.ledger.drafts import DraftsRoom
from flows.ledger.records import DraftRecord, NewVersion, _dumps
from planner.errors import NotFound

__all__ = ["RequestTurn", "RequestsRoom", "REQUEST_STATES"]

REQUEST_STATES = ("OPEN", "PLANNED", "EXPIRED")
_COLS = ", ".join(REQUEST_HASHED)


@dataclass(frozen=True)
class RequestTurn:
    """One turn of an open request: the request as written and read, the questions open after the turn, every
    answer given so far (each with who gave it and when), who made the turn and why, the draft it planned."""

    request_id: str
    turn: int
    state: str
    tenant: str
    region_id: str | None
    requested_by: str
    request_text: str
    request: dict[str, Any]
    questions: list[dict[str, Any]]
    answers: list[dict[str, Any]]
    actor: str
    reason: str
    created_time: str
    expires_time: str
    turn_time: str
    draft_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        """The row's columns (``REQUEST_HASHED`` order), JSON columns encoded canonically."""
        return {
            "request_id": self.request_id, "turn": int(self.turn), "state": self.state, "tenant": self.tenant,
            "region_id": self.region_id, "requested_by": self.requested_by, "request_text": self.request_text,
            "request_json": _dumps(self.request), "questions_json": _dumps(self.questions),
            "answers_json": _dumps(self.answers), "actor": self.actor, "reason": self.reason, "draft_id": self.draft_id,
            "created_time": self.created_time, "expires_time": self.expires_time, "turn_time": self.turn_time,
        }

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("extra")
        return out

    def next(self, **changes: Any) -> RequestTurn:
        """The turn after this one (the request's own fields kept)."""
        values = {**asdict(self), "turn": self.turn + 1, "draft_id": None, **changes}
        values.pop("extra", None)
        return RequestTurn(**values)


def _turn(row: Sequence[Any]) -> RequestTurn:
    v = dict(zip(REQUEST_HASHED, row))
    return RequestTurn(
        request_id=v["request_id"], turn=int(v["turn"]), state=v["state"], tenant=v["tenant"], region_id=v["region_id"],
        requested_by=v["requested_by"], request_text=v["request_text"], request=json.loads(v["request_json"]),
        questions=json.loads(v["questions_json"]), answers=json.loads(v["answers_json"]), actor=v["actor"],
        reason=v["reason"], draft_id=v["draft_id"], created_time=v["created_time"], expires_time=v["expires_time"],
        turn_time=v["turn_time"],
    )


def _latest(con: duckdb.DuckDBPyConnection, request_id: str) -> RequestTurn | None:
    row = con.execute(f"SELECT {_COLS} FROM request_turns WHERE request_id = ? ORDER BY turn DESC LIMIT 1",
                      [request_id]).fetchone()
    return None if row is None else _turn(row)


class RequestsRoom(DraftsRoom):
    """The open requests of the ledger: their turns, written once each, read back whole."""

    def _insert_turn(self, con: duckdb.DuckDBPyConnection, turn: RequestTurn, expected_turn: int | None) -> None:
        latest = _latest(con, turn.request_id)
        if expected_turn is None:
            if latest is not None:
                raise Conflict(f"request {turn.request_id} is already recorded", details={"state": latest.state})
        elif latest is None:
            raise NotFound(f"request {turn.request_id!r} is not in the ledger")
        elif latest.turn != expected_turn or latest.state != "OPEN":
            by = f" by {latest.actor} at {latest.turn_time}" if latest.turn != expected_turn else ""
            raise Conflict(
                f"request {turn.request_id} was {latest.state.lower()}{by} (turn {latest.turn}) while this answer was "
                "given; nothing was changed", details={"state": latest.state, "turn": latest.turn,
                                                      "actor": latest.actor, "draft_id": latest.draft_id})
        row = turn.row()
        seq, prev, _, entry = chain_values(con, self.keys, None, request_content(row))
        con.execute(f"INSERT INTO request_turns ({_COLS}, chain_seq, prev_hash, entry_hash) "
                    f"VALUES ({', '.join(['?'] * (len(row) + 3))})", [*row.values(), seq, prev, entry])

    def open_request(self, turn: RequestTurn) -> RequestTurn:
        """Record turn 1 of a request (``Conflict`` when the request is recorded already)."""
        def work(con: duckdb.DuckDBPyConnection) -> RequestTurn:
            self._insert_turn(con, turn, None)
            return turn

        return self._write(work, what=f"open request {turn.request_id}")

    def add_turn(self, turn: RequestTurn) -> RequestTurn:
        """Record the turn after ``turn.turn - 1`` (follow-up questions, an expiry), if that is still the latest and
        the request is still OPEN; else ``Conflict``."""
        def work(con: duckdb.DuckDBPyConnection) -> RequestTurn:
            self._insert_turn(con, turn, turn.turn - 1)
            return turn

        return self._write(work, what=f"request {turn.request_id} turn {turn.turn}")

    def record_answered(self, turn: RequestTurn, versions: Sequence[NewVersion], *, actor: str, now: datetime,
                        reasons: Sequence[str] = (), after: Callable[[], None] | None = None) -> list[DraftRecord]:
        """The turn that plans the request and the draft versions it planned, in one transaction (one winner)."""
        def work(con: duckdb.DuckDBPyConnection) -> list[DraftRecord]:
            self._insert_turn(con, turn, turn.turn - 1)
            return self._insert_versions(con, versions, actor=actor, now=now, supersede=None, reasons=reasons)

        return self._write(work, what=f"request {turn.request_id} planned as {turn.draft_id}")

    def request_turns(self, request_id: str) -> list[RequestTurn]:
        """Every turn of a request, first first ([] when it is not recorded)."""
        return self._read(lambda con: [_turn(r) for r in con.execute(
            f"SELECT {_COLS} FROM request_turns WHERE request_id = ? ORDER BY turn", [request_id]).fetchall()], [])

    def latest_request(self, request_id: str) -> RequestTurn:
        """The request's latest turn; ``NotFound`` when it is not recorded."""
        found = self._read(lambda con: _latest(con, request_id), None)
        if found is None:
            raise NotFound(f"request {request_id!r} is not in the ledger")
        return found

    def open_requests(self, *, limit: int = 10_000) -> list[RequestTurn]:
        """The latest turn of every request still OPEN, oldest first (the sweeper's list)."""
        def work(con: duckdb.DuckDBPyConnection) -> list[RequestTurn]:
            rows = con.execute(
                f"SELECT {_COLS} FROM request_turns r WHERE turn = (SELECT max(turn) FROM request_turns x "
                "WHERE x.request_id = r.request_id) AND state = 'OPEN' ORDER BY created_time, request_id LIMIT ?",
                [int(limit)]).fetchall()
            return [_turn(r) for r in rows]

        return self._read(work, [])
