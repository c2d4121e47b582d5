"""The embedded authority: the ledger and the use cases in this process.

``LocalAuthority(grounds, session)`` runs each user action on the use cases
(``flows.usecases``) over its ``Grounds`` (``flows.usecases.grounds``: ledger,
world, rules, where plans are decided, how vehicles are reached) for the
``Session`` (``flows.authority.session``: who acts, when, under which policy,
who audits): the CLI's own ledger with the identity *asserted*, a Prefect
flow's, or — per request — ``sortie server``'s ledger with the identity its
token proved, its clock, world snapshot and policy. The server's routes call
this same class, so what an action checks, records, stamps and refuses cannot
drift between the embedded mode and the server.

After it records an approval, a rejection, a cancel or an expiry it wakes the
Prefect run waiting on that version (``Session.waker``;
``flows.authority.waking``): whoever decided, from whatever client. The
flight actions (dispatch, control, monitor, reconcile) are
``flows.authority.local_flight``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flows.authority.interface import Anchors, Relay
from flows.authority.local_flight import FlightActions
from flows.authority.session import Session
from flows.usecases import decisions, planning, reading
from flows.actor import Actor
from flows.usecases.common import user_of
from flows.usecases.grounds import Grounds
from flows.errors import Forbidden, LedgerUnavailable, ServerUnavailable
from planner.errors import SortieError

if TYPE_CHECKING:
    from flows.authority.results import (BackupView, ControlView, DiffView, DraftList, DraftView, ExpiryView,
                                         ExportView, FleetView, LogView, PendingView, ReportView, RequestExpiry,
                                         RequestView, WhoAmI)

__all__ = ["LocalAuthority"]


class LocalAuthority(FlightActions):
    """Every action of ``flows.authority.interface.Authority`` on the use cases in this process."""

    def __init__(self, grounds: Grounds, session: Session) -> None:
        self.grounds = grounds
        self.s = session

    @property
    def mode(self) -> str:
        return self.s.mode

    # ------------------------------------------------------------------ plumbing

    def _seen(self) -> Grounds:
        """The grounds of one call: with a live vehicle hub (``Grounds.live``), every use case of the call sees one
        world whose drones say what their vehicles say (as a server request's snapshot does); else as they are."""
        return self.grounds.seen()

    def _audited(self, command: str, args: Mapping[str, Any], work: Callable[[Grounds], dict[str, Any]],
                 actor: Actor | None = None) -> dict[str, Any]:
        """Run one action on the call's grounds; with ``audit_by="command"`` write its audit row (mode, identity),
        whatever the outcome."""
        if self.s.audit_by != "command":
            return self.s.stamp(work(self._seen()), actor)
        started, t0, code, message = datetime.now(timezone.utc), time.perf_counter(), "OK", None
        try:
            return self.s.stamp(work(self._seen()), actor)
        except SortieError as exc:
            code, message = exc.code, exc.message
            raise
        except BaseException as exc:
            code = "INTERNAL" if isinstance(exc, Exception) else type(exc).__name__
            raise
        finally:
            if code not in ("LEDGER_UNAVAILABLE", "LEDGER_TAMPERED"):
                who = actor or self.s.actor or Actor("")
                context = {"world": _text(self.grounds.world_dir), "now": _text(self.s.now_given),
                           "rules": _text(self.grounds.rules)}
                try:
                    self.grounds.ledger.audit(
                        actor=who.id or None, command=command, args={**context, **args, **who.stamp()},
                        result_code=code, duration_s=time.perf_counter() - t0, started=started,
                        draft_id=args.get("draft_id"), message=message,
                    )
                except (LedgerUnavailable, SortieError):
                    pass  # the ledger itself is the problem; the action's own error is what the user needs

    def _visible(self, draft_id: str, g: Grounds) -> None:
        """A named user sees only drafts of their tenants, where this session checks it itself."""
        if self.s.checks_visibility and self.s.actor_id():
            reading.check_visible(draft_id, self.s.actor, grounds=g)  # type: ignore[arg-type]

    def visible(self, draft_id: str) -> Any:
        """The draft, if the acting user may see it (``reading.seen_by``, the one rule: ``NotFound`` on a server,
        ``Forbidden`` locally); what ``sortie server`` asks first of every request about a draft."""
        return reading.check_visible(draft_id, self.s.acting(), grounds=self.grounds)

    def _wake(self, draft_id: str, version: int, *, plan_hash: str | None, actor: str, decision: str,
              comment: str) -> str | None:
        if self.s.waker is None:
            return None
        return self.s.waker.wake(draft_id, version, plan_hash=plan_hash, actor=actor, decision=decision,
                                 comment=comment)

    # ------------------------------------------------------------------ who, what waits

    def whoami(self) -> WhoAmI:
        world = self.grounds.world()
        u = user_of(world, self.s.actor_id(), "use sortie")
        return self.s.stamp({"user": u.id, "roles": sorted(u.roles), "tenants": sorted(u.tenants), "world": world.name,
                             "policy": self.s.policy.to_dict()})

    def pending(self) -> PendingView:
        from flows.usecases.pending import pending

        return self.s.stamp(pending(user=self.s.actor if self.s.actor_id() else None, now=self.s.now(),
                                    policy=self.s.policy, grounds=self.grounds))

    def fleet(self) -> FleetView:
        """The fleet as this authority judges it: live from its vehicle hub (``source: live``, the server route's
        rows), else as the world file says (``source: file``: the embedded mode holds no vehicle links)."""
        from flows.fleet.overlay import fleet_rows

        def work(g: Grounds) -> dict[str, Any]:
            world = g.world()  # (with a hub: followed, pinned)
            tenants = user_of(world, self.s.actor_id(), "see the fleet").tenants if self.s.actor_id() else {"*"}
            live = None if g.live is None else g.live.snapshot()
            return {"drones": fleet_rows(world, live, tenants), "source": "file" if live is None else "live",
                    "world": world.name}

        return self._audited("fleet", {}, work)

    # ------------------------------------------------------------------ planning and reading

    def plan(self, text: str, *, region_id: str | None = None, area: Any = None,
             coverage_target: float | None = None, on_behalf_of: str | None = None) -> DraftView:
        args = {"text": text, "region": region_id, "area": area is not None, "coverage_target": coverage_target,
                "on_behalf_of": on_behalf_of}

        # Behind the server, a service token's own user bounds where it may plan for others (issue 28).
        relayed_by = self.s.actor_id() if on_behalf_of and self.mode == "server" else None

        def work(g: Grounds) -> dict[str, Any]:
            return planning.plan_draft(
                text=text, region_id=region_id, area_geojson=area, requested_by=self.s.acting(on_behalf_of),
                now=self.s.now(), grounds=g, coverage_target=coverage_target, relayed_by=relayed_by,
            ).to_dict()

        return self._audited("plan", args, work, self.s.acting(on_behalf_of) if on_behalf_of else None)

    def replan(self, draft_id: str) -> DraftView:
        def work(g: Grounds) -> dict[str, Any]:
            return planning.replan(draft_id, requested_by=self.s.acting(), now=self.s.now(), grounds=g).to_dict()

        return self._audited("replan", {"draft_id": draft_id}, work)

    def drafts(self, limit: int = 50) -> DraftList:
        def work(g: Grounds) -> dict[str, Any]:
            rows = reading.list_drafts(user=self.s.actor if self.s.actor_id() else None, limit=limit, grounds=g)
            return {"drafts": [d.to_dict() for d in rows]}

        return self._audited("drafts", {"limit": limit}, work)

    def show(self, draft_id: str, version: int | None = None) -> DraftView:
        def work(g: Grounds) -> dict[str, Any]:
            self._visible(draft_id, g)
            return reading.show_draft(draft_id, version, ledger=g.ledger).to_dict()

        return self._audited("show", {"draft_id": draft_id, "version": version}, work)

    def diff(self, draft_id: str, v1: int, v2: int) -> DiffView:
        def work(g: Grounds) -> dict[str, Any]:
            self._visible(draft_id, g)
            return reading.diff_versions(draft_id, v1, v2, ledger=g.ledger)

        return self._audited("diff", {"draft_id": draft_id, "v1": v1, "v2": v2}, work)

    def log(self, draft_id: str) -> LogView:
        def work(g: Grounds) -> dict[str, Any]:
            self._visible(draft_id, g)
            return reading.draft_log(draft_id, ledger=g.ledger)

        return self._audited("log", {"draft_id": draft_id}, work)

    def export_content(self, draft_id: str, fmt: str, *, version: int | None = None,
                       sortie: int = 0) -> tuple[int, bytes, str]:
        """A version's ground-station file as (version, bytes, suffix), written nowhere (the server sends it)."""
        self._visible(draft_id, self.grounds)
        return reading.export_bytes(draft_id, version, fmt, sortie=sortie, grounds=self.grounds)

    def export(self, draft_id: str, fmt: str, *, version: int | None = None, out: Path | None = None,
               sortie: int = 0) -> ExportView:
        def work(g: Grounds) -> dict[str, Any]:
            self._visible(draft_id, g)
            return reading.export(draft_id, version, fmt, out=out, sortie=sortie, grounds=g)

        args = {"draft_id": draft_id, "version": version, "format": fmt, "out": _text(out), "sortie": sortie}
        return self._audited("export", args, work)

    def report(self, draft_id: str, version: int | None = None, *, out: Path | None = None) -> ReportView:
        """The inspector's report, written beside the version's files (or to ``out``); its map as base64."""
        import base64

        from flows.usecases.report import build_report, write_report

        self._visible(draft_id, self.grounds)
        rep = build_report(draft_id, version, grounds=self.grounds)
        write_report(rep, out, home=self.grounds.home)
        png = None if rep.map_png is None else base64.b64encode(rep.map_png).decode("ascii")
        return self.s.stamp({**rep.to_dict(), "map_png_b64": png})

    # ------------------------------------------------------------------ open requests

    def request(self, request_id: str) -> RequestView:
        from flows.usecases import requests

        def work(g: Grounds) -> dict[str, Any]:
            return requests.show(request_id, viewer=self.s.actor if self.s.actor_id() else None, now=self.s.now(),
                                 grounds=g)

        return self._audited("request", {"request_id": request_id}, work)

    def answer(self, request_id: str, answers: Sequence[str], *, relay: Relay | None = None) -> DraftView:
        """Answer an open request's questions as the acting user (or the relayed person) and plan it."""
        from flows.usecases import requests

        who = self._decider(relay)

        def work(g: Grounds) -> dict[str, Any]:
            try:
                out = requests.answer(request_id, list(answers), answerer=who, now=self.s.now(), grounds=g).to_dict()
            except SortieError as exc:
                if exc.code == "NEEDS_CLARIFICATION":
                    self._wake_request(request_id, "answered")  # a run waiting on the form shows the follow-ups
                raise
            self._wake_request(request_id, "answered")  # a run waiting on the form goes on with this draft
            return out

        return self._audited("answer", {"request_id": request_id, "answers": list(answers)}, work, who)

    def _wake_request(self, request_id: str, why: str) -> None:
        """Wake the Prefect runs waiting on this request's answers (where this authority wakes runs at all)."""
        if self.s.waker is not None:
            from flows.authority.waking import wake_request_runs

            wake_request_runs(request_id, why)

    def expire_request(self, request_id: str, *, deadline: datetime | None = None,
                       on_behalf_of: str | None = None) -> RequestExpiry:
        """EXPIRED once the open request is overdue on this authority's clock, or — the embedded mode, where the
        caller is the authority — past the caller's own wall-clock ``deadline`` (a Prefect run's wait)."""
        from flows.usecases import requests

        turn = requests.expire(request_id, ledger=self.grounds.ledger, actor=self.s.acting(on_behalf_of).id,
                               now=self.s.now(), deadline=deadline, wall_now=datetime.now(timezone.utc))
        if turn.state == "EXPIRED":
            self._wake_request(request_id, "expired")
        return self.s.stamp({"request_id": request_id, "state": turn.state, "turn": turn.turn,
                             "draft_id": turn.draft_id, "expires_time": turn.expires_time, "tenant": turn.tenant})

    def expire_overdue_requests(self) -> list[dict[str, Any]]:
        """The sweeper's part: every open request past its deadline on this authority's clock, EXPIRED."""
        from flows.usecases import requests

        closed = requests.expire_due(self.grounds.ledger, now=self.s.now(), actor=self.s.acting().id)
        for t in closed:
            self._wake_request(t.request_id, "expired")  # a suspended run waiting on it ends EXPIRED
        return [{"request_id": t.request_id, "state": t.state, "turn": t.turn, "tenant": t.tenant,
                 "reason": t.reason} for t in closed]

    def settle_vehicle_commands(self, publish: Callable[[str, dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """The settler's part: the vehicle commands a crashed process sent and never recorded an answer for, settled
        from each vehicle's state (``flows.usecases.settling``); what was settled and how many are left."""
        from flows.usecases import settling

        done = settling.settle_commands(self.grounds, now=self.s.now(), publish=publish)
        return {"settled": [x.to_dict() for x in done], "unsettled": settling.orphaned(self.grounds)}

    # ------------------------------------------------------------------ deciding

    def _decider(self, relay: Relay | None) -> Actor:
        return self.s.acting(relay.user if relay is not None else None)

    def _decided(self, command: str, draft_id: str, version: int, who: Actor, args: Mapping[str, Any],
                 record: Callable[[Grounds], dict[str, Any]], plan_hash: str | None, comment: str) -> dict[str, Any]:
        """Record a decision, then wake the waiting run. A decision after the version's deadline is refused and
        the ledger EXPIRED the version: the waiting run is woken too, so it ends EXPIRED at once."""
        def work(g: Grounds) -> dict[str, Any]:
            try:
                out = record(g)
            except SortieError as exc:
                if isinstance(exc.details, dict) and exc.details.get("state") == "EXPIRED":
                    self._wake(draft_id, version, plan_hash=plan_hash, actor=who.id, decision="reject",
                               comment=f"expired: {exc.message}")
                raise
            out["resumed_run"] = self._wake(draft_id, version, plan_hash=out.get("plan_hash"), actor=who.id,
                                            decision=command, comment=comment)
            return out

        return self._audited(command, {"draft_id": draft_id, "version": version, **args}, work, who)

    def approve(self, draft_id: str, version: int, *, plan_hash: str | None = None, comment: str = "",
                relay: Relay | None = None) -> DraftView:
        who = self._decider(relay)
        return self._decided("approve", draft_id, version, who, {"plan_hash": plan_hash, "comment": comment},
                             lambda g: decisions.approve(
                                 draft_id, version, approver=who, plan_hash=plan_hash, comment=comment,
                                 now=self.s.now(), grounds=g, policy=self.s.policy, evidence=self.s.evidence).to_dict(),
                             plan_hash, comment)

    def reject(self, draft_id: str, version: int, *, reason: str, relay: Relay | None = None) -> DraftView:
        who = self._decider(relay)
        return self._decided("reject", draft_id, version, who, {"reason": reason},
                             lambda g: decisions.reject(
                                 draft_id, version, approver=who, reason=reason, now=self.s.now(), grounds=g,
                                 policy=self.s.policy, evidence=self.s.evidence).to_dict(),
                             None, reason)

    def expire(self, draft_id: str, version: int, *, deadline: datetime | None = None,
               on_behalf_of: str | None = None) -> ExpiryView:
        """EXPIRED once the version is overdue: past the policy's window on this authority's clock, or — the
        embedded mode, where the caller is the authority — past the caller's own wall-clock ``deadline``."""
        led, who = self.grounds.ledger, self.s.acting(on_behalf_of).id
        rec = led.get_draft(draft_id, int(version))
        state = rec.state
        if deadline is not None:  # the caller's own window: only the wall clock against it counts
            if state in ("DRAFT", "WAITING_RESOURCE") and datetime.now(timezone.utc) >= deadline:
                state = _expire_at(led, rec, who, f"not approved by {deadline.isoformat(timespec='seconds')}",
                                   self.s.now())
        else:
            state = decisions.expire_if_due(draft_id, version, actor=Actor(who, self.mode), now=self.s.now(),
                                            window=self.s.policy.approval_ttl, ledger=led)
        out = {"draft_id": draft_id, "version": int(version), "status": state}
        if state == "EXPIRED" and rec.state != "EXPIRED":
            out["resumed_run"] = self._wake(draft_id, version, plan_hash=rec.plan_hash, actor=who, decision="reject",
                                            comment="the approval window closed; the draft is EXPIRED in the ledger")
        return self.s.stamp(out)

    def cancel(self, draft_id: str, *, reason: str, version: int | None = None) -> ControlView:
        from flows.usecases import control

        def wake(rec: Any, actor: str, why: str) -> str | None:
            return self._wake(rec.draft_id, rec.version, plan_hash=rec.plan_hash, actor=actor, decision="reject",
                              comment=f"cancelled: {why}")

        return self.s.stamp(control.cancel(self.grounds, draft_id, version, actor=self.s.acting(), reason=reason,
                                           now=self.s.now(), wake_run=wake, audit=self.s.audit_by != "caller").to_dict())

    def run_cancelled(self, draft_id: str, version: int, *, run_id: str) -> ControlView:
        """The Prefect run waiting on this version was cancelled (the UI's Cancel): withdraw the version —
        DRAFT/APPROVED → CANCELLED if no dispatch claimed it — and retire its expiry run. Prefect records no
        user, so the actor is the run; cancelling is the safe direction (nothing flies)."""
        from flows.authority.waking import retire_expiry_runs

        actor = f"prefect:run {run_id}"
        reason = f"the Prefect run {run_id} waiting on it was cancelled (Cancel in the Prefect UI or API)"
        ledger = self.grounds.ledger
        rec = ledger.get_draft(draft_id, int(version))
        out = {"draft_id": draft_id, "version": rec.version, "action": "cancel", "state": rec.state, "changed": False,
               "run_id": run_id}
        if rec.state in ("DRAFT", "APPROVED"):
            try:
                out.update(state=ledger.withdraw_unclaimed(draft_id, rec.version, actor=actor, reason=reason,
                                                           now=self.s.now()).state, changed=True)
            except SortieError:  # claimed meanwhile (it flies: recall it) or decided: the ledger's state stands
                out["state"] = ledger.get_draft(draft_id, rec.version).state
        out["message"] = reason if out["changed"] else f"draft {draft_id} v{rec.version} is {out['state']}; unchanged"
        if out["changed"]:
            retire_expiry_runs(draft_id, rec.version)
            if self.s.audit_by != "caller":
                ledger.audit(actor=actor, command="prefect.run-cancelled", args=dict(out), result_code="OK",
                             duration_s=0.0, started=datetime.now(timezone.utc), draft_id=draft_id)
        return self.s.stamp(out, Actor(actor, self.mode))

    def record_attempt(self, draft_id: str, version: int, *, command: str, actor: str, args: Mapping[str, Any],
                       code: str, message: str | None) -> None:
        """The audit row of a decision a client refused before asking (a Prefect form input)."""
        decisions.record_attempt(draft_id, version, command=command, actor=Actor(actor, self.mode), args=args,
                                 started=datetime.now(timezone.utc), code=code, message=message,
                                 ledger=self.grounds.ledger)

    def wall_deadline(self, draft_id: str, version: int) -> datetime | None:
        """The version's decision deadline (recorded + the policy's window) when this authority stamps with this
        machine's wall clock (no fixed time); else None: a deadline in another clock's time is no deadline here."""
        from flows.ledger.approvals import decide_by

        if self.s.fixed_now() is not None:
            return None
        return decide_by(self.grounds.ledger.get_draft(draft_id, int(version)), self.s.policy.approval_ttl)

    # ------------------------------------------------------------------ the record itself, and what happens

    def ledger_backup(self, dest: Path, against: Anchors = ()) -> BackupView:
        """A copy of the ledger at ``dest``, checked against the published ``against`` anchors. Behind a server only an
        admin may (the home is the server's, not the caller's); embedded, whoever holds the home does."""
        from flows.integrity.backup import backup
        from flows.ledger.checkpoints import parse_anchor

        if self.mode == "server":
            user = user_of(self.grounds.world(), self.s.acting().id, "back up the ledger")
            if "admin" not in user.roles:
                raise Forbidden(f"{user.id} may not back up the ledger (the admin role is needed)")

        anchors = [(name, parse_anchor(dict(anchor))) for name, anchor in against]
        return self.s.stamp(backup(self.grounds.ledger, dest, against=anchors))

    def events(self, *, max_events: int | None = None, timeout_s: float | None = None) -> Iterator[dict[str, Any]]:
        raise ServerUnavailable("live events come from `sortie server`: SORTIE_SERVER is not set")


def _expire_at(led: Any, rec: Any, actor: str, reason: str, now: datetime) -> str:
    """DRAFT/WAITING_RESOURCE → EXPIRED as a conditional transition: an approval that won the race stands."""
    from flows.errors import Conflict

    try:
        return str(led.transition(rec.draft_id, rec.version, expected_state=rec.state,
                                  expected_row_version=rec.row_version, to_state="EXPIRED", actor=actor,
                                  reason=reason, now=now).state)
    except Conflict:
        return str(led.get_draft(rec.draft_id, rec.version).state)


def _text(value: Any) -> str | None:
    return None if value is None else (value.isoformat() if isinstance(value, datetime) else str(value))

