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

    return r
