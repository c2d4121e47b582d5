"""The safety gate: while an approval or a recall is in progress, no read starts its work.

Why: the safety lane (``flows.server.admission``) reserves a thread for a recall
or an approval, but a thread is not the CPU. Python runs one thread at a time
(the GIL, handed over every 5 ms), so a recall among sixteen readers got about
a seventeenth of the core, and it also waited for the ledger's write lock
while the batched read audits (``flows.server.audit_queue``) held it at that
same seventeenth. Measured with ``python -m bench server`` on the merged main:
approve probe p50 4.3 s under 16 readers against ``/v1/health`` 10 ms.

So the GIL-heavy work that is not safety passes through this gate:

- a request of the general or heavy lane is not admitted while the gate is
  closed (``passage``, awaited on the event loop: no thread held);
- a read already admitted waits before its work (``pause``, on its thread),
  and so does the next batch of read audits;
- the gate closes when a safety-lane request is admitted and opens when the
  last one in progress ends — or ``hold_max_s`` after it closed, whichever
  comes first: a recall that follows its vehicle down holds its request up to
  120 s, mostly asleep, and must not stop every read for that long.

Readers and audits wait at most ``hold_max_s`` in all; nothing is refused by
the gate. ``closed``/``held`` count how often it closed and how many waits it
caused (``/v1/health`` shows them).
"""

from __future__ import annotations

import asyncio
import threading
import time

__all__ = ["SafetyGate", "HOLD_MAX_S"]

#: The longest a safety request keeps reads out (seconds): its own CPU work takes far less; beyond this it is waiting.
HOLD_MAX_S = 2.0


class SafetyGate:
    """Closed while a safety request is in progress (at most ``hold_max_s`` at a time); see the module docstring.

    ``close``/``open`` are called on the event loop (the lanes' middleware); ``pause`` on worker threads;
    ``passage`` is awaited on the event loop.
    """

    def __init__(self, hold_max_s: float = HOLD_MAX_S) -> None:
        self.hold_max_s = hold_max_s
        self._lock = threading.Lock()
        self._open = threading.Event()
        self._open.set()
        self._aopen: asyncio.Event | None = None  # the same state for the event loop (made there, set there)
        self._active = 0
        self._closed_at = 0.0  # time.monotonic() when the gate last closed
        self.closed = 0  # how many times it closed
        self.held = 0  # how many requests or audit batches waited at it

    # ------------------------------------------------------------------ the safety side

    def close(self) -> None:
        """A safety request was admitted: keep new read work out until it ends (or ``hold_max_s``)."""
        with self._lock:
            self._active += 1
            if self._active == 1:
                self._closed_at = time.monotonic()
                self.closed += 1
                self._open.clear()
                if self._aopen is not None:
                    self._aopen.clear()

    def open(self) -> None:
        """A safety request ended: the gate opens when none is left in progress."""
        with self._lock:
            self._active = max(0, self._active - 1)
            if self._active == 0:
                self._open.set()
                if self._aopen is not None:
                    self._aopen.set()

    # ------------------------------------------------------------------ the readers' side

    def left_s(self) -> float:
        """How long the gate stays closed at most from now (0: it is open, or it has held its longest)."""
        if self._open.is_set():
            return 0.0
        return max(0.0, self._closed_at + self.hold_max_s - time.monotonic())

    def pause(self) -> float:
        """On a worker thread: wait while the gate is closed (at most until its hold ends); the seconds waited."""
        left = self.left_s()
        if left <= 0:
            return 0.0
        self.held += 1
        t0 = time.monotonic()
        self._open.wait(left)
        return time.monotonic() - t0

    async def passage(self) -> float:
        """On the event loop: wait while the gate is closed (no thread held); the seconds waited."""
        if self._aopen is None:
            self._aopen = asyncio.Event()
            if self._open.is_set():
                self._aopen.set()
        left = self.left_s()
        if left <= 0:
            return 0.0
        self.held += 1
        t0 = time.monotonic()
        try:
            async with asyncio.timeout(left):
                await self._aopen.wait()
        except TimeoutError:
            pass
        return time.monotonic() - t0

    def to_dict(self) -> dict[str, float | int | bool]:
        return {"open": self.left_s() <= 0, "closed": self.closed, "held": self.held, "hold_max_s": self.hold_max_s}
