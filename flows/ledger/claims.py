"""Dispatch claims: one dispatch per draft version, ever, and its recorded outcome.

Why a room: the claim is where every dispatch path (CLI, server, Prefect)
meets, so the rules that must hold for all of them live here — the UNIQUE
idempotency key, a valid approval at claim time, and the outcome moving the
draft in the same transaction.
"""

from __future__ import annotations

import json
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
    DraftRecord,
    _dispatch,
    _dumps,
    _iso,
    idempotency_key,
    params_hash,
)
from flows.ledger.states import DISPATCH_FINAL, DISPATCH_STATUSES, apply_transition
from flows.ledger.approvals import ApprovalsRoom
from flows.ledger.dispatch_log import log_dispatch
from flows.ledger.store import kill_point
from flows.errors import ApprovalStale, Conflict, DeviceBusy
from planner.errors import InvalidArgument, NotFound

__all__ = ["ClaimsRoom", "BUSY_STATUSES", "BUSY_STATES", "busy_with", "raise_if_busy", "left_on_vehicle"]

#: A dispatch in one of these statuses holds its drones: in progress, or what the vehicle holds is unknown.
BUSY_STATUSES = ("PENDING", "UNCERTAIN")
#: An accepted dispatch holds its drones while its draft is in one of these states (not yet landed/ended):
#: LAUNCHED too — armed and starting, before the follower records the take-off (DISPATCHED → LAUNCHED → IN_FLIGHT).
BUSY_STATES = ("DISPATCHED", "LAUNCHED", "IN_FLIGHT", "RECALLING", "LINK_LOST")  # LINK_LOST: it may still fly


def left_on_vehicle(status: str, result: Mapping[str, Any] | None) -> bool:
    """Whether a FAILED dispatch may have left part of its upload on the vehicle, not since settled.

    ArduPilot writes items as they arrive and the fence goes first: a mission
    refused after an accepted fence leaves the new fence behind. Settled means
    read back by ``sortie reconcile`` (``reconciled``) or cleared by the
    uploader (``vehicle_cleared``).
    """
    if status != "FAILED" or not result or result.get("reconciled") or result.get("vehicle_cleared"):
        return False
    outcome = result.get("outcome")
    uploads = outcome.get("uploads", []) if isinstance(outcome, Mapping) else []
    return any(
        a.get("kind") == "upload" and (a.get("outcome") in ("ACCEPTED", "UNCERTAIN") or (a.get("items_sent") or 0) > 0)
        for u in uploads if isinstance(u, Mapping)
        for a in u.get("attempts", []) if isinstance(a, Mapping)
    )


def busy_with(
    con: duckdb.DuckDBPyConnection, drones: Sequence[str], *, draft_id: str | None = None, version: int | None = None
) -> list[dict[str, Any]]:
    """The other dispatches that hold any of ``drones``: unfinished (in flight) or unsettled (uncertain)."""
    # Only the rows that can hold a drone come back: a ledger of 10,000 flown missions reads none of them.
    holding = ", ".join(f"'{s}'" for s in BUSY_STATUSES + ("FAILED",))
    flying = ", ".join(f"'{s}'" for s in BUSY_STATES)
    rows = con.execute(
        "SELECT d.draft_id, d.version, d.status, d.drone_ids, f.state, d.result_json FROM dispatches d "
        "LEFT JOIN drafts f ON f.draft_id = d.draft_id AND f.version = d.version "
        f"WHERE d.status IN ({holding}) OR (d.status IN ('ACKED', 'SENT') AND f.state IN ({flying})) "
        "ORDER BY d.created_time"
    ).fetchall()
    wanted = set(drones)
    out = []
    for other_id, other_v, status, drone_ids, state, result_json in rows:
        if other_id == draft_id and other_v == version:
            continue
        held = wanted & set(json.loads(drone_ids))
        if not held:
            continue
        partial = left_on_vehicle(status, json.loads(result_json) if result_json else None)
        if status in BUSY_STATUSES or partial or (status in ("ACKED", "SENT") and state in BUSY_STATES):
            out.append({"draft_id": other_id, "version": other_v, "status": status, "state": state,
                        "drones": sorted(held)})
    return out


