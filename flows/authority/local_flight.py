"""The embedded authority's flight actions: dispatch, reconcile, launch, follow, pause, resume, recall.

A part of ``LocalAuthority`` (``flows.authority.local``) in a module of its
own so each stays readable in one sitting; it works on the same ``Grounds``
and ``Session`` (``self.grounds``, ``self.s``), and with a vehicle hub every
action sees the fleet as its vehicles report it (``LocalAuthority._seen``).
Every action reaches the vehicles through the grounds' ``Vehicles`` port at
the link the caller gives (the embedded mode: ``--link`` or the dispatch's),
which for ``sortie server`` is always its own record of each drone's address.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flows.authority.interface import Links, MonitorRequest, Relay
from flows.usecases import control, dispatching

if TYPE_CHECKING:
    from collections.abc import Mapping

    from flows.authority.results import (ControlView, DispatchView, HeldCleared, MonitorView, ReconcileView,
                                         VehicleHolds)

    from flows.authority.session import Session
    from flows.usecases.grounds import Grounds

__all__ = ["FlightActions"]


class FlightActions:
    """Dispatch, reconcile, monitor and the flight controls (mixed into ``LocalAuthority``)."""

    grounds: Grounds
    s: Session

    if TYPE_CHECKING:  # LocalAuthority's: one audit row per command where the caller wants one
        def _audited(self, command: str, args: Mapping[str, Any], work: Callable[[Grounds], dict[str, Any]],
                     actor: Any = None) -> dict[str, Any]: ...

        def _seen(self) -> Grounds: ...

    def followable(self, draft_id: str, version: int | None = None) -> Any:
        """The version, if the acting user may follow its flight (the dispatcher role for its tenant and region)
        and it was dispatched (followed, or ended: its recorded end is the answer); else ``Forbidden`` /
        ``Conflict``. What ``sortie server`` asks before it starts (or joins) the follower of a flight."""
        from flows.usecases.monitoring import ENDED_STATES, FOLLOWED_STATES
        from flows.errors import Conflict

        rec = self._dispatcher(draft_id, version, "follow flights")
        if rec.state not in FOLLOWED_STATES | ENDED_STATES:
            raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state}; only a dispatched mission can be followed")
        return rec

    def _dispatcher(self, draft_id: str, version: int | None, what: str) -> Any:
        """The version, if the acting user holds the dispatcher role for its tenant and region (``Forbidden``
        otherwise: even "nothing to do" is theirs to hear)."""
        from flows.usecases.common import user_of
        from flows.errors import Forbidden

        g = self.grounds
        rec = g.ledger.get_draft(draft_id, version)
        user = user_of(g.world(rec.world_dir), self.s.acting().id, what)
        if not user.may("dispatcher", rec.tenant, rec.region_id):
            raise Forbidden(f"{user.id} may not {what} of tenant {rec.tenant} (the dispatcher role)")
        return rec

    def dispatch_refusal(self, draft_id: str, version: int, user: str | None, *,
                         approving: bool = False) -> str | None:
        """Why a dispatch by ``user`` after an approval would be refused for lack of the dispatcher role, or None.

        The embedded authority dispatches as the named user, so it checks their role in users.json. With
        ``approving`` (``user`` is the approver who would also dispatch) someone who may not approve at all
        gets None: the ledger refuses their approval and says why.
        """
        if not user:
            return None
        g = self.grounds
        if dispatching.holds_role(draft_id, version, user, "dispatcher", grounds=g):
            return None
        if approving and not dispatching.holds_role(draft_id, version, user, "approver", grounds=g):
            return None
        return f"{user} does not hold the dispatcher role for draft {draft_id}"

    def dispatch(self, draft_id: str, version: int | None = None, *, link: Links = None, dry_run: bool = False,
                 on_behalf_of: str | None = None) -> DispatchView:
        def work(g: Grounds) -> dict[str, Any]:
            return dispatching.dispatch(draft_id, version, actor=self.s.acting(on_behalf_of), now=self.s.now(),
                                        link=link, dry_run=dry_run, grounds=g).to_dict()

        return self._audited("dispatch", {"draft_id": draft_id, "version": version, "dry_run": dry_run,
                                          "link": dict(link) if isinstance(link, dict) else link}, work,
                             self.s.acting(on_behalf_of) if on_behalf_of else None)

    def reconcile(self, draft_id: str, *, link: Links = None, timeout_s: float = 30.0) -> ReconcileView:
        """Read the vehicle(s) of an unsettled dispatch back and record what they hold; never re-sends (the
        dispatcher role first: what a dispatch left on a vehicle is theirs to hear)."""
        from flows.usecases.reconciling import reconcile

        self._dispatcher(draft_id, None, "reconcile dispatches")
        return self.s.stamp(reconcile(draft_id, actor=self.s.acting().id, now=self.s.now(), link=link,
                                      timeout_s=timeout_s, grounds=self._seen()))

    def read_vehicle(self, drone_id: str | None = None, *, link: str | None = None,
                     timeout_s: float = 30.0) -> VehicleHolds:
        """What a vehicle holds, read back through the grounds' port (``flows.usecases.reconciling.vehicle_holds``);
        a named drone is bound as its fleet entry says and needs the dispatcher role."""
        from flows.usecases.reconciling import vehicle_holds

        def work(g: Grounds) -> dict[str, Any]:
            return vehicle_holds(grounds=g, actor=self.s.actor_id(), drone_id=drone_id, link=link,
                                 timeout_s=timeout_s)

        return self._audited("read-vehicle", {"drone_id": drone_id, "link": link, "timeout_s": timeout_s}, work)

    def clear_held(self, drone_id: str, *, reason: str) -> HeldCleared:
        """Release a drone the hub holds after foreign control (``flows.usecases.reconciling.clear_held``: a
        dispatcher or admin of its tenant, the reason recorded)."""
        from flows.usecases.reconciling import clear_held

        def work(g: Grounds) -> dict[str, Any]:
            return clear_held(grounds=g, actor=self.s.acting().id, drone_id=drone_id, reason=reason)

        return self._audited("fleet.clear", {"drone_id": drone_id, "reason": reason}, work)

    def launch(self, draft_id: str, version: int | None = None, *, link: Links = None, prearm_wait_s: float = 90.0,
               on_behalf_of: str | None = None) -> ControlView:
        """Pre-flight checks from each vehicle, then its arm-and-start sequence (``flows.usecases.launching``);
        LAUNCHED, or ``PREFLIGHT_FAILED`` naming the check with the vehicle left disarmed."""
        from flows.usecases.launching import launch
        from flows.vehicle.launch import LaunchOptions

        who = self.s.acting(on_behalf_of)
        return self.s.stamp(launch(draft_id, version, actor=who, now=self.s.now(), grounds=self._seen(), link=link,
                                   options=LaunchOptions(prearm_wait_s=prearm_wait_s),
                                   audit=self.s.audit_by != "caller").to_dict(), who)

    def monitor(self, draft_id: str, version: int | None = None, *, request: MonitorRequest = MonitorRequest(),
                link: Links = None, on_behalf_of: str | None = None,
                on_update: Callable[[Any, str, dict[str, Any]], None] | None = None,
                launch_as: str | None = None,
                on_launched: Callable[[dict[str, Any]], None] | None = None) -> MonitorView:
        """Follow the dispatched version to its end here (this process holds the links) and record it; with
        ``launch_as`` (a dispatcher) launch it first through the very links the follower watches, the launch's
        answer (or ``{"error": …}``) under ``"launch"`` and given to ``on_launched`` as soon as it is known."""
        from flows.usecases.monitoring import monitor_mission
        from flows.vehicle.flight_record import MonitorOptions

        opts = MonitorOptions(timeout_s=request.timeout_s, link_lost_s=request.link_lost_s,
                              link_alert_s=min(2.0, request.link_lost_s), battery_margin_pct=request.battery_margin_pct,
                              start_wait_s=min(60.0, request.timeout_s))
        who = on_behalf_of or self.s.actor_id()
        actor = f"{who} (server monitor)" if self.s.mode == "server" else (who or "monitor")
        g = self._seen()
        if launch_as:
            from flows.usecases.flying import launch_and_follow

            launched, result = launch_and_follow(
                draft_id, version, launch_as=launch_as, grounds=g, now=self.s.fixed_now(), actor=actor, options=opts,
                link=link, clock=self.s.clock, on_update=on_update, on_launched=on_launched)
            return self.s.stamp(result.to_dict() | {"launch": launched})
        result = monitor_mission(draft_id, version, grounds=g, link=link, actor=actor, now=self.s.fixed_now(),
                                 options=opts, on_update=on_update, clock=self.s.clock)
        return self.s.stamp(result.to_dict())

    def _control(self, action: str, draft_id: str, relay: Relay | None, **kw: Any) -> dict[str, Any]:
        """One flight control as the actor, or as the relayed operator (asserted here, like every local identity)."""
        act = getattr(control, action)
        who = self.s.acting(relay.user if relay is not None else None)
        return self.s.stamp(act(self._seen(), draft_id, kw.pop("version"), actor=who, now=self.s.now(),
                                audit=self.s.audit_by != "caller", **kw).to_dict(), who)

    def pause(self, draft_id: str, version: int | None = None, *, reason: str = "",
              link: Links = None, relay: Relay | None = None, force: bool = False) -> ControlView:
        """Hold the vehicles where they are; a pause the autopilot refuses is reported as refused, or with
        ``force`` held in BRAKE instead (``flows.usecases.control.pause``)."""
        return self._control("pause", draft_id, relay, version=version, reason=reason, link=link, force=force)

    def resume(self, draft_id: str, version: int | None = None, *, reason: str = "",
               link: Links = None, relay: Relay | None = None) -> ControlView:
        return self._control("resume", draft_id, relay, version=version, reason=reason, link=link)

    def recall(self, draft_id: str, version: int | None = None, *, land_here: bool = False, reason: str = "",
               link: Links = None, wait_s: float = 0.0, relay: Relay | None = None) -> ControlView:
        return self._control("recall", draft_id, relay, version=version, land_here=land_here, reason=reason,
                             link=link, wait_s=wait_s)
