"""Deciding on a version: approve, reject, expire, cancel.

The decider is the token's user, or — at a shared screen such as the Prefect
approval form relayed by a worker — the approver proven by their one-time code,
judged at the moment they submitted it (``flows.server.relay``; a refused code
is audited as ``server.<action>.totp``).
The embedded authority's action records the decision against the server's
policy (recorded on every approval with the server's clock and the token) and
then wakes the Prefect run waiting on that version, whoever decided and from
whatever client (``flows.authority.waking``). Expiry is judged on the server's
clock and policy; a cancel needs the approver or dispatcher role.
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter

from flows.authority.results import ControlView, DraftView, ExpiryView
from flows.server.answers import AttemptRecorded
from flows.server.models import ApproveBody, AttemptBody, CancelBody, ExpireBody, RejectBody, Totp
from flows.server.relay import relayed_actor
from flows.authority.interface import Actor
from flows.errors import Forbidden

if TYPE_CHECKING:
    from flows.server.kit import Kit, RequestContext

__all__ = ["router"]


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()

    def decider(c: "RequestContext", totp: Totp | None, what: str, draft_id: str) -> Actor:
        """The token's user, or the approver proven by a one-time code (audited when refused)."""
        token = c.caller.token
        if totp is None:
            if "approve" not in token.scopes:
                raise Forbidden(f"this token may not {what} (its scopes: {', '.join(sorted(token.scopes))}); "
                                "an approver may give their one-time code instead")
            return c.caller.actor
        return relayed_actor(kit, c, totp, what, draft_id)

    def decide(what: str, draft_id: str, c: "RequestContext", totp: Totp | None, args: dict[str, Any],
               act: Any) -> dict[str, Any]:
        c.visible(draft_id)
        who = decider(c, totp, what, draft_id)

        relayed = {} if totp is None or totp.submitted_at is None else {"submitted_at": totp.submitted_at}

        def work(ctx: "RequestContext") -> Any:
            return act(ctx.authority(who, token_id=ctx.caller.token.token_id, relayed_by=ctx.caller.actor.id,
                                     **relayed))

        scope = "read" if who.proof == "totp" else "approve"
        out = kit.call(c, what, scope, {"draft_id": draft_id, **args}, work, draft_id=draft_id, actor=who)
        kit.publish({"approve": "draft.approved", "reject": "draft.rejected"}[what], out)
        return out

    @r.post("/v1/drafts/{draft_id}/approve")
    def approve(draft_id: str, body: ApproveBody, c: kit.Who) -> DraftView:  # type: ignore[name-defined]
        return decide("approve", draft_id, c, body.totp,
                      {"version": body.version, "plan_hash": body.plan_hash, "comment": body.comment},
                      lambda a: a.approve(draft_id, body.version, plan_hash=body.plan_hash, comment=body.comment))

    @r.post("/v1/drafts/{draft_id}/reject")
    def reject(draft_id: str, body: RejectBody, c: kit.Who) -> DraftView:  # type: ignore[name-defined]
        return decide("reject", draft_id, c, body.totp, {"version": body.version, "reason": body.reason},
                      lambda a: a.reject(draft_id, body.version, reason=body.reason))

    @r.post("/v1/drafts/{draft_id}/attempts")
    def attempt(draft_id: str, body: AttemptBody, c: kit.Who) -> AttemptRecorded:  # type: ignore[name-defined]
        """A form input the relaying worker refused before asking (its answer stays in the run): the server audits it
        too (``server.<command>``, the worker's user as the actor, the input's user id as an unproven claim)."""
        import time
        from datetime import datetime, timezone

        c.visible(draft_id)
        if "service" not in c.caller.token.scopes:
            raise Forbidden("only a service token relays a refused form input")
        args = body.model_dump(exclude={"code", "message"}) | {"token_id": c.caller.token.token_id}
        c.audited = True
        kit.audit(c.caller.actor.id, body.command, args, body.code, time.perf_counter(), datetime.now(timezone.utc),
                  "token", draft_id, body.message, token_id=c.caller.token.token_id, client_addr=c.caller.client_addr)
        return {"draft_id": draft_id, "version": body.version, "recorded": True, "mode": "server", "identity": "token",
                "server_time": c.now.isoformat()}

    @r.post("/v1/drafts/{draft_id}/expire")
    def expire(draft_id: str, body: ExpireBody, c: kit.Who) -> ExpiryView:  # type: ignore[name-defined]
        """Expire a version if the policy's approval window has passed on the server's clock (a worker's timer)."""

        def work(ctx: "RequestContext") -> Any:
            ctx.visible(draft_id)
            return ctx.authority().expire(draft_id, body.version)

        out = kit.call(c, "expire", "plan", {"draft_id": draft_id, "version": body.version}, work, draft_id=draft_id)
        if out["status"] == "EXPIRED":
            kit.publish("draft.expired", out)
        return out

    @r.post("/v1/drafts/{draft_id}/cancel")
    def cancel(draft_id: str, body: CancelBody, c: kit.Who) -> ControlView:  # type: ignore[name-defined]
        """Withdraw a version before dispatch; the authority wakes a Prefect run waiting on it."""
        c.visible(draft_id)
        scope = "dispatch" if "dispatch" in c.caller.token.scopes else "approve"

        def work(ctx: "RequestContext") -> Any:
            return ctx.authority().cancel(draft_id, reason=body.reason, version=body.version)

        out = kit.call(c, "cancel", scope, {"draft_id": draft_id, **body.model_dump()}, work, draft_id=draft_id)
        if out.get("changed"):
            kit.publish("draft.cancelled", out)
        return out

    return r
