"""Open requests: a request that needs clarification, read and answered through the authority.

``POST /v1/plan`` refuses a request that needs clarification with
``NEEDS_CLARIFICATION`` and keeps it open (``details.request_id``; the
``request.open`` event). ``GET /v1/requests/{id}`` shows it — its questions,
every answer with who gave it and when, its turns, the draft it planned — and
``POST /v1/requests/{id}/answers`` answers it as the token's user (planner role
for the request's tenant and region) and plans it: the draft's record keeps
each question with its answer (``request.answered``, then ``draft.recorded``); an
answer that raises questions keeps it open (``NEEDS_CLARIFICATION`` with the
follow-ups). A worker relays an operator's answers from the Prefect
clarification form with their user id and one-time code (``totp``: judged at the
moment they submitted it, ``flows.server.relay``); a service token never
answers as itself. Another tenant's request is ``NOT_FOUND``, like a draft.
``POST /v1/requests/{id}/expire`` closes it once its deadline passed on the
server's clock (a worker whose wait ended asks; the server's sweeper does it
anyway).
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter

from flows.authority.results import DraftView, RequestExpiry, RequestView
from flows.server.models import AnswersBody, ExpireRequestBody
from flows.server.relay import refuse_unproven_service, relayed_actor
from planner.errors import SortieError

if TYPE_CHECKING:
    from flows.server.kit import Kit, RequestContext

__all__ = ["router", "published_open"]


def published_open(kit: "Kit", exc: SortieError, event: str = "request.open") -> None:
    """Tell the feed about a request a refusal left open (its id, turn and tenant are in the error's details)."""
    d = exc.details if isinstance(exc.details, dict) else {}
    if exc.code == "NEEDS_CLARIFICATION" and d.get("request_id"):
        kit.publish(event, {"request_id": d["request_id"], "state": "OPEN", "tenant": d.get("tenant"),
                            "reason": f"{len(d.get('asked') or [])} question(s) open"})


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()

    @r.get("/v1/requests/{request_id}")
    def show(request_id: str, c: kit.Who) -> RequestView:  # type: ignore[name-defined]
        return kit.call(c, "request", "read", {"request_id": request_id},
                        lambda ctx: ctx.authority().request(request_id))

    @r.post("/v1/requests/{request_id}/answers")
    def answers(request_id: str, body: AnswersBody, c: kit.Who) -> DraftView:  # type: ignore[name-defined]
        if body.totp is None:
            refuse_unproven_service(c, "answer a request")
            who = c.caller.actor
        else:
            who = relayed_actor(kit, c, body.totp, "answer", request_id)

        def work(ctx: "RequestContext") -> Any:
            return ctx.authority(who, token_id=ctx.caller.token.token_id).answer(request_id, body.answers)

        args = {"request_id": request_id, "answers": body.answers, "relayed": body.totp is not None}
        try:
            out = kit.call(c, "answer", "plan", args, work, actor=who)
        except SortieError as exc:
            published_open(kit, exc, "request.answered")
            raise
        kit.publish("request.answered", {**out, "request_id": request_id, "state": "PLANNED"})
        kit.publish("draft.recorded", out)
        if out.get("status") == "DRAFT" and out.get("verdict") != "block":
            kit.publish("approval.needed", out)
        return out

    @r.post("/v1/requests/{request_id}/expire")
    def expire(request_id: str, body: ExpireRequestBody, c: kit.Who) -> RequestExpiry:  # type: ignore[name-defined]
        """Close an open request once its deadline passed on the server's clock (a worker whose wait ended)."""
        def work(ctx: "RequestContext") -> Any:
            ctx.authority().request(request_id)  # NOT_FOUND for another tenant's
            return ctx.authority().expire_request(request_id)

        out = kit.call(c, "expire-request", "plan", {"request_id": request_id}, work)
        if out.get("state") == "EXPIRED":
            kit.publish("request.expired", out)
        return out

    return r
