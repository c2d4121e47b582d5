"""The authority's routes that reach a vehicle: dispatch, launch, pause, resume, recall, monitor, reconcile.

Every one of them uses the server's record of each drone's link address
(``flows.server.links``): a request's ``link`` must match it or is
``OVERRIDE_REFUSED``. Pause, resume and recall act as the token's user, or as
the operator whose one-time code a worker relays from a Prefect deployment
(``flows.server.relay``); a service token never pauses, resumes or recalls a
vehicle as itself. A launch, like a dispatch, acts as the token's user: it is
the step of an approved mission that the worker's ``monitor-mission`` run
takes at the planned start, and it flies only a DISPATCHED version whose
approval covers the server's now. Roles are the use cases' (dispatch, launch,
pause, resume, recall, monitor, reconcile: dispatcher); the token's scope is ``dispatch``.
Each request is audited by ``Kit.call``; each change is published on the
event feed, and a flight's ``in_flight``/``finished`` come from the server's
own follower (``flows.server.followers``), which runs the embedded
authority's ``monitor`` on a thread of the server.
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter

from flows.authority.results import ControlView, DispatchView, FollowView, ReconcileView
from flows.authority.interface import MonitorRequest
from flows.server.models import DispatchBody, HoldBody, LaunchBody, MonitorBody, RecallBody, ReconcileBody, Totp
from flows.server.relay import refuse_unproven_service, relayed_actor
from flows.errors import ERROR_CODES, Unauthenticated
from planner.errors import SortieError

if TYPE_CHECKING:
    from flows.server.kit import Kit, RequestContext

__all__ = ["router", "await_follower"]

#: How often a long poll looks whether its follower ended (a flag read on the event loop, no thread held).
POLL_S = 0.2


async def await_follower(done: Any, wait_s: float, ended: list[str] | None = None) -> bool:
    """Wait up to ``wait_s`` for ``done`` (a ``threading.Event`` a follower sets) without holding a thread; stop at
    once when ``ended`` gets a reason (the caller's token ended: ``flows.server.sessions``)."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while not done.is_set() and loop.time() < deadline and not ended:
        await asyncio.sleep(min(POLL_S, max(0.0, deadline - loop.time())))
    return bool(done.is_set())


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()

    # ------------------------------------------------------------------ dispatch

    @r.post("/v1/drafts/{draft_id}/dispatch")
    def dispatch(draft_id: str, body: DispatchBody, c: kit.Who) -> DispatchView:  # type: ignore[name-defined]
        def work(ctx: "RequestContext") -> Any:
            ctx.visible(draft_id)
            return ctx.authority().dispatch(draft_id, body.version, link=ctx.links(draft_id, body.version, body.link),
                                            dry_run=body.dry_run)

        out = kit.call(c, "dispatch", "dispatch", {"draft_id": draft_id, **body.model_dump()}, work, draft_id=draft_id)
        if not out.get("dry_run") and out.get("first"):
            kit.publish(f"dispatch.{str(out.get('status', '')).lower()}", out)
        return out

    # ------------------------------------------------------------------ stopping a mission in flight

    def flight_control(action: str, draft_id: str, c: "RequestContext", args: dict[str, Any], totp: Totp | None,
                       act: Callable[[Any, dict[str, str]], dict[str, Any]], *,
                       needs_person: bool = True) -> dict[str, Any]:
        """Command the version's vehicles as the token's user, or as the operator a relayed one-time code proves
        (with ``needs_person`` a service token must relay one: ``flows.server.relay``)."""
        c.visible(draft_id)
        who = None if totp is None else relayed_actor(kit, c, totp, action, draft_id)
        args = {k: v for k, v in args.items() if k != "totp"} | ({"relayed_for": totp.user} if totp else {})

        def work(ctx: "RequestContext") -> dict[str, Any]:
            if who is None and needs_person:
                refuse_unproven_service(ctx, action)  # inside the call: the refusal is audited too
            return act(ctx.authority(who), ctx.links(draft_id, args.get("version"), args.get("link")))

        out = kit.call(c, action, "dispatch", {"draft_id": draft_id, **args}, work, draft_id=draft_id, actor=who)
        if out.get("changed"):
            kit.publish(f"flight.{action}", out)
        state = str(out.get("state") or out.get("draft_status") or "")
        kit.followers.finished(c.draft(draft_id).tenant, str(out["draft_id"]), int(out["version"]), state,
                               str(out.get("message") or ""))
        return out

    @r.post("/v1/drafts/{draft_id}/launch")
    def launch(draft_id: str, body: LaunchBody, c: kit.Who) -> ControlView:  # type: ignore[name-defined]
        """Pre-flight checks and the vehicles' arm-and-start sequence; LAUNCHED, or PREFLIGHT_FAILED naming why."""
        return flight_control("launch", draft_id, c, body.model_dump(), None, lambda a, links: a.launch(
            draft_id, body.version, link=links, prearm_wait_s=body.prearm_wait_s), needs_person=False)

    @r.post("/v1/drafts/{draft_id}/pause")
    def pause(draft_id: str, body: HoldBody, c: kit.Who) -> ControlView:  # type: ignore[name-defined]
        return flight_control("pause", draft_id, c, body.model_dump(), body.totp, lambda a, links: a.pause(
            draft_id, body.version, reason=body.reason, link=links, force=body.force))

    @r.post("/v1/drafts/{draft_id}/resume")
    def resume(draft_id: str, body: HoldBody, c: kit.Who) -> ControlView:  # type: ignore[name-defined]
        return flight_control("resume", draft_id, c, body.model_dump(), body.totp,
                              lambda a, links: a.resume(draft_id, body.version, reason=body.reason, link=links))

    @r.post("/v1/drafts/{draft_id}/recall")
    def recall(draft_id: str, body: RecallBody, c: kit.Who) -> ControlView:  # type: ignore[name-defined]
        return flight_control("recall", draft_id, c, body.model_dump(), body.totp, lambda a, links: a.recall(
            draft_id, body.version, land_here=body.land_here, reason=body.reason, link=links, wait_s=body.wait_s))

    # ------------------------------------------------------------------ following a flight

    @r.post("/v1/drafts/{draft_id}/monitor")
    async def monitor(draft_id: str, body: MonitorBody, c: kit.Who) -> FollowView:  # type: ignore[name-defined]
        """Follow the dispatched version on the server (started once, joined after); wait at most ``wait_s``.

        A long poll: its checks run on a worker thread in the general lane, its wait for the flight holds no
        thread (``await_follower``), and a token holds at most its share of long polls (``flows.server.token_quotas``)."""
        box: dict[str, Any] = {}

        def work(ctx: "RequestContext") -> dict[str, Any]:
            ctx.visible(draft_id)
            a = ctx.authority()  # the follower keeps this request's grounds (its world snapshot)
            rec = a.followable(draft_id, body.version)
            links = ctx.links(draft_id, rec.version, None)
            request = MonitorRequest(timeout_s=body.timeout_s, link_lost_s=body.link_lost_s,
                                     battery_margin_pct=body.battery_margin)

            def follow(on_update: Any) -> dict[str, Any]:
                return a.monitor(rec.draft_id, rec.version, request=request, link=links, on_update=on_update)

            follower, started = kit.followers.follow(rec.draft_id, rec.version, rec.tenant, follow)
            box["follower"], box["version"] = follower, rec.version
            return ctx.stamp({"draft_id": rec.draft_id, "version": rec.version, "started": started, "following": True,
                              "result": None, "error": None, "state": rec.state})

        with kit.limits.holding(kit.limits.poll, c.caller.token.token_id):
            out = await kit.in_lane("general", lambda: kit.call(
                c, "monitor", "dispatch", {"draft_id": draft_id, **body.model_dump()}, work, draft_id=draft_id))
            follower, ended = box["follower"], []  # the token revoked or expired meanwhile: the poll ends at once
            forget = kit.sessions.hold(c.caller.token.token_id, ended.append)
            try:
                finished = await await_follower(follower.done, body.wait_s, ended)
            finally:
                forget()
            if ended:
                raise Unauthenticated(f"{ended[0]}: this long poll ended (the flight is still followed)")
            if finished and follower.error is not None:
                c.audited = False  # the follower's refusal, as itself (audited by the error handler)
                cls = ERROR_CODES.get(str(follower.error.get("code")), SortieError)
                raise cls(str(follower.error.get("message", "")), details=follower.error.get("details"))
            state = await kit.in_lane("general", lambda: kit.ledger.get_draft(draft_id, box["version"]).state)
        return {**out, "following": not follower.done.is_set(), "result": follower.result, "error": follower.error,
                "state": state}

    # ------------------------------------------------------------------ settling an uncertain dispatch

    @r.post("/v1/drafts/{draft_id}/reconcile")
    def reconcile(draft_id: str, body: ReconcileBody, c: kit.Who) -> ReconcileView:  # type: ignore[name-defined]
        """Read the vehicle back (at the server's link record) and record what it holds; never re-sends."""

        def work(ctx: "RequestContext") -> dict[str, Any]:
            ctx.visible(draft_id)
            done = kit.ledger.dispatches(draft_id)
            links = ctx.links(draft_id, done[-1].version if done else None, None)
            return ctx.authority().reconcile(draft_id, link=links, timeout_s=body.timeout_s)

        out = kit.call(c, "reconcile", "dispatch", {"draft_id": draft_id, **body.model_dump()}, work, draft_id=draft_id)
        if out.get("verify") is not None or out.get("released"):  # settled or released (not "nothing to settle")
            kit.publish("dispatch.reconciled", out)
        return out

    return r
