"""The ledger: one DuckDB file that is the source of truth for mission state.

It holds every draft version (plan, findings, hash), the approvals bound to a
version and plan hash, the dispatches (one per draft version, ever, guarded by a
UNIQUE idempotency key) and the log of their changes, the event log of every
state change, and an audit row per command. Prefect's database knows about
runs; this file knows about missions. They are never confused.

Why it looks the way it does:

- **Two ways to hold the file.** DuckDB lets one process at a time open it.
  The CLI, a Prefect worker or a test open it for one unit of work and close
  it again, after waiting their turn (``flows.ledger.file_lock``: an advisory
  ``flock``, polled with a bounded, jittered backoff; past the budget
  ``SORTIE_LEDGER_LOCK_S``, 15 s, ``LedgerUnavailable``). A server calls
  ``shared()`` once and keeps it open (``flows.ledger.shared``): reads on
  their own cursors and snapshots, writes serialised in the process, other
  processes let in when they knock. The methods below are the same in both.
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

import os
import shutil
import signal
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
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
from flows.ledger.adopt import adopt_older
from flows.ledger.chain import flush_head, head_path, read_head_file, write_head_file
from flows.ledger.files import DAMAGE, connect, damaged, migrate, private
from flows.ledger.shared import close_shared, engine_for, open_shared
from flows.ledger.signing import KeyStore, signing_with
from flows.ledger.file_lock import turn
from flows.errors import Conflict, LedgerUnavailable
from planner.errors import NotFound

__all__ = ["LEDGER_FILE", "kill_point", "Store"]

T = TypeVar("T")
S = TypeVar("S", bound="Store")

LEDGER_FILE = "ledger.duckdb"

_LOCK_BUDGET_S = float(os.environ.get("SORTIE_LEDGER_LOCK_S", "15"))


def kill_point(name: str) -> None:
    """Crash-test hook: SIGKILL this process when ``SORTIE_TEST_KILL_AT`` names this point."""
    if os.environ.get("SORTIE_TEST_KILL_AT") == name:
        os.kill(os.getpid(), signal.SIGKILL)


class Store:
    """The ledger file at ``path``: opening, locking, migrating, one transaction per unit of work, reads.

    The rooms (drafts, approvals, claims, audit) add their writes on top of it;
    ``flows.ledger.Ledger`` is all of them together. Cheap to construct and
    safe to share: it holds no connection itself (``shared()`` makes the
    process hold one for every ``Store`` of the file).
    """

    def __init__(
        self, path: str | Path, *, lock_budget_s: float | None = None, keys: KeyStore | None = None
    ) -> None:
        self.path = Path(path)
        self.lock_budget_s = _LOCK_BUDGET_S if lock_budget_s is None else lock_budget_s
        #: The key that signs approvals and the chain head: ``SORTIE_KEY_DIR`` or ``<folder of the ledger>/keys``.
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

    def _prepare(self, con: duckdb.DuckDBPyConnection) -> None:
        """Migrate a freshly opened connection (once per file per process), errors as ``LedgerUnavailable``."""
        try:
            migrate(con, self.path, adopt=lambda c, done: adopt_older(c, self.keys, done),
                    after_adopt=lambda c: write_head_file(c, self.head_path))
        except DAMAGE as exc:
            raise damaged(self.path, exc) from None
        except duckdb.Error as exc:
            raise LedgerUnavailable(f"the ledger {self.path} could not be read or migrated: {exc}") from None

    @contextmanager
    def _turn(self) -> Iterator[float]:
        """Our turn at the file (``flows.ledger.file_lock``); yields the deadline left for connecting."""
        with turn(self.path, self.lock_budget_s) as deadline:
            yield deadline

    @contextmanager
    def _connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A connection for one unit of work: a cursor of the process's shared one, else a short-lived one."""
        engine = engine_for(self.path)
        if engine is not None:
            try:
                with engine.reading() as cur:
                    yield cur
            except DAMAGE as exc:
                raise damaged(self.path, exc) from None
            return
        self._check_missing()
        with self._turn() as deadline:
            con = connect(self.path, deadline, self.lock_budget_s)
            try:
                self._prepare(con)
                try:
                    yield con
                except DAMAGE as exc:
                    raise damaged(self.path, exc) from None
            finally:
                con.close()

    @contextmanager
    def _writer(self, *, state: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
        engine = engine_for(self.path)
        if engine is None:
            with self._connection() as con:
                yield con
            return
        try:
            with engine.writing(state=state) as cur:
                yield cur
        except DAMAGE as exc:
            raise damaged(self.path, exc) from None

    @contextmanager
    def _snapshot(self) -> Iterator[tuple[duckdb.DuckDBPyConnection, dict[str, Any] | None]]:
        """A consistent read and the head file as it was at that moment (no write between the two)."""
        engine = engine_for(self.path)
        if engine is None:
            with self._connection() as con:  # our turn: nobody writes until we are done
                yield con, read_head_file(self.head_path)
            return
        try:
            with engine.snapshot(lambda: read_head_file(self.head_path)) as pair:
                yield pair
        except DAMAGE as exc:
            raise damaged(self.path, exc) from None

    # ------------------------------------------------------------------ holding the file

    def shared(self: S) -> S:
        """Keep the file open for this process from now on (a server): see ``flows.ledger.shared``.

        Every ``Store`` of this file in the process then reads on its own
        cursor and snapshot and writes under one in-process lock; other
        processes still get their turn when they ask for it. Opens (creates,
        migrates) the file now. Returns ``self``.
        """
        self._check_missing()
        open_shared(self.path, budget_s=self.lock_budget_s, prepare=self._prepare, check_missing=self._check_missing)
        return self

    def close(self) -> None:
        """Let go of the file if this process holds it open (``shared()``); harmless otherwise."""
        close_shared(self.path)

    @property
    def is_shared(self) -> bool:
        return engine_for(self.path) is not None

    @contextmanager
    def read_session(self) -> Iterator[None]:
        """Read-only work inside shares one read transaction (server mode: ``SharedConnection.session``); embedded,
        nothing changes (each unit of work still takes its turn at the file)."""
        engine = engine_for(self.path)
        if engine is None:
            yield
            return
        try:
            with engine.session():
                yield
        except DAMAGE as exc:
            raise damaged(self.path, exc) from None

    @contextmanager
    def quiesced(self) -> Iterator[None]:
        """Hold the file closed and checkpointed, nobody writing: a copy taken inside is consistent.

        Embedded: our turn, after ``CHECKPOINT`` (the write-ahead log empty, the
        one file is the whole ledger). Shared: the process's connection closed
        (DuckDB checkpoints on close) with the turn kept; reads wait meanwhile.
        """
        engine = engine_for(self.path)
        if engine is not None:
            with engine.offline():
                yield
            return
        self._check_missing()
        with self._turn() as deadline:
            if self.path.exists():
                con = connect(self.path, deadline, self.lock_budget_s)
                try:
                    self._prepare(con)
                    con.execute("CHECKPOINT")
                except DAMAGE as exc:
                    raise damaged(self.path, exc) from None
                finally:
                    con.close()
            yield

    @contextmanager
    def replacing(self) -> Iterator[None]:
        """Nobody has the file open and nobody can open it: to put another file in its place (restore)."""
        engine = engine_for(self.path)
        if engine is not None:
            with engine.offline():
                yield
            return
        with self._turn():
            yield

    def copy_to(self, dest: Path) -> dict[str, Any] | None:
        """A consistent copy of the ledger at ``dest`` (0600); returns the head file as it was at that moment.

        Embedded: the file copied while holding our turn, after a checkpoint
        (writers wait the copy's time). Shared: ``COPY FROM DATABASE`` inside
        one read snapshot, so writers never wait.
        """
        engine = engine_for(self.path)
        if engine is None:
            with self.quiesced():
                head = read_head_file(self.head_path)
                tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex[:8]}")
                shutil.copyfile(self.path, tmp)
            private(tmp)
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, dest)
            return head
        name = f"copy_{uuid.uuid4().hex[:12]}"
        tmp = dest.with_name(f".{dest.name}.{uuid.uuid4().hex[:8]}")
        with self._snapshot() as (con, head):
            source = con.execute("SELECT current_database()").fetchone()[0]
            con.execute("ATTACH ? AS " + name, [str(tmp)])
            try:
                con.execute(f'COPY FROM DATABASE "{source}" TO {name}')
                con.execute("COMMIT")  # the copy's writes belong to this (otherwise read-only) transaction
            finally:
                con.execute(f"DETACH {name}")
        private(tmp)
        os.replace(tmp, dest)
        return head

    def _write(self, work: Callable[[duckdb.DuckDBPyConnection], T], *, what: str, state: bool = True) -> T:
        """Run ``work`` in one transaction; a write-write race inside one process retries it.

        ``state=False``: the work writes audit rows only (``SharedConnection.recall`` keeps what it read).

        ``work`` re-reads and re-checks everything, so a retry after a lost race
        sees the winner's rows and fails its own conditions with ``Conflict``.
        """
        for attempt in range(4):
            with self._writer(state=state) as con:
                con.execute("BEGIN TRANSACTION")
                try:
                    with signing_with(self.keys) as ctx:
                        result = work(con)
                        head = flush_head(con, ctx)
                    con.execute("COMMIT")
                    if head is not None:
                        write_head_file(con, self.head_path, head)
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

    def _recalled(self, key: tuple[Any, ...], read: Callable[[], T]) -> T:
        """``read()``, or what it gave before from the same state (server mode: ``SharedConnection.recall``)."""
        engine = engine_for(self.path)
        return read() if engine is None else engine.recall(key, read)

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

        def read() -> DraftRecord:
            with self._connection() as con:
                return work(con)

        return self._recalled(("draft", draft_id, version), read)

    def version_numbers(self, draft_id: str) -> list[int]:
        """A draft's version numbers, oldest first (``versions`` without reading and decoding every plan)."""
        return list(self._recalled(("versions", draft_id), lambda: self._read(
            lambda con: [int(r[0]) for r in con.execute(
                "SELECT version FROM drafts WHERE draft_id = ? ORDER BY version", [draft_id]).fetchall()],
            [],
        )))

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
        """The latest version of each draft, newest first, optionally only some tenants.

        The tenant filter is in the query, before LIMIT: a user of one tenant asking for 20 gets that tenant's
        20 newest, however many newer drafts other tenants have.
        """
        only = None if tenants is None or "*" in tenants else tuple(sorted(set(tenants)))
        if only == ():
            return []
        where = f" AND tenant IN ({', '.join(['?'] * len(only))})" if only else ""

        def work(con: duckdb.DuckDBPyConnection) -> list[DraftRecord]:
            rows = con.execute(
                f"SELECT {_DRAFT_COLS} FROM drafts d WHERE version = "
                f"(SELECT max(version) FROM drafts x WHERE x.draft_id = d.draft_id){where} "
                "ORDER BY created_time DESC, draft_id LIMIT ?",
                [*(only or ()), int(limit)],
            ).fetchall()
            return [_draft(r) for r in rows]

        return list(self._recalled(("list", only, int(limit)), lambda: self._read(work, [])))

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

        return list(self._recalled(("approvals", draft_id, version), lambda: self._read(work, [])))

    def dispatches(self, draft_id: str | None = None) -> list[DispatchRecord]:
        def work(con: duckdb.DuckDBPyConnection) -> list[DispatchRecord]:
            if draft_id is None:
                rows = con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches ORDER BY created_time").fetchall()
            else:
                rows = con.execute(
                    f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE draft_id = ? ORDER BY version", [draft_id]
                ).fetchall()
            return [_dispatch(r) for r in rows]

        return list(self._recalled(("dispatches", draft_id), lambda: self._read(work, [])))

    def get_dispatch(self, key: str) -> DispatchRecord | None:
        def work(con: duckdb.DuckDBPyConnection) -> DispatchRecord | None:
            row = con.execute(f"SELECT {_DISPATCH_COLS} FROM dispatches WHERE idempotency_key = ?", [key]).fetchone()
            return None if row is None else _dispatch(row)

        return self._read(work, None)

    def audit_of(self, commands: Sequence[str]) -> list[AuditRecord]:
        """Every audit row of ``commands``, oldest first (the vehicle hub's holds: ``flows.fleet.records``)."""
        marks = ", ".join("?" * len(commands))
        return self._read(
            lambda con: [_audit(r) for r in con.execute(
                f"SELECT {_AUDIT_COLS} FROM audit WHERE command IN ({marks}) ORDER BY audit_id", list(commands)
            ).fetchall()],
            [],
        ) if commands else []

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
