"""Planning and reading: plan, replan, the drafts list, what is pending, one version, a diff, the log, files.

Every route runs the embedded authority's action (``RequestContext.authority``)
with the identity the token proved, on the server's clock, world and rule
set; a draft of another tenant is ``NOT_FOUND`` (checked on the request's one
read of it). A service token plans on behalf of the requester it names (the
requester recorded as asserted by that token; the token itself cannot approve),
and only within its own user's tenants and regions (the requester must plan
there too): the audit row names both, the requester as the actor and the
service token's user as the caller.
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

import base64
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import JSONResponse

from flows.authority.results import (DiffView, DraftList, DraftView, ExportSent, LogView, PendingView,
                                     ReportView)
from flows.server.models import PlanBody, ReplanBody
from flows.authority.interface import Actor
from flows.server.relay import refuse_administrator
from flows.errors import Forbidden
from planner.errors import SortieError

if TYPE_CHECKING:
    from flows.server.kit import Kit, RequestContext

__all__ = ["router"]

Version = Annotated[int | None, Query(ge=1, le=1_000_000)]


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()

    # ------------------------------------------------------------------ planning

    @r.post("/v1/plan")
    def plan(body: PlanBody, c: kit.Who) -> DraftView:  # type: ignore[name-defined]
        requester = c.caller.actor
        if body.on_behalf_of is not None:
            if "service" not in c.caller.token.scopes:
                raise Forbidden("only a service token (scope service; it cannot approve) plans on behalf of others")
            requester = Actor(body.on_behalf_of, "server", "asserted")  # the service says who asked; audited with it

        def work(ctx: "RequestContext") -> Any:
            if body.on_behalf_of is not None:  # refused inside the call: audited under the claimed name, with the caller
                refuse_administrator(ctx, body.on_behalf_of, "plan")
            return ctx.authority().plan(body.text, region_id=body.region_id, area=body.area,
                                        coverage_target=body.coverage_target, on_behalf_of=body.on_behalf_of)

        try:
            out = kit.call(c, "plan", "plan", body.model_dump(), work, actor=requester)
        except SortieError as exc:
            from flows.server.routes.requests import published_open

            published_open(kit, exc)  # kept as an open request: answered at /v1/requests/{id}/answers
            raise
        if out.get("created", True):
            kit.publish("draft.recorded", out)
            if out.get("status") == "DRAFT" and out.get("verdict") != "block":
                kit.publish("approval.needed", out)
        return out

    @r.post("/v1/drafts/{draft_id}/replan")
    def replan(draft_id: str, body: ReplanBody, c: kit.Who) -> DraftView:  # type: ignore[name-defined]
        def work(ctx: "RequestContext") -> Any:
            ctx.visible(draft_id)
            return ctx.authority().replan(draft_id)

        out = kit.call(c, "replan", "plan", {"draft_id": draft_id}, work, draft_id=draft_id)
        kit.publish("draft.recorded", out)
        return out

    # ------------------------------------------------------------------ reading

    # the list's shape is published, not checked row by row on every read (~0.02 ms a row, the readers' main read);
    # its rows are the DraftView that ``show`` checks. Sent as it is (``JSONResponse``): a dict returned under
    # ``response_model=None`` goes through FastAPI's pure-Python ``jsonable_encoder`` (a third of a list read's CPU,
    # issue 44's server bench)
    @r.get("/v1/drafts", response_model=None, responses={200: {"model": DraftList}})
    def drafts(c: kit.Who, limit: Annotated[int, Query(ge=1, le=1000)] = 50) -> JSONResponse:  # type: ignore[name-defined]
        return JSONResponse(kit.call(c, "drafts", "read", {"limit": limit}, lambda ctx: ctx.authority().drafts(limit)))

    @r.get("/v1/pending")
    def pending_list(c: kit.Who) -> PendingView:  # type: ignore[name-defined]
        """What waits for approval in the caller's tenants: approvers, deadline, time left (server clock)."""
        return kit.call(c, "pending", "read", {}, lambda ctx: ctx.authority().pending())

    def reading(command: str, draft_id: str, c: "RequestContext", args: dict[str, Any],
                read: Any) -> dict[str, Any]:
        def work(ctx: "RequestContext") -> Any:
            ctx.visible(draft_id)
            return read(ctx.authority())

        return kit.call(c, command, "read", {"draft_id": draft_id, **args}, work, draft_id=draft_id)

    @r.get("/v1/drafts/{draft_id}")
    def show(draft_id: str, c: kit.Who, version: Version = None) -> DraftView:  # type: ignore[name-defined]
        return reading("show", draft_id, c, {"version": version}, lambda a: a.show(draft_id, version))

    @r.get("/v1/drafts/{draft_id}/diff")
    def diff(draft_id: str, c: kit.Who, v1: Annotated[int, Query(ge=1, le=1_000_000)],  # type: ignore[name-defined]
             v2: Annotated[int, Query(ge=1, le=1_000_000)]) -> DiffView:
        return reading("diff", draft_id, c, {"v1": v1, "v2": v2}, lambda a: a.diff(draft_id, v1, v2))

    @r.get("/v1/drafts/{draft_id}/log")
    def log(draft_id: str, c: kit.Who) -> LogView:  # type: ignore[name-defined]
        return reading("log", draft_id, c, {}, lambda a: a.log(draft_id))

    @r.get("/v1/drafts/{draft_id}/export")
    def export(draft_id: str, c: kit.Who, format: Annotated[str, Query(max_length=20)],  # type: ignore[name-defined]  # noqa: A002
               version: Version = None, sortie: Annotated[int, Query(ge=0, le=1000)] = 0) -> ExportSent:
        def read(a: Any) -> dict[str, Any]:
            ver, data, suffix = a.export_content(draft_id, format, version=version, sortie=sortie)
            return a.s.stamp({"draft_id": draft_id, "version": ver, "format": format, "suffix": suffix,
                              "bytes": len(data), "content_b64": base64.b64encode(data).decode("ascii")})

        return reading("export", draft_id, c, {"format": format, "version": version}, read)

    @r.get("/v1/drafts/{draft_id}/report")
    def report(draft_id: str, c: kit.Who, version: Version = None) -> ReportView:  # type: ignore[name-defined]
        """The inspector's report, written on this host beside the version's files; its map as base64."""
        return reading("report", draft_id, c, {"version": version}, lambda a: a.report(draft_id, version))

    return r
