"""Following a dispatched mission to its end: the ledger half (states, alerts, the flight record) of the monitor.

``monitor_mission`` is what the authority's ``monitor`` runs (``sortie
monitor``, the Prefect task, the server's follower). It has one link per
dispatched drone from the grounds' ``Vehicles`` port (the link the dispatch
used, or ``link``; or the caller's ``links``, shared with a launch), and runs
one ``SortieChain`` per drone (``flows.usecases.sortie_chain``): every sortie
of the drone, in order — followed (``flows.vehicle.follow``, which knows no
ledger), then the dock's turnaround, the next one uploaded, launched and
followed. The ledger moves as the vehicles show it:

- the vehicle seen airborne moves the draft LAUNCHED (or DISPATCHED, when it
  was launched from elsewhere) → IN_FLIGHT;
- **telemetry silent for ``link_lost_s``** → LINK_LOST ("it may still be
  flying": pause, recall and land stay allowed); telemetry back → IN_FLIGHT
  (or RECALLING) where the vehicle is; each gap is kept with the flight;
- a sortie landed with more to fly, uploaded, launched → IN_FLIGHT → IN_FLIGHT
  events naming it;
- **the battery projected under the reserve** (``flows.vehicle.energy_projection``)
  → the authority recalls the vehicle itself (``flows.usecases.energy_guard``):
  RECALLING by "authority (energy guard)" with the projection as the reason;
- the end, from every sortie (``flows.usecases.mission_end``): SUCCEEDED only
  when every sortie flew its planned work (measured on the track); INCOMPLETE
  naming what was not flown; RECALLED; ABORTED naming a failsafe or a vehicle
  LOST past its endurance. Every transition goes through ``Ledger.transition``
  and so writes an event with actor, time and reason; a recall or a pause
  recorded by another process meanwhile is re-read, never overwritten.
- alerts (battery below the plan, link silent, a mode change, a failsafe, the
  projection) are audit rows (``monitor.alert``) and kept with the flight.

**Telemetry is data, never instructions**: what a vehicle says never becomes a
command. The authority's own decisions — fly the next sortie of an approved and
launched plan, recall a vehicle whose measured consumption breaks the plan's
reserve — are rules applied to measured figures, recorded with who and why.

What was seen is written to ``<home>/drafts/<id>/v<n>/flight.json`` (before
the state moves: a crash in between leaves a re-runnable state, never an end
without its record); a monitor run again on a mission that has not ended
resumes it (its sorties already ended are kept). Event times are the
authority's ``clock`` when one is given (``sortie server``: the vehicle's time
since boot kept beside it in the reason), else the dispatch's ``now`` plus the
vehicle's time (a reproducible demo), else the wall clock.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from flows.errors import Conflict
from flows.ledger import TRANSITIONS
from flows.usecases.expectations import accepted_uploads, expectations_for
from flows.usecases.grounds import Grounds
from flows.usecases.mission_end import ENDED_STATES, mission_end
from flows.usecases.sortie_chain import SortieChain
from flows.vehicle.flight_record import DroneFlight, MonitorOptions, MonitorResult
from flows.vehicle.follow import MONITOR_COMPONENT_ID, Notify
from planner.errors import NotFound, SortieError
from planner.plan import Sortie, plan_from_dict

__all__ = ["Mission", "monitor_mission", "load_flight", "flight_path", "FOLLOWED_STATES", "ENDED_STATES",
           "expectations_for"]

#: How long a take-off seen on a DISPATCHED draft waits for the launch's LAUNCHED record before the follower
#: records IN_FLIGHT itself (a vehicle launched from another ground station).
LAUNCH_GRACE_S = 10.0
#: Ledger states in which a flight is followed.
FOLLOWED_STATES = frozenset({"DISPATCHED", "LAUNCHED", "IN_FLIGHT", "RECALLING", "LINK_LOST"})
GUARD_ACTOR = "authority (energy guard)"


def flight_path(draft_id: str, version: int, home: Path) -> Path:
    """``<home>/drafts/<id>/v<n>/flight.json`` (``home``: the ledger's folder, say the server's ``--home``)."""
    from flows.context import draft_dir

    return draft_dir(draft_id, version, home) / "flight.json"


def load_flight(draft_id: str, version: int, home: Path) -> dict[str, Any] | None:
    """The recorded flight of a version (what ``monitor_mission`` wrote), or None."""
    path = flight_path(draft_id, version, home)
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _flight_of(d: Mapping[str, Any]) -> DroneFlight:
    return DroneFlight(**{k: v for k, v in d.items() if k in DroneFlight.__dataclass_fields__})


class Mission:
    """One following of one dispatched version: the ledger's moves, the chains' shared state, the record."""

    def __init__(self, grounds: Grounds, rec: Any, *, actor: str, now: datetime | None,
                 clock: Callable[[], datetime] | None, options: MonitorOptions, on_update: Notify | None,
                 launch_as: str | None) -> None:
        self.grounds, self.ledger = grounds, grounds.ledger
        self.draft_id, self.version = rec.draft_id, rec.version
        self.actor, self.base, self.clock, self.opts, self.on_update = actor, now, clock, options, on_update
        self.current = rec
        self.plan = plan_from_dict(rec.plan or {})
        try:
            self.world = grounds.world(rec.world_dir)
        except SortieError:
            self.world = None
        self.dispatch = next((d for d in self.ledger.dispatches(rec.draft_id) if d.version == rec.version), None)
        self._launcher = launch_as
        self.deadline = time.monotonic() + options.timeout_s
        self.flights: list[DroneFlight] = []
        self.not_flown_: dict[int, str] = {}
        self.pending: dict[int, str] = {}
        self.live: dict[str, DroneFlight] = {}  # each drone's flight being followed now
        self.landed_clock: dict[tuple[str, int], float] = {}
        self.recall_seen = rec.state == "RECALLING" or self._recall_recorded()
        self.guard: dict[str, Any] = {}
        self.resent: list[dict[str, Any]] = []  # recalls sent again when telemetry returned (``_resend_recall``)
        self.links: dict[str, Any] = {}
        self._expectations: list[Any] = []  # the first sorties' (the profile of a later one is its chain's)
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._airborne: dict[str, Any] = {}

    # --- the record ------------------------------------------------------------------

    @property
    def launcher(self) -> str | None:
        """Who launches the later sorties: the one given, else who launched the first (read when first needed: a
        monitor started at dispatch, before the launch, said "launched by None")."""
        if self._launcher is None:
            self._launcher = self._recorded_launcher()
        return self._launcher

    def _recorded_launcher(self) -> str | None:
        """Who launched the mission's first sortie (the LAUNCHED event's actor), if sortie launched it."""
        return next((e.actor for e in self.ledger.events(self.draft_id)
                     if e.version == self.version and e.to_state == "LAUNCHED"), None)

    def _recall_recorded(self) -> bool:
        return any(e.version == self.version and e.to_state == "RECALLING" for e in self.ledger.events(self.draft_id))

    def stamp(self, f: DroneFlight | None = None, at_s: float | None = None) -> datetime:
        if self.clock is not None:
            return self.clock()
        if self.base is None:
            return datetime.now(timezone.utc)
        return self.base + timedelta(seconds=at_s if at_s is not None else (f.last_t_s if f is not None else 0.0))

    def move(self, to_state: str, reason: str, f: DroneFlight | None = None, at_s: float | None = None) -> None:
        """A legal step from the ledger's state now to ``to_state`` (re-read on a conflict; a step that is not legal
        from where another process left the row is not made: theirs stands)."""
        if self.clock is not None and f is not None:  # the authority's clock stamps it; the vehicle's goes beside
            reason = f"{reason} [vehicle time {(at_s if at_s is not None else f.last_t_s):.1f} s since boot]"
        with self._lock:
            for _ in range(4):
                cur = self.current
                if cur.state == to_state and to_state not in ("IN_FLIGHT", "LINK_LOST"):
                    return
                if (cur.state, to_state) not in TRANSITIONS and cur.state in ("DISPATCHED", "LAUNCHED") \
                        and ("IN_FLIGHT", to_state) in TRANSITIONS:
                    self.move("IN_FLIGHT", "the vehicle took off (seen late)", f)
                    continue
                if (cur.state, to_state) not in TRANSITIONS:
                    return
                try:
                    self.current = self.ledger.transition(
                        self.draft_id, self.version, expected_state=cur.state, expected_row_version=cur.row_version,
                        to_state=to_state, actor=self.actor, reason=reason, now=self.stamp(f, at_s))
                    return
                except Conflict:
                    self.current = self.ledger.get_draft(self.draft_id, self.version)

    def note(self, reason: str, f: DroneFlight | None = None) -> None:
        """An event on the mission under way (IN_FLIGHT → IN_FLIGHT, or LINK_LOST → LINK_LOST)."""
        with self._lock:
            self.refresh()
            if self.current.state in ("IN_FLIGHT", "LINK_LOST"):
                self.move(self.current.state, reason, f)

    def refresh(self) -> str:
        try:
            self.current = self.ledger.get_draft(self.draft_id, self.version)
        except SortieError:
            pass
        if self.current.state in ("RECALLING", "RECALLED"):  # RECALLED: recalled on the ground, between sorties
            self.recall_seen = True
        return self.current.state

    def recalled(self) -> bool:
        """A recall is recorded (RECALLING now, or before a telemetry loss): asked at a mode change and a landing."""
        self.refresh()
        return self.recall_seen

    # --- what the followers say ---------------------------------------------------------

    def notify(self, f: DroneFlight, what: str, data: dict[str, Any]) -> None:
        self.live[f.drone_id] = f
        if what == "armed":
            self._airborne.setdefault("t", time.monotonic())
            self._airborne.setdefault("mode", data.get("mode"))
            self._take_off(f, force=True)
        elif "t" in self._airborne and self.current.state in ("DISPATCHED", "LAUNCHED"):
            self._take_off(f)
        if what == "link_lost":
            self.refresh()
            self.move("LINK_LOST", f"{f.drone_id} sortie {f.sortie_index}: {data['message']}", f)
        elif what == "link_back":
            self._link_back(f, data)
            self._resend_recall(f)
        elif what == "energy_breach":
            self._energy_guard(f, data)
        elif what == "alert":
            try:
                self.ledger.audit(actor=self.actor, command="monitor.alert", args=dict(data),
                                  result_code=str(data["kind"]).upper(), duration_s=0.0, started=self.stamp(f),
                                  draft_id=self.draft_id)
            except SortieError:
                pass  # the alert stays in the flight record; a busy ledger must not stop the monitor
        if what == "progress" and data.get("tick"):
            data = {**data, **self.progress(f)}
        if self.on_update is not None:
            self.on_update(f, what, data)

    def _take_off(self, f: DroneFlight, force: bool = False) -> None:
        """LAUNCHED → IN_FLIGHT once seen airborne. DISPATCHED → IN_FLIGHT only after ``LAUNCH_GRACE_S``: the
        launch records LAUNCHED right after the take-off it commanded, and its record must not be pre-empted."""
        now_wall = time.monotonic()
        if not force and now_wall - self._airborne.get("read", 0.0) < 0.2:
            return
        self._airborne["read"] = now_wall
        state = self.refresh()
        if state == "LAUNCHED":  # stamped with the vehicle's own time of the take-off
            self.move("IN_FLIGHT", f"{f.drone_id} is airborne in mode {self._airborne.get('mode')}", f, f.takeoff_t_s)
        elif state == "DISPATCHED" and now_wall - self._airborne["t"] >= LAUNCH_GRACE_S:
            self.move("IN_FLIGHT", f"{f.drone_id} armed and took off in mode {self._airborne.get('mode')} (no launch "
                      "recorded by sortie: launched from another ground station)", f, f.takeoff_t_s)

    def _link_back(self, f: DroneFlight, data: dict[str, Any]) -> None:
        still = [d for d, x in self.live.items() if d != f.drone_id and x.status == "LINK_LOST"]
        if still or self.refresh() != "LINK_LOST":
            return
        gap = f.gaps[-1] if f.gaps else {}
        why = (f"{f.drone_id} sortie {f.sortie_index}: telemetry back after {data['silent_s']:g} s (from t="
               f"{data['from_t_s']:g} s to t={data['back_t_s']:g} s of the vehicle's clock), mode {data['mode']}, "
               f"{gap.get('before', {}).get('reached', '?')} items reached before the gap")
        self.move("RECALLING" if self.recall_seen else "IN_FLIGHT", why, f)

    def _resend_recall(self, f: DroneFlight) -> None:
        """Telemetry is back and a recall is recorded: send it again unless the vehicle already does it
        (``flows.usecases.recall_resend``; on its own thread: the follower reads the link meanwhile)."""
        link = self.links.get(f.drone_id)
        if not self.recalled() or link is None:
            return
        since = time.monotonic()

        def run() -> None:
            from flows.usecases.recall_resend import resend_recall

            try:
                out = resend_recall(self.grounds, self.draft_id, self.version, drone_id=f.drone_id, link=link,
                                    now=self.stamp(f), since=since)
            except SortieError as exc:
                out = {"drone_id": f.drone_id, "error": exc.to_dict()}
            self.resent.append(out)
            self.refresh()

        threading.Thread(target=run, name=f"recall-resend-{self.draft_id}-{f.drone_id}", daemon=True).start()

    def _energy_guard(self, f: DroneFlight, data: dict[str, Any]) -> None:
        """The projection broke the reserve: the authority recalls the vehicle itself, once (on its own thread: the
        follower goes on reading the same link meanwhile)."""
        with self._lock:
            if self.guard or self.recall_seen:
                return
            self.guard = {"drone_id": f.drone_id, "sortie": f.sortie_index, "projection": dict(data)}
        reason = f"energy guard: {f.drone_id} sortie {f.sortie_index}: {data['sentence']}"

        def run() -> None:
            from flows.usecases.energy_guard import recall_for_energy

            try:
                out = recall_for_energy(self.grounds, self.draft_id, self.version, drone_id=f.drone_id, reason=reason,
                                        now=self.stamp(f), links=self.links, actor=GUARD_ACTOR)
                self.guard["result"] = out
            except SortieError as exc:
                self.guard["error"] = exc.to_dict()
            self.refresh()

        threading.Thread(target=run, name=f"energy-guard-{self.draft_id}", daemon=True).start()

    def progress(self, f: DroneFlight) -> dict[str, Any]:
        """Where a flight is, for an operator's screen (``flight.progress``)."""
        exp_profile = None
        for e in self._expectations:
            if e.drone_id == f.drone_id and e.sortie_index == f.sortie_index:
                exp_profile = e.profile
        reached = len(set(f.reached))
        elapsed = f.duration_s
        time_left = None
        if exp_profile is not None and elapsed is not None:
            top = max(f.reached) if f.reached else None
            done = exp_profile.planned_s(top)
            pace = elapsed / done if done > 60.0 else 1.0
            time_left = round(max(0.0, exp_profile.total_s - done) * pace, 0)
        p = f.projection or {}
        return {"draft_id": self.draft_id, "version": self.version, "drone_id": f.drone_id, "sortie": f.sortie_index,
                "sorties": len(self.plan.sorties), "item": f.current_seq, "items": f.nav_total,
                "reached": reached,  # of ``items`` (navigation items); ``item`` is the mission's own sequence number
                "pct": round(100.0 * reached / f.nav_total, 1) if f.nav_total else None, "elapsed_s": elapsed,
                "time_left_s": time_left, "battery_pct": f.battery_pct,
                "projected_landing_pct": p.get("landing_pct"), "reserve_pct": p.get("reserve_pct"),
                "state": self.current.state}

    # --- what the chains need -------------------------------------------------------------

    def expecting(self, exp: Any) -> None:
        """A later sortie's expectation (its profile for ``progress``)."""
        with self._lock:
            self._expectations.append(exp)

    def stopped(self) -> bool:
        return self._stop.is_set()

    def add_flight(self, f: DroneFlight) -> None:
        with self._lock:
            self.flights.append(f)
            link = self.links.get(f.drone_id)
            if link is not None:
                self.landed_clock[(f.drone_id, f.sortie_index)] = self.clock_s(link)

    def not_flown(self, sortie: Sortie, why: str) -> None:
        with self._lock:
            if why.startswith("the watch ended"):
                self.pending[sortie.index] = why
            else:
                self.not_flown_[sortie.index] = why

    def dialect_of(self, drone_id: str) -> str:
        return next((u["dialect"] for u in accepted_uploads(self.current, self.dispatch) if u["drone_id"] == drone_id),
                    "ardupilot")

    def clock_s(self, link: Any) -> float:
        """The mission's clock (s): the authority's; with a fixed ``now``, that plus the vehicle's own time; else
        the wall clock."""
        if self.clock is not None:
            return self.clock().timestamp()
        if self.base is not None:
            boot = link.view.boot_ms
            return self.base.timestamp() + (boot / 1000.0 if boot is not None else 0.0)
        return time.time()

    def landing_clock_s(self, drone_id: str, before: Sortie | None) -> float | None:
        return None if before is None else self.landed_clock.get((drone_id, before.index))

    def planned_clock_s(self, sortie: Sortie) -> float:
        """The sortie's planned start on the mission's clock (a fixed ``now`` has no running clock to wait on)."""
        return float("-inf") if self.clock is None and self.base is not None else sortie.start_at.timestamp()

    def turnaround_s(self, sortie: Sortie) -> float:
        """The dock's turnaround (battery swap or charge) before ``sortie``: the plan's, else the world's dock's,
        else the plan's battery swap."""
        per_dock = self.plan.parameters.get("dock_turnaround_s") or {}
        if sortie.dock_id in per_dock:
            return float(per_dock[sortie.dock_id])
        dock = None if self.world is None else next((d for d in self.world.docks if d.id == sortie.dock_id), None)
        value = getattr(dock, "turnaround_s", None)
        return float(value if value is not None else self.plan.parameters.get("battery_swap_s", 0.0) or 0.0)

    def upload(self, sortie: Sortie, link: Any) -> str:
        from flows.usecases.sortie_launch import upload_sortie

        return upload_sortie(self, sortie, link)

    def launch(self, sortie: Sortie, link: Any) -> str:
        from flows.usecases.sortie_launch import launch_sortie

        return launch_sortie(self, sortie, link)


