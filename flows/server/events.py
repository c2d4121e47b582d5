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

import itertools
import json
import queue
import threading
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Event", "EventBus", "sse"]


@dataclass(frozen=True)
class Event:
    """One thing that happened: a type, the tenant it belongs to, and its data."""

    id: int
    type: str
    tenant: str | None
    data: dict[str, Any] = field(default_factory=dict)


class EventBus:
    """Fan-out of events to subscriber queues (thread-safe; the API's handlers run in a thread pool)."""

    def __init__(self, max_queue: int = 1000) -> None:
        self._lock = threading.Lock()
        self._subs: list[queue.Queue[Event]] = []
        self._ids = itertools.count(1)
        self.max_queue = max_queue

    def publish(self, type_: str, tenant: str | None, data: dict[str, Any]) -> Event:
        with self._lock:
            ev = Event(next(self._ids), type_, tenant, data)
            subs = list(self._subs)
        for q in subs:
            try:
                q.put_nowait(ev)
            except queue.Full:
                try:
                    q.get_nowait()
                    q.put_nowait(ev)
                except (queue.Empty, queue.Full):
                    pass
        return ev

    def subscribe(self) -> queue.Queue[Event]:
        q: queue.Queue[Event] = queue.Queue(self.max_queue)
        with self._lock:
            self._subs.append(q)
        return q

    def unsubscribe(self, q: queue.Queue[Event]) -> None:
        with self._lock:
            if q in self._subs:
                self._subs.remove(q)


def sse(ev: Event) -> str:
    """One Server-Sent Events message."""
    payload = json.dumps({"type": ev.type, "tenant": ev.tenant, **ev.data}, ensure_ascii=False, sort_keys=True)
    return f"id: {ev.id}\nevent: {ev.type}\ndata: {payload}\n\n"
