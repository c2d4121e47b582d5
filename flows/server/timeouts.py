"""How long a client may take to send a request: its headers (``HEADER_TIMEOUT_S``) and its body
(``BODY_TIMEOUT_S``, ``flows.server.http_errors.BodyLimit``).

Why (issue 38): a request whose body came slowly was held open forever, and so
was a connection that sent its headers a byte at a time (uvicorn's keep-alive
timer stops at the first byte of a request, and nothing times the rest). Each
such connection holds a socket and, for a body, a lane's place — enough of
them and the control room's requests wait. Now:

- ``timed_h11(seconds)`` is uvicorn's h11 protocol with a deadline for a
  request's headers: armed when the connection opens (and again after each
  response, counting the keep-alive wait), cancelled when the request line and
  headers are complete; a connection past it is closed, nothing answered (the
  request never began, so nothing is audited);
- ``BodyLimit`` reads a body within ``body_timeout_s`` of its first wait, else
  answers 408 ``REQUEST_TIMEOUT`` (audited as a refusal) and the connection ends.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["HEADER_TIMEOUT_S", "BODY_TIMEOUT_S", "timed_h11"]

#: A request's line and headers arrive within this long of the connection (or of the previous response).
HEADER_TIMEOUT_S = 10.0
#: A request's body arrives within this long of the first read of it.
BODY_TIMEOUT_S = 30.0


def timed_h11(header_timeout_s: float = HEADER_TIMEOUT_S) -> type:
    """uvicorn's h11 protocol, closing a connection whose request headers take longer than ``header_timeout_s``."""
    from uvicorn.protocols.http.h11_impl import H11Protocol  # (uvicorn is loaded only by a serving process)

    class TimedH11(H11Protocol):
        _headers_due: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm(header_timeout_s)

        def handle_events(self) -> None:
            cycle = self.cycle
            super().handle_events()
            if self.cycle is not None and self.cycle is not cycle:  # a request line and its headers arrived
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm(self.timeout_keep_alive + header_timeout_s)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self, seconds: float) -> None:
            self._disarm()
            self._headers_due = self.loop.call_later(seconds, self._headers_late)

        def _disarm(self) -> None:
            if self._headers_due is not None:
                self._headers_due.cancel()
                self._headers_due = None

        def _headers_late(self) -> None:
            self._headers_due = None
            if not self.transport.is_closing() and (self.cycle is None or self.cycle.response_complete):
                self.transport.close()

    return TimedH11
