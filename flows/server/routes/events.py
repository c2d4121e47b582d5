"""The live feed: Server-Sent Events of the caller's tenants (drafts, approvals, dispatches, flights).

Every change the authority records is published on its in-process bus
(``flows.server.events``) after the use case succeeded; this streams the
events a caller's user may see, bounded in count and time, with keep-alive
comments while nothing happens. A stream holds no worker thread: the
caller's user is looked up on a worker thread once (the world cache), then
the stream waits on its asyncio queue; a token holds at most its share of
streams (``flows.server.token_quotas``: ``TOO_MANY_REQUESTS`` beyond it). Opening a
stream is audited (``server.events``, batched like every read). A stream whose
token is revoked or expires ends within a second with a ``session.ended``
event naming why (``flows.server.sessions``).
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

import asyncio
import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from flows.errors import Forbidden
from flows.server.events import Event, sse

if TYPE_CHECKING:
    from flows.server.kit import Kit

__all__ = ["router", "KEEPALIVE_S", "SESSION_ENDED"]

#: The last event of a stream whose token was revoked or expired while it was open (``flows.server.sessions``).
SESSION_ENDED = "session.ended"

#: A comment line this often while nothing happens (proxies close idle connections; a client sees the server lives).
KEEPALIVE_S = 10.0


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()

    @r.get("/v1/events")
    async def events(c: kit.Who,  # type: ignore[name-defined]
                     max_events: Annotated[int, Query(ge=1, le=100000)] = 100000,
                     timeout_s: Annotated[float, Query(gt=0, le=86400)] = 86400) -> StreamingResponse:
        """Server-Sent Events of the caller's tenants: draft.recorded, approval.needed, draft.approved, …,
        dispatch.acked, flight.in_flight, flight.finished."""
        if "read" not in c.caller.token.scopes:
            raise Forbidden("this token may not read")
        u = await anyio.to_thread.run_sync(c.user, "follow events")  # the world: never loaded on the event loop
        token_id = c.caller.token.token_id
        kit.limits.acquire(kit.limits.stream, token_id)  # TOO_MANY_REQUESTS beyond this token's share
        sub = kit.bus.subscribe()
        c.audited = True
        kit.audit(c.caller.actor.id, "events", {"max_events": max_events, "timeout_s": timeout_s, "token_id": token_id},
                  "OK", time.perf_counter(), datetime.now(timezone.utc), "token", token_id=token_id,
                  client_addr=c.caller.client_addr, batch=True)
        held = [True]
        # the token revoked or expired while the stream is open: its end is the stream's next event
        forget = kit.sessions.hold(token_id, lambda why: sub.offer(Event(0, SESSION_ENDED, None, {"reason": why})))

        def release() -> None:  # once, whichever comes first: the stream's end, or a client gone before it began
            if held[0]:
                held[0] = False
                forget()
                kit.bus.unsubscribe(sub)
                kit.limits.release(kit.limits.stream, token_id)

        async def stream() -> Any:
            loop = asyncio.get_running_loop()
            sent, deadline = 0, loop.time() + timeout_s
            try:
                yield ": sortie events\n\n"
                while sent < max_events:
                    left = deadline - loop.time()
                    if left <= 0:
                        return
                    try:
                        ev = await asyncio.wait_for(sub.queue.get(), min(KEEPALIVE_S, left))
                    except TimeoutError:
                        yield ": keep-alive\n\n"
                        continue
                    if ev.type == SESSION_ENDED:
                        yield sse(ev)  # said, then closed: the token holds nothing open any more
                        return
                    if ev.tenant is None or ev.tenant in u.tenants or "*" in u.tenants:
                        sent += 1
                        yield sse(ev)
            finally:
                release()

        return StreamingResponse(stream(), media_type="text/event-stream", background=BackgroundTask(release),
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    return r
