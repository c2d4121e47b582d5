"""``sortie server``: the one authority for who, when and what (FastAPI; OpenAPI at ``/openapi.json``).

It is the only writer of the ledger under ``--home`` (opened once, here). On
every request it establishes:

- **who**: the bearer token (``flows.server.tokens``) names the user; roles
  and tenants come from the server's own users.json, never from the caller;
  the token's scopes narrow what it may do (a Prefect worker's service token:
  service, plan, read, dispatch — never approve). An approval relayed from a shared screen carries the
  approver's id and a one-time code (``flows.server.totp``) instead;
- **when**: the server's clock (``ServerClock``) stamps plans, approvals,
  expiry and dispatches; no body has a time field;
- **what**: the server's world folder, loaded strictly (missing or unreadable
  zone data is ``WORLD_UNAVAILABLE``), is the only world used; dispatch re-checks
  the rules on its *current* snapshot; the policy (``<home>/policy.json``) is
  applied and recorded on every approval.

- **where**: each vehicle's link address is the server's record
  (``flows.server.links``); the routes that reach a vehicle (dispatch, control,
  monitor, reconcile: ``flows.server.vehicle_api``) use it, and a request's own
  ``link`` must match it (``OVERRIDE_REFUSED``).

Use cases run with ``Actor(user, mode="server", proof="token"|"totp")``; every
request writes an audit row (refusals too); every change is published on
``GET /v1/events`` (Server-Sent Events), flights included: the server follows
what it dispatched (``flows.server.followers``). Ledger backups are an admin's
request (``flows.server.ledger_api``). A draft of another tenant is ``NOT_FOUND``.
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``Who``).

import asyncio
import base64
import queue
import time
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Query, Request
from fastapi.responses import StreamingResponse

from flows.ledger import Ledger, open_ledger
from flows.server.config import ServerConfig
from flows.server import ledger_api, vehicle_api
from flows.server.kit import EVENT_FIELDS, Caller, Kit
from flows.server.events import EventBus, sse
from flows.server.followers import Followers
from flows.server.http_errors import BodyLimit, install
from flows.server.links import LinkStore
from flows.server.models import ApproveBody, ExpireBody, PlanBody, RejectBody, ReplanBody
from flows.server.tokens import TokenStore
from flows.server.totp import TotpStore
from flows.usecases import decisions, planning, reading
from flows.usecases.actor import Actor
from flows.usecases.common import load_world_at, user_of
from planner.errors import Forbidden, SortieError

__all__ = ["create_app", "Caller", "Kit"]  # Caller and Kit: re-exported from flows.server.kit


def create_app(config: ServerConfig) -> Any:
    """The ASGI app (the API behind a body-size limit) over one world, one home (ledger, tokens, TOTP, policy)
    and one clock."""
    app = FastAPI(title="sortie authority", version="1", description=__doc__)
    install(app)
    from flows.integrity.verify import verify_ledger  # integrity hook: never serve from a ledger that fails
    from flows.ledger.signing import KeyStore

    # The server holds its ledger open (flows.ledger.shared) and checks it since the last signed checkpoint.
    ledger: Ledger = Ledger(open_ledger(config.home).path, keys=KeyStore(config.home, mode="server")).shared()
    try:
        verify_ledger(ledger, full=False)  # LEDGER_TAMPERED naming the first break; the server does not start
    except BaseException:
        ledger.close()
        raise
    tokens = TokenStore(config.home)
    totps = TotpStore(str(config.home))
    bus = EventBus()
    app.state.config, app.state.ledger, app.state.bus = config, ledger, bus

    def audit(actor: str | None, command: str, args: dict[str, Any], code: str, t0: float, started: datetime,
              proof: str, draft_id: str | None = None, message: str | None = None) -> None:
        try:
            ledger.audit(actor=actor, command=f"server.{command}",
                         args={**args, "mode": "server", "identity": proof, "clock": config.clock.describe()},
                         result_code=code, duration_s=time.perf_counter() - t0, started=started, draft_id=draft_id,
                         message=message)
        except SortieError:
            pass  # the ledger is the problem; the request's own answer is what the caller needs

    def caller(request: Request, authorization: Annotated[str | None, Header()] = None) -> Caller:
        token = None
        if authorization and authorization.lower().startswith("bearer "):
            token = authorization[7:].strip()
        try:
            info = tokens.verify(token)
        except SortieError as exc:
            audit(None, f"auth {request.method} {request.url.path}", {}, exc.code, time.perf_counter(),
                  datetime.now(timezone.utc), "none")
            raise
        return Caller(info, Actor(info.user, "server", "token"))

    Who = Annotated[Caller, Depends(caller)]

    def call(c: Caller, command: str, scope: str, args: dict[str, Any], work: Callable[[datetime], Any],
             *, draft_id: str | None = None, actor: Actor | None = None) -> dict[str, Any]:
        """Scope check, the use case at the server's time, an audit row either way, the stamped result."""
        started, t0, code, message = datetime.now(timezone.utc), time.perf_counter(), "OK", None
        who = actor or c.actor
        try:
            if scope not in c.token.scopes:
                raise Forbidden(f"this token may not {scope} (its scopes: {', '.join(sorted(c.token.scopes))})")
            now = config.clock.now()
            out = work(now)
            out = out.to_dict() if hasattr(out, "to_dict") else out
            return {**out, "mode": "server", "identity": who.proof, "clock": config.clock.describe(),
                    "server_time": now.isoformat()}
        except SortieError as exc:
            code, message = exc.code, exc.message
            raise
        except Exception:
            code = "INTERNAL"
            raise
        finally:
            audit(who.id, command, {**args, "token_id": c.token.token_id, "caller": c.actor.id}, code, t0, started,
                  who.proof, draft_id, message)

    def visible(c: Caller, draft_id: str) -> None:
        reading.check_visible(draft_id, c.actor, world_dir=config.world, ledger=ledger)

    def publish(type_: str, d: dict[str, Any]) -> None:
        tenant = d.get("tenant")
        if tenant is None and d.get("draft_id"):
            try:
                tenant = ledger.get_draft(str(d["draft_id"])).tenant  # a result without its tenant (a dispatch)
            except SortieError:
                tenant = None
        bus.publish(type_, tenant, {k: d.get(k) for k in EVENT_FIELDS if d.get(k) is not None})

    followers = Followers(bus.publish)

    # ------------------------------------------------------------------ who am I, policy

    @app.get("/v1/health")
    def health() -> dict[str, Any]:
        """Liveness only (no data): the server runs."""
        return {"ok": True}

    @app.get("/v1/whoami")
    def whoami(c: Who) -> dict[str, Any]:
        def work(now: datetime) -> dict[str, Any]:
            u = user_of(load_world_at(config.world, strict=True), c.actor.id, "use sortie")
            return {"user": u.id, "roles": sorted(u.roles), "tenants": sorted(u.tenants),
                    "scopes": sorted(c.token.scopes), "token_id": c.token.token_id, "expires": c.token.expires,
                    "world": config.world.name, "policy": config.policy.current().to_dict()}

        return call(c, "whoami", "read", {}, work)

    # ------------------------------------------------------------------ planning

    @app.post("/v1/plan")
    def plan(body: PlanBody, c: Who) -> dict[str, Any]:
        requester = c.actor
        if body.on_behalf_of is not None:
            if "service" not in c.token.scopes:
                raise Forbidden("only a service token (scope service; it cannot approve) plans on behalf of others")
            requester = Actor(body.on_behalf_of, "server", "asserted")  # the service says who asked; audited with it

        def work(now: datetime) -> Any:
            return planning.plan_draft(text=body.text, region_id=body.region_id, area_geojson=body.area,
                                       requested_by=requester, world_dir=config.world, now=now, rules_path=config.rules,
                                       ledger=ledger, coverage_target=body.coverage_target)

        out = call(c, "plan", "plan", body.model_dump(), work, actor=requester)
        if out.get("created", True):
            publish("draft.recorded", out)
            if out.get("status") == "DRAFT" and out.get("verdict") != "block":
                publish("approval.needed", out)
        return out

    @app.post("/v1/drafts/{draft_id}/replan")
    def replan(draft_id: str, body: ReplanBody, c: Who) -> dict[str, Any]:
        def work(now: datetime) -> Any:
            visible(c, draft_id)
            return planning.replan(draft_id, requested_by=c.actor, world_dir=config.world, now=now,
                                   rules_path=config.rules, ledger=ledger)

        out = call(c, "replan", "plan", {"draft_id": draft_id}, work, draft_id=draft_id)
        publish("draft.recorded", out)
        return out

    # ------------------------------------------------------------------ reading

    @app.get("/v1/drafts")
    def drafts(c: Who, limit: Annotated[int, Query(ge=1, le=1000)] = 50) -> dict[str, Any]:
        def work(now: datetime) -> dict[str, Any]:
            rows = reading.list_drafts(user=c.actor, world_dir=config.world, limit=limit, ledger=ledger)
            return {"drafts": [d.to_dict() for d in rows]}

        return call(c, "drafts", "read", {"limit": limit}, work)

    @app.get("/v1/pending")
    def pending_list(c: Who) -> dict[str, Any]:
        """What waits for approval in the caller's tenants: approvers, deadline, time left (server clock)."""
        from flows.usecases.pending import pending

        def work(now: datetime) -> dict[str, Any]:
            return pending(user=c.actor, world_dir=config.world, now=now, policy=config.policy.current(),
                           ledger=ledger)

        return call(c, "pending", "read", {}, work)

    @app.get("/v1/drafts/{draft_id}")
    def show(draft_id: str, c: Who,
             version: Annotated[int | None, Query(ge=1, le=1_000_000)] = None) -> dict[str, Any]:
        def work(now: datetime) -> Any:
            visible(c, draft_id)
            return reading.show_draft(draft_id, version, ledger=ledger)

        return call(c, "show", "read", {"draft_id": draft_id, "version": version}, work, draft_id=draft_id)

    @app.get("/v1/drafts/{draft_id}/diff")
    def diff(draft_id: str, c: Who, v1: Annotated[int, Query(ge=1, le=1_000_000)],
             v2: Annotated[int, Query(ge=1, le=1_000_000)]) -> dict[str, Any]:
        def work(now: datetime) -> Any:
            visible(c, draft_id)
            return reading.diff_versions(draft_id, v1, v2, ledger=ledger)

        return call(c, "diff", "read", {"draft_id": draft_id, "v1": v1, "v2": v2}, work, draft_id=draft_id)

    @app.get("/v1/drafts/{draft_id}/log")
    def log(draft_id: str, c: Who) -> dict[str, Any]:
        def work(now: datetime) -> Any:
            visible(c, draft_id)
            return reading.draft_log(draft_id, ledger=ledger)

        return call(c, "log", "read", {"draft_id": draft_id}, work, draft_id=draft_id)

    @app.get("/v1/drafts/{draft_id}/export")
    def export(draft_id: str, c: Who, format: Annotated[str, Query(max_length=20)],  # noqa: A002 - the CLI's name
               version: Annotated[int | None, Query(ge=1, le=1_000_000)] = None,
               sortie: Annotated[int, Query(ge=0, le=1000)] = 0) -> dict[str, Any]:
        def work(now: datetime) -> dict[str, Any]:
            visible(c, draft_id)
            ver, data, suffix = reading.export_bytes(draft_id, version, format, world_dir=config.world, sortie=sortie,
                                                     ledger=ledger)
            return {"draft_id": draft_id, "version": ver, "format": format, "suffix": suffix, "bytes": len(data),
                    "content_b64": base64.b64encode(data).decode("ascii")}

        return call(c, "export", "read", {"draft_id": draft_id, "format": format, "version": version}, work,
                    draft_id=draft_id)

    # ------------------------------------------------------------------ decisions

    def decider(c: Caller, totp: Any, what: str, draft_id: str | None = None) -> Actor:
        """The token's user, or the approver proven by a one-time code (audited when refused)."""
        if totp is None:
            if "approve" not in c.token.scopes:
                raise Forbidden(f"this token may not {what} (its scopes: {', '.join(sorted(c.token.scopes))}); "
                                "an approver may give their one-time code instead")
            return c.actor
        started, t0 = datetime.now(timezone.utc), time.perf_counter()
        try:
            totps.verify(totp.user, totp.code)
        except SortieError as exc:
            audit(totp.user, f"{what}.totp", {"caller": c.actor.id, "token_id": c.token.token_id}, exc.code, t0,
                  started, "totp", draft_id, exc.message)
            raise
        return Actor(totp.user, "server", "totp")

    @app.post("/v1/drafts/{draft_id}/approve")
    def approve(draft_id: str, body: ApproveBody, c: Who) -> dict[str, Any]:
        visible(c, draft_id)
        who = decider(c, body.totp, "approve", draft_id)

        def work(now: datetime) -> Any:
            return decisions.approve(
                draft_id, body.version, approver=who, plan_hash=body.plan_hash, comment=body.comment, now=now,
                world_dir=config.world, policy=config.policy.current(), ledger=ledger,
                evidence={"clock": config.clock.describe(), "token_id": c.token.token_id, "relayed_by": c.actor.id},
            )

        args = {"draft_id": draft_id, "version": body.version, "plan_hash": body.plan_hash, "comment": body.comment}
        out = call(c, "approve", "read" if who.proof == "totp" else "approve", args, work, draft_id=draft_id, actor=who)
        publish("draft.approved", out)
        return out

    @app.post("/v1/drafts/{draft_id}/reject")
    def reject(draft_id: str, body: RejectBody, c: Who) -> dict[str, Any]:
        visible(c, draft_id)
        who = decider(c, body.totp, "reject", draft_id)

        def work(now: datetime) -> Any:
            return decisions.reject(draft_id, body.version, approver=who, reason=body.reason, now=now,
                                    world_dir=config.world, policy=config.policy.current(), ledger=ledger,
                                    evidence={"clock": config.clock.describe(), "token_id": c.token.token_id})

        args = {"draft_id": draft_id, "version": body.version, "reason": body.reason}
        out = call(c, "reject", "read" if who.proof == "totp" else "approve", args, work, draft_id=draft_id, actor=who)
        publish("draft.rejected", out)
        return out

    @app.post("/v1/drafts/{draft_id}/expire")
    def expire(draft_id: str, body: ExpireBody, c: Who) -> dict[str, Any]:
        """Expire a version if the policy's approval window has passed on the server's clock (a worker's timer)."""

        def work(now: datetime) -> dict[str, Any]:
            visible(c, draft_id)
            state = decisions.expire_if_due(draft_id, body.version, actor=c.actor, now=now,
                                            window=config.policy.current().approval_ttl, ledger=ledger)
            return {"draft_id": draft_id, "version": body.version, "status": state}

        out = call(c, "expire", "plan", {"draft_id": draft_id, "version": body.version}, work, draft_id=draft_id)
        if out["status"] == "EXPIRED":
            publish("draft.expired", out)
        return out

    kit = Kit(config=config, ledger=ledger, links=LinkStore(config.home), followers=followers, Who=Who, call=call,
              visible=visible, publish=publish)
    vehicle_api.register(app, kit)
    ledger_api.register(app, kit)

    # ------------------------------------------------------------------ live events

    @app.get("/v1/events")
    async def events(request: Request, c: Who, max_events: Annotated[int, Query(ge=1, le=100000)] = 100000,
                     timeout_s: Annotated[float, Query(gt=0, le=86400)] = 86400) -> StreamingResponse:
        """Server-Sent Events of the caller's tenants: draft.recorded, approval.needed, draft.approved, …,
        dispatch.acked, flight.in_flight, flight.finished."""
        if "read" not in c.token.scopes:
            raise Forbidden("this token may not read")
        u = user_of(load_world_at(config.world, strict=True), c.actor.id, "follow events")
        q = bus.subscribe()

        async def stream() -> Any:
            sent, deadline, last = 0, time.monotonic() + timeout_s, time.monotonic()
            try:
                yield ": sortie events\n\n"
                while sent < max_events and time.monotonic() < deadline:
                    if await request.is_disconnected():
                        return
                    try:
                        ev = q.get_nowait()
                    except queue.Empty:
                        if time.monotonic() - last > 10:
                            last = time.monotonic()
                            yield ": keep-alive\n\n"
                        await asyncio.sleep(0.1)
                        continue
                    if ev.tenant is None or ev.tenant in u.tenants or "*" in u.tenants:
                        sent += 1
                        yield sse(ev)
            finally:
                bus.unsubscribe(q)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    return BodyLimit(app, config.max_body_bytes)  # type: ignore[return-value]
