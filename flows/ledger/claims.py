"""Dispatch claims: one dispatch per draft version, ever, and its recorded outcome.

Why a room: the claim is where every dispatch path (CLI, server, Prefect)
meets, so the rules that must hold for all of them live here — the UNIQUE
idempotency key, a valid approval at claim time, and the outcome moving the
draft in the same transaction.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import duckdb

from flows.ledger.records import (
    _DISPATCH_COLS,
    Claim,
    DispatchRecord,
    _dispatch,
    _dumps,
    _iso,
    idempotency_key,
    params_hash,
)
from flows.ledger.states import DISPATCH_FINAL, DISPATCH_STATUSES, apply_transition
from flows.ledger.approvals import ApprovalsRoom
from flows.ledger.store import kill_point
from planner.errors import ApprovalStale, Conflict, InvalidArgument, NotFound

__all__ = ["ClaimsRoom"]


class ClaimsRoom(ApprovalsRoom):
    """Claiming a dispatch (after the approval check of ``ApprovalsRoom``) and recording its outcome."""

    def claim_dispatch(
        self,
        draft_id: str,
        version: int,
        *,
        plan_hash: str,
        params: Mapping[str, Any],
        actor: str,
        now: datetime,
    ) -> Claim:
        """Claim the one dispatch of a draft version, or return the first claim's outcome.

        Idempotency key = ``idempotency_key(draft_id, version, plan_hash)``
        (UNIQUE in the table). If it exists with the same parameters, its row is
        returned with ``claimed=False`` (status PENDING while the first caller
        is still uploading); with other parameters: ``Conflict``. Otherwise the
        version must be APPROVED with a matching unexpired approval
        (``ApprovalRequired``/``ApprovalStale``), and a PENDING row is inserted.
        """
        key = idempotency_key(draft_id, version, plan_hash)
        p_hash = params_hash(params)

        def work(con: duckdb.DuckDBPyConnection) -> Claim:
            row = con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
            if row is not None:
                existing = _dispatch(row)
                if existing.params_hash != p_hash:
                    raise Conflict(
                        f"draft {draft_id} v{version} was already dispatched with other parameters "
                        f"({_dumps(existing.params)}); a version is dispatched once",
                        details={"idempotency_key": key, "status": existing.status},
                    )
                return Claim(existing, claimed=False)
            draft = self._get(con, draft_id, version)
            if draft.plan_hash != plan_hash:
                raise ApprovalStale(
                    f"plan hash {plan_hash[:12]}… is not the hash of draft {draft_id} v{version}; nothing was dispatched"
                )
            other = con.execute(
                "SELECT idempotency_key FROM dispatches WHERE draft_id = ? AND version = ?", [draft_id, int(version)]
            ).fetchone()
            if other is not None:
                raise Conflict(f"draft {draft_id} v{version} already has a dispatch ({other[0][:12]}…)")
            self._valid_approval(con, draft, now)
            stamp = _iso(now)
            drones = sorted({s["drone_id"] for s in (draft.plan or {}).get("sorties", [])})
            con.execute(
                f"INSERT INTO dispatches ({_DISPATCH_COLS}) VALUES ({', '.join(['?'] * 16)})",
                [
                    key,
                    draft_id,
                    int(version),
                    plan_hash,
                    p_hash,
                    _dumps(dict(params)),
                    _dumps(drones),
                    "PENDING",
                    0,
                    "[]",
                    None,
                    actor,
                    socket.gethostname(),
                    os.getpid(),
                    stamp,
                    stamp,
                ],
            )
            kill_point("ledger:claim:in_transaction")
            new = con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
            return Claim(_dispatch(new), claimed=True)

        try:
            return self._write(work, what=f"claim dispatch of {draft_id} v{version}")
        except Conflict:
            # Lost the insert race inside one process: the winner's row is the answer.
            existing = self.get_dispatch(key)
            if existing is not None and existing.params_hash == p_hash:
                return Claim(existing, claimed=False)
            raise

    def record_attempt(self, key: str, attempt: Mapping[str, Any], *, now: datetime) -> DispatchRecord:
        """Append one upload attempt (what was sent, what came back) to a dispatch."""

        def work(con: duckdb.DuckDBPyConnection) -> DispatchRecord:
            row = con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
            if row is None:
                raise NotFound(f"no dispatch with key {key[:12]}…")
            d = _dispatch(row)
            log = [*d.attempt_log, {**dict(attempt), "time": _iso(now)}]
            con.execute(
                "UPDATE dispatches SET attempts = attempts + 1, attempts_json = ?, updated_time = ? "
                "WHERE idempotency_key = ? AND attempts = ?",
                [_dumps(log), _iso(now), key, d.attempts],
            )
            return _dispatch(
                con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
            )

        return self._write(work, what=f"record attempt of {key[:12]}")

    def finish_dispatch(
        self,
        key: str,
        *,
        status: str,
        result: Mapping[str, Any],
        actor: str,
        now: datetime,
        expected_status: Sequence[str] = ("PENDING", "UNCERTAIN"),
    ) -> DispatchRecord:
        """Record a dispatch outcome and move the draft accordingly, in one transaction.

        ACKED/SENT → the draft becomes DISPATCHED; FAILED → ABORTED; UNCERTAIN
        leaves the draft APPROVED (the mission must be read back first).
        The update is conditional on the dispatch's current status.
        """
        if status not in DISPATCH_STATUSES or status == "PENDING":
            raise InvalidArgument(f"unknown dispatch outcome {status!r}")

        def work(con: duckdb.DuckDBPyConnection) -> DispatchRecord:
            row = con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
            if row is None:
                raise NotFound(f"no dispatch with key {key[:12]}…")
            d = _dispatch(row)
            if d.status not in expected_status:
                raise Conflict(f"dispatch {key[:12]}… is {d.status}; expected one of {', '.join(expected_status)}")
            stamp = _iso(now)
            updated = con.execute(
                "UPDATE dispatches SET status = ?, result_json = ?, updated_time = ? "
                "WHERE idempotency_key = ? AND status = ? RETURNING status",
                [status, _dumps(dict(result)), stamp, key, d.status],
            ).fetchall()
            if not updated:
                raise Conflict(f"dispatch {key[:12]}… changed meanwhile")
            to_state = DISPATCH_FINAL.get(status)
            if to_state is not None:
                draft = self._get(con, d.draft_id, d.version)
                why = result.get("message") or f"dispatch {status}"
                apply_transition(con, draft, to_state, actor=actor, reason=str(why), now=now)
            return _dispatch(
                con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
            )

        return self._write(work, what=f"finish dispatch {key[:12]}")
