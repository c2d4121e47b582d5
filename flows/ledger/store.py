"""The ledger: one DuckDB file that is the source of truth for mission state.

It holds every draft version (plan, findings, hash), the approvals bound to a
version and plan hash, the dispatches (one per draft version, ever, guarded by a
UNIQUE idempotency key), the event log of every state change, and an audit row
per CLI command. Prefect's database knows about runs; this file knows about
missions. They are never confused.

Why it looks the way it does:

- **One writing process at a time.** DuckDB locks the file for the process that
  opens it, so several processes (CLI, Prefect worker, server) share it by
  opening short-lived connections, one per unit of work. Before connecting, a
  process waits its turn on an advisory ``flock`` of ``<ledger>.lock`` (polled
  with a bounded, jittered backoff: cheap, and it serialises threads too);
  DuckDB's own lock, held by anything else, is retried the same way. Past the
  budget (``SORTIE_LEDGER_LOCK_S``, 15 s): ``LedgerUnavailable``. Measured: 50
  processes racing on one file all finish, exactly one dispatch claimed.
- **One transaction per command.** Every public write method runs all of its
  statements in one transaction: a process killed in the middle leaves nothing
  half written (DuckDB rolls the open transaction back on the next open).
- **Transitions are conditional updates.** ``UPDATE ... WHERE id, version,
  state, row_version`` with ``RETURNING``: if no row comes back someone else
  moved first, and the caller gets ``Conflict``, never a silent no-op. The
  allowed transitions live in ``TRANSITIONS`` and nowhere else; each one writes
  an event row in the same transaction.
- **A damaged file is never overwritten.** A file that is not a DuckDB database
  is reported (``LedgerUnavailable``) and left alone for a human to look at; a
  missing file next to existing draft folders is reported too, instead of
  silently starting an empty ledger.

States (DESIGN.md)::

    (new) ─► DRAFT ─► APPROVED ─► DISPATCHED ─► IN_FLIGHT ─► SUCCEEDED | ABORTED
    (new) ─► WAITING_RESOURCE        plus REJECTED, EXPIRED, SUPERSEDED
    DRAFT | APPROVED ─► CANCELLED    (withdrawn before dispatch)
    IN_FLIGHT ─► RECALLING ─► RECALLED | ABORTED | SUCCEEDED   (an operator's recall)

A pause is not a state: the mission is still in flight and ends the same ways;
it is an IN_FLIGHT → IN_FLIGHT event (actor, reason) and the vehicle's own
telemetry shows it (``flows.usecases.control`` says why).

Test hook: ``SORTIE_TEST_KILL_AT=<point>`` makes the process SIGKILL itself at
the named point (``kill_point``), so the crash tests run the real code paths.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from flows.context import sortie_home
from flows.ledger.schema import MIGRATIONS, SCHEMA_VERSION
from planner.errors import (
    ApprovalRequired,
    ApprovalStale,
    Conflict,
    Forbidden,
    InvalidArgument,
    LedgerUnavailable,
    NotFound,
)

__all__ = [
    "STATES",
    "TRANSITIONS",
    "DISPATCH_STATUSES",
    "APPROVAL_TTL",
    "LEDGER_FILE",
    "kill_point",
    "idempotency_key",
    "params_hash",
    "redact",
    "NewVersion",
    "DraftRecord",
    "ApprovalRecord",
    "DispatchRecord",
    "EventRecord",
    "AuditRecord",
    "Claim",
    "Ledger",
    "open_ledger",
    "LedgerUnavailable",
]

T = TypeVar("T")

LEDGER_FILE = "ledger.duckdb"
APPROVAL_TTL = timedelta(minutes=30)

STATES = frozenset(
    {
        "DRAFT",
        "WAITING_RESOURCE",
        "APPROVED",
        "REJECTED",
        "EXPIRED",
        "SUPERSEDED",
        "DISPATCHED",
        "IN_FLIGHT",
        "SUCCEEDED",
        "ABORTED",
        "CANCELLED",
        "RECALLING",
        "RECALLED",
    }
)

#: The one table of allowed state changes, with what each means. ``None`` is "not yet recorded".
TRANSITIONS: Mapping[tuple[str | None, str], str] = {
    (None, "DRAFT"): "a plan version is recorded",
    (None, "WAITING_RESOURCE"): "no eligible fleet could serve the job; the missing resources are listed",
    ("DRAFT", "APPROVED"): "an authorised approver approved this version and plan hash",
    ("DRAFT", "REJECTED"): "an approver rejected this version",
    ("DRAFT", "EXPIRED"): "nobody approved it in time",
    ("DRAFT", "SUPERSEDED"): "a newer version of the draft exists",
    ("WAITING_RESOURCE", "SUPERSEDED"): "a newer version was planned",
    ("WAITING_RESOURCE", "REJECTED"): "an approver closed the request",
    ("WAITING_RESOURCE", "EXPIRED"): "resources did not become available in time",
    ("APPROVED", "APPROVED"): "re-approved after the earlier approval expired",
    ("APPROVED", "EXPIRED"): "the approval lapsed and the draft was closed",
    ("APPROVED", "SUPERSEDED"): "a newer version exists; this approval no longer applies",
    ("APPROVED", "DISPATCHED"): "the vehicle accepted the mission",
    ("APPROVED", "ABORTED"): "the vehicle refused the mission",
    ("DISPATCHED", "IN_FLIGHT"): "the vehicle took off",
    ("DISPATCHED", "ABORTED"): "the mission was cancelled before take-off",
    ("IN_FLIGHT", "SUCCEEDED"): "the mission completed and the drone is back at its dock",
    ("IN_FLIGHT", "ABORTED"): "the mission was aborted in flight",
    ("DRAFT", "CANCELLED"): "withdrawn before approval by an approver or dispatcher",
    ("APPROVED", "CANCELLED"): "the approval was withdrawn before dispatch; this version can no longer be dispatched",
    ("IN_FLIGHT", "IN_FLIGHT"): "held or resumed in flight by an operator, as the vehicle confirmed",
    ("IN_FLIGHT", "RECALLING"): "an operator recalled the vehicle (return to launch or land in place)",
    ("RECALLING", "RECALLING"): "the recall was changed (return to launch → land in place)",
    ("RECALLING", "RECALLED"): "the recalled vehicle landed where it was sent",
    ("RECALLING", "ABORTED"): "the recalled vehicle ended elsewhere or was lost (the vehicle's reason)",
    ("RECALLING", "SUCCEEDED"): "the mission completed before the recall took effect",
}

DISPATCH_STATUSES = frozenset({"PENDING", "SENT", "ACKED", "UNCERTAIN", "FAILED"})
_DISPATCH_FINAL = {"ACKED": "DISPATCHED", "SENT": "DISPATCHED", "FAILED": "ABORTED"}

#: One thread is plenty for a ledger; never fetch extensions (a SQLite file would trigger a download).
_CONFIG = {"threads": 1, "autoinstall_known_extensions": False, "autoload_known_extensions": False}
_LOCK_BUDGET_S = float(os.environ.get("SORTIE_LEDGER_LOCK_S", "15"))
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "authorization", "credential")


def kill_point(name: str) -> None:
    """Crash-test hook: SIGKILL this process when ``SORTIE_TEST_KILL_AT`` names this point."""
    if os.environ.get("SORTIE_TEST_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


def _sha256_json(obj: Any) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def idempotency_key(draft_id: str, version: int, plan_hash: str) -> str:
    """sha256 of (draft id, version, plan hash): one key, hence one dispatch, per draft version."""
    return _sha256_json(["dispatch", draft_id, int(version), plan_hash])


def params_hash(params: Mapping[str, Any]) -> str:
    """Hash of the dispatch parameters; the same key with other parameters is a conflict."""
    return _sha256_json(dict(params))


def redact(value: Any) -> Any:
    """A copy of command arguments safe to store: secret-looking keys masked, long text cut."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if any(word in str(k).lower() for word in _SECRET_WORDS):
                out[str(k)] = "***" if v not in (None, "") else v
            else:
                out[str(k)] = redact(v)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    if isinstance(value, str) and len(value) > 500:
        return value[:500] + f"…(+{len(value) - 500} chars)"
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _iso(when: datetime) -> str:
    if when.tzinfo is None:
        raise InvalidArgument(f"time {when.isoformat()} needs an offset")
    return when.isoformat()


