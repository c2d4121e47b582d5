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

The rooms: ``records`` (row values), ``states`` (the state machine),
``drafts``, ``approvals`` (policy: four-eyes, stale versions), ``claims``
(dispatch claims and outcomes), ``audit``; this module is the storage under
them and the reads.

Test hook: ``SORTIE_TEST_KILL_AT=<point>`` makes the process SIGKILL itself at
the named point (``kill_point``), so the crash tests run the real code paths.
"""

from __future__ import annotations

import fcntl
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from flows.ledger.records import (
    _APPROVAL_COLS,
    _AUDIT_COLS,
    _DISPATCH_COLS,
    _EVENT_COLS,
    _DRAFT_COLS,
    ApprovalRecord,
    AuditRecord,
    DispatchRecord,
    DraftRecord,
    EventRecord,
    _approval,
    _audit,
    _dispatch,
    _draft,
    _event,
    read_draft,
)
from flows.ledger.chain import adopt_unchained, head_path, write_head_file
from flows.ledger.schema import MIGRATIONS, SCHEMA_VERSION
from flows.ledger.signing import KeyStore, signing_with
from planner.errors import Conflict, LedgerUnavailable, NotFound

__all__ = ["LEDGER_FILE", "kill_point", "Store"]

T = TypeVar("T")
S = TypeVar("S", bound="Store")

LEDGER_FILE = "ledger.duckdb"

#: One thread is plenty for a ledger; never fetch extensions (a SQLite file would trigger a download).
_CONFIG = {"threads": 1, "autoinstall_known_extensions": False, "autoload_known_extensions": False}
_LOCK_BUDGET_S = float(os.environ.get("SORTIE_LEDGER_LOCK_S", "15"))


def kill_point(name: str) -> None:
    """Crash-test hook: SIGKILL this process when ``SORTIE_TEST_KILL_AT`` names this point."""
    if os.environ.get("SORTIE_TEST_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


#: What a damaged file (truncated, a bad block) raises from DuckDB: reported with advice, never INTERNAL.
_DAMAGE = (duckdb.IOException, duckdb.InternalException, duckdb.FatalException, duckdb.SerializationException)

_migrated: set[str] = set()
_migrated_lock = threading.Lock()


class Store:
    """The ledger file at ``path``: opening, locking, migrating, one transaction per unit of work, reads.

    The rooms (drafts, approvals, claims, audit) add their writes on top of it;
    ``flows.ledger.Ledger`` is all of them together. Cheap to construct and
    safe to share: it holds no connection between calls.
    """

    def __init__(
        self, path: str | Path, *, lock_budget_s: float | None = None, keys: KeyStore | None = None
    ) -> None:
        self.path = Path(path)
        self.lock_budget_s = _LOCK_BUDGET_S if lock_budget_s is None else lock_budget_s
        #: The key that signs approvals and the chain head: ``<folder of the ledger>/keys`` by default.
        self.keys = keys if keys is not None else KeyStore(self.path.parent)

    @property
    def head_path(self) -> Path:
        """``ledger.duckdb.head``: the signed chain head, written beside the file after every commit."""
        return head_path(self.path)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"

    # ------------------------------------------------------------------ plumbing

    def _check_missing(self) -> None:
        """Refuse to start an empty ledger where one evidently existed."""
        if self.path.exists():
            return
        if self.head_path.exists():
            raise LedgerUnavailable(
                f"the ledger file {self.path} is missing but its chain head {self.head_path.name} says it held "
                "entries: restore it (`sortie ledger restore BACKUP_DIR`); nothing was created or changed"
            )
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

    def _damaged(self, exc: BaseException) -> LedgerUnavailable:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return LedgerUnavailable(
            f"the ledger file {self.path} is damaged ({first}); it was left untouched: restore the latest backup "
            "(`sortie ledger restore BACKUP_DIR`), then `sortie ledger verify`"
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
                    raise self._damaged(exc) from None
                if time.monotonic() >= deadline:
                    raise LedgerUnavailable(
                        f"the ledger {self.path} stayed locked by another process for {self.lock_budget_s:g} s "
                        f"({attempts} attempts): {text.splitlines()[0]}"
                    ) from None
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 1.6, 0.15)
            except _DAMAGE as exc:
                raise self._damaged(exc) from None
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
                adopted = bool(done) and 3 not in done
                if adopted:  # a ledger from before the hash chain: chain its rows as they are now
                    adopt_unchained(con, self.keys)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            if adopted:
                write_head_file(con, self.head_path)
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
                except _DAMAGE as exc:
                    raise self._damaged(exc) from None
                except duckdb.Error as exc:
                    raise LedgerUnavailable(f"the ledger {self.path} could not be read or migrated: {exc}") from None
                try:
                    yield con
                except _DAMAGE as exc:
                    raise self._damaged(exc) from None
            finally:
                con.close()

    @contextmanager
    def quiesced(self) -> Iterator[None]:
        """Hold our turn at the file, everything checkpointed into it: a copy taken inside is consistent.

        For backup and restore: no sortie process writes while we hold the
        turn, and after ``CHECKPOINT`` the write-ahead log is empty, so the one
        file is the whole ledger.
        """
        self._check_missing()
        with self._turn() as deadline:
            if self.path.exists():
                con = self._open(deadline)
                try:
                    self._migrate(con)
                    con.execute("CHECKPOINT")
                except _DAMAGE as exc:
                    raise self._damaged(exc) from None
                finally:
                    con.close()
            yield

    def _write(self, work: Callable[[duckdb.DuckDBPyConnection], T], *, what: str) -> T:
        """Run ``work`` in one transaction; a write-write race inside one process retries it.

        ``work`` re-reads and re-checks everything, so a retry after a lost race
        sees the winner's rows and fails its own conditions with ``Conflict``.
        """
        for attempt in range(4):
            with self._connection() as con:
                con.execute("BEGIN TRANSACTION")
                try:
                    with signing_with(self.keys):
                        result = work(con)
                    con.execute("COMMIT")
                    write_head_file(con, self.head_path)
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

    def ensure(self: S) -> S:
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

    _get = staticmethod(read_draft)

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
