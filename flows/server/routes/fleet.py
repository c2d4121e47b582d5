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

from flows.authority.results import FleetView, HeldCleared, VehicleHolds
from flows.server.links import resolve_links
from flows.server.models import ClearBody, ReadVehicleBody

if TYPE_CHECKING:
    from flows.server.kit import Kit, RequestContext

__all__ = ["router"]


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()

    @r.get("/v1/fleet")
    def fleet(c: kit.Who) -> FleetView:  # type: ignore[name-defined]
        """Each drone of the caller's tenants: id, status, battery_pct, position, mode, armed, last_seen, source,
        fault."""
        return kit.call(c, "fleet", "read", {}, lambda ctx: ctx.authority().fleet())

    @r.post("/v1/fleet/{drone_id}/read")
    def read_vehicle(drone_id: str, body: ReadVehicleBody, c: kit.Who) -> VehicleHolds:  # type: ignore[name-defined]
        """What the drone's vehicle holds (fence, mission, rally), read back through the server's own link (the hub's,
        when it holds one); uploads nothing. The dispatcher role for the drone's tenant."""
        def work(ctx: "RequestContext") -> dict[str, Any]:
            link = resolve_links(ctx.world, kit.links, [drone_id], body.link)[drone_id]
            return ctx.authority().read_vehicle(drone_id, link=link, timeout_s=body.timeout_s)

        return kit.call(c, "read-vehicle", "dispatch", {"drone_id": drone_id, **body.model_dump()}, work)

    @r.post("/v1/fleet/{drone_id}/clear")
    def clear(drone_id: str, body: ClearBody, c: kit.Who) -> HeldCleared:  # type: ignore[name-defined]
        """Release a drone held after foreign control (``HELD``, fault INTRUSION): an operator looked and says why
        (a dispatcher or admin of its tenant; scope dispatch). Recorded in the ledger; ``fleet.cleared`` event."""
        return kit.call(c, "fleet.clear", "dispatch", {"drone_id": drone_id, "reason": body.reason},
                        lambda ctx: ctx.authority().clear_held(drone_id, reason=body.reason))

    return r