def monitor_mission(
    draft_id: str,
    version: int | None = None,
    *,
    grounds: Grounds,
    link: str | Mapping[str, str] | None = None,
    actor: str = "monitor",
    now: datetime | None = None,
    options: MonitorOptions | None = None,
    on_update: Notify | None = None,
    clock: Callable[[], datetime] | None = None,
    links: Mapping[str, Any] | None = None,
    launch_as: str | None = None,
) -> MonitorResult:
    """Follow a dispatched version to its end — every sortie — and record it; the function the CLI and Prefect
    call (see the module docstring).

    A version already ended returns what was recorded (no new monitoring); one not dispatched yet is a
    ``Conflict``. ``links``: connected ``VehicleLink``s per drone (shared with a launch); otherwise each drone's
    link is had from the grounds' ``Vehicles`` port with its binding. ``launch_as``: who launches the later
    sorties (default: whoever launched the first).
    """
    t0 = time.monotonic()
    ledger, home = grounds.ledger, grounds.home
    rec = ledger.get_draft(draft_id, version)
    version = rec.version
    if rec.state in ENDED_STATES:
        stored = load_flight(draft_id, version, home) or {}
        return MonitorResult(draft_id, version, stored.get("outcome", rec.state), rec.state, stored.get("reason", ""),
                             [_flight_of(f) for f in stored.get("flights", [])], already_ended=True,
                             flight_file=str(flight_path(draft_id, version, home)))
    if rec.state not in FOLLOWED_STATES:
        raise Conflict(f"draft {draft_id} v{version} is {rec.state}; only a dispatched mission can be monitored")
    opts = options or MonitorOptions()
    m = Mission(grounds, rec, actor=actor, now=now, clock=clock, options=opts, on_update=on_update,
                launch_as=launch_as)
    if m.dispatch is None:
        raise NotFound(f"draft {draft_id} v{version} has no dispatch record")
    firsts = expectations_for(rec, m.dispatch, m.world, link=link)
    previous = [_flight_of(f) for f in (load_flight(draft_id, version, home) or {}).get("flights", [])]
    ended_before = {(f.drone_id, f.sortie_index) for f in previous if f.terminal}
    m.flights = [f for f in previous if (f.drone_id, f.sortie_index) in ended_before]
    m._expectations = list(firsts)
    opened: list[Any] = []
    chains: list[SortieChain] = []
    try:
        for e in firsts:
            given = (links or {}).get(e.drone_id)
            if given is None:
                given = grounds.vehicles.open(e.link, _binding(grounds, rec, e.drone_id), connect=False,
                                              streams=_telemetry(), component_id=MONITOR_COMPONENT_ID)
                opened.append(given)
            m.links[e.drone_id] = given
            mine = sorted((s for s in m.plan.sorties if s.drone_id == e.drone_id), key=lambda s: (s.start_at, s.index))
            todo = [s for s in mine if (e.drone_id, s.index) not in ended_before]
            first = e if todo and todo[0].index == e.sortie_index else None
            if todo:
                chains.append(SortieChain(m, e.drone_id, todo, first, given))
        threads = [threading.Thread(target=c.run, name=f"sorties-{draft_id}-{c.drone_id}", daemon=True) for c in chains]
        for t in threads:
            t.start()
        for t in threads:
            t.join(max(1.0, m.deadline - time.monotonic()) + 30.0)
        m._stop.set()
    finally:
        for vl in opened:
            vl.close()
    return _record(m, firsts, t0)


