"""Lanes: a recall or an approval never waits behind reads, plans, streams or long polls.

Why: the authority's handlers run on worker threads, and before this a
thousand event subscribers or a few dozen long polls filled the pool while a
recall or an approval waited in the same queue (issue 27: health timed out for
over a minute). This ASGI middleware admits each request into a lane before
the app sees it; a lane is a bounded number of requests in progress (an
asyncio semaphore: waiting for it holds no thread) and a bounded queue:

    stop     recall (return or land)                                            — reserved, never refused
    safety   approve, reject, cancel, dispatch, launch, pause, resume           — reserved, never shared
    heavy    plan, replan, report, ledger backup, reconcile                    — CPU-bound: a few at a time
    general  every other request (reads, whoami, expire, attempts, …)
    open     opening an event stream: held until its headers are sent, then the stream holds no lane
    —        /v1/health (answered on the event loop) and monitor long polls (their own route takes the
             general lane only around its thread work and waits for the flight without a thread)

The thread pool is sized to the sum of the lanes (``thread_tokens``), so the
safety lane always finds a thread however busy the others are; and while a
safety request is in progress no general or heavy request is admitted (the
safety gate, ``flows.server.gate``: a thread is not the CPU). A request
that finds its lane's queue full, or waits longer than ``wait_s``, is refused
at once with ``TOO_MANY_REQUESTS`` (HTTP 429, ``Retry-After``) — a busy
server says so, it never hangs. Each such refusal is reported to
``on_refused`` (the server audits it).

**A stop is never refused** (issue 38): a recall has a lane of its own
(``stop``) that no approval, dispatch or launch shares, with no queue limit and
no wait limit — a full server makes a recall wait its turn among recalls,
never answers it 429 — and it closes the safety gate like a safety request.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flows.errors import TooManyRequests
from flows.server.gate import SafetyGate

__all__ = ["Lane", "Lanes", "LaneSizes", "lane_of", "SAFETY_ACTIONS"]

SAFETY_ACTIONS = ("approve", "reject", "cancel", "dispatch", "launch", "pause", "resume", "recall")
_STOP = re.compile(r"^/v1/drafts/[^/]+/recall$")
_SAFETY = re.compile(r"^/v1/drafts/[^/]+/(?:" + "|".join(SAFETY_ACTIONS) + r")$")
#: The lanes that close the safety gate while a request of theirs is in progress.
CLOSING = ("safety", "stop")
_HEAVY = re.compile(r"^(?:/v1/plan|/v1/drafts/[^/]+/(?:replan|report|reconcile)|/v1/ledger/backup)$")
_MONITOR = re.compile(r"^/v1/drafts/[^/]+/monitor$")
#: The lanes whose requests wait at the safety gate before they are admitted.
GATED = ("general", "heavy")


def lane_of(method: str, path: str) -> str | None:
    """The lane a request goes through (None: not admitted through a lane)."""
    if path == "/v1/health" or _MONITOR.match(path):
        return None
    if path in ("/v1/events", "/v1/ops/stream"):
        return "open"
    if method == "POST" and _STOP.match(path):
        return "stop"
    if method == "POST" and _SAFETY.match(path):
        return "safety"
    if (method == "POST" and _HEAVY.match(path)) or (method == "GET" and path.endswith("/report")):
        return "heavy"
    return "general"


@dataclass(frozen=True)
class LaneSizes:
    """Requests in progress per lane, requests that may wait for each, and for how long."""

    stop: int = 8  # recalls only; a recall that follows its vehicle down holds its request up to 120 s
    safety: int = 16
    heavy: int = 2
    general: int = 4  # DuckDB releases the GIL: a few in progress keep both cores busy; more only queue for the GIL
    open: int = 8
    queue: int = 256
    wait_s: float = 30.0

    def thread_tokens(self) -> int:
        """Worker threads enough for every lane at once, plus a few for the long polls' short thread work."""
        return self.stop + self.safety + self.heavy + self.general + self.open + 4


@dataclass
class Lane:
    """A bounded number of requests in progress and a bounded queue in front of them."""

    name: str
    size: int
    queue: int | None  # None: no limit (the stop lane)
    wait_s: float | None  # None: no limit
    waiting: int = 0
    busy: int = 0
    admitted: int = 0
    refused: int = 0
    _sem: asyncio.Semaphore | None = field(default=None, repr=False)

    async def enter(self) -> None:
        if self._sem is None:
            self._sem = asyncio.Semaphore(self.size)
        if self.queue is not None and self.waiting >= self.queue:
            self.refused += 1
            raise TooManyRequests(f"{self.waiting} requests already wait for the {self.name} lane: try again shortly",
                                  details={"lane": self.name, "retry_after_s": 2})
        self.waiting += 1
        try:
            async with asyncio.timeout(self.wait_s):  # (None: no timeout)
                await self._sem.acquire()
        except TimeoutError:
            self.refused += 1
            raise TooManyRequests(f"the {self.name} lane stayed full for {self.wait_s:g} s: try again shortly",
                                  details={"lane": self.name, "retry_after_s": 5}) from None
        finally:
            self.waiting -= 1
        self.busy += 1
        self.admitted += 1

    def leave(self) -> None:
        self.busy -= 1
        assert self._sem is not None
        self._sem.release()

    def to_dict(self) -> dict[str, int]:
        return {"size": self.size, "busy": self.busy, "waiting": self.waiting, "admitted": self.admitted,
                "refused": self.refused}


class Lanes:
    """Pure ASGI middleware admitting each HTTP request into its lane (``lane_of``)."""

    def __init__(self, app: Any, sizes: LaneSizes = LaneSizes(),
                 on_refused: Callable[[dict[str, Any], TooManyRequests], None] | None = None,
                 gate: SafetyGate | None = None) -> None:
        self.app = app
        self.sizes = sizes
        self.on_refused = on_refused
        self.gate = gate if gate is not None else SafetyGate()
        self.lanes = {name: Lane(name, getattr(sizes, name), sizes.queue, sizes.wait_s)
                      for name in ("safety", "heavy", "general", "open")}
        self.lanes["stop"] = Lane("stop", sizes.stop, None, None)  # never refused

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        name = lane_of(scope.get("method", "GET"), scope.get("path", ""))
        if name is None:
            await self.app(scope, receive, send)
            return
        lane = self.lanes[name]
        if name in GATED:
            await self.gate.passage()  # no read starts while a safety request is in progress (flows.server.gate)
        try:
            await lane.enter()
        except TooManyRequests as exc:
            if self.on_refused is not None:
                self.on_refused(scope, exc)
            await _refuse(send, exc)
            return
        held = True
        if name in CLOSING:
            self.gate.close()

        def release() -> None:
            nonlocal held
            if held:
                held = False
                lane.leave()
                if name in CLOSING:
                    self.gate.open()

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                release()  # an event stream holds its lane only until its headers go out
            await send(message)

        try:
            await self.app(scope, receive, sending if name == "open" else send)
        finally:
            release()

    def to_dict(self) -> dict[str, Any]:
        return {name: lane.to_dict() for name, lane in self.lanes.items()}


async def _refuse(send: Any, exc: TooManyRequests) -> None:
    retry = str(int((exc.details or {}).get("retry_after_s", 5)))
    body = json.dumps({"error": exc.to_dict()}).encode()
    await send({"type": "http.response.start", "status": 429,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"retry-after", retry.encode())]})
    await send({"type": "http.response.body", "body": body})
