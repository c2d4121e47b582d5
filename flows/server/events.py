"""Live events for a control-room screen or a chat bot: an in-process bus the API publishes to.

The server is the only writer of the ledger, so every change passes through
it: after a use case succeeds, the API publishes one event (draft recorded,
approval needed, approved, rejected, dispatched, …). ``GET /events`` streams
them as Server-Sent Events to each subscriber, filtered to the tenants the
subscriber's user may see. A slow subscriber's queue is bounded; when it is
full the oldest event is dropped for that subscriber only (the ledger, not
this stream, is the record).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Event", "EventBus", "Subscription", "sse"]


@dataclass(frozen=True)
class Event:
    """One thing that happened: a type, the tenant it belongs to, and its data."""

    id: int
    type: str
    tenant: str | None
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(eq=False)
class Subscription:
    """One subscriber: an asyncio queue on the event loop that serves its stream.

    Waiting on it holds no thread (issue 27: each subscriber used to poll a thread-safe queue ten times a second,
    and 300 idle subscribers were 3,000 wake-ups a second on two cores). ``publish`` runs on worker threads and
    hands each event to the loop with ``call_soon_threadsafe``.
    """

    loop: asyncio.AbstractEventLoop
    queue: asyncio.Queue[Event]
    dropped: int = 0

    def offer(self, ev: Event) -> None:
        """On the loop: queue ``ev``; a full queue drops its oldest event for this subscriber only."""
        if self.queue.full():
            try:
                self.queue.get_nowait()
                self.dropped += 1
            except asyncio.QueueEmpty:
                pass
        self.queue.put_nowait(ev)


class EventBus:
    """Fan-out of events to subscribers (``publish`` is thread-safe; subscribers wait on the event loop)."""

    def __init__(self, max_queue: int = 1000) -> None:
        self._lock = threading.Lock()
        self._subs: list[Subscription] = []
        self._ids = itertools.count(1)
        self.max_queue = max_queue

    def publish(self, type_: str, tenant: str | None, data: dict[str, Any]) -> Event:
        with self._lock:
            ev = Event(next(self._ids), type_, tenant, data)
            subs = list(self._subs)
        for sub in subs:
            try:
                sub.loop.call_soon_threadsafe(sub.offer, ev)
            except RuntimeError:  # its loop is closed (the server is stopping)
                pass
        return ev

    def subscribe(self) -> Subscription:
        """A new subscriber on the running event loop (call it from the loop)."""
        sub = Subscription(asyncio.get_running_loop(), asyncio.Queue(self.max_queue))
        with self._lock:
            self._subs.append(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs.remove(sub)

    def count(self) -> int:
        with self._lock:
            return len(self._subs)


def sse(ev: Event) -> str:
    """One Server-Sent Events message."""
    payload = json.dumps({"type": ev.type, "tenant": ev.tenant, **ev.data}, ensure_ascii=False, sort_keys=True)
    return f"id: {ev.id}\nevent: {ev.type}\ndata: {payload}\n\n"
