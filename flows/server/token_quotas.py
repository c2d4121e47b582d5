"""Per-token limits on what a caller may hold open: event streams and long polls.

Why: an event stream or a ``monitor`` long poll holds a connection (and its
state) for seconds to hours while costing almost nothing per second. A
client in a loop, a leaked token or a dashboard opened a hundred times could
hold thousands of them and starve everyone else. Each token may hold at most
``per_token`` of each kind at once, and the server ``total`` of each kind;
one more is ``TOO_MANY_REQUESTS`` (HTTP 429) at once — never a request left
hanging — and is audited like every refusal.

Counted after the token is verified, so a forged token can never use up
someone else's share.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from flows.errors import TooManyRequests

__all__ = ["Limit", "TokenLimits", "STREAMS_PER_TOKEN", "POLLS_PER_TOKEN"]

STREAMS_PER_TOKEN = 16
POLLS_PER_TOKEN = 16
STREAMS_TOTAL = 2000
POLLS_TOTAL = 500


@dataclass(frozen=True)
class Limit:
    """How many of one kind a token, and the whole server, may hold at once."""

    kind: str
    per_token: int
    total: int


class TokenLimits:
    """Counters of open streams and polls, per token and in total (thread-safe)."""

    def __init__(self, streams_per_token: int = STREAMS_PER_TOKEN, polls_per_token: int = POLLS_PER_TOKEN,
                 streams_total: int = STREAMS_TOTAL, polls_total: int = POLLS_TOTAL) -> None:
        self.stream = Limit("event streams", streams_per_token, streams_total)
        self.poll = Limit("long polls", polls_per_token, polls_total)
        self._lock = threading.Lock()
        self._held: dict[tuple[str, str], int] = {}
        self._total: dict[str, int] = {}

    def acquire(self, limit: Limit, token_id: str) -> None:
        """Take one of ``limit`` for ``token_id``, or ``TOO_MANY_REQUESTS``."""
        with self._lock:
            mine = self._held.get((limit.kind, token_id), 0)
            total = self._total.get(limit.kind, 0)
            if mine >= limit.per_token:
                raise TooManyRequests(
                    f"this token already holds {mine} {limit.kind} (at most {limit.per_token} at once): close one "
                    "first", details={"limit": limit.per_token, "kind": limit.kind, "retry_after_s": 5})
            if total >= limit.total:
                raise TooManyRequests(f"the server holds {total} {limit.kind}, its most: try again shortly",
                                      details={"limit": limit.total, "kind": limit.kind, "retry_after_s": 5})
            self._held[(limit.kind, token_id)] = mine + 1
            self._total[limit.kind] = total + 1

    def release(self, limit: Limit, token_id: str) -> None:
        with self._lock:
            key = (limit.kind, token_id)
            n = self._held.get(key, 0) - 1
            if n > 0:
                self._held[key] = n
            else:
                self._held.pop(key, None)
            self._total[limit.kind] = max(0, self._total.get(limit.kind, 0) - 1)

    @contextmanager
    def holding(self, limit: Limit, token_id: str) -> Iterator[None]:
        self.acquire(limit, token_id)
        try:
            yield
        finally:
            self.release(limit, token_id)

    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._total)
