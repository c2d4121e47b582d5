"""Server mode: one long-lived DuckDB connection owned by the process, cursors per unit of work.

Why: opening and closing the file for every unit of work costs about 115 ms
of wall time on a 2-core machine (a query on an open connection: 0.5 ms), and
the one exclusive turn behind it made every read wait for every other read
and write. A server (``sortie server``) is the only writer of its ledger, so
it keeps the file open:

- **reads** take a cursor of the one database instance and run in their own
  transaction: DuckDB gives each transaction a consistent snapshot (MVCC), so
  a read never waits for a writer and never sees half of a write. Measured on
  duckdb 2.0.1 as installed: point reads during a one-second write
  transaction took 0.25 ms median, 0.5 ms p95 (the query releases the GIL);
  a snapshot is fixed by the transaction's first statement that reads a
  table, not by ``BEGIN`` (``snapshot`` pins it that way);
- **writes** are serialised in the process by one lock, so the hash chain
  gets one writer at a time and DuckDB never sees a write-write conflict;
- **other processes** are kept out by the cross-process turn
  (``flows.ledger.file_lock``), held while the file is open; one that knocks gets
  the file within one poll (``POLL_S``) plus the units in flight, and the
  server takes it back when nobody knocks any more (``yields`` counts these).

- **reads of the ledger's state are shared** between read sessions while
  nothing changes (``recall``): a control room asks for the same drafts list
  and the same drafts many times a second, and each answer cost five to six
  queries (about 1–2.5 ms of CPU each on a loaded 2-core machine: DuckDB
  parses, binds and optimises every statement) and the decoding of every
  plan. ``generation`` counts the writes that change state (a seqlock: odd
  while one is in progress); a session whose snapshot was pinned while it
  stayed even and unchanged reads exactly the state of that generation, so
  it may use what another session of the same generation read, and nothing
  else. The audit's own writes (``state=False``) do not change what is
  recalled; opening or closing the file (another process had it) does.

- **the file at the path is the file held** (issue 38: the ledger replaced
  while the server ran, a plan answered 200 was written to the deleted file and
  lost at the restart): the device and inode are recorded when the file is
  opened and compared with the path's before every unit of work; a file
  removed or replaced is ``LEDGER_UNAVAILABLE`` (HTTP 503) for every
  transaction from then on, nothing written, and ``/v1/health`` says
  ``ok: false`` (``identity_problem``) until the server is restarted on a
  ledger it verifies. Each commit is synced by DuckDB itself (``fdatasync``
  of the ``.wal`` at every COMMIT: observed with strace on duckdb 2.0.1).

Every ``Store`` (and so every ``Ledger``) of the same file in this process
goes through the one connection once it is open (``engine_for``): code that
still calls ``open_ledger()`` inside the server neither opens the file again
nor waits on the server's own turn.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import duckdb

from flows.ledger import file_identity
from flows.ledger.files import DAMAGE, connect, damaged
from flows.ledger.file_lock import give_back, knock_path, knocking, open_knock_probe, take_turn, wait_unknocked
from flows.errors import LedgerUnavailable

__all__ = ["SharedConnection", "engine_for", "open_shared", "close_shared"]

T = TypeVar("T")

_ENGINES: dict[str, SharedConnection] = {}
_NONE = object()
_ENGINES_LOCK = threading.Lock()


def _end_read(cur: duckdb.DuckDBPyConnection) -> None:
    """End a read transaction (nothing to keep); one already ended (a copy committed its own) is fine."""
    try:
        cur.execute("ROLLBACK")
    except duckdb.Error:
        pass


_KEYS: dict[str, str] = {}


def _key(path: Path) -> str:
    """The file's resolved path, resolved once per spelling (``realpath`` stats every component: it showed up in
    every unit of work of a busy server)."""
    raw = str(path)
    key = _KEYS.get(raw)
    if key is None:
        key = _KEYS[raw] = str(path.resolve())
    return key


def engine_for(path: Path) -> SharedConnection | None:
    """The process's open connection to ``path``, if this process holds it (a server); else None."""
    if not _ENGINES:  # the CLI and workers: no lookup, no path resolution
        return None
    return _ENGINES.get(_key(path))


