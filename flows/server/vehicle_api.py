"""The authority's routes that reach a vehicle: dispatch, launch, cancel, pause, resume, recall, monitor, reconcile.

Every one of them uses the server's record of each drone's link address
(``flows.server.links``): a request's ``link`` must match it or is
``OVERRIDE_REFUSED``. Roles are the use cases' (dispatch, pause, resume,
recall, monitor, reconcile: dispatcher; cancel: approver or dispatcher); the
token's scope is ``dispatch`` (a cancel: ``approve`` or ``dispatch``). Each
request is audited by ``Kit.call``; each change is published on the event
feed, and a flight's ``in_flight``/``finished`` come from the server's own
follower (``flows.server.followers``).
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI

from flows.server.links import resolve_links
from flows.server.models import CancelBody, DispatchBody, HoldBody, LaunchBody, MonitorBody, RecallBody, ReconcileBody
from flows.usecases import control, dispatching, launching
from flows.usecases.common import load_world_at, user_of
from planner.errors import ERROR_CODES, Conflict, Forbidden, SortieError

if TYPE_CHECKING:
    from flows.server.kit import Caller, Kit

__all__ = ["register"]


def register(app: FastAPI, kit: "Kit") -> None:
    """Add the vehicle routes to ``app``."""
    config, ledger, call, visible, publish = kit.config, kit.ledger, kit.call, kit.visible, kit.publish
    Who = kit.Who

    def links_for(draft_id: str, version: int | None, asked: str | Mapping[str, str] | None) -> dict[str, str]:
        """The server's link of every drone the version flies; a request's own must match it."""
        rec = ledger.get_draft(draft_id, version)
        drones = [s["drone_id"] for s in (rec.plan or {}).get("sorties", [])]
        return resolve_links(load_world_at(config.world, strict=True), kit.links, drones, asked)

    def ended(out: dict[str, Any]) -> None:
        state = str(out.get("state") or out.get("draft_status") or "")
        rec = ledger.get_draft(str(out["draft_id"]), int(out["version"]))
        kit.followers.finished(rec.tenant, rec.draft_id, rec.version, state, str(out.get("message") or ""))

    # ------------------------------------------------------------------ dispatch

    @app.post("/v1/drafts/{draft_id}/dispatch")
    def dispatch(draft_id: str, body: DispatchBody, c: Who) -> dict[str, Any]:
        def work(now: datetime) -> Any:
            visible(c, draft_id)
            return dispatching.dispatch(draft_id, body.version, actor=c.actor, now=now,
                                        link=links_for(draft_id, body.version, body.link), dry_run=body.dry_run,
                                        world_dir=config.world, rules_path=config.rules, ledger=ledger)

        out = call(c, "dispatch", "dispatch", {"draft_id": draft_id, **body.model_dump()}, work, draft_id=draft_id)
        if not out.get("dry_run") and out.get("first"):
            publish(f"dispatch.{str(out.get('status', '')).lower()}", out)
        return out

    # ------------------------------------------------------------------ stopping a mission (flows.usecases.control)

    @app.post("/v1/drafts/{draft_id}/cancel")
    def cancel(draft_id: str, body: CancelBody, c: Who) -> dict[str, Any]:
        """Withdraw a version before dispatch; the client that asked wakes a waiting Prefect run (as for approve)."""
        visible(c, draft_id)
        scope = "dispatch" if "dispatch" in c.token.scopes else "approve"

        def work(now: datetime) -> Any:
            return control.cancel(ledger, draft_id, body.version, actor=c.actor, reason=body.reason, now=now,
                                  world_dir=config.world, audit=False)

        out = call(c, "cancel", scope, {"draft_id": draft_id, **body.model_dump()}, work, draft_id=draft_id)
        if out.get("changed"):
            publish("draft.cancelled", out)
        return out

    def flight_control(action: str, draft_id: str, c: "Caller", args: dict[str, Any],
                       work: Callable[[datetime, dict[str, str]], Any]) -> dict[str, Any]:
        visible(c, draft_id)
        out = call(c, action, "dispatch", {"draft_id": draft_id, **args},
                   lambda now: work(now, links_for(draft_id, args.get("version"), args.get("link"))),
                   draft_id=draft_id)
        if out.get("changed"):
            publish(f"flight.{action}", out)
        ended(out)
        return out

    @app.post("/v1/drafts/{draft_id}/launch")
    def launch(draft_id: str, body: LaunchBody, c: Who) -> dict[str, Any]:
        """Pre-flight checks and the vehicle's arm-and-start sequence; LAUNCHED, or PREFLIGHT_FAILED naming why."""
        from flows.vehicle.launch import LaunchOptions

        return flight_control("launch", draft_id, c, body.model_dump(), lambda now, links: launching.launch(
            draft_id, body.version, actor=c.actor, now=now, ledger=ledger, link=links, world_dir=config.world,
            options=LaunchOptions(prearm_wait_s=body.prearm_wait_s), audit=False))

    @app.post("/v1/drafts/{draft_id}/pause")
    def pause(draft_id: str, body: HoldBody, c: Who) -> dict[str, Any]:
        return flight_control("pause", draft_id, c, body.model_dump(), lambda now, links: control.pause(
            ledger, draft_id, body.version, actor=c.actor, now=now, reason=body.reason, link=links,
            world_dir=config.world, audit=False, force=body.force))

    @app.post("/v1/drafts/{draft_id}/resume")
    def resume(draft_id: str, body: HoldBody, c: Who) -> dict[str, Any]:
        return flight_control("resume", draft_id, c, body.model_dump(), lambda now, links: control.resume(
            ledger, draft_id, body.version, actor=c.actor, now=now, reason=body.reason, link=links,
            world_dir=config.world, audit=False))

    @app.post("/v1/drafts/{draft_id}/recall")
    def recall(draft_id: str, body: RecallBody, c: Who) -> dict[str, Any]:
        return flight_control("recall", draft_id, c, body.model_dump(), lambda now, links: control.recall(
            ledger, draft_id, body.version, actor=c.actor, now=now, land_here=body.land_here, reason=body.reason,
            link=links, world_dir=config.world, wait_s=body.wait_s, audit=False))

    # ------------------------------------------------------------------ following a flight

    @app.post("/v1/drafts/{draft_id}/monitor")
    def monitor(draft_id: str, body: MonitorBody, c: Who) -> dict[str, Any]:
        """Follow the dispatched version on the server (started once, joined after); wait at most ``wait_s``."""

        def work(now: datetime) -> dict[str, Any]:
            from flows.vehicle.monitor import ENDED_STATES, FOLLOWED_STATES, MonitorOptions, monitor_mission

            visible(c, draft_id)
            rec = ledger.get_draft(draft_id, body.version)
            user = user_of(load_world_at(config.world, strict=True), c.actor.id, "follow a flight")
            if not user.may("dispatcher", rec.tenant, rec.region_id):
                raise Forbidden(f"{user.id} may not follow flights of tenant {rec.tenant} (the dispatcher role)")
            if rec.state not in FOLLOWED_STATES | ENDED_STATES:
                raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state}; only a dispatched mission can be "
                               "followed")
            links = links_for(draft_id, rec.version, None)
            opts = MonitorOptions(timeout_s=body.timeout_s, link_lost_s=body.link_lost_s,
                                  link_alert_s=min(2.0, body.link_lost_s), battery_margin_pct=body.battery_margin,
                                  start_wait_s=min(60.0, body.timeout_s))
            follower, started = kit.followers.follow(rec.draft_id, rec.version, rec.tenant, lambda on_update: (
                monitor_mission(rec.draft_id, rec.version, link=links, actor=f"{user.id} (server monitor)", now=now,
                                options=opts, on_update=on_update, ledger=ledger)))
            if follower.done.wait(body.wait_s) and follower.error is not None:  # the follower's refusal, as itself
                cls = ERROR_CODES.get(str(follower.error.get("code")), SortieError)
                raise cls(str(follower.error.get("message", "")), details=follower.error.get("details"))
            out: dict[str, Any] = {"draft_id": rec.draft_id, "version": rec.version, "started": started,
                                   "following": not follower.done.is_set(), "result": follower.result,
                                   "error": follower.error}
            out["state"] = ledger.get_draft(rec.draft_id, rec.version).state
            return out

        return call(c, "monitor", "dispatch", {"draft_id": draft_id, **body.model_dump()}, work, draft_id=draft_id)

    # ------------------------------------------------------------------ settling an uncertain dispatch

    @app.post("/v1/drafts/{draft_id}/reconcile")
    def reconcile(draft_id: str, body: ReconcileBody, c: Who) -> dict[str, Any]:
        """Read the vehicle back (at the server's link record) and record what it holds; never re-sends."""

        def work(now: datetime) -> dict[str, Any]:
            from flows.integrity.reconcile import reconcile as settle

            visible(c, draft_id)
            rec = ledger.get_draft(draft_id)
            user = user_of(load_world_at(config.world, strict=True), c.actor.id, "reconcile")
            if not user.may("dispatcher", rec.tenant, rec.region_id):  # even "nothing to settle" is a dispatcher's
                raise Forbidden(f"{user.id} may not reconcile dispatches of tenant {rec.tenant} (the dispatcher role)")
            done = ledger.dispatches(draft_id)
            version = done[-1].version if done else None
            links = links_for(draft_id, version, None)
            return settle(draft_id, actor=c.actor.id, now=now, link=links, world_dir=config.world,
                          timeout_s=body.timeout_s, ledger=ledger)

        out = call(c, "reconcile", "dispatch", {"draft_id": draft_id, **body.model_dump()}, work, draft_id=draft_id)
        if out.get("verify") is not None:  # the vehicle was read back and the record settled (not "nothing to do")
            publish("dispatch.reconciled", out)
        return out