def raise_if_busy(
    con: duckdb.DuckDBPyConnection, drones: Sequence[str], *, draft_id: str | None = None, version: int | None = None
) -> None:
    """``DeviceBusy`` naming the dispatch that holds a drone, and the command that frees it."""
    busy = busy_with(con, drones, draft_id=draft_id, version=version)
    if not busy:
        return
    b = busy[0]
    if b["status"] == "FAILED":
        why = (
            f"its failed dispatch of {b['draft_id']} v{b['version']} may have left part of the upload on the "
            f"vehicle; run `sortie reconcile {b['draft_id']}` to read it back first"
        )
    elif b["status"] in BUSY_STATUSES:
        why = (
            f"its dispatch of {b['draft_id']} v{b['version']} is {b['status']}: what the vehicle holds is not "
            f"settled; run `sortie reconcile {b['draft_id']}` first"
            if b["status"] == "UNCERTAIN"
            else f"a dispatch of {b['draft_id']} v{b['version']} is still in progress (PENDING); wait for it, or "
            f"if it died run `sortie reconcile {b['draft_id']}`"
        )
    else:
        why = f"it flies {b['draft_id']} v{b['version']} ({b['state']}); dispatch again when that mission has ended"
    raise DeviceBusy(f"drone {', '.join(b['drones'])} is busy: {why}; nothing was sent", details={"busy": busy})


def _dispatch_by_key(con: duckdb.DuckDBPyConnection, key: str) -> DispatchRecord:
    """The dispatch row of one idempotency key, read inside the caller's transaction; ``NotFound`` if none.

    Settling, recording an attempt and finishing each load the dispatch first and
    re-read it after their UPDATE; one reader keeps those six reads the same.
    """
    row = con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
    if row is None:
        raise NotFound(f"no dispatch with key {key[:12]}…")
    return _dispatch(row)