class SharedConnection:
    """One process's long-lived hold on a ledger file; see the module docstring."""

    #: How often the holder looks for a knock (seconds): the longest another process waits before it is let in.
    POLL_S = 0.02
    MAX_IDLE_CURSORS = 16
    #: DuckDB's worker threads for the held file. A server's queries are point reads and small writes: with
    #: DuckDB's default (one thread per core) each one paid for scheduling tasks across threads — measured, a draft
    #: shown cost 19.9 ms of the process's CPU with the default and 11.8 ms with one thread (2 cores, 1,000 audit
    #: rows), and the extra threads competed with the request threads for the same two cores.
    DUCKDB_THREADS = 1
    #: How much write-ahead log DuckDB keeps before it checkpoints. Rows appended since the last checkpoint live in
    #: the process's memory (DuckDB's in-memory table), so a server writing an audit row a request grows by up to the
    #: log's size between checkpoints (default 16 MB: ~25,000 audit rows of 0.5 kB; measured in one process, 40,000
    #: such rows: +12 MB then a drop at the checkpoint with the default, flat within 1 MB at 2 MB). The server's RSS
    #: over 10,000 reads (bench server --rss-requests 10000): second half +9.0 MB with 16 MB, +3.6 MB with 4 MB.
    CHECKPOINT_THRESHOLD = "4MB"
    #: DuckDB optimizers turned off for the held file. ``in_clause`` rewrites a filter ``x IN (5 or more values)``
    #: into a join against a small collection of the values, and on duckdb 2.0.1 as installed every such query keeps
    #: about 2.3 kB of the database instance's memory until the file is closed (measured: 5,000 queries of
    #: ``command IN (9 values)`` +11 MB of malloc in use, all of it freed by closing the connection, none by closing
    #: the cursor; 4 values, or the optimizer off: +0.04 MB). A server keeps its file open for weeks and shows a
    #: draft's refused decisions (``Audit.refusals``, nine commands) on every draft shown: its RSS grew ~2 MB per
    #: 1,000 reads (issue 27). Off, the values stay a filter in the scan: the refusals query measured 2.0-2.2 ms
    #: instead of 2.8-3.2 ms of CPU on 20,000 audit rows, within noise on 300,000.
    DISABLED_OPTIMIZERS = "in_clause"
    #: Reads kept for the sessions of one generation (``recall``); a new generation starts afresh. Bounded, so the
    #: process's memory does not grow with the requests it answers.
    RECALLED = 128
    #: The statement that pins a session's snapshot (DuckDB fixes it at the first statement that reads a table).
    PIN = "SELECT count(*) FROM schema_migrations"

    def __init__(
        self,
        path: Path,
        *,
        budget_s: float,
        prepare: Callable[[duckdb.DuckDBPyConnection], None],
        check_missing: Callable[[], None],
    ) -> None:
        self.path = path
        self.budget_s = budget_s
        self._prepare = prepare
        self._check_missing = check_missing
        self._cond = threading.Condition()
        self._active = 0
        self._closing = False
        self._stopped = False
        self._root: duckdb.DuckDBPyConnection | None = None
        self._identity: tuple[int, int] | None = None  # (device, inode) of the file opened
        self._turn_fd: int | None = None
        self._idle: list[duckdb.DuckDBPyConnection] = []
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._probe = open_knock_probe(path)
        self._stop = threading.Event()
        #: How many times the file was opened, and let go to another process (figures for tests and bench).
        self.opens = 0
        self.yields = 0
        #: Writes that change state, counted twice each (odd while one is in progress): see ``recall``.
        self.generation = 0
        self._recalled: dict[object, object] = {}
        self._recalled_generation = -1
        self.recalls = 0  # reads answered from ``_recalled`` (a figure for tests and the bench)
        self._watcher = threading.Thread(target=self._watch, name=f"ledger-knocks-{path.name}", daemon=True)
        self._watcher.start()

    def __repr__(self) -> str:
        return f"SharedConnection({str(self.path)!r}, open={self._root is not None}, yields={self.yields})"

    # ------------------------------------------------------------------ the gate

    def _enter(self) -> None:
        depth = getattr(self._local, "depth", 0)
        with self._cond:
            if depth:  # a unit inside this thread's own unit: the file is open and must stay so (no wait)
                self._active += 1
                self._local.depth = depth + 1
                return
            while self._closing and not self._stopped:
                self._cond.wait()
            if self._stopped:
                raise LedgerUnavailable(f"the ledger {self.path} was closed by this process")
            if self._root is None:
                self._open_locked()
            self._active += 1
            self._local.depth = 1

    def _leave(self) -> None:
        with self._cond:
            self._active -= 1
            self._local.depth -= 1
            if self._active == 0:
                self._cond.notify_all()

    def _open_locked(self) -> None:
        deadline = time.monotonic() + self.budget_s
        self._check_missing()
        if self._turn_fd is None:
            wait_unknocked(self._probe, deadline, ledger=self.path, budget_s=self.budget_s)
            self._turn_fd = take_turn(self.path, deadline, self.budget_s)
        try:
            root = connect(self.path, deadline, self.budget_s)
            try:
                self._prepare(root)
                root.execute(f"SET threads = {self.DUCKDB_THREADS}")
                root.execute(f"SET checkpoint_threshold = '{self.CHECKPOINT_THRESHOLD}'")
                root.execute(f"SET disabled_optimizers = '{self.DISABLED_OPTIMIZERS}'")  # global: every cursor's too
            except BaseException:
                root.close()
                raise
        except BaseException:
            give_back(self._turn_fd)
            self._turn_fd = None
            raise
        self._root = root
        self._identity = file_identity.identity(self.path)
        self.opens += 1
        self.generation += 2  # another process may have written while the file was not ours

    def _close_locked(self, *, release_turn: bool) -> None:
        self.generation += 2  # what was read before may not be what the file holds when it is opened again
        for cur in self._idle:
            try:
                cur.close()
            except duckdb.Error:
                pass
        self._idle.clear()
        if self._root is not None:
            try:
                self._root.close()  # closes its cursors; the database instance (and DuckDB's file lock) with them
            except duckdb.Error:
                pass
            self._root = None
        if release_turn and self._turn_fd is not None:
            give_back(self._turn_fd)
            self._turn_fd = None

    def _drain_locked(self) -> None:
        """With the condition held: stop new units and wait for the ones in flight."""
        self._closing = True
        while self._active:
            self._cond.wait()

    # ------------------------------------------------------------------ cursors

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        with self._cond:
            if self._idle:
                return self._idle.pop()
            assert self._root is not None
            return self._root.cursor()

    def _release(self, cur: duckdb.DuckDBPyConnection, reusable: bool) -> None:
        with self._cond:
            if reusable and len(self._idle) < self.MAX_IDLE_CURSORS:
                self._idle.append(cur)
                return
        try:
            cur.close()
        except duckdb.Error:
            pass

    def identity_problem(self) -> str | None:
        """Why the file at the path is not the file this process holds open (removed, replaced), or None."""
        held = self._identity
        return None if self._root is None or held is None else file_identity.problem(self.path, held)

    def _check_identity(self) -> None:
        problem = self.identity_problem()
        if problem is not None:
            raise LedgerUnavailable(problem + ": nothing was written or read; a write now would be lost. Restore "
                                    "the ledger and restart the server (it verifies the file it opens)",
                                    details={"ledger_replaced": True})

    @contextmanager
    def _unit(self) -> Iterator[duckdb.DuckDBPyConnection]:
        self._enter()
        try:
            self._check_identity()
            cur = self._cursor()
            reusable = False
            try:
                yield cur
                reusable = True
            finally:
                self._release(cur, reusable)
        finally:
            self._leave()

    # ------------------------------------------------------------------ units of work

    @contextmanager
    def reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor in its own read transaction: a consistent snapshot, never waiting for a writer; inside this
        thread's ``session`` its one cursor and snapshot."""
        held = getattr(self._local, "session", None)
        if held is not None:
            yield held
            return
        with self._unit() as cur:
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
            finally:
                _end_read(cur)

    @contextmanager
    def session(self) -> Iterator[None]:
        """Every read of this thread inside shares one cursor and one read transaction (one snapshot).

        For a request that only reads (``flows.server.kit``): a draft shown
        took six units of work — six BEGIN/ROLLBACK pairs and six hand-overs
        of the GIL around each call into DuckDB — for one answer that is
        more consistent from one snapshot anyway. Writes inside still take
        their own cursor and the write lock, and are not seen by the session's
        later reads: only read-only work belongs in a session.
        """
        if getattr(self._local, "session", None) is not None:
            yield
            return
        with self.reading() as cur:
            before = self.generation
            cur.execute(self.PIN).fetchall()
            quiet = before % 2 == 0 and self.generation == before  # pinned with no write begun: that state exactly
            self._local.session, self._local.memo = cur, {}
            self._local.generation = before if quiet else None
            try:
                yield
            finally:
                self._local.session = self._local.memo = self._local.generation = None

    def recall(self, key: object, read: Callable[[], T]) -> T:
        """``read()`` (a read of the ledger's state, named by ``key``), or what it gave before from the same state.

        Inside this thread's ``session``: what the session already read (a draft shown read its version twice —
        once to check who may see it, once to show it), else what another session of the same ``generation``
        read (see the module docstring); outside a session, ``read()``. What is recalled is shared: callers
        treat it as read-only (records are frozen; their plans and lists are not copied)."""
        memo = getattr(self._local, "memo", None)
        if memo is None:
            return read()
        if key in memo:
            return memo[key]  # type: ignore[return-value]
        generation = self._local.generation
        if generation is not None:
            with self._cond:
                value = self._recalled.get(key, _NONE) if self._recalled_generation == generation else _NONE
            if value is not _NONE:
                self.recalls += 1
                memo[key] = value
                return value  # type: ignore[return-value]
        value = read()
        memo[key] = value
        if generation is not None:
            with self._cond:
                if generation == self.generation:  # else a newer state exists: keep nothing of this one
                    if self._recalled_generation != generation:
                        self._recalled, self._recalled_generation = {}, generation
                    if len(self._recalled) < self.RECALLED:
                        self._recalled[key] = value
        return value

    @contextmanager
    def writing(self, *, state: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor with the process's write lock held; the caller begins and commits its transaction.

        ``state``: whether the write may change what ``recall`` keeps (everything but the audit's own rows)."""
        with self._unit() as cur, self._write_lock:
            if not state:
                yield cur
                return
            self.generation += 1  # odd: a session pinned from now on is not of the last generation
            try:
                yield cur
            finally:
                self.generation += 1

    @contextmanager
    def snapshot(self, beside: Callable[[], T]) -> Iterator[tuple[duckdb.DuckDBPyConnection, T]]:
        """A read transaction pinned at a moment between two writes, and ``beside()`` read at that moment.

        For the checks that compare the database with the head file written
        after every commit: a snapshot taken while a write commits would look
        older than the file beside it.
        """
        with self._unit() as cur:
            with self._write_lock:
                cur.execute("BEGIN TRANSACTION")
                cur.execute("SELECT count(*) FROM schema_migrations").fetchone()  # a table read fixes the snapshot
                value = beside()
            try:
                yield cur, value
            finally:
                _end_read(cur)

    @contextmanager
    def offline(self) -> Iterator[None]:
        """The file closed (checkpointed into one file by DuckDB) with the turn kept: to copy or replace it."""
        with self._cond:
            self._drain_locked()
            try:
                self._close_locked(release_turn=False)
                if self._turn_fd is None:
                    deadline = time.monotonic() + self.budget_s
                    self._turn_fd = take_turn(self.path, deadline, self.budget_s)
            except BaseException:
                self._closing = False
                self._cond.notify_all()
                raise
        try:
            yield
        finally:
            with self._cond:
                self._closing = False
                self._cond.notify_all()

    # ------------------------------------------------------------------ other processes

    def _watch(self) -> None:
        while not self._stop.wait(self.POLL_S):
            self._fresh_probe()
            if self._root is not None and knocking(self._probe):
                self.let_go()

    def _fresh_probe(self) -> None:
        """Probe the knock file that is there now (one deleted and made again has another inode)."""
        try:
            if os.stat(knock_path(self.path)).st_ino == os.fstat(self._probe).st_ino:
                return
        except FileNotFoundError:
            pass
        with self._cond:  # never under an open in progress, which probes too
            old, self._probe = self._probe, open_knock_probe(self.path)
            os.close(old)

    def let_go(self) -> None:
        """Close the file and give the turn up (another process knocked); the next unit of work takes it back."""
        with self._cond:
            if self._root is None or self._stopped:
                return
            self._drain_locked()
            try:
                self._close_locked(release_turn=True)
                self.yields += 1
            finally:
                self._closing = False
                self._cond.notify_all()

    def close(self) -> None:
        """Let the file go for good (the server stops); later units of work open it the short-lived way."""
        self._stop.set()
        with self._cond:
            if self._stopped:
                return
            self._drain_locked()
            self._stopped = True
            self._close_locked(release_turn=True)
            self._cond.notify_all()
        os.close(self._probe)


def open_shared(
    path: Path,
    *,
    budget_s: float,
    prepare: Callable[[duckdb.DuckDBPyConnection], None],
    check_missing: Callable[[], None],
) -> SharedConnection:
    """Open (or return) this process's long-lived connection to ``path``; the file is opened and migrated now."""
    key = _key(path)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = SharedConnection(path, budget_s=budget_s, prepare=prepare, check_missing=check_missing)
            try:
                with engine.reading():
                    pass
            except DAMAGE as exc:
                engine.close()
                raise damaged(path, exc) from None
            except BaseException:
                engine.close()
                raise
            _ENGINES[key] = engine
    return engine


def close_shared(path: Path) -> None:
    """Close this process's long-lived connection to ``path``, if any."""
    with _ENGINES_LOCK:
        engine = _ENGINES.pop(_key(path), None)
    if engine is not None:
        engine.close()


@atexit.register
def _close_all() -> None:
    with _ENGINES_LOCK:
        engines = list(_ENGINES.values())
        _ENGINES.clear()
    for engine in engines:
        try:
            engine.close()
        except Exception:  # at exit: nothing left to report to
            pass
