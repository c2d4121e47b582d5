"""What the authority's routers share: the server's state (``Kit``) and the context of one request.

``flows.server.api`` builds one ``Kit`` and the routers (``flows.server.routes``)
add their routes with it. Every request gets one ``RequestContext``: the
verified caller, the server's time read once, one world snapshot (loaded
strictly, once, and pinned for every use case the request runs) and at most
one read of the draft it names. Its ``authority()`` is the embedded
``LocalAuthority`` over the server's ledger with the identity the token (or a
one-time code) proved, the server's clock, world, rule set and policy, and
the server's waker — the same class the embedded mode runs, so audit,
stamping and refusals cannot drift between the two.

``Kit.call`` is the one way a request runs: scope check, the work inside the
request's world snapshot, an audit row either way (``server.<command>``), the
result stamped with the mode, identity and clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from flows.authority.grounds import Grounds
from flows.authority.local import LocalAuthority
from flows.authority.waking import Waker
from flows.ledger import DraftRecord, Ledger
from flows.server.config import ServerConfig
from flows.server.events import EventBus
from flows.server.followers import Followers
from flows.server.links import LinkStore, resolve_links
from flows.server.tokens import TokenInfo
from flows.server.totp import TotpStore
from flows.usecases.actor import Actor, Policy
from flows.usecases.common import load_world_at, pinned_world, user_of
from planner.errors import Forbidden, NotFound, SortieError
from planner.world.model import User, World

__all__ = ["Caller", "Kit", "RequestContext", "EVENT_FIELDS"]

#: The fields of a result that an event carries (never a plan, a path or a token).
EVENT_FIELDS = ("draft_id", "version", "status", "verdict", "plan_hash", "requested_by", "draft_status", "state",
                "outcome", "reason", "changed", "first")


@dataclass(frozen=True)
class Caller:
    """The verified caller of one request."""

    token: TokenInfo
    actor: Actor


@dataclass
class RequestContext:
    """One request: who, the server's time, one world snapshot, at most one draft read."""

    kit: Kit
    caller: Caller
    now: datetime
    policy: Policy
    _world: World | None = None
    _drafts: dict[tuple[str, int | None], DraftRecord] = field(default_factory=dict)

    @property
    def world(self) -> World:
        """The server's world, loaded strictly once for this request (``WORLD_UNAVAILABLE`` if its zones are not
        readable); with the vehicle hub its drones' status, battery and telemetry time are their vehicles'."""
        if self._world is None:
            world = load_world_at(self.kit.config.world, strict=True)
            self._world = world if self.kit.hub is None else self.kit.hub.world(world)  # live state is the truth
        return self._world

    def user(self, what: str) -> User:
        return user_of(self.world, self.caller.actor.id, what)

    def draft(self, draft_id: str, version: int | None = None) -> DraftRecord:
        """The draft version this request is about, read once (the latest when ``version`` is None)."""
        key = (draft_id, version)
        if key not in self._drafts:
            rec = self.kit.ledger.get_draft(draft_id, version)
            self._drafts[key] = rec
            self._drafts.setdefault((draft_id, rec.version), rec)
        return self._drafts[key]

    def visible(self, draft_id: str) -> DraftRecord:
        """The draft, if the caller's tenants see it; another tenant's is ``NOT_FOUND`` (not even its id leaks)."""
        rec = self.draft(draft_id)
        u = self.user("see drafts")
        if rec.tenant not in u.tenants and "*" not in u.tenants:
            raise NotFound(f"draft {draft_id!r} is not in the ledger")
        return rec

    def links(self, draft_id: str, version: int | None, asked: str | Mapping[str, str] | None) -> dict[str, str]:
        """The server's link of every drone the version flies; a request's own must match it."""
        rec = self.draft(draft_id, version)
        drones = [s["drone_id"] for s in (rec.plan or {}).get("sorties", [])]
        return resolve_links(self.world, self.kit.links, drones, asked)

    def authority(self, actor: Actor | None = None, **evidence: Any) -> LocalAuthority:
        """The embedded authority on the server's ledger, acting as ``actor`` (default the token's user)."""
        k = self.kit
        return LocalAuthority(Grounds(
            ledger=k.ledger, actor=actor or self.caller.actor, now_given=self.now, world_dir=k.config.world,
            rules=k.config.rules, policy=self.policy, waker=k.waker, audit_by="caller", checks_visibility=False,
            evidence={"clock": k.config.clock.describe(), **evidence}, clock=k.config.clock.now,
        ))


@dataclass
class Kit:
    """The server's state and the one way a request is checked, run, stamped and audited."""

    config: ServerConfig
    ledger: Ledger
    links: LinkStore
    followers: Followers
    bus: EventBus
    totps: TotpStore
    waker: Waker
    hub: Any = None  # the vehicle hub (flows.fleet.hub.VehicleHub) while the server serves with --fleet live
    Who: Any = None  # the Annotated dependency that yields the request's ``RequestContext`` (set by ``api``)

    def context(self, caller: Caller) -> RequestContext:
        return RequestContext(self, caller, self.config.clock.now(), self.config.policy.current())

    def audit(self, actor: str | None, command: str, args: Mapping[str, Any], code: str, t0: float,
              started: datetime, proof: str, draft_id: str | None = None, message: str | None = None) -> None:
        try:
            self.ledger.audit(actor=actor, command=f"server.{command}",
                              args={**args, "mode": "server", "identity": proof, "clock": self.config.clock.describe()},
                              result_code=code, duration_s=time.perf_counter() - t0, started=started,
                              draft_id=draft_id, message=message)
        except SortieError:
            pass  # the ledger is the problem; the request's own answer is what the caller needs

    def call(self, ctx: RequestContext, command: str, scope: str, args: Mapping[str, Any],
             work: Callable[[RequestContext], Any], *, draft_id: str | None = None,
             actor: Actor | None = None) -> dict[str, Any]:
        """Scope check, the work in the request's world snapshot, an audit row either way, the stamped result."""
        started, t0, code, message = datetime.now(timezone.utc), time.perf_counter(), "OK", None
        c, who = ctx.caller, actor or ctx.caller.actor
        try:
            if scope not in c.token.scopes:
                raise Forbidden(f"this token may not {scope} (its scopes: {', '.join(sorted(c.token.scopes))})")
            with pinned_world(self.config.world, ctx.world):
                out = work(ctx)
            out = out.to_dict() if hasattr(out, "to_dict") else dict(out)
            return {**out, "mode": "server", "identity": who.proof, "clock": self.config.clock.describe(),
                    "server_time": ctx.now.isoformat()}
        except SortieError as exc:
            code, message = exc.code, exc.message
            raise
        except Exception:
            code = "INTERNAL"
            raise
        finally:
            self.audit(who.id, command, {**args, "token_id": c.token.token_id, "caller": c.actor.id}, code, t0,
                       started, who.proof, draft_id, message)

    def publish(self, type_: str, d: Mapping[str, Any]) -> None:
        """One event on the feed, for the tenant of the draft it is about."""
        tenant = d.get("tenant")
        if tenant is None and d.get("draft_id"):
            try:
                tenant = self.ledger.get_draft(str(d["draft_id"])).tenant  # a result without its tenant (a dispatch)
            except SortieError:
                tenant = None
        self.bus.publish(type_, tenant, {k: d.get(k) for k in EVENT_FIELDS if d.get(k) is not None})
