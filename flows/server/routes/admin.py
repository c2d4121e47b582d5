"""Who is asking: liveness, and the caller's user, roles, tenants, token scopes and the policy applied."""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from flows.authority.results import WhoAmI
from flows.server.answers import HealthView

if TYPE_CHECKING:
    from flows.server.kit import Kit, RequestContext

__all__ = ["router"]


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()

    @r.get("/v1/health", responses={503: {"model": HealthView, "description": "the ledger is not the file held"}})
    async def health() -> HealthView:
        """Liveness (no data of anyone's): the server runs, and where its full walk of the ledger stands. Answered
        on the event loop, through no lane: it answers however busy the workers are. ``event_streams``: how many
        screens are subscribed to the events now (a count, nobody's data); ``safety_gate``: whether reads step aside
        for a recall or an approval now, and how often they did (``flows.server.gate``); ``vehicle_commands``: how many
        commands a crashed process left unanswered are still to settle, and how many were (``flows.server.rounds``)."""
        ledger = kit.ledger_problem()  # the file at the path is not the one held: 503, every transaction refused
        body = {"ok": ledger is None, **kit.integrity.to_dict(), "ledger": ledger or "ok",
                "event_streams": kit.bus.count(), "safety_gate": kit.gate.to_dict(), "vehicles": kit.vehicles(),
                "vehicle_commands": kit.settler.to_dict() if kit.settler is not None else None}
        return body if ledger is None else JSONResponse(body, status_code=503)  # type: ignore[return-value]

    @r.get("/v1/whoami")
    def whoami(c: kit.Who) -> WhoAmI:  # type: ignore[name-defined]
        def work(ctx: "RequestContext") -> dict[str, Any]:
            tok = ctx.caller.token
            return {**ctx.authority().whoami(), "scopes": sorted(tok.scopes), "token_id": tok.token_id,
                    "expires": tok.expires}

        return kit.call(c, "whoami", "read", {}, work)

    return r
