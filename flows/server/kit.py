"""What the authority's routers share: the server's state (``Kit``) and the context of one request.

``flows.server.api`` builds one ``Kit`` and the routers (``flows.server.routes``)
add their routes with it. Every request gets one ``RequestContext``: the
verified caller, the server's time read once, one world snapshot (loaded
strictly, once) and at most one read of the draft it names. Its
``authority()`` is the embedded ``LocalAuthority`` on the request's
``Grounds`` (the server's ledger, that one world snapshot, its rule set, its
planning process, its vehicle hub's held links) with the identity the token
(or a one-time code) proved, the server's clock and policy, and the server's
waker — the same class the embedded mode runs, so audit, stamping and
refusals cannot drift between the two.

``Kit.call`` is the one way a request runs: scope check, the work, an audit
row either way (``server.<command>``). The routes decide nothing the
authority decides: whether the caller sees a draft (``RequestContext.visible``
asks ``LocalAuthority.visible``), whether they may follow a flight, what a
result is stamped with (the session's ``stamps``: mode, identity, the server's
clock and time), the fleet's live state over the world (``Grounds.seen``).
The world comes from the server's ``WorldCache`` (one snapshot per content,
shared by every request in flight); an audit row names the token's id, the client's address and, when
someone acted for someone else, the caller; a read that succeeded is audited
in a batch (``flows.server.audit_queue``), everything else at once; a refusal
raised before ``Kit.call`` ran is audited by the error handlers
(``Kit.refused``); while the full walk has found a break in the ledger,
decisions are refused (``flows.server.integrity``); a plan is decided in the
server's planning process (``flows.server.plan_pool``), never on a thread
that would hold the GIL for seconds; a read waits at the safety gate
(``flows.server.gate``) while a recall or an approval is in progress and then
runs in one read transaction (``Ledger.read_session``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from flows.authority.local import LocalAuthority
from flows.authority.session import Session
from flows.authority.waking import Waker
from flows.ledger import AuditEntry, DraftRecord, Ledger
from flows.server.audit_queue import AuditQueue
from flows.server.config import ServerConfig
from flows.server.events import EventBus
from flows.server.followers import Followers
from flows.server.gate import SafetyGate
from flows.server.admission import GATED
from flows.server.integrity import IntegrityWatch
from flows.server.token_quotas import TokenLimits
from flows.server.links import LinkStore, resolve_links
from flows.server.plan_pool import PlanPool
from flows.server.references import relative_files
from flows.server.tokens import TokenInfo
from flows.server.totp import TotpStore
from flows.server.world_cache import WorldCache
from flows.authority.interface import Actor, Policy
from flows.usecases.common import user_of
from flows.usecases.grounds import Grounds
from flows.errors import Forbidden
from planner.errors import SortieError
from planner.world.model import User, World

__all__ = ["Caller", "Kit", "RequestContext", "EVENT_FIELDS", "READS"]

#: The commands that only read: their audit rows, when they succeeded, are written in batches (``audit_queue``).
READS = frozenset({"whoami", "drafts", "pending", "show", "diff", "log", "export", "report", "events", "ops.map",
                   "ops.flights", "ops.stream"})

#: The fields of a result that an event carries (never a plan, a path or a token).
EVENT_FIELDS = ("draft_id", "version", "status", "verdict", "plan_hash", "requested_by", "draft_status", "state",
                "outcome", "reason", "changed", "first", "request_id")


@dataclass(frozen=True)
class Caller:
    """The verified caller of one request, and where it called from (the peer's address, as the server saw it)."""

    token: TokenInfo
    actor: Actor
    client_addr: str | None = None


@dataclass
class RequestContext:
    """One request: who, the server's time, one world snapshot, at most one draft read."""

    kit: Kit
    caller: Caller
    now: datetime
    policy: Policy
    _grounds: Grounds | None = None
    _drafts: dict[tuple[str, int | None], DraftRecord] = field(default_factory=dict)
    _authority: LocalAuthority | None = None
    audited: bool = False  # whether this request's audit row was written (else the error handlers write it)

    def grounds(self) -> Grounds:
        """What this request's authority stands on: the server's grounds with one world snapshot for the whole
        request — the cache's, taken once (``WORLD_UNAVAILABLE`` if the folder does not load strictly), its drones as
        the vehicle hub hears them (``Grounds.seen``)."""
        if self._grounds is None:
            self._grounds = self.kit.pinned_grounds()
        return self._grounds

    @property
    def world(self) -> World:
        """This request's one world (``grounds``): the cache's, with the admin's links and bindings and, with the
        vehicle hub, its drones' status, battery and telemetry time as their vehicles say."""
        return self.grounds().world()

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
        """The draft, if the caller sees it: the authority's rule (another tenant's is ``NOT_FOUND``), asked first."""
        rec = self.authority().visible(draft_id)
        self._drafts.setdefault((draft_id, None), rec)
        self._drafts.setdefault((draft_id, rec.version), rec)
        return rec

    def links(self, draft_id: str, version: int | None, asked: str | Mapping[str, str] | None) -> dict[str, str]:
        """The server's link of every drone the version flies; a request's own must match it."""
        rec = self.draft(draft_id, version)
        drones = [s["drone_id"] for s in (rec.plan or {}).get("sorties", [])]
        return resolve_links(self.world, self.kit.links, drones, asked)

    def session(self, actor: Actor | None = None, **evidence: Any) -> Session:
        """The authority's terms for this request: ``actor`` (default the token's user), the server's clock read
        once, its policy and waker; the server audits every request itself, and stamps with its clock."""
        k = self.kit
        clock = k.config.clock.describe()
        return Session(
            actor=actor or self.caller.actor, now_given=self.now, policy=self.policy, waker=k.waker,
            audit_by="caller", checks_visibility=False, evidence={"clock": clock, **evidence},
            clock=k.config.clock.now, stamps={"clock": clock, "server_time": self.now.isoformat()},
        )

    def authority(self, actor: Actor | None = None, **evidence: Any) -> LocalAuthority:
        """The embedded authority on the request's grounds, acting as ``actor`` (default the token's user: that one
        made once a request, as its grounds are)."""
        if actor is not None or evidence:
            return LocalAuthority(self.grounds(), self.session(actor, **evidence))
        if self._authority is None:
            self._authority = LocalAuthority(self.grounds(), self.session())
        return self._authority

    def stamp(self, out: dict[str, Any], actor: Actor | None = None) -> dict[str, Any]:
        """A result a route put together itself, stamped as the authority stamps its own (``Session.stamp``)."""
        return self.session().stamp(out, actor)


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
    worlds: WorldCache = None  # type: ignore[assignment]  # set in __post_init__ when not given
    audits: AuditQueue | None = None  # batched read audits; None writes every row at once
    integrity: IntegrityWatch = field(default_factory=IntegrityWatch)
    limits: TokenLimits = field(default_factory=TokenLimits)
    sessions: Any = None  # flows.server.sessions.Sessions: open streams and long polls end with their token
    gate: SafetyGate = field(default_factory=SafetyGate)  # reads step aside while a safety request runs
    lanes: Any = None  # flows.server.admission.Lanes, for the routes that take a lane only around their thread work
    plans: PlanPool | None = None  # where plans are decided (a process of their own); None: in this process
    hub: Any = None  # the vehicle hub (flows.fleet.hub.VehicleHub) while the server serves with --fleet live
    settler: Any = None  # settles a crash's unanswered vehicle commands (flows.server.rounds.Settler) while serving
    Who: Any = None  # the Annotated dependency that yields the request's ``RequestContext`` (set by ``api``)
    _pinned: Grounds | None = field(default=None, init=False, repr=False)  # ``pinned_grounds``' last, without a hub

    def __post_init__(self) -> None:
        if self.worlds is None:
            self.worlds = WorldCache(self.config.world)

    def context(self, caller: Caller) -> RequestContext:
        return RequestContext(self, caller, self.config.clock.now(), self.config.policy.current())

    def grounds(self) -> Grounds:
        """What the server's authority stands on: its ledger, world (strictly), rule set, planning process and its
        vehicle hub (the fleet's live state, and the held links every use case reaches a vehicle through)."""
        hub = self.hub
        held = {} if hub is None else {"vehicles": hub.vehicles}  # else a link per call (``--fleet file``)
        return Grounds(ledger=self.ledger, world_dir=self.config.world, rules=self.config.rules, strict=True,
                       source=self._world, decide=self.plans.run if self.plans else None, live=hub, **held)

    def pinned_grounds(self) -> Grounds:
        """The grounds of one request: pinned to one world snapshot, strictly loaded (``WORLD_UNAVAILABLE`` when the
        folder does not load). With a vehicle hub, the world as the hub hears its drones now, for this request
        (``Grounds.seen``); without one, the same pinned grounds for every request until the world folder or the
        admin's links change (the cache's snapshot and ``links.json`` are each one object while they do not):
        pinning them again for each request was ~6 % of a read's CPU under a profiler (issue 44's server bench)."""
        if self.hub is not None:
            return self.grounds().seen(pin=True)
        world, last = self._world(), self._pinned
        if last is None or last.snapshot is None or last.snapshot[1] is not world:
            last = self._pinned = self.grounds().pinned(world)
        return last

    def _world(self) -> World:
        """The server's own world: the cache's snapshot with the admin's links and bindings (``flows.server.links``)."""
        return self.links.apply(self.worlds.current())

    def ledger_problem(self) -> str | None:
        """Why the ledger the server holds is not the file at its path any more (``/v1/health``), or None."""
        from flows.ledger.shared import engine_for

        engine = engine_for(self.ledger.path)
        problem = None if engine is None else engine.identity_problem()
        return None if problem is None else problem.replace(str(self.config.home), "<home>")

    def vehicles(self) -> dict[str, Any]:
        """Whether unsigned vehicles are allowed, and which drones are served unsigned now (``/v1/health``)."""
        from flows.server.links import unbound_drones

        try:
            unbound = unbound_drones(self._world(), self.config.home / "keys")
        except SortieError:
            unbound = None  # the world does not load now: every request says so
        return {"allow_unsigned": self.config.allow_unsigned,
                "unsigned": None if unbound is None else sorted(unbound)}

    def audit(self, actor: str | None, command: str, args: Mapping[str, Any], code: str, t0: float,
              started: datetime, proof: str, draft_id: str | None = None, message: str | None = None, *,
              token_id: str | None = None, client_addr: str | None = None, caller: str | None = None,
              batch: bool = False) -> None:
        """One audit row ``server.<command>``: the actor, the token's id (never the token), the client's address, and
        the authenticated caller when it acted for someone else; ``batch`` queues it (a read that succeeded)."""
        entry = AuditEntry(
            actor=actor, command=f"server.{command}",
            args={**args, "mode": "server", "identity": proof, "clock": self.config.clock.describe()},
            result_code=code, duration_s=time.perf_counter() - t0, started=started, draft_id=draft_id,
            message=message, token_id=token_id, client_addr=client_addr,
            caller=caller if caller and caller != actor else None)
        if batch and self.audits is not None:
            self.audits.put(entry)
            return
        try:
            self.ledger.audit_many([entry])
        except SortieError:
            pass  # the ledger is the problem; the request's own answer is what the caller needs

    def call(self, ctx: RequestContext, command: str, scope: str, args: Mapping[str, Any],
             work: Callable[[RequestContext], Any], *, draft_id: str | None = None,
             actor: Actor | None = None) -> dict[str, Any]:
        """Scope check, the work (an authority's action: its result comes stamped), an audit row either way."""
        started, t0, code, message = datetime.now(timezone.utc), time.perf_counter(), "OK", None
        c, who = ctx.caller, actor or ctx.caller.actor
        try:
            if scope not in c.token.scopes:
                raise Forbidden(f"this token may not {scope} (its scopes: {', '.join(sorted(c.token.scopes))})")
            self.integrity.check(command)
            reading = command in READS
            if reading:
                self.gate.pause()  # admitted before a recall or an approval came in: let it go first
            with self.ledger.read_session() if reading else nullcontext():
                out = work(ctx)
            return relative_files(out.to_dict() if hasattr(out, "to_dict") else dict(out), self.config.home)
        except SortieError as exc:
            code, message = exc.code, exc.message
            raise
        except Exception:
            code = "INTERNAL"
            raise
        finally:
            ctx.audited = True
            self.audit(who.id, command, {**args, "token_id": c.token.token_id, "caller": c.actor.id}, code, t0,
                       started, who.proof, draft_id, message, token_id=c.token.token_id, client_addr=c.client_addr,
                       caller=c.actor.id, batch=code == "OK" and command in READS)

    def refused(self, ctx: RequestContext | None, command: str, args: Mapping[str, Any], exc: SortieError, *,
                token_id: str | None = None, client_addr: str | None = None, draft_id: str | None = None) -> None:
        """Audit a refusal that no ``call`` audited (raised before it ran, or outside it): with the verified caller
        when the request had one, else the token id it claimed (unverified) and the client's address."""
        now = datetime.now(timezone.utc)
        if ctx is not None:
            ctx.audited = True
            c = ctx.caller
            self.audit(c.actor.id, command, {**args, "token_id": c.token.token_id}, exc.code, time.perf_counter(),
                       now, c.actor.proof, draft_id, exc.message, token_id=c.token.token_id,
                       client_addr=c.client_addr)
            return
        self.audit(None, command, {**args, "claimed_token_id": token_id}, exc.code, time.perf_counter(), now, "none",
                   draft_id, exc.message, client_addr=client_addr, batch=True)

    async def in_lane(self, lane: str, fn: Callable[[], Any]) -> Any:
        """Run ``fn`` on a worker thread inside ``lane`` (for a route that waits without a thread between its steps)."""
        import anyio.to_thread

        if self.lanes is None:
            return await anyio.to_thread.run_sync(fn)
        if lane in GATED:
            await self.gate.passage()
        admitted = self.lanes.lanes[lane]
        await admitted.enter()
        try:
            return await anyio.to_thread.run_sync(fn)
        finally:
            admitted.leave()

    def publish(self, type_: str, d: Mapping[str, Any]) -> None:
        """One event on the feed, for the tenant of the draft it is about."""
        tenant = d.get("tenant")
        if tenant is None and d.get("draft_id"):
            try:
                tenant = self.ledger.get_draft(str(d["draft_id"])).tenant  # a result without its tenant (a dispatch)
            except SortieError:
                tenant = None
        self.bus.publish(type_, tenant, {k: d.get(k) for k in EVENT_FIELDS if d.get(k) is not None})