def _loads(text: str | None, default: Any = None) -> Any:
    return default if text is None else json.loads(text)


def _dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


# --------------------------------------------------------------------------- records


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
    "audit_id, actor, command, args_sha256, args_redacted, result_code, duration_ms, started_time, draft_id"
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


# --------------------------------------------------------------------------- the ledger

_migrated: set[str] = set()
_migrated_lock = threading.Lock()


class Ledger:
    """The ledger file at ``path``; every method opens, works in one transaction, closes.

    Cheap to construct and safe to share: it holds no connection between calls.
    """

    def __init__(self, path: str | Path, *, lock_budget_s: float | None = None) -> None:
        self.path = Path(path)
        self.lock_budget_s = _LOCK_BUDGET_S if lock_budget_s is None else lock_budget_s

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r})"

    # ------------------------------------------------------------------ plumbing

    def _check_missing(self) -> None:
        """Refuse to start an empty ledger where one evidently existed."""
        if self.path.exists():
            return
        drafts_dir = self.path.parent / "drafts"
        if drafts_dir.is_dir() and any(drafts_dir.iterdir()):
            raise LedgerUnavailable(
                f"the ledger file {self.path} is missing but {drafts_dir} holds draft folders: "
                "restore the ledger from a backup (or move the drafts folder away to start afresh); "
                "nothing was created or changed"
            )

    def _corrupt(self) -> LedgerUnavailable:
        return LedgerUnavailable(
            f"the ledger file {self.path} is not a DuckDB database (corrupt or a different file); "
            "it was left untouched: move it aside or restore a backup"
        )

    def _check_header(self) -> None:
        """A DuckDB file carries ``DUCK`` at byte 8; anything else is refused before DuckDB touches it."""
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(12)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise LedgerUnavailable(f"cannot read the ledger {self.path}: {exc}") from None
        if head[8:12] != b"DUCK":
            raise self._corrupt()

    def _open(self, deadline: float) -> duckdb.DuckDBPyConnection:
        """Connect, retrying DuckDB's lock (held by a process outside ``_turn``) until ``deadline``."""
        self._check_header()
        delay = 0.005
        attempts = 0
        while True:
            attempts += 1
            try:
                return duckdb.connect(str(self.path), config=_CONFIG)
            except duckdb.IOException as exc:
                text = str(exc)
                if "not a valid DuckDB database" in text or "not a DuckDB" in text:
                    raise self._corrupt() from None
                if "lock" not in text.lower():
                    raise LedgerUnavailable(f"cannot open the ledger {self.path}: {text}") from None
                if time.monotonic() >= deadline:
                    raise LedgerUnavailable(
                        f"the ledger {self.path} stayed locked by another process for {self.lock_budget_s:g} s "
                        f"({attempts} attempts): {text.splitlines()[0]}"
                    ) from None
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 1.6, 0.15)
            except duckdb.Error as exc:
                raise LedgerUnavailable(f"cannot open the ledger {self.path}: {exc}") from None

    def _migrate(self, con: duckdb.DuckDBPyConnection) -> None:
        try:
            key = f"{self.path.resolve()}#{os.stat(self.path).st_ino}"
        except OSError:
            key = str(self.path.resolve())
        if key in _migrated:
            return
        with _migrated_lock:
            con.execute("BEGIN TRANSACTION")
            try:
                con.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations "
                    "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_time VARCHAR NOT NULL)"
                )
                done = {r[0] for r in con.execute("SELECT version FROM schema_migrations").fetchall()}
                if done and max(done) > SCHEMA_VERSION:
                    raise LedgerUnavailable(
                        f"the ledger {self.path} has schema version {max(done)}, newer than this sortie "
                        f"({SCHEMA_VERSION}); upgrade sortie"
                    )
                for number, name, sql in MIGRATIONS:
                    if number in done:
                        continue
                    for statement in sql.split(";"):
                        if statement.strip():
                            con.execute(statement)
                    con.execute(
                        "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                        [number, name, datetime.now().astimezone().isoformat()],
                    )
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            _migrated.add(key)

    @contextmanager
    def _turn(self) -> Iterator[float]:
        """Our turn at the file: an exclusive ``flock`` on ``<ledger>.lock``, waited for within the budget.

        DuckDB's own lock only says "busy" to a process that tries to connect;
        retrying connections under contention burns the CPU the holder needs.
        Waiting on a plain advisory lock costs a system call per poll and
        serialises threads of one process too. Yields the deadline left for
        the connection itself.
        """
        deadline = time.monotonic() + self.lock_budget_s
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            delay = 0.002
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LedgerUnavailable(
                            f"the ledger {self.path} stayed locked by another process for "
                            f"{self.lock_budget_s:g} s; try again when it is free"
                        ) from None
                    time.sleep(delay * (0.5 + random.random()))
                    delay = min(delay * 1.5, 0.05)
            try:
                yield deadline
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @contextmanager
    def _connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        self._check_missing()
        with self._turn() as deadline:
            con = self._open(deadline)
            try:
                try:
                    self._migrate(con)
                except duckdb.Error as exc:
                    raise LedgerUnavailable(f"the ledger {self.path} could not be read or migrated: {exc}") from None
                yield con
            finally:
                con.close()

    def _write(self, work: Callable[[duckdb.DuckDBPyConnection], T], *, what: str) -> T:
        """Run ``work`` in one transaction; a write-write race inside one process retries it.

        ``work`` re-reads and re-checks everything, so a retry after a lost race
        sees the winner's rows and fails its own conditions with ``Conflict``.
        """
        for attempt in range(4):
            with self._connection() as con:
                con.execute("BEGIN TRANSACTION")
                try:
                    result = work(con)
                    con.execute("COMMIT")
                    return result
                except duckdb.TransactionException as exc:
                    con.execute("ROLLBACK")
                    if attempt == 3:
                        raise Conflict(f"{what}: lost a concurrent update ({exc})") from None
                except duckdb.ConstraintException as exc:
                    con.execute("ROLLBACK")
                    raise Conflict(f"{what}: {exc}") from None
                except BaseException:
                    try:
                        con.execute("ROLLBACK")
                    except duckdb.Error:
                        pass
                    raise
            time.sleep(0.005 * (attempt + 1))
        raise AssertionError("unreachable")

    def _read(self, work: Callable[[duckdb.DuckDBPyConnection], T], empty: T) -> T:
        if not self.path.exists():
            self._check_missing()
            return empty
        with self._connection() as con:
            return work(con)

    def ensure(self) -> Ledger:
        """Create (or migrate) the file now, so files written next to it never precede it."""
        with self._connection():
            pass
        return self

    # ------------------------------------------------------------------ reads

    def schema_versions(self) -> list[int]:
        return self._read(
            lambda con: [r[0] for r in con.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall()],
            [],
        )

    @staticmethod
    def _get(con: duckdb.DuckDBPyConnection, draft_id: str, version: int | None) -> DraftRecord:
        if version is None:
            row = con.execute(
                f"SELECT {_DRAFT_COLS} FROM drafts WHERE draft_id = ? ORDER BY version DESC LIMIT 1", [draft_id]
            ).fetchone()
        else:
            row = con.execute(
                f"SELECT {_DRAFT_COLS} FROM drafts WHERE draft_id = ? AND version = ?", [draft_id, int(version)]
            ).fetchone()
        if row is None:
            which = f"draft {draft_id!r}" + ("" if version is None else f" version {version}")
            raise NotFound(f"{which} is not in the ledger")
        return _draft(row)

    def get_draft(self, draft_id: str, version: int | None = None) -> DraftRecord:
        """One draft version (the latest when ``version`` is None); ``NotFound`` otherwise."""

        def work(con: duckdb.DuckDBPyConnection) -> DraftRecord:
            return self._get(con, draft_id, version)

        if not self.path.exists():
            self._check_missing()
            raise NotFound(f"draft {draft_id!r} is not in the ledger (no ledger at {self.path} yet)")
        with self._connection() as con:
            return work(con)

    def find_by_request_key(self, request_key: str) -> DraftRecord | None:
        """The first version of the draft made for this request, if any (idempotent ``plan``)."""

        def work(con: duckdb.DuckDBPyConnection) -> DraftRecord | None:
            row = con.execute(
                f"SELECT {_DRAFT_COLS} FROM drafts WHERE request_key = ? ORDER BY version LIMIT 1", [request_key]
            ).fetchone()
            return None if row is None else _draft(row)

        return self._read(work, None)

    def versions(self, draft_id: str) -> list[DraftRecord]:
        return self._read(
            lambda con: [
                _draft(r)
                for r in con.execute(
                    f"SELECT {_DRAFT_COLS} FROM drafts WHERE draft_id = ? ORDER BY version", [draft_id]
                ).fetchall()
            ],
            [],
        )

    def list_drafts(self, *, tenants: Sequence[str] | None = None, limit: int = 200) -> list[DraftRecord]:
        """The latest version of each draft, newest first, optionally only some tenants."""

        def work(con: duckdb.DuckDBPyConnection) -> list[DraftRecord]:
            rows = con.execute(
                f"SELECT {_DRAFT_COLS} FROM drafts d WHERE version = "
                "(SELECT max(version) FROM drafts x WHERE x.draft_id = d.draft_id) "
                "ORDER BY created_time DESC, draft_id LIMIT ?",
                [int(limit)],
            ).fetchall()
            out = [_draft(r) for r in rows]
            if tenants is not None and "*" not in tenants:
                out = [d for d in out if d.tenant in tenants]
            return out

        return self._read(work, [])

    def events(self, draft_id: str) -> list[EventRecord]:
        return self._read(
            lambda con: [
                _event(r)
                for r in con.execute(
                    f"SELECT {_EVENT_COLS} FROM events WHERE draft_id = ? ORDER BY event_id", [draft_id]
                ).fetchall()
            ],
            [],
        )

    def approvals(self, draft_id: str, version: int | None = None) -> list[ApprovalRecord]:
        def work(con: duckdb.DuckDBPyConnection) -> list[ApprovalRecord]:
            sql = f"SELECT {_APPROVAL_COLS} FROM approvals WHERE draft_id = ?"
            args: list[Any] = [draft_id]
            if version is not None:
                sql += " AND version = ?"
                args.append(int(version))
            return [_approval(r) for r in con.execute(sql + " ORDER BY created_time, approval_id", args).fetchall()]

        return self._read(work, [])

    def dispatches(self, draft_id: str | None = None) -> list[DispatchRecord]:
        def work(con: duckdb.DuckDBPyConnection) -> list[DispatchRecord]:
            if draft_id is None:
                rows = con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches ORDER BY created_time").fetchall()
            else:
                rows = con.execute(
                    f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE draft_id = ? ORDER BY version", [draft_id]
                ).fetchall()
            return [_dispatch(r) for r in rows]

        return self._read(work, [])

    def get_dispatch(self, key: str) -> DispatchRecord | None:
        def work(con: duckdb.DuckDBPyConnection) -> DispatchRecord | None:
            row = con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
            return None if row is None else _dispatch(row)

        return self._read(work, None)

    def audit_rows(self, *, limit: int = 100) -> list[AuditRecord]:
        return self._read(
            lambda con: [
                _audit(r)
                for r in con.execute(
                    f"SELECT {_AUDIT_COLS} FROM audit ORDER BY audit_id DESC LIMIT ?", [int(limit)]
                ).fetchall()
            ],
            [],
        )

    # ------------------------------------------------------------------ transitions

    @staticmethod
    def _transition(
        con: duckdb.DuckDBPyConnection,
        draft: DraftRecord,
        to_state: str,
        *,
        actor: str,
        reason: str,
        now: datetime,
    ) -> DraftRecord:
        """Conditional update on (id, version, state, row_version) + its event, inside ``con``'s transaction."""
        if (draft.state, to_state) not in TRANSITIONS:
            raise Conflict(
                f"draft {draft.draft_id} v{draft.version} is {draft.state}; it cannot become {to_state}",
                details={"draft_id": draft.draft_id, "version": draft.version, "state": draft.state, "to": to_state},
            )
        stamp = _iso(now)
        rows = con.execute(
            "UPDATE drafts SET state = ?, row_version = row_version + 1, updated_time = ? "
            "WHERE draft_id = ? AND version = ? AND state = ? AND row_version = ? RETURNING row_version",
            [to_state, stamp, draft.draft_id, draft.version, draft.state, draft.row_version],
        ).fetchall()
        if len(rows) != 1:
            current = con.execute(
                "SELECT state, row_version FROM drafts WHERE draft_id = ? AND version = ?",
                [draft.draft_id, draft.version],
            ).fetchone()
            raise Conflict(
                f"draft {draft.draft_id} v{draft.version} changed meanwhile: expected {draft.state} "
                f"(row {draft.row_version}), found {current[0] if current else 'nothing'}"
                f"{f' (row {current[1]})' if current else ''}; nothing was changed"
            )
        con.execute(
            "INSERT INTO events (draft_id, version, actor, from_state, to_state, reason, event_time, row_version) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [draft.draft_id, draft.version, actor, draft.state, to_state, reason, stamp, rows[0][0]],
        )
        return _replace_state(draft, to_state, rows[0][0], stamp)

    def transition(
        self,
        draft_id: str,
        version: int,
        *,
        expected_state: str,
        expected_row_version: int,
        to_state: str,
        actor: str,
        reason: str,
        now: datetime,
    ) -> DraftRecord:
        """Move a draft version from ``expected_state`` to ``to_state``, or raise ``Conflict``.

        For callers outside this module (expiry in the Prefect flow, the flight
        monitor); approvals and dispatches have their own methods.
        """
        if (expected_state, to_state) not in TRANSITIONS:
            raise Conflict(f"draft {draft_id} v{version}: {expected_state} cannot become {to_state}")

        def work(con: duckdb.DuckDBPyConnection) -> DraftRecord:
            current = self._get(con, draft_id, version)
            expected = _replace_state(current, expected_state, expected_row_version, current.updated_time)
            return self._transition(con, expected, to_state, actor=actor, reason=reason, now=now)

        return self._write(work, what=f"{draft_id} v{version} → {to_state}")

    # ------------------------------------------------------------------ drafts

    def record_versions(
        self,
        versions: Sequence[NewVersion],
        *,
        actor: str,
        now: datetime,
        supersede: DraftRecord | None = None,
        reasons: Sequence[str] = (),
    ) -> list[DraftRecord]:
        """Record new draft versions in one transaction.

        Every version but the last is immediately SUPERSEDED (an alternative
        the planner tried and left, kept for the record; ``reasons[i]`` says
        why). ``supersede`` is the previous latest version (as read by the
        caller): it becomes SUPERSEDED under the usual conditional update, so
        two concurrent replans cannot both win. A version that already exists
        is a ``Conflict``.
        """
        if not versions:
            raise InvalidArgument("record_versions needs at least one version")

        def work(con: duckdb.DuckDBPyConnection) -> list[DraftRecord]:
            stamp = _iso(now)
            if supersede is not None:
                self._transition(
                    con, supersede, "SUPERSEDED", actor=actor, reason=f"replanned as v{versions[0].version}", now=now
                )
            out: list[DraftRecord] = []
            for i, v in enumerate(versions):
                if (None, v.state) not in TRANSITIONS:
                    raise InvalidArgument(f"a new draft version cannot start as {v.state}")
                con.execute(
                    f"INSERT INTO drafts ({_DRAFT_COLS}) VALUES ({', '.join(['?'] * 21)})",
                    [
                        v.draft_id,
                        v.version,
                        v.state,
                        1,
                        v.request_key,
                        v.tenant,
                        v.region_id,
                        v.requested_by,
                        v.request_text,
                        None if v.intent is None else _dumps(v.intent),
                        None if v.plan is None else _dumps(v.plan),
                        v.plan_hash,
                        _dumps(v.findings),
                        v.verdict,
                        _dumps(v.missing),
                        _dumps(v.notes),
                        v.world_name,
                        v.world_dir,
                        v.world_hash,
                        stamp,
                        stamp,
                    ],
                )
                con.execute(
                    "INSERT INTO events (draft_id, version, actor, from_state, to_state, reason, event_time, "
                    "row_version) VALUES (?, ?, ?, NULL, ?, ?, ?, 1)",
                    [v.draft_id, v.version, actor, v.state, TRANSITIONS[(None, v.state)], stamp],
                )
                kill_point("ledger:record:in_transaction")
                rec = self._get(con, v.draft_id, v.version)
                if i < len(versions) - 1:
                    reason = reasons[i] if i < len(reasons) else f"alternative v{versions[i + 1].version} tried"
                    rec = self._transition(con, rec, "SUPERSEDED", actor=actor, reason=reason, now=now)
                out.append(rec)
            return out

        first = versions[0]
        return self._write(work, what=f"record draft {first.draft_id} v{first.version}")

    # ------------------------------------------------------------------ approvals

    def approve(
        self,
        draft_id: str,
        version: int,
        *,
        approver_id: str,
        may_approve: Callable[[str, str | None], bool],
        plan_hash: str | None,
        comment: str,
        now: datetime,
        ttl: timedelta = APPROVAL_TTL,
        four_eyes: bool = True,
        evidence: Mapping[str, Any] | None = None,
    ) -> ApprovalRecord:
        """Approve one draft version bound to its plan hash, or raise.

        ``may_approve(tenant, region_id)`` says whether the approver holds the
        approver role there (``planner.world.User.may`` bound to the role).
        Refusals: ``NotFound``; ``ApprovalStale`` for a superseded version or a
        plan hash that is not this version's; ``Forbidden`` for a missing role or
        (four-eyes) the requester approving their own draft; ``Conflict`` for a
        rejected, expired, waiting or already (validly) approved draft, or a
        concurrent decision that won first.
        """
        return self._decide(
            draft_id,
            version,
            decision="APPROVED",
            approver_id=approver_id,
            may_decide=may_approve,
            plan_hash=plan_hash,
            comment=comment,
            now=now,
            ttl=ttl,
            four_eyes=four_eyes,
            evidence=evidence,
        )

    def reject(
        self,
        draft_id: str,
        version: int,
        *,
        approver_id: str,
        may_approve: Callable[[str, str | None], bool],
        reason: str,
        now: datetime,
        evidence: Mapping[str, Any] | None = None,
    ) -> ApprovalRecord:
        """Reject one draft version (DRAFT or WAITING_RESOURCE).

        An APPROVED version is not rejected (so a racing approve and reject
        cannot both win); it expires, or a replan supersedes it.
        """
        if not reason.strip():
            raise InvalidArgument("a rejection needs a reason")
        return self._decide(
            draft_id,
            version,
            decision="REJECTED",
            approver_id=approver_id,
            may_decide=may_approve,
            plan_hash=None,
            comment=reason,
            now=now,
            ttl=APPROVAL_TTL,
            four_eyes=False,
            evidence=evidence,
        )

    def _decide(
        self,
        draft_id: str,
        version: int,
        *,
        decision: str,
        approver_id: str,
        may_decide: Callable[[str, str | None], bool],
        plan_hash: str | None,
        comment: str,
        now: datetime,
        ttl: timedelta,
        four_eyes: bool,
        evidence: Mapping[str, Any] | None = None,
    ) -> ApprovalRecord:
        if ttl <= timedelta(0):
            raise InvalidArgument("the approval time-to-live must be positive")

        def work(con: duckdb.DuckDBPyConnection) -> ApprovalRecord:
            draft = self._get(con, draft_id, version)
            latest = self._get(con, draft_id, None)
            if draft.state == "SUPERSEDED" or latest.version != draft.version:
                raise ApprovalStale(
                    f"draft {draft_id} v{version} is superseded by v{latest.version}: review and decide on that one"
                )
            if decision == "APPROVED" and four_eyes and approver_id == draft.requested_by:
                raise Forbidden(f"four-eyes rule: {approver_id} requested draft {draft_id} and cannot approve it")
            if not may_decide(draft.tenant, draft.region_id):
                raise Forbidden(
                    f"{approver_id} may not approve drafts of tenant {draft.tenant}"
                    f"{'' if draft.region_id is None else f' in region {draft.region_id}'}"
                )
            if decision == "APPROVED":
                if draft.state == "WAITING_RESOURCE":
                    raise Conflict(f"draft {draft_id} v{version} is WAITING_RESOURCE: it has no plan to approve")
                if draft.plan_hash is None:
                    raise Conflict(f"draft {draft_id} v{version} has no plan to approve")
                if plan_hash is not None and plan_hash != draft.plan_hash:
                    raise ApprovalStale(
                        f"plan hash {plan_hash[:12]}… is not the hash of draft {draft_id} v{version} "
                        f"({draft.plan_hash[:12]}…): the plan you reviewed is not this one"
                    )
                if draft.verdict == "block":
                    raise Conflict(
                        f"draft {draft_id} v{version} has blocking findings; it cannot be approved (replan it)"
                    )
                if draft.state == "APPROVED":
                    current = [
                        _approval(r)
                        for r in con.execute(
                            f"SELECT {_APPROVAL_COLS} FROM approvals WHERE draft_id = ? AND version = ? "
                            "AND decision = 'APPROVED'",
                            [draft_id, int(version)],
                        ).fetchall()
                    ]
                    if any(a.valid_at(now, draft.plan_hash) for a in current):
                        raise Conflict(f"draft {draft_id} v{version} is already approved")
                reason = f"approved by {approver_id}" + (f": {comment}" if comment else "")
            else:
                reason = f"rejected by {approver_id}: {comment}"
            self._transition(con, draft, decision, actor=approver_id, reason=reason, now=now)
            record = ApprovalRecord(
                approval_id=uuid.uuid4().hex,
                draft_id=draft_id,
                version=int(version),
                plan_hash=draft.plan_hash if decision == "APPROVED" else plan_hash,
                approver=approver_id,
                decision=decision,
                comment=comment,
                created_time=_iso(now),
                expires_time=_iso(now + ttl) if decision == "APPROVED" else None,
                evidence=dict(evidence or {}),
            )
            con.execute(
                f"INSERT INTO approvals ({_APPROVAL_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    record.approval_id,
                    record.draft_id,
                    record.version,
                    record.plan_hash,
                    record.approver,
                    record.decision,
                    record.comment,
                    record.created_time,
                    record.expires_time,
                    _dumps(record.evidence),
                ],
            )
            kill_point("ledger:approve:in_transaction")
            return record

        return self._write(work, what=f"{decision.lower()} {draft_id} v{version}")

    @staticmethod
    def _valid_approval(
        con: duckdb.DuckDBPyConnection, draft: DraftRecord, now: datetime
    ) -> ApprovalRecord:
        """The approval that lets this version be dispatched now, or the precise refusal."""
        if draft.state in ("DRAFT", "WAITING_RESOURCE"):
            raise ApprovalRequired(f"draft {draft.draft_id} v{draft.version} is {draft.state}: approve it first")
        if draft.state == "SUPERSEDED":
            raise ApprovalStale(f"draft {draft.draft_id} v{draft.version} is superseded; dispatch the latest version")
        if draft.state != "APPROVED":
            raise Conflict(f"draft {draft.draft_id} v{draft.version} is {draft.state}; it cannot be dispatched")
        rows = [
            _approval(r)
            for r in con.execute(
                f"SELECT {_APPROVAL_COLS} FROM approvals WHERE draft_id = ? AND version = ? AND decision = 'APPROVED' "
                "ORDER BY created_time DESC",
                [draft.draft_id, draft.version],
            ).fetchall()
        ]
        for a in rows:
            if a.valid_at(now, draft.plan_hash):
                return a
        if rows:
            last = rows[0]
            if last.plan_hash != draft.plan_hash:
                raise ApprovalStale(f"the approval of {draft.draft_id} v{draft.version} names another plan hash")
            raise ApprovalStale(
                f"the approval of {draft.draft_id} v{draft.version} by {last.approver} expired at "
                f"{last.expires_time}; approve it again"
            )
        raise ApprovalRequired(f"draft {draft.draft_id} v{draft.version} has no approval")

    def valid_approval(self, draft_id: str, version: int, *, now: datetime) -> ApprovalRecord:
        """The matching unexpired approval of a version, else ``ApprovalRequired``/``ApprovalStale``/``Conflict``."""
        if not self.path.exists():
            self._check_missing()
            raise NotFound(f"draft {draft_id!r} is not in the ledger")
        with self._connection() as con:
            draft = self._get(con, draft_id, version)
            return self._valid_approval(con, draft, now)

    # ------------------------------------------------------------------ dispatches

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
            to_state = _DISPATCH_FINAL.get(status)
            if to_state is not None:
                draft = self._get(con, d.draft_id, d.version)
                why = result.get("message") or f"dispatch {status}"
                self._transition(con, draft, to_state, actor=actor, reason=str(why), now=now)
            return _dispatch(
                con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
            )

        return self._write(work, what=f"finish dispatch {key[:12]}")

    # ------------------------------------------------------------------ audit

    def audit(
        self,
        *,
        actor: str | None,
        command: str,
        args: Mapping[str, Any],
        result_code: str,
        duration_s: float,
        started: datetime,
        draft_id: str | None = None,
    ) -> None:
        """One audit row: who ran what (hash + redacted copy of the arguments), the result, how long."""

        def work(con: duckdb.DuckDBPyConnection) -> None:
            con.execute(
                "INSERT INTO audit (actor, command, args_sha256, args_redacted, result_code, duration_ms, "
                "started_time, draft_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    actor,
                    command,
                    _sha256_json(dict(args)),
                    _dumps(redact(dict(args))),
                    result_code,
                    round(duration_s * 1000.0, 3),
                    _iso(started),
                    draft_id,
                ],
            )

        self._write(work, what=f"audit {command}")


def _replace_state(draft: DraftRecord, state: str, row_version: int, stamp: str) -> DraftRecord:
    from dataclasses import replace

    return replace(draft, state=state, row_version=row_version, updated_time=stamp)


def open_ledger(home: str | Path | None = None) -> Ledger:
    """The deployment's ledger: ``SORTIE_HOME/ledger.duckdb`` unless ``home`` says otherwise."""
    if home is None:
        home = sortie_home()
    return Ledger(Path(home) / LEDGER_FILE)
