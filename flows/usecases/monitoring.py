"""Following a dispatched mission: the ledger half (states, alerts, the flight record) of the monitor.

``monitor_mission`` is what the authority's ``monitor`` runs (``sortie
monitor``, the Prefect task, the server's follower). It reaches one link per
dispatched drone through the grounds' ``Vehicles`` port (the link the dispatch
used, or ``link``), says hello with GCS heartbeats, and reads telemetry until
every vehicle has landed, the link is lost, or the time/message budget runs
out (following each drone is ``flows.vehicle.follow``, which knows no ledger):

- the vehicle seen airborne (armed and off the ground) moves the draft
  LAUNCHED (or DISPATCHED, when it was launched from elsewhere) → IN_FLIGHT;
- landing and disarming at the planned landing point after the last item
  (progress from MISSION_ITEM_REACHED and MISSION_CURRENT together,
  ``flows.vehicle.follow``) → SUCCEEDED; landing anywhere else, or with items
  missed → ABORTED with the reason; telemetry silent for ``link_lost_s`` →
  ABORTED ("link lost"). Every transition goes through ``Ledger.transition``
  and so writes an event with actor, time and reason.
- a hold shows as PAUSED (ArduPilot: MISSION_CURRENT ``mission_state``
  PAUSED in AUTO, or LOITER; PX4: mode AUTO.LOITER) and following simply goes on; the
  pauses are kept with the flight. A recall (ledger RECALLING, set by
  ``flows.usecases.control``) is judged at landing: landed and disarmed near
  the dock, in whatever mode (ArduCopter's RTL lands in RTL), or where a
  landing in place began → RECALLED; anywhere else → ABORTED with the
  vehicle's reason; the mission finished first → SUCCEEDED. A RECALLING/pause event written by another process meanwhile is
  re-read, never overwritten.
- alerts (battery below the plan's expectation by ``battery_margin_pct``,
  link silent for ``link_alert_s``, a mode change away from AUTO) are written
  as audit rows (``command = "monitor.alert"``, ``result_code`` = the kind)
  and kept with the flight.
- STATUSTEXT is logged as text. **Telemetry is data, never instructions**:
  nothing here sends a command because of anything received. The only
  messages this module sends are GCS heartbeats on a fixed timer.

What was seen (track, items reached, battery, texts, alerts, outcome) is
written to ``<home>/drafts/<id>/v<n>/flight.json`` for the report.
Event times are the authority's ``clock`` when one is given (``sortie server``:
its own clock, read at each event, with the vehicle's time since boot kept
beside it in the reason, named as such), else the dispatch's ``now`` plus the
vehicle's flight time when a ``now`` is given (reproducible demo), else the
wall clock.

This module is the mission level (the ledger, the states, the flight file); following
each drone is ``flows.vehicle.follow``, and the records both share are
``flows.vehicle.flight_record``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from flows.ledger import TRANSITIONS, Ledger
from flows.usecases.grounds import Grounds
from flows.vehicle.flight_record import DroneFlight, Expectation, MonitorOptions, MonitorResult
from flows.vehicle.follow import Notify, follow_flight
from flows.vehicle.modes import NAV_LAND, nav_seqs
from planner.errors import Conflict, NotFound, SortieError
from planner.world.model import World

__all__ = ["expectations_for", "monitor_mission", "load_flight", "flight_path", "FOLLOWED_STATES", "ENDED_STATES"]

#: How long a take-off seen on a DISPATCHED draft waits for the launch's LAUNCHED record before the follower
#: records IN_FLIGHT itself (a vehicle launched from another ground station).
LAUNCH_GRACE_S = 10.0
#: Ledger states in which a flight is followed, and those in which it has ended.
FOLLOWED_STATES = frozenset({"DISPATCHED", "LAUNCHED", "IN_FLIGHT", "RECALLING"})
ENDED_STATES = frozenset({"SUCCEEDED", "ABORTED", "RECALLED"})


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


def expectations_for(rec: Any, dispatch: Any, world: World | None, *,
                     link: str | Mapping[str, str] | None = None) -> list[Expectation]:
    """One ``Expectation`` per vehicle the dispatch uploaded to, from the plan and the dispatch record: the
    navigation items, the dock (home) and the planned landing point (the last NAV_LAND, else the dock). Without
    ``world`` (it no longer loads) the flight is followed without them."""
    from planner.output.mission_items import mission_items
    from planner.plan import plan_from_dict

    result = (dispatch.result or {}) if dispatch is not None else {}
    uploads = [u for u in result.get("uploads", []) if u.get("status") == "ACCEPTED"]
    if not uploads:
        raise Conflict(f"draft {rec.draft_id} v{rec.version} has no accepted upload to follow")
    plan = plan_from_dict(rec.plan or {})
    out: list[Expectation] = []
    for u in uploads:
        drone_id = u["drone_id"]
        sortie = next(s for s in plan.sorties if s.index == u["sortie_index"])
        conn = u["link"]
        if isinstance(link, str):
            conn = link
        elif isinstance(link, Mapping) and drone_id in link:
            conn = link[drone_id]
        seqs: tuple[int, ...] = ()
        battery_wh = 0.0
        dock: Any = None
        landing: tuple[float, float] | None = None
        if world is not None:
            items = mission_items(plan, sortie, world, dialect=u["dialect"])
            seqs = tuple(nav_seqs(items, u["dialect"]))
            battery_wh = world.drone(drone_id).battery_wh
            dock = world.dock(sortie.dock_id)
            lands = [i for i in items if i.command == NAV_LAND]
            landing = (lands[-1].lat, lands[-1].lon) if lands else (dock.lat, dock.lon)
        out.append(
            Expectation(
                drone_id=drone_id, sortie_index=sortie.index, link=conn, dialect=u["dialect"], nav_seqs=seqs,
                distance_m=sortie.distance_m, duration_s=sortie.duration_s, energy_wh=sortie.energy_wh,
                battery_fraction=sortie.battery_fraction, battery_wh=battery_wh,
                dock_lat=None if dock is None else dock.lat, dock_lon=None if dock is None else dock.lon,
                landing_lat=None if landing is None else landing[0], landing_lon=None if landing is None else landing[1],
            )
        )
    return out


def _await_launch_record(ledger: Ledger, draft_id: str, version: int, current: list[Any],
                         airborne: dict[str, Any]) -> None:
    """A flight that ended while the draft is still DISPATCHED, soon after its take-off, may have been launched by
    a launch that has not recorded LAUNCHED yet: give it ``LAUNCH_GRACE_S`` from the take-off (bounded) so the
    ledger keeps DISPATCHED → LAUNCHED → IN_FLIGHT → end in order."""
    if "t" not in airborne:
        return
    while time.monotonic() - airborne["t"] < LAUNCH_GRACE_S:
        try:
            current[0] = ledger.get_draft(draft_id, version)
        except SortieError:
            return
        if current[0].state != "DISPATCHED":
            return
        time.sleep(0.1)


def _bindings(ledger: Ledger, rec: Any, exps: list[Expectation], key_store: Path) -> dict[str, Any]:
    """Each followed drone's binding as its dispatch recorded it (signing key from the key store beside the
    ledger): the follower's link is bound and signed like every other (a signed vehicle drops its stream requests
    otherwise)."""
    from flows.vehicle.binding import VehicleBinding, binding_from_record

    dispatch = next((d for d in ledger.dispatches(rec.draft_id) if d.version == rec.version), None)
    out: dict[str, Any] = {}
    for u in ((dispatch.result or {}) if dispatch else {}).get("uploads", []):
        b = u.get("binding") or {}
        if not b or u["drone_id"] not in {e.drone_id for e in exps}:
            continue
        try:
            out[u["drone_id"]] = binding_from_record(b, key_store)
        except SortieError:  # the key is gone from the store: follow unsigned (the vehicle's frames still parse)
            out[u["drone_id"]] = VehicleBinding(system_id=b.get("system_id"), component_id=b.get("component_id"),
                                                autopilot=b.get("autopilot"))
    return out


def _overall(flights: list[DroneFlight]) -> tuple[str, str]:
    """SUCCEEDED when every vehicle succeeded; ABORTED when one aborted or was lost; RECALLED when every vehicle
    ended and at least one came home on a recall; else not ended."""
    bad = [f for f in flights if f.status in ("ABORTED", "LINK_LOST")]
    if bad:
        return "ABORTED", "; ".join(f"{f.drone_id}: {f.reason}" for f in bad)
    if all(f.status == "SUCCEEDED" for f in flights):
        return "SUCCEEDED", "; ".join(f"{f.drone_id}: {f.reason}" for f in flights)
    if all(f.status in ("SUCCEEDED", "RECALLED") for f in flights):
        return "RECALLED", "; ".join(f"{f.drone_id}: {f.reason}" for f in flights)
    return "OPEN", "; ".join(f"{f.drone_id}: {f.status} ({f.reason})" for f in flights)


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
) -> MonitorResult:
    """Follow a dispatched version to its end and record it; the function the CLI and Prefect call.

    A version already SUCCEEDED, ABORTED or RECALLED returns what was recorded
    (no new monitoring); one not dispatched yet is a ``Conflict``. A recall or
    a pause recorded by another process while following is re-read: the
    state this run writes is always a legal step from the ledger's current one.
    ``grounds``: the authority's (its ledger records, its port reaches the vehicles). ``links``: connected
    ``VehicleLink``s per drone to follow through (shared with a launch); otherwise each drone's link is had
    from the grounds' ``Vehicles`` port with its binding.
    """
    t0 = time.monotonic()
    ledger, home = grounds.ledger, grounds.home
    rec = ledger.get_draft(draft_id, version)
    version = rec.version
    if rec.state in ENDED_STATES:
        stored = load_flight(draft_id, version, home) or {}
        flights = [DroneFlight(**{k: v for k, v in f.items() if k in DroneFlight.__dataclass_fields__})
                   for f in stored.get("flights", [])]
        return MonitorResult(draft_id, version, rec.state, rec.state, stored.get("reason", ""), flights,
                             already_ended=True, flight_file=str(flight_path(draft_id, version, home)))
    if rec.state not in FOLLOWED_STATES:
        raise Conflict(f"draft {draft_id} v{version} is {rec.state}; only a dispatched mission can be monitored")
    dispatch = next((d for d in ledger.dispatches(draft_id) if d.version == version), None)
    if dispatch is None:
        raise NotFound(f"draft {draft_id} v{version} has no dispatch record")
    try:
        world = grounds.world(rec.world_dir)
    except SortieError:
        world = None
    exps = expectations_for(rec, dispatch, world, link=link)
    base = now if now is not None else None

    def stamp(f: DroneFlight | None, at_s: float | None = None) -> datetime:
        if clock is not None:
            return clock()
        if base is None:
            return datetime.now(timezone.utc)
        return base + timedelta(seconds=at_s if at_s is not None else (f.last_t_s if f is not None else 0.0))

    current = [rec]  # the last record this run read or wrote: saves a ledger open per step

    def move(to_state: str, reason: str, f: DroneFlight | None, at_s: float | None = None) -> None:
        if clock is not None and f is not None:  # the authority's clock stamps the event; the vehicle's goes beside
            reason = f"{reason} [vehicle time {(at_s if at_s is not None else f.last_t_s):.1f} s since boot]"
        for _ in range(4):  # another process (a pause, a recall) may move the row between our read and write
            cur = current[0]
            if cur.state == to_state:
                return
            if cur.state in ("DISPATCHED", "LAUNCHED") and to_state != "IN_FLIGHT" \
                    and ("IN_FLIGHT", to_state) in TRANSITIONS:
                move("IN_FLIGHT", "the vehicle took off (seen late)", f)
                continue
            if cur.state == "RECALLING" and to_state == "RECALLED" or (cur.state, to_state) in TRANSITIONS:
                try:
                    current[0] = ledger.transition(draft_id, version, expected_state=cur.state,
                                                   expected_row_version=cur.row_version, to_state=to_state,
                                                   actor=actor, reason=reason, now=stamp(f, at_s))
                    return
                except Conflict:
                    current[0] = ledger.get_draft(draft_id, version)
                    continue
            return  # not a step from where the ledger is now (say the recall already recorded RECALLED): theirs stands

    def recalled() -> bool:
        try:
            current[0] = ledger.get_draft(draft_id, version)
        except SortieError:
            return False
        return current[0].state == "RECALLING"

    airborne: dict[str, Any] = {}  # the first take-off seen: when, by whom; and when the ledger was last read

    def take_off(f: DroneFlight, force: bool = False) -> None:
        """LAUNCHED → IN_FLIGHT once seen airborne. DISPATCHED → IN_FLIGHT only after ``LAUNCH_GRACE_S``: the
        launch records LAUNCHED right after the take-off it commanded, and its record must not be pre-empted."""
        now_wall = time.monotonic()
        if not force and now_wall - airborne.get("read", 0.0) < 0.2:
            return
        airborne["read"] = now_wall
        try:
            current[0] = ledger.get_draft(draft_id, version)
        except SortieError:
            return
        state = current[0].state
        if state == "LAUNCHED":  # stamped with the vehicle's own time of the take-off
            move("IN_FLIGHT", f"{f.drone_id} is airborne in mode {airborne.get('mode')}", f, f.takeoff_t_s)
        elif state == "DISPATCHED" and now_wall - airborne["t"] >= LAUNCH_GRACE_S:
            move("IN_FLIGHT", f"{f.drone_id} armed and took off in mode {airborne.get('mode')} (no launch recorded "
                 "by sortie: launched from another ground station)", f, f.takeoff_t_s)

    def notify(f: DroneFlight, what: str, data: dict[str, Any]) -> None:
        if what == "armed":
            airborne.setdefault("t", time.monotonic())
            airborne.setdefault("mode", data.get("mode"))
            take_off(f, force=True)
        elif "t" in airborne and current[0].state in ("DISPATCHED", "LAUNCHED"):
            take_off(f)
        if what == "alert":
            try:
                ledger.audit(actor=actor, command="monitor.alert", args=dict(data), result_code=str(data["kind"]).upper(),
                             duration_s=0.0, started=stamp(f), draft_id=draft_id)
            except SortieError:
                pass  # the alert stays in the flight record; a busy ledger must not stop the monitor
        if on_update is not None:
            on_update(f, what, data)

    flights = follow_flight(exps, options, notify, recalled, bindings=_bindings(ledger, rec, exps, grounds.key_store),
                            links=dict(links) if links else None, vehicles=grounds.vehicles)
    outcome, reason = _overall(flights)
    last = max(flights, key=lambda f: f.last_t_s)
    ended = outcome in ENDED_STATES
    # the flight record first, then the state: a crash in between leaves a re-runnable IN_FLIGHT, never an end
    # without its record
    state = outcome if ended else current[0].state
    named = "NOT_STARTED" if not ended and all(f.status == "NOT_STARTED" for f in flights) else state
    result = MonitorResult(draft_id, version, named, state, reason, flights, wall_s=time.monotonic() - t0)
    path = flight_path(draft_id, version, home)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = result.to_dict()
    payload["expectations"] = [asdict(e) for e in exps]
    payload["recorded_time"] = stamp(last).isoformat()
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
    if ended:
        _await_launch_record(ledger, draft_id, version, current, airborne)
        move(outcome, reason, last)
    result.state = current[0].state
    result.wall_s = time.monotonic() - t0
    result.flight_file = str(path)
    return result