def _record(m: Mission, firsts: list[Any], t0: float) -> MonitorResult:
    """The flight record, then the state (an end without its record never happens)."""
    flights = sorted(m.flights, key=lambda f: (f.sortie_index, f.drone_id))
    end = mission_end(m.plan, flights, m.not_flown_, m.pending, recalled=m.recall_seen)
    guard = m.guard
    reason = end.reason
    if end.state == "RECALLED" and guard.get("result") is not None:
        reason = f"recalled by the authority's energy guard ({guard['projection'].get('sentence', '')}): {reason}"
    m.refresh()
    state = end.state if end.state is not None else m.current.state
    outcome = state if end.outcome == "OPEN" else end.outcome
    result = MonitorResult(m.draft_id, m.version, outcome, state, reason, flights, wall_s=time.monotonic() - t0)
    path = flight_path(m.draft_id, m.version, m.grounds.home)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = result.to_dict()
    payload["expectations"] = [asdict(e) for e in firsts]
    payload["not_flown"] = {str(k): v for k, v in sorted(m.not_flown_.items())}
    payload["pending"] = {str(k): v for k, v in sorted(m.pending.items())}
    payload["work"] = end.work
    payload["energy_guard"] = guard or None
    payload["recall_resent"] = m.resent or None
    last = max(flights, key=lambda f: f.last_t_s) if flights else None
    payload["recorded_time"] = m.stamp(last).isoformat()
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False, indent=1, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, path)
    if end.state is not None:
        _await_launch_record(m)
        m.move(end.state, reason, last)
    result.state = m.current.state
    result.wall_s = time.monotonic() - t0
    result.flight_file = str(path)
    return result


def _await_launch_record(m: Mission) -> None:
    """A flight that ended while the draft is still DISPATCHED, soon after its take-off, may have been launched by
    a launch that has not recorded LAUNCHED yet: give it ``LAUNCH_GRACE_S`` from the take-off (bounded) so the
    ledger keeps DISPATCHED → LAUNCHED → IN_FLIGHT → end in order."""
    if "t" not in m._airborne:
        return
    while time.monotonic() - m._airborne["t"] < LAUNCH_GRACE_S:
        if m.refresh() != "DISPATCHED":
            return
        time.sleep(0.1)


def _telemetry() -> Mapping[str, float]:
    from flows.vehicle.stream_rates import TELEMETRY

    return TELEMETRY


def _binding(grounds: Grounds, rec: Any, drone_id: str) -> Any:
    from flows.usecases.control_kit import bindings

    return bindings(grounds, rec, [drone_id]).get(drone_id)

