"""Audit rows of reads, written in batches: one transaction per batch instead of one commit per read.

Why: every request is audited, but a read that succeeded changes nothing;
its row is a record of who looked at what, never evidence a decision or a
dispatch depends on. Paying a chained write (about 10 ms, serialised behind
every other write) for each read capped the server's read rate and made reads
wait behind writes. So the server puts those rows here and a thread of its
own writes them every ``FLUSH_S`` seconds, or as soon as ``BATCH`` are
waiting, with ``Ledger.audit_many`` (one transaction; each row still an entry
of the hash chain). Refusals and every request that changes something are
written at once, in the request (``flows.server.kit.Kit.audit``).

A flush writes ``CHUNK`` rows per transaction and waits at the server's
safety gate (``flows.server.gate``) before each: under sixteen readers a
whole batch held the ledger's write lock for seconds while an approval or a
recall waited for it.

What a crash costs: the reads of the last ``FLUSH_S`` seconds (their
answers were given, nothing was decided on them). ``close`` writes what is
left when the server stops.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from flows.ledger import AuditEntry
from planner.errors import SortieError

__all__ = ["AuditQueue", "FLUSH_S", "BATCH", "CHUNK"]

FLUSH_S = 0.5
BATCH = 256
#: Rows per transaction: a batch holds the ledger's write lock for one chunk at a time, never for a whole flush.
CHUNK = 64
#: Rows kept while the ledger cannot take them; beyond that the oldest are dropped (and counted, and logged).
MAX_WAITING = 20_000

_log = logging.getLogger("sortie.server")


class AuditQueue:
    """Rows waiting to be written by ``write`` (``Ledger.audit_many``) on a thread of their own."""

    def __init__(self, write: Callable[[Sequence[AuditEntry]], int], flush_s: float = FLUSH_S,
                 batch: int = BATCH, *, pause: Callable[[], float] | None = None, chunk: int = CHUNK) -> None:
        self._write = write
        self._pause = pause
        self._chunk = chunk
        self._flush_s = flush_s
        self._batch = batch
        self._rows: list[AuditEntry] = []
        self._cond = threading.Condition()
        self._stopping = False
        self.written = 0
        self.dropped = 0
        self._thread = threading.Thread(target=self._run, name="sortie-audit", daemon=True)
        self._thread.start()

    def put(self, entry: AuditEntry) -> None:
        with self._cond:
            self._rows.append(entry)
            if len(self._rows) > MAX_WAITING:
                del self._rows[0]
                self.dropped += 1
            if len(self._rows) >= self._batch:
                self._cond.notify()

    def flush(self) -> int:
        """Write what waits now (the caller's thread), ``chunk`` rows per transaction, each after the safety gate
        (``pause``); returns how many rows were written."""
        n = 0
        while True:
            with self._cond:
                rows, self._rows = self._rows[:self._chunk], self._rows[self._chunk:]
            if not rows:
                return n
            if self._pause is not None:
                self._pause()  # a recall or an approval in progress takes the write lock first
            done = self._write_rows(rows)
            if done == 0:
                return n
            n += done

    def _write_rows(self, rows: list[AuditEntry]) -> int:
        try:
            n = self._write(rows)
        except SortieError as exc:  # the ledger cannot take them now: keep them for the next round
            _log.warning("audit batch of %d rows not written: %s", len(rows), exc.message)
            with self._cond:
                self._rows[:0] = rows
                excess = len(self._rows) - MAX_WAITING
                if excess > 0:
                    del self._rows[:excess]
                    self.dropped += excess
            return 0
        self.written += n
        return n

    def close(self) -> None:
        """Stop the thread and write what is left."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._thread.join(timeout=10)
        self.flush()

    def _run(self) -> None:
        while True:
            with self._cond:
                if not self._stopping and len(self._rows) < self._batch:
                    self._cond.wait(self._flush_s)
                if self._stopping:
                    return
            self.flush()
