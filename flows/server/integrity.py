"""The full walk of the ledger after the server starts, and what a break found by it stops.

Why: the server starts on the check since the last signed checkpoint
(``verify_ledger(full=False)``: its cost does not grow with history), so an
entry *before* that checkpoint edited in place is found only by a full walk
(``sortie ledger verify``, a backup, the pre-dispatch check of that very
draft). This module runs that full walk once on a thread of the server as
soon as it serves — on one snapshot of the held ledger, while requests read
and write — and records a clean walk as a new checkpoint.

A break stops what would act on a tampered record: approving, dispatching and
launching are refused with ``LEDGER_TAMPERED`` (the break named) until the
ledger is restored and the server restarted. Recall, pause, resume, reject,
cancel and reads go on: refusing a recall because the record was edited
would make a flight less safe, not more. ``/v1/health`` reports the walk's
state (``integrity``: ``walking``, ``ok`` or ``broken``).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from flows.errors import LedgerTampered
from flows.ledger import Ledger
from planner.errors import SortieError

__all__ = ["IntegrityWatch", "DECISIONS"]

#: The requests a broken ledger refuses (command names of ``Kit.call``).
DECISIONS = frozenset({"approve", "dispatch", "launch"})

_log = logging.getLogger("sortie.server")


class IntegrityWatch:
    """The state of the server's full walk: ``walking`` → ``ok`` | ``broken`` (or ``off``)."""

    def __init__(self) -> None:
        self.state = "off"
        self.error: LedgerTampered | None = None
        self.seconds: float | None = None
        self._thread: threading.Thread | None = None

    def start(self, ledger: Ledger, delay_s: float = 0.0) -> None:
        """Walk the whole ledger on a thread (after ``delay_s``: the first answers come first)."""
        self.state = "walking"

        def walk() -> None:
            from flows.integrity.verify import verify_ledger

            time.sleep(delay_s)
            t0 = time.monotonic()
            try:
                verify_ledger(ledger, full=True)
                self.state = "ok"
            except LedgerTampered as exc:
                self.error, self.state = exc, "broken"
                _log.error("the full walk of the ledger found a break; approvals, dispatches and launches are "
                           "refused: %s", exc.message)
            except SortieError as exc:  # the ledger could not be read now: nothing proven either way
                self.state = "unknown"
                _log.warning("the full walk of the ledger did not finish: %s", exc.message)
            finally:
                self.seconds = round(time.monotonic() - t0, 3)

        self._thread = threading.Thread(target=walk, name="sortie-full-walk", daemon=True)
        self._thread.start()

    def join(self, timeout_s: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout_s)

    def check(self, command: str) -> None:
        """``LEDGER_TAMPERED`` for a decision while the walk has found a break."""
        if command in DECISIONS and self.error is not None:
            raise LedgerTampered(f"{command} refused: {self.error.message}", details=self.error.details)

    def to_dict(self) -> dict[str, Any]:
        return {"integrity": self.state, "full_walk_s": self.seconds}