class ClaimsRoom(ApprovalsRoom):
    """Claiming a dispatch (after the approval check of ``ApprovalsRoom``) and recording its outcome."""

    def holding(self, drones: Sequence[str]) -> list[dict[str, Any]]:
        """The dispatches that hold any of ``drones`` now (``busy_with``): the vehicle hub asks whether a change
        of a vehicle is this authority's own (``flows.fleet.custody``)."""
        return self._read(lambda con: busy_with(con, drones), [])

    def claim_dispatch(
        self,
        draft_id: str,
        version: int,
        *,
        plan_hash: str,
        params: Mapping[str, Any],
        actor: str,
        now: datetime,
        items_hash: str | None = None,
        approval_id: str | None = None,
        mode: str | None = None,
    ) -> Claim:
        """Claim the one dispatch of a draft version, or return the first claim's outcome.

        Idempotency key = ``idempotency_key(draft_id, version, plan_hash)``
        (UNIQUE in the table). If it exists with the same parameters, its row is
        returned with ``claimed=False`` (status PENDING while the first caller
        is still uploading); with other parameters: ``Conflict``. Otherwise the
        version must be APPROVED with a matching unexpired approval
        (``ApprovalRequired``/``ApprovalStale``), none of its drones may be busy
        with an unfinished or unsettled dispatch (``DeviceBusy``), and a PENDING
        row is inserted, with the hash of the mission items about to be sent and
        the approval that allowed it. The approval is asked again inside the claim's transaction
        (``covering_approval``; with ``mode``, one made in that mode): one that expired or was withdrawn since
        the dispatch's checks claims nothing.
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
            self._valid_approval(con, draft, now, mode=mode)
            stamp = _iso(now)
            drones = sorted({s["drone_id"] for s in (draft.plan or {}).get("sorties", [])})
            raise_if_busy(con, drones, draft_id=draft_id, version=int(version))
            con.execute(
                f"INSERT INTO dispatches ({_DISPATCH_COLS}, items_hash, approval_id) "
                f"VALUES ({', '.join(['?'] * 18)})",
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
                    items_hash,
                    approval_id,
                ],
            )
            log_dispatch(con, self.keys, key, "claim", stamp)
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

    def withdraw_unclaimed(
        self,
        draft_id: str,
        version: int,
        *,
        actor: str,
        reason: str,
        now: datetime,
        from_states: Sequence[str] = ("DRAFT", "APPROVED"),
        to_state: str = "CANCELLED",
    ) -> DraftRecord:
        """Move a version that no dispatch has claimed to ``to_state``, in one transaction with the check.

        Why here: a withdrawal (cancel) races the claim; checking "no claim yet"
        and writing the transition in the same transaction is what keeps a
        cancelled version from flying. ``Conflict`` when the version is not in
        ``from_states`` or a dispatch was already claimed.
        """

        def work(con: duckdb.DuckDBPyConnection) -> DraftRecord:
            draft = self._get(con, draft_id, version)
            if draft.state not in from_states:
                hint = (" (uploaded to its vehicle, not launched: `sortie recall` ends it before take-off)"
                        if draft.state == "DISPATCHED" else
                        " (it may be in the air: `sortie recall`)" if draft.state in BUSY_STATES else "")
                raise Conflict(f"draft {draft.draft_id} v{draft.version} is {draft.state}; only a "
                               f"{' or '.join(from_states)} version can become {to_state}{hint}")
            claimed = con.execute("SELECT status FROM dispatches WHERE draft_id = ? AND version = ?",
                                  [draft.draft_id, draft.version]).fetchone()
            if claimed is not None:
                raise Conflict(f"a dispatch of draft {draft.draft_id} v{draft.version} was already claimed "
                               f"(status {claimed[0]}); stop it with `sortie recall`")
            return apply_transition(con, draft, to_state, actor=actor, reason=reason, now=now)

        return self._write(work, what=f"withdraw {draft_id} v{version}")

    def check_drones_free(self, draft_id: str, version: int) -> None:
        """``DeviceBusy`` when a drone of this version is held by another dispatch (the claim's own check,
        read-only, so a dry run reports it too)."""

        def work(con: duckdb.DuckDBPyConnection) -> None:
            draft = self._get(con, draft_id, version)
            drones = sorted({s["drone_id"] for s in (draft.plan or {}).get("sorties", [])})
            raise_if_busy(con, drones, draft_id=draft_id, version=int(version))

        self._read(work, None)

    def settle_failed(self, key: str, findings: Mapping[str, Any], *, now: datetime) -> DispatchRecord:
        """Record what the vehicle holds after a FAILED dispatch (read back by reconcile); it stays FAILED."""

        def work(con: duckdb.DuckDBPyConnection) -> DispatchRecord:
            d = _dispatch_by_key(con, key)
            if d.status != "FAILED":
                raise Conflict(f"dispatch {key[:12]}… is {d.status}, not FAILED")
            result = {**(d.result or {}), **dict(findings), "reconciled": True}
            con.execute(
                "UPDATE dispatches SET result_json = ?, updated_time = ? WHERE idempotency_key = ? AND status = 'FAILED'",
                [_dumps(result), _iso(now), key],
            )
            log_dispatch(con, self.keys, key, "settle", _iso(now))
            return _dispatch_by_key(con, key)

        return self._write(work, what=f"settle failed dispatch {key[:12]}")

    def record_attempt(self, key: str, attempt: Mapping[str, Any], *, now: datetime) -> DispatchRecord:
        """Append one upload attempt (what was sent, what came back) to a dispatch."""

        def work(con: duckdb.DuckDBPyConnection) -> DispatchRecord:
            d = _dispatch_by_key(con, key)
            log = [*d.attempt_log, {**dict(attempt), "time": _iso(now)}]
            con.execute(
                "UPDATE dispatches SET attempts = attempts + 1, attempts_json = ?, updated_time = ? "
                "WHERE idempotency_key = ? AND attempts = ?",
                [_dumps(log), _iso(now), key, d.attempts],
            )
            log_dispatch(con, self.keys, key, "attempt", _iso(now))
            return _dispatch_by_key(con, key)

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
            d = _dispatch_by_key(con, key)
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
            log_dispatch(con, self.keys, key, "finish", stamp)
            to_state = DISPATCH_FINAL.get(status)
            if to_state is not None:
                draft = self._get(con, d.draft_id, d.version)
                why = result.get("message") or f"dispatch {status}"
                apply_transition(con, draft, to_state, actor=actor, reason=str(why), now=now)
            return _dispatch_by_key(con, key)

        return self._write(work, what=f"finish dispatch {key[:12]}")
