"""The fleet as the authority sees it: ``GET /v1/fleet`` (the caller's tenants only).

With the vehicle hub (``sortie server``'s default, ``--fleet live``) each
drone's status, battery, position, mode, armed flag and last heartbeat come
from its vehicle over the link the server holds, stamped on the server's
clock (``source: live``), with the link's fault named when it has one; with
``--fleet file`` they are the world file's (``source: file``), as in the
embedded mode. The same rows are what planning and the dispatch re-check
judged in this request (``RequestContext.world``).
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter

from flows.server.models import ClearBody
from planner.errors import Forbidden, NotFound

if TYPE_CHECKING:
    from flows.server.kit import Kit

__all__ = ["router"]


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()

    @r.get("/v1/fleet")
    def fleet(c: kit.Who) -> dict[str, Any]:  # type: ignore[name-defined]
        """Each drone of the caller's tenants: id, status, battery_pct, position, mode, armed, last_seen, source,
        fault."""
        return kit.call(c, "fleet", "read", {}, lambda ctx: ctx.authority().fleet())

    @r.post("/v1/fleet/{drone_id}/clear")
    def clear(drone_id: str, body: ClearBody, c: kit.Who) -> dict[str, Any]:  # type: ignore[name-defined]
        """Release a drone held after foreign control (``HELD``, fault INTRUSION): an operator looked and says why
        (a dispatcher or admin of its tenant; scope dispatch). Recorded in the ledger; ``fleet.cleared`` event."""
        def work(ctx: "RequestContext") -> dict[str, Any]:
            u = ctx.user("clear a held drone")
            drone = ctx.world.drone(drone_id)
            if drone.tenant not in u.tenants and "*" not in u.tenants:
                raise NotFound(f"drone {drone_id!r} is not in the fleet")
            if not u.may("dispatcher", drone.tenant):
                raise Forbidden(f"{u.id} may not clear {drone_id}: a dispatcher or admin of {drone.tenant} may")
            if kit.hub is None:
                raise NotFound("this server holds no vehicle links (--fleet file): nothing is held")
            return kit.hub.clear(drone_id, by=u.id, reason=body.reason)

        return kit.call(c, "fleet.clear", "dispatch", {"drone_id": drone_id, "reason": body.reason}, work)

    return r
