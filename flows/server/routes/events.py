"""The live feed: Server-Sent Events of the caller's tenants (drafts, approvals, dispatches, flights).

Every change the authority records is published on its in-process bus
(``flows.server.events``) after the use case succeeded; this streams the
events a caller's user may see, bounded in count and time, with keep-alive
comments while nothing happens.
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

import asyncio
import queue
import time
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from flows.server.events import sse
from planner.errors import Forbidden

if TYPE_CHECKING:
    from flows.server.kit import Kit

__all__ = ["router"]


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()

    @r.get("/v1/events")
    async def events(request: Request, c: kit.Who,  # type: ignore[name-defined]
                     max_events: Annotated[int, Query(ge=1, le=100000)] = 100000,
                     timeout_s: Annotated[float, Query(gt=0, le=86400)] = 86400) -> StreamingResponse:
        """Server-Sent Events of the caller's tenants: draft.recorded, approval.needed, draft.approved, …,
        dispatch.acked, flight.in_flight, flight.finished."""
        if "read" not in c.caller.token.scopes:
            raise Forbidden("this token may not read")
        u = c.user("follow events")
        q = kit.bus.subscribe()

        async def stream() -> Any:
            sent, deadline, last = 0, time.monotonic() + timeout_s, time.monotonic()
            try:
                yield ": sortie events\n\n"
                while sent < max_events and time.monotonic() < deadline:
                    if await request.is_disconnected():
                        return
                    try:
                        ev = q.get_nowait()
                    except queue.Empty:
                        if time.monotonic() - last > 10:
                            last = time.monotonic()
                            yield ": keep-alive\n\n"
                        await asyncio.sleep(0.1)
                        continue
                    if ev.tenant is None or ev.tenant in u.tenants or "*" in u.tenants:
                        sent += 1
                        yield sse(ev)
            finally:
                kit.bus.unsubscribe(q)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    return r
