"""``sortie server``: the one authority for who, when and what (FastAPI; OpenAPI at ``/openapi.json``).

This module is the assembly: it opens the ledger under ``--home`` (the server
is its only writer), builds the server's ``Kit`` (``flows.server.kit``) and
mounts the routers of ``flows.server.routes`` (admin, drafts, requests,
decisions, vehicle, ledger, events). On every request it establishes:

- **who**: the bearer token (``flows.server.tokens``) names the user; roles
  and tenants come from the server's own users.json, never from the caller;
  the token's scopes narrow what it may do (a Prefect worker's service token:
  service, plan, read, dispatch — never approve). An approval relayed from a
  shared screen carries the approver's id and a one-time code
  (``flows.server.totp``) instead;
- **when**: the server's clock (``ServerClock``), read once per request,
  stamps plans, approvals, expiry and dispatches; no body has a time field;
- **what**: the server's world folder, loaded strictly once per request
  (missing or unreadable zone data is ``WORLD_UNAVAILABLE``), is the only
  world used; dispatch re-checks the rules on that fresh snapshot; the policy
  (``<home>/policy.json``) is applied and recorded on every approval;
- **where**: each vehicle's link address is the server's record
  (``flows.server.links``); a request's own ``link`` must match it
  (``OVERRIDE_REFUSED``).

Each route runs the embedded authority (``flows.authority.local``) with
``Actor(user, mode="server", proof="token"|"totp")``, so the server and the
embedded mode run the same actions; every request writes an audit row
(refusals too); every change is published on ``GET /v1/events``, flights
included (``flows.server.followers``); after a decision the authority wakes the
Prefect run waiting on that version (this process reads the Prefect API the
usual way: ``PREFECT_API_URL`` or the active Prefect profile). A draft of
another tenant is ``NOT_FOUND``. While it serves, the server's own rounds
(``flows.server.rounds``) expire overdue drafts on its clock and withdraw a
version whose waiting run was cancelled in the Prefect UI.
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations.

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Header, Request

from flows.authority.waking import Waker
from flows.ledger import Ledger, open_ledger
from flows.server.audit_queue import AuditQueue
from flows.server.config import ServerConfig
from flows.server.events import EventBus
from flows.server.followers import Followers
from flows.server.gate import SafetyGate
from flows.server.http_errors import BodyLimit, install
from flows.server.kit import Caller, Kit, RequestContext
from flows.server.admission import Lanes
from flows.server.token_quotas import TokenLimits
from flows.server.links import LinkStore
from flows.server.plan_pool import PlanPool
from flows.server.sessions import Sessions
from flows.server.routes import admin, decisions, drafts, events, fleet, ledger, ops, requests, vehicle
from flows.server.tokens import TokenStore, claimed_token_id
from flows.server.totp import TotpStore
from flows.authority.interface import Actor
from flows.errors import TooManyRequests
from planner.errors import SortieError

__all__ = ["create_app", "Caller", "Kit"]  # Caller and Kit: re-exported from flows.server.kit


@contextlib.asynccontextmanager
async def _serving(app: FastAPI) -> AsyncIterator[None]:
    """What lives as long as the app serves: the thread pool sized to the lanes, the server's own rounds
    (``flows.server.rounds``: the sweeper; the vehicle hub), the full walk of the ledger, the batched audit of reads."""
    import anyio.to_thread

    from flows.server.rounds import Settler, start_hub, start_rounds

    kit: Kit = app.state.kit
    anyio.to_thread.current_default_thread_limiter().total_tokens = kit.lanes.sizes.thread_tokens()
    sweeper = start_rounds(kit)
    watching = asyncio.get_running_loop().create_task(kit.sessions.watch())  # streams end with their token
    kit.hub = start_hub(kit)  # None with --fleet file
    kit.settler = settler = Settler(kit).start()  # a crash's unanswered vehicle commands, settled from the vehicles
    unsigned = kit.vehicles()["unsigned"]
    if kit.config.allow_unsigned and unsigned:  # said in the ledger, not only in a log
        kit.ledger.audit(actor="authority", command="server.allow_unsigned", args={"drones": unsigned},
                         result_code="OK", duration_s=0.0, started=kit.config.clock.now(),
                         message=f"serving {len(unsigned)} drone(s) unsigned (--allow-unsigned): {', '.join(unsigned)}")
    if kit.config.full_walk:
        kit.integrity.start(kit.ledger, delay_s=kit.config.full_walk_delay_s)
    if kit.plans is not None:
        kit.plans.warm()
    try:
        yield
    finally:
        watching.cancel()
        sweeper.stop()
        settler.stop()
        if kit.hub is not None:
            kit.hub.stop()
        if kit.audits is not None:
            kit.audits.close()
        if kit.plans is not None:
            kit.plans.close()


def _client(request: Request) -> str | None:
    return request.client.host if request.client else None


def create_app(config: ServerConfig) -> Any:
    """The ASGI app (the API behind a body check and the lanes) over one world, one home (ledger, tokens, TOTP,
    policy) and one clock."""
    app = FastAPI(title="sortie authority", version="1", description=__doc__, lifespan=_serving)
    from flows.integrity.verify import verify_ledger  # integrity hook: never serve from a ledger that fails
    from flows.ledger.signing import KeyStore

    # The server holds its ledger open (flows.ledger.shared) and checks it since the last signed checkpoint.
    led: Ledger = Ledger(open_ledger(config.home).path, keys=KeyStore(config.home, mode="server")).shared()
    try:
        verify_ledger(led, full=False)  # LEDGER_TAMPERED naming the first break; the server does not start
    except BaseException:
        led.close()
        raise
    tokens = TokenStore(config.home)
    bus = EventBus()
    gate = SafetyGate()
    kit = Kit(config=config, ledger=led, links=LinkStore(config.home), followers=Followers(bus.publish), bus=bus,
              totps=TotpStore(str(config.home)), waker=Waker(), audits=AuditQueue(led.audit_many, pause=gate.pause),
              limits=TokenLimits(config.streams_per_token, config.polls_per_token), gate=gate,
              plans=PlanPool(config.plan_workers) if config.plan_workers else None, sessions=Sessions(tokens.ended))
    app.state.config, app.state.ledger, app.state.bus, app.state.kit = config, led, bus, kit
    install(app, kit, scrub_roots={str(config.home): "<home>", str(config.world): "<world>"})

    def context(request: Request, authorization: Annotated[str | None, Header()] = None) -> RequestContext:
        """The request's context: its verified caller (a refused token is audited), the server's time."""
        token = None
        if authorization and authorization.lower().startswith("bearer "):
            token = authorization[7:].strip()
        try:
            info = tokens.verify(token)
        except SortieError as exc:
            request.state.sortie_audited = True
            kit.refused(None, f"auth {request.method} {request.url.path}", {}, exc,
                        token_id=claimed_token_id(token), client_addr=_client(request))
            raise
        ctx = kit.context(Caller(info, Actor(info.user, "server", "token"), _client(request)))
        request.state.sortie_ctx = ctx
        return ctx

    kit.Who = Annotated[RequestContext, Depends(context)]
    for area in (admin, drafts, requests, decisions, vehicle, fleet, ledger, events, ops):
        app.include_router(area.router(kit))

    def lane_refused(scope: dict[str, Any], exc: TooManyRequests) -> None:
        headers = dict(scope.get("headers") or [])
        auth = headers.get(b"authorization", b"").decode("latin-1")
        client = scope.get("client")
        kit.refused(None, f"lane {scope.get('method')} {scope.get('path')}", {}, exc,
                    token_id=claimed_token_id(auth[7:].strip() if auth.lower().startswith("bearer ") else None),
                    client_addr=client[0] if client else None)

    kit.lanes = Lanes(app, config.lanes, on_refused=lane_refused, gate=kit.gate)
    return BodyLimit(kit.lanes, config.max_body_bytes, on_refused=kit.refused,  # type: ignore[return-value]
                     body_timeout_s=config.body_timeout_s)
