"""Sessions end when their token does: an open event stream or long poll ends within a second of its token being
revoked or expiring.

Why (issue 38): a stream looked its user up once, when it opened: a revoked or
expired token kept its open event stream (and so every event of its tenants)
for as long as the client held it. Now every stream and long poll registers
its token here (``hold``), and one task on the server's event loop
(``watch``) asks the token store every ``CHECK_S`` whether each registered
token still holds (``TokenStore.ended``: revoked, expired or gone — the store
is parsed again only when a ``stat`` says the file changed); for a token that
ended, each of its sessions' ``end`` is called on the loop, which closes the
stream (or answers the poll) with the reason. One check per token, whatever
the number of its streams: nothing wakes per stream.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

__all__ = ["Sessions", "CHECK_S"]

_log = logging.getLogger("sortie.server")
#: How often the tokens of open sessions are checked: a revoked token's stream ends within this (plus a hop).
CHECK_S = 0.5


class Sessions:
    """The open streams and long polls of each token (used on the event loop only)."""

    def __init__(self, ended: Callable[[str], str | None]) -> None:
        self._ended = ended
        self._open: dict[str, dict[int, Callable[[str], None]]] = {}
        self._next = 0

    def hold(self, token_id: str, end: Callable[[str], None]) -> Callable[[], None]:
        """Register a session of ``token_id``; ``end(why)`` is called once if the token ends first. Returns the
        call that forgets it (when the session ends by itself)."""
        self._next += 1
        key = self._next
        self._open.setdefault(token_id, {})[key] = end

        def forget() -> None:
            held = self._open.get(token_id)
            if held is not None:
                held.pop(key, None)
                if not held:
                    self._open.pop(token_id, None)

        return forget

    def count(self) -> int:
        return sum(len(v) for v in self._open.values())

    def check(self) -> list[str]:
        """End the sessions of every registered token that ended; returns those tokens' ids."""
        gone = []
        for token_id in list(self._open):
            try:
                why = self._ended(token_id)
            except Exception as exc:  # noqa: BLE001 - an unreadable token file: keep the sessions, say so
                _log.warning("token %s could not be checked: %s", token_id, exc)
                continue
            if why is None:
                continue
            gone.append(token_id)
            for end in list(self._open.pop(token_id, {}).values()):
                end(why)
        return gone

    async def watch(self, every_s: float = CHECK_S) -> Any:
        """Check the tokens every ``every_s`` until cancelled (the app's lifespan runs it)."""
        while True:
            await asyncio.sleep(every_s)
            if self._open:
                self.check()
