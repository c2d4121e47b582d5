"""The live operations page (``GET /ops``) and what it reads: the map, the flights, one live stream.

The page is static (``flows/server/ops/static``: HTML, one script, one style sheet; no CDN, no tile server, no
inline script, so its Content-Security-Policy allows only this origin). A person signs in on it with their own
token (kept in the browser tab's session storage, sent as ``Authorization: Bearer``), and everything it shows
or does goes through the authority with that person's identity:

    GET /v1/ops/map      the world's regions, lanes, geozones and docks of the person's tenants (``ops.map``)
    GET /v1/ops/flights  the drafts of their tenants that are dispatched or flying, each with its sorties and
                         the track each drone flew so far
    GET /v1/ops/stream   Server-Sent Events: ``hello`` (who), then ``fleet`` once a second (every drone of the
                         person's tenants, live from the hub: ``flows.server.ops.live``) and every event of the
                         authority's feed for their tenants (approvals, dispatches, ``flight.*`` with the
                         flight's progress, ``fleet.*`` alerts: battery, intrusion, offline)

Approvals, rejections and stops are the API's own routes (``/v1/pending``, ``/v1/drafts/{id}/approve`` with the
person's one-time code, ``/reject``, ``/recall``, ``/pause``, ``/resume``), called by the page with the
person's token: nothing here acts. The stream is bounded like ``/v1/events`` (the token's share of streams, a
time limit) and ends within a second of its token being revoked or expiring (``flows.server.sessions``).
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

import asyncio
import json
import time
from datetime import datetime, timezone
from importlib import resources
from typing import TYPE_CHECKING, Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, Query
from fastapi.responses import Response, StreamingResponse
from starlette.background import BackgroundTask

from flows.errors import Forbidden
from flows.server.answers import OpsFlights, OpsMap
from flows.server.events import Event, sse
from flows.server.ops.live import Tracks, drone_row
from flows.server.ops.map import ops_map
from flows.server.routes.events import SESSION_ENDED
from planner.errors import NotFound

if TYPE_CHECKING:
    from flows.server.kit import Kit, RequestContext

__all__ = ["router", "TICK_S", "ACTIVE_STATES", "STATIC_FILES"]

#: How often the stream sends the fleet (and checks its token).
TICK_S = 1.0
#: A draft in one of these states is a flight the page follows (LINK_LOST: it may still be flying).
ACTIVE_STATES = frozenset({"DISPATCHED", "LAUNCHED", "IN_FLIGHT", "PAUSED", "RECALLING", "LINK_LOST", "TURNAROUND"})
#: How many of the latest drafts the flights list looks at (the ledger's newest first).
RECENT_DRAFTS = 200
#: The page's files and their types: nothing else is served from the folder.
STATIC_FILES = {"ops.js": "text/javascript; charset=utf-8", "ops.css": "text/css; charset=utf-8"}
_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


def _static(name: str) -> bytes:
    return resources.files("flows.server.ops").joinpath("static", name).read_bytes()


def _page_headers() -> dict[str, str]:
    return {"Content-Security-Policy": _CSP, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer"}


def _flight(d: dict[str, Any], tracks: dict[str, list[list[float]]]) -> dict[str, Any]:
    drones = sorted({str(s["drone"]) for s in d.get("sorties", []) if s.get("drone")})
    return {"draft_id": d["draft_id"], "version": d["version"], "state": d.get("status"), "tenant": d.get("tenant"),
            "region_id": d.get("region_id"), "mission_type": d.get("mission_type"),
            "requested_by": d.get("requested_by"), "request_text": d.get("request_text"),
            "sorties": d.get("sorties", []), "drones": drones,
            "flown": {k: v for k, v in tracks.items() if k in drones}}


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()
    tracks = Tracks()

    @r.get("/ops", include_in_schema=False)
    def page() -> Response:
        """The operations page (static; it signs in with the person's own token)."""
        return Response(_static("index.html"), media_type="text/html; charset=utf-8", headers=_page_headers())

    @r.get("/ops/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        if name not in STATIC_FILES:
            raise NotFound(f"no such file of the operations page: {name!r}")
        return Response(_static(name), media_type=STATIC_FILES[name], headers=_page_headers())

    @r.get("/v1/ops/map")
    def ops_map_route(c: kit.Who) -> OpsMap:  # type: ignore[name-defined]
        """The world as a map for the caller's tenants: regions, lanes, geozones (applying now or not), docks."""
        def work(ctx: "RequestContext") -> dict[str, Any]:
            u = ctx.user("see the map")
            return ops_map(ctx.world, u.tenants, ctx.now)

        return kit.call(c, "ops.map", "read", {}, work)

    @r.get("/v1/ops/flights")
    def flights(c: kit.Who) -> OpsFlights:  # type: ignore[name-defined]
        """The caller's tenants' flights that are dispatched or flying, newest first, each with the track each of
        its drones flew since it last armed (a flight that ends is told on the stream: ``flight.finished``)."""
        def work(ctx: "RequestContext") -> dict[str, Any]:
            ctx.user("see flights")
            rows = ctx.authority().drafts(limit=RECENT_DRAFTS)["drafts"]
            keep = [d for d in rows if d.get("status") in ACTIVE_STATES]
            if kit.hub is not None:
                tracks.sample(kit.hub.snapshot(), time.monotonic())
            drones = {str(s["drone"]) for d in keep for s in d.get("sorties", []) if s.get("drone")}
            flown = tracks.of(drones)
            return {"flights": [_flight(d, flown) for d in keep]}

        return kit.call(c, "ops.flights", "read", {}, work)

    @r.get("/v1/ops/stream")
    async def stream(c: kit.Who,  # type: ignore[name-defined]
                     timeout_s: Annotated[float, Query(gt=0, le=86400)] = 43200) -> StreamingResponse:
        """The page's live stream: ``hello``, then ``fleet`` every second and the feed's events of the caller's
        tenants; it ends when ``timeout_s`` passes, or within a second of the token being revoked or expiring
        (``session.ended``, ``flows.server.sessions``)."""
        if "read" not in c.caller.token.scopes:
            raise Forbidden("this token may not read")

        def who() -> tuple[Any, dict[str, Any]]:
            u = c.user("watch the fleet")
            return u, {d.id: d for d in c.world.drones if "*" in u.tenants or d.tenant in u.tenants}

        u, drones = await anyio.to_thread.run_sync(who)
        token_id = c.caller.token.token_id
        kit.limits.acquire(kit.limits.stream, token_id)
        sub = kit.bus.subscribe()
        c.audited = True
        kit.audit(c.caller.actor.id, "ops.stream", {"timeout_s": timeout_s, "token_id": token_id}, "OK",
                  time.perf_counter(), datetime.now(timezone.utc), "token", token_id=token_id,
                  client_addr=c.caller.client_addr, batch=True)
        held = [True]
        forget = kit.sessions.hold(token_id, lambda why: sub.offer(Event(0, SESSION_ENDED, None, {"reason": why})))

        def release() -> None:
            if held[0]:
                held[0] = False
                forget()
                kit.bus.unsubscribe(sub)
                kit.limits.release(kit.limits.stream, token_id)

        def fleet_event() -> str:
            live = {} if kit.hub is None else kit.hub.snapshot()
            tracks.sample(live, time.monotonic())
            rows = [drone_row(d, live.get(i)) for i, d in sorted(drones.items())]
            return _message("fleet", {"server_time": kit.config.clock.now().isoformat(), "drones": rows})

        async def body() -> Any:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + timeout_s
            try:
                yield _message("hello", {"user": u.id, "name": u.name, "roles": sorted(u.roles),
                                         "tenants": sorted(u.tenants), "drones": sorted(drones)})
                while loop.time() < deadline:
                    yield fleet_event()
                    tick_end = min(deadline, loop.time() + TICK_S)
                    while (left := tick_end - loop.time()) > 0:
                        try:
                            ev = await asyncio.wait_for(sub.queue.get(), left)
                        except TimeoutError:
                            break
                        if ev.type == SESSION_ENDED:
                            yield sse(ev)  # said, then closed
                            return
                        if ev.tenant is None or ev.tenant in u.tenants or "*" in u.tenants:
                            yield sse(ev)
            finally:
                release()

        return StreamingResponse(body(), media_type="text/event-stream", background=BackgroundTask(release),
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    return r


def _message(kind: str, data: dict[str, Any]) -> str:
    """One Server-Sent Events message of the page's own (no id: the feed's events keep theirs)."""
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False, sort_keys=True)}\n\n"

