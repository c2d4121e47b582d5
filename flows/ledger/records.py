"""The ledger's records: frozen values for each table's rows, and the row ↔ record mapping.

Why a room of its own: every other ledger module reads rows, and the mapping
(column lists in dataclass field order, JSON columns decoded) must be written
once. Also the canonical JSON and the hashes built on it (idempotency key,
parameter hash), so every hash in the ledger is computed the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import Any, TypeVar

import duckdb

from planner.errors import InvalidArgument, NotFound

__all__ = [
    "NewVersion",
    "DraftRecord",
    "ApprovalRecord",
    "DispatchRecord",
    "EventRecord",
    "AuditRecord",
    "Claim",
    "idempotency_key",
    "params_hash",
    "sha256_json",
    "read_draft",
]


def sha256_json(obj: Any) -> str:
    """sha256 of the canonical JSON of ``obj`` (sorted keys, no spaces, UTF-8)."""
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_sha256_json = sha256_json


def idempotency_key(draft_id: str, version: int, plan_hash: str) -> str:
    """sha256 of (draft id, version, plan hash): one key, hence one dispatch, per draft version."""
    return _sha256_json(["dispatch", draft_id, int(version), plan_hash])


def params_hash(params: Mapping[str, Any]) -> str:
    """Hash of the dispatch parameters; the same key with other parameters is a conflict."""
    return _sha256_json(dict(params))


def _iso(when: datetime) -> str:
    if when.tzinfo is None:
        raise InvalidArgument(f"time {when.isoformat()} needs an offset")
    return when.isoformat()


def _loads(text: str | None, default: Any = None) -> Any:
    return default if text is None else json.loads(text)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@dataclass(frozen=True)
class NewVersion:
    """One draft version to record: everything but the bookkeeping columns."""

    draft_id: str
    version: int
    state: str  # DRAFT or WAITING_RESOURCE
    request_key: str
    tenant: str
    region_id: str | None
    requested_by: str
    request_text: str
    intent: dict[str, Any] | None
    plan: dict[str, Any] | None
    plan_hash: str | None
    findings: list[dict[str, Any]]
    verdict: str  # pass | warn | block | waiting
    missing: list[str]
    world_name: str
    world_dir: str
    world_hash: str
    notes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DraftRecord:
    """One stored draft version."""

    draft_id: str
    version: int
    state: str
    row_version: int
    request_key: str
    tenant: str
    region_id: str | None
    requested_by: str
    request_text: str
    intent: dict[str, Any] | None
    plan: dict[str, Any] | None
    plan_hash: str | None
    findings: list[dict[str, Any]]
    verdict: str
    missing: list[str]
    notes: dict[str, Any]
    world_name: str
    world_dir: str
    world_hash: str
    created_time: str
    updated_time: str


@dataclass(frozen=True)
class ApprovalRecord:
    approval_id: str
    draft_id: str
    version: int
    plan_hash: str | None
    approver: str
    decision: str  # APPROVED | REJECTED
    comment: str
    created_time: str
    expires_time: str | None
    #: How the decision was made: ``mode`` (local | server), ``identity`` (asserted | token | totp),
    #: the ``policy`` applied, the ``clock``; empty for approvals recorded before schema 2.
    evidence: dict[str, Any] = field(default_factory=dict)

    def valid_at(self, now: datetime, plan_hash: str | None) -> bool:
        """An approval counts when it approves this exact plan hash and has not expired."""
        return (
            self.decision == "APPROVED"
            and self.plan_hash is not None
            and self.plan_hash == plan_hash
            and self.expires_time is not None
            and now < datetime.fromisoformat(self.expires_time)
        )


@dataclass(frozen=True)
class DispatchRecord:
    idempotency_key: str
    draft_id: str
    version: int
    plan_hash: str
    params_hash: str
    params: dict[str, Any]
    drone_ids: list[str]
    status: str
    attempts: int
    attempt_log: list[dict[str, Any]]
    result: dict[str, Any] | None
    actor: str
    owner_host: str
    owner_pid: int
    created_time: str
    updated_time: str

    def owner_alive(self) -> bool:
        """Whether the process that claimed this dispatch still runs (only knowable on its host)."""
        if self.owner_host != socket.gethostname():
            return True
        try:
            os.kill(self.owner_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


@dataclass(frozen=True)
class EventRecord:
    event_id: int
    draft_id: str
    version: int
    actor: str
    from_state: str | None
    to_state: str
    reason: str
    event_time: str
    row_version: int


@dataclass(frozen=True)
class AuditRecord:
    audit_id: int
    actor: str | None
    command: str
    args_sha256: str
    args_redacted: dict[str, Any]
    result_code: str
    duration_ms: float
    started_time: str
    draft_id: str | None
    result_message: str | None = None  # why it was refused (schema 4; None for OK and for older rows)
    #: Which token made the call (its id, never the secret), the authenticated caller when it acted for someone
    #: else (a service token's user; ``actor`` is then the user named), the client's address (schema 5).
    token_id: str | None = None
    client_addr: str | None = None
    caller: str | None = None


@dataclass(frozen=True)
class Claim:
    """The outcome of ``claim_dispatch``: the dispatch row and whether this call created it."""

    dispatch: DispatchRecord
    claimed: bool


_DRAFT_COLS = (
    "draft_id, version, state, row_version, request_key, tenant, region_id, requested_by, request_text, "
    "intent_json, plan_json, plan_hash, findings_json, verdict, missing_json, notes_json, world_name, "
    "world_dir, world_hash, created_time, updated_time"
)
_APPROVAL_COLS = (
    "approval_id, draft_id, version, plan_hash, approver, decision, comment, created_time, expires_time, evidence_json"
)
_DISPATCH_COLS = (
    "idempotency_key, draft_id, version, plan_hash, params_hash, params_json, drone_ids, status, attempts, "
    "attempts_json, result_json, actor, owner_host, owner_pid, created_time, updated_time"
)
_EVENT_COLS = "event_id, draft_id, version, actor, from_state, to_state, reason, event_time, row_version"
_AUDIT_COLS = (
    "audit_id, actor, command, args_sha256, args_redacted, result_code, duration_ms, started_time, draft_id, "
    "result_message, token_id, client_addr, caller"
)


R = TypeVar("R")

#: JSON-encoded columns of each record (field name → factory of the value a NULL stands for).
_JSON_FIELDS: dict[type, dict[str, Callable[[], Any] | None]] = {
    DraftRecord: {"intent": None, "plan": None, "findings": list, "missing": list, "notes": dict},
    ApprovalRecord: {"evidence": dict},
    DispatchRecord: {"params": dict, "drone_ids": list, "attempt_log": list, "result": None},
    AuditRecord: {"args_redacted": dict},
}


def _record(cls: type[R], row: Sequence[Any]) -> R:
    """A record from a row whose columns are in the dataclass's field order (the ``_*_COLS`` lists);
    the JSON columns of ``_JSON_FIELDS`` are decoded, a NULL one becoming a fresh default."""
    values = {f.name: v for f, v in zip(fields(cls), row)}  # type: ignore[arg-type]
    for name, factory in _JSON_FIELDS.get(cls, {}).items():
        values[name] = _loads(values[name], None if factory is None else factory())
    return cls(**values)


def _draft(row: Sequence[Any]) -> DraftRecord:
    return _record(DraftRecord, row)


def _approval(row: Sequence[Any]) -> ApprovalRecord:
    return _record(ApprovalRecord, row)


def _dispatch(row: Sequence[Any]) -> DispatchRecord:
    return _record(DispatchRecord, row)


def _event(row: Sequence[Any]) -> EventRecord:
    return _record(EventRecord, row)


def _audit(row: Sequence[Any]) -> AuditRecord:
    return _record(AuditRecord, row)


def read_draft(con: duckdb.DuckDBPyConnection, draft_id: str, version: int | None) -> DraftRecord:
    """One draft version (the latest when ``version`` is None) inside ``con``, else ``NotFound``."""
    if version is None:
        row = con.execute(
            f"SELECT {_DRAFT_COLS} FROM drafts WHERE draft_id = ? ORDER BY version DESC", [draft_id]  # no LIMIT: faster
        ).fetchone()
    else:
        row = con.execute(
            f"SELECT {_DRAFT_COLS} FROM drafts WHERE draft_id = ? AND version = ?", [draft_id, int(version)]
        ).fetchone()
    if row is None:
        which = f"draft {draft_id!r}" + ("" if version is None else f" version {version}")
        raise NotFound(f"{which} is not in the ledger")
    return _draft(row)


def replace_state(draft: DraftRecord, state: str, row_version: int, stamp: str) -> DraftRecord:
    return replace(draft, state=state, row_version=row_version, updated_time=stamp)
