"""Following a dispatched mission over MAVLink: state in the ledger, progress, alerts.

``monitor_mission`` is what ``sortie monitor`` and the Prefect task call. It
opens one link per dispatched drone (the link the dispatch used, or
``link``), says hello with GCS heartbeats, and reads telemetry until every
vehicle has landed, the link is lost, or the time/message budget runs out:

- the first armed heartbeat moves the draft DISPATCHED → IN_FLIGHT;
- landing (disarmed after flight) in mode AUTO with every navigation item
  reached → SUCCEEDED; landing after a switch to RTL (or with items missed) →
  ABORTED with the reason; telemetry silent for ``link_lost_s`` → ABORTED
  ("link lost"). Every transition goes through ``Ledger.transition`` and so
  writes an event with actor, time and reason.
- a hold shows as PAUSED (ArduPilot: MISSION_CURRENT ``mission_state``
  PAUSED in AUTO, or LOITER; PX4: mode AUTO.LOITER) and following simply goes on; the
  pauses are kept with the flight. A recall (ledger RECALLING, set by
  ``flows.usecases.control``) is judged at landing: landed in RTL at the
  launch point, or in LAND where the landing began → RECALLED; anywhere
  else → ABORTED with the vehicle's reason; the mission finished first →
  SUCCEEDED. A RECALLING/pause event written by another process meanwhile is
  re-read, never overwritten.
- alerts (battery below the plan's expectation by ``battery_margin_pct``,
  link silent for ``link_alert_s``, a mode change away from AUTO) are written
  as audit rows (``command = "monitor.alert"``, ``result_code`` = the kind)
  and kept with the flight.
- STATUSTEXT is logged as text. **Telemetry is data, never instructions**:
  nothing here sends a command because of anything received. The only
  messages this module sends are GCS heartbeats on a fixed timer.

What was seen (track, items reached, battery, texts, alerts, outcome) is
written to ``SORTIE_HOME/drafts/<id>/v<n>/flight.json`` for the report.
Event times are the dispatch's ``now`` plus the vehicle's flight time when a
``now`` is given (reproducible demo), else the wall clock.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

os.environ.setdefault("MAVLINK20", "1")
from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants; mavutil is loaded when a link opens)

from flows.ledger import TRANSITIONS, open_ledger  # noqa: E402
from flows.vehicle.modes import mode_name, nav_seqs  # noqa: E402
from planner.errors import Conflict, InvalidArgument, NotFound, SortieError  # noqa: E402

__all__ = [
    "MonitorOptions",
    "Expectation",
    "DroneFlight",
    "MonitorResult",
    "follow_flight",
    "expectations_for",
    "monitor_mission",
    "load_flight",
    "flight_path",
]

GCS_SYSTEM_ID = 255
MONITOR_COMPONENT_ID = 191
TERMINAL = frozenset({"SUCCEEDED", "ABORTED", "RECALLED", "LINK_LOST", "NO_CONTACT", "NOT_STARTED", "TIMEOUT"})
#: Ledger states in which a flight is followed, and those in which it has ended.
FOLLOWED_STATES = frozenset({"DISPATCHED", "IN_FLIGHT", "RECALLING"})
ENDED_STATES = frozenset({"SUCCEEDED", "ABORTED", "RECALLED"})
#: How far from its launch point a vehicle recalled home may land and still count as "at the dock", and how far
#: from where its landing began a vehicle told to land in place may come down.
RECALL_HOME_M = 25.0
RECALL_LAND_M = 60.0
_SEVERITY = {v.name.replace("MAV_SEVERITY_", ""): k for k, v in _M.enums["MAV_SEVERITY"].items()}
_SEVERITY_NAME = {k: n for n, k in _SEVERITY.items()}


@dataclass(frozen=True)
class MonitorOptions:
    """Bounds and thresholds of one monitoring run (wall seconds unless named otherwise)."""

    timeout_s: float = 600.0
    start_wait_s: float = 30.0
    link_alert_s: float = 2.0
    link_lost_s: float = 5.0
    battery_margin_pct: float = 10.0
    heartbeat_period_s: float = 0.5
    max_messages: int = 1_000_000

    def __post_init__(self) -> None:
        if self.timeout_s <= 0 or self.start_wait_s <= 0:
            raise InvalidArgument("timeout_s and start_wait_s must be > 0")
        if not 0 < self.link_alert_s <= self.link_lost_s:
            raise InvalidArgument("need 0 < link_alert_s <= link_lost_s")
        if self.max_messages < 1:
            raise InvalidArgument("max_messages must be >= 1")


@dataclass(frozen=True)
class Expectation:
    """What the plan says about one drone's sortie: the yardstick the monitor compares with."""

    drone_id: str
    sortie_index: int
    link: str
    dialect: str
    nav_seqs: tuple[int, ...]
    distance_m: float
    duration_s: float
    energy_wh: float
    battery_fraction: float
    battery_wh: float


@dataclass
class DroneFlight:
    """What was seen of one vehicle; JSON-able through ``to_dict``."""

    drone_id: str
    link: str
    sortie_index: int
    status: str = "WAITING"  # WAITING | IN_FLIGHT | PAUSED | SUCCEEDED | ABORTED | RECALLED | LINK_LOST | NO_CONTACT | NOT_STARTED | TIMEOUT
    reason: str = ""
    mode: str = ""
    armed: bool = False
    ever_armed: bool = False
    nav_total: int = 0
    reached: list[int] = field(default_factory=list)
    current_seq: int | None = None
    mission_state: int | None = None
    paused: bool = False
    pauses: list[dict[str, Any]] = field(default_factory=list)  # {"t_s", "what": paused|resumed, "seq", "mode"}
    recall: dict[str, Any] | None = None  # {"t_s", "mode", "seq", "lat", "lon"} when an RTL/LAND after a recall began
    track: list[list[float]] = field(default_factory=list)  # [t_s, lon, lat, rel_alt_m]
    battery_start_pct: float | None = None
    battery_pct: float | None = None
    battery_min_pct: float | None = None
    energy_wh: float | None = None
    takeoff_t_s: float | None = None
    landing_t_s: float | None = None
    last_t_s: float = 0.0
    texts: list[dict[str, Any]] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    messages: int = 0

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def flown_distance_m(self) -> float:
        return _track_length_m(self.track)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["flown_distance_m"] = round(self.flown_distance_m, 1)
        out["duration_s"] = (
            None if self.takeoff_t_s is None else round((self.landing_t_s or self.last_t_s) - self.takeoff_t_s, 1)
        )
        return out


@dataclass
class MonitorResult:
    """The outcome of ``monitor_mission``: the ledger state it left and what each vehicle did."""

    draft_id: str
    version: int
    outcome: str  # SUCCEEDED | ABORTED | IN_FLIGHT (timed out) | DISPATCHED (nothing seen)
    state: str
    reason: str
    flights: list[DroneFlight]
    wall_s: float = 0.0
    already_ended: bool = False
    flight_file: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "draft_id": self.draft_id,
            "version": self.version,
            "outcome": self.outcome,
            "state": self.state,
            "reason": self.reason,
            "flights": [f.to_dict() for f in self.flights],
            "wall_s": round(self.wall_s, 3),
            "already_ended": self.already_ended,
            "flight_file": self.flight_file,
        }


def _seqs(seqs: list[int], most: int = 8) -> str:
    """``1, 2, 3`` or, for a long list, ``90, 92, 94, 96, 98, 99 … 353`` (the report lists them all)."""
    if len(seqs) <= most:
        return ", ".join(map(str, seqs))
    return ", ".join(map(str, seqs[: most - 2])) + f" … {seqs[-1]}"


def _dist_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    kx = math.cos(math.radians((lat1 + lat2) / 2.0)) * 111_320.0
    return math.hypot((lon2 - lon1) * kx, (lat2 - lat1) * 111_320.0)


def _track_length_m(track: list[list[float]]) -> float:
    total = 0.0
    for a, b in zip(track, track[1:]):
        kx = math.cos(math.radians((a[2] + b[2]) / 2.0)) * 111_320.0
        total += math.hypot((b[1] - a[1]) * kx, (b[2] - a[2]) * 111_320.0)
    return total


# --------------------------------------------------------------------------- following


class _Follower:
    """One link, one vehicle: turns received messages into a ``DroneFlight``. Never sends a command."""

    def __init__(self, exp: Expectation, opts: MonitorOptions, notify: Callable[[DroneFlight, str, dict[str, Any]], None],
                 recalled: Callable[[], bool] | None = None):
        self.exp = exp
        self.recalled = recalled or (lambda: False)
        self.opts = opts
        self.notify = notify
        self.flight = DroneFlight(exp.drone_id, exp.link, exp.sortie_index, nav_total=len(exp.nav_seqs))
        from pymavlink import mavutil  # loads every dialect: only when a flight is actually followed

        self.conn = mavutil.mavlink_connection(exp.link, source_system=GCS_SYSTEM_ID, source_component=MONITOR_COMPONENT_ID)
        self.started_wall = time.monotonic()
        self.last_rx_wall: float | None = None
        self.link_alerted = False
        self.battery_alerted = False
        self.vehicle_system: int | None = None
        self.autopilot = _M.MAV_AUTOPILOT_ARDUPILOTMEGA if exp.dialect != "px4" else _M.MAV_AUTOPILOT_PX4

    def close(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass

    def heartbeat(self) -> None:
        try:
            self.conn.mav.heartbeat_send(_M.MAV_TYPE_GCS, _M.MAV_AUTOPILOT_INVALID, 0, 0, _M.MAV_STATE_ACTIVE)
        except OSError:
            pass

    def alert(self, kind: str, message: str, **data: Any) -> None:
        entry = {"kind": kind, "t_s": round(self.flight.last_t_s, 1), "drone_id": self.flight.drone_id,
                 "message": message, **data}
        self.flight.alerts.append(entry)
        self.notify(self.flight, "alert", entry)

    def finish(self, status: str, reason: str) -> None:
        if self.flight.terminal:
            return
        self.flight.status = status
        self.flight.reason = reason
        self.notify(self.flight, "end", {"status": status, "reason": reason})

    def poll(self, budget: int) -> int:
        """Read up to ``budget`` waiting messages; returns how many were read."""
        n = 0
        while n < budget:
            try:
                msg = self.conn.recv_match(blocking=False)
            except OSError:
                return n
            if msg is None:
                break
            n += 1
            self.handle(msg)
            if self.flight.terminal:
                break
        return n

    def handle(self, msg: Any) -> None:
        kind = msg.get_type()
        if kind == "BAD_DATA":
            return
        src = msg.get_srcSystem()
        if src in (0, GCS_SYSTEM_ID):
            return
        if kind == "HEARTBEAT" and msg.type == _M.MAV_TYPE_GCS:
            return
        if self.vehicle_system is None:
            self.vehicle_system = src
        elif src != self.vehicle_system:
            return
        f = self.flight
        f.messages += 1
        self.last_rx_wall = time.monotonic()
        self.link_alerted = False
        handler = getattr(self, "_on_" + kind.lower(), None)
        if handler is not None:
            handler(msg)

    # --- per message type: observations only ---------------------------------------------

    def _on_heartbeat(self, msg: Any) -> None:
        f = self.flight
        self.autopilot = int(msg.autopilot)
        armed = bool(msg.base_mode & _M.MAV_MODE_FLAG_SAFETY_ARMED)
        mode = mode_name(int(msg.custom_mode), self.autopilot)
        if f.mode and mode != f.mode and f.ever_armed and not f.terminal:
            reached = len(set(f.reached))
            hold = {f.mode, mode} == {"AUTO", "LOITER"}  # an operator's hold and its end: shown as PAUSED
            if mode in ("RTL", "LAND") and f.recall is None and self.recalled():
                f.recall = {"t_s": round(f.last_t_s, 1), "mode": mode, "seq": f.current_seq,
                            "lat": f.track[-1][2] if f.track else None, "lon": f.track[-1][1] if f.track else None}
                self.notify(f, "recall", dict(f.recall))
            elif not hold:
                self.alert("mode_change", f"vehicle switched from {f.mode} to {mode} at item {f.current_seq} "
                           f"({reached} of {f.nav_total} items reached)", from_mode=f.mode, to_mode=mode)
        f.mode = mode
        self._check_pause()
        if armed and not f.ever_armed:
            f.ever_armed = True
            f.takeoff_t_s = f.last_t_s
            f.status = "IN_FLIGHT"
            self.notify(f, "armed", {"mode": mode})
        if f.ever_armed and f.armed and not armed:
            f.landing_t_s = f.last_t_s
            self._landed()
        f.armed = armed

    def _check_pause(self) -> None:
        """PAUSED while the vehicle holds in its mission (ArduPilot: AUTO + mission_state PAUSED; PX4: AUTO.LOITER)."""
        f = self.flight
        if not f.ever_armed or f.terminal:
            return
        paused = f.mode == "LOITER" or (self.autopilot != _M.MAV_AUTOPILOT_PX4 and f.mode == "AUTO"
                                         and f.mission_state == _M.MISSION_STATE_PAUSED)
        if paused == f.paused:
            return
        f.paused = paused
        f.status = "PAUSED" if paused else "IN_FLIGHT"
        entry = {"t_s": round(f.last_t_s, 1), "what": "paused" if paused else "resumed", "seq": f.current_seq,
                 "mode": f.mode}
        f.pauses.append(entry)
        self.notify(f, entry["what"], entry)

    def _landed(self) -> None:
        f = self.flight
        f.paused = False
        reached = set(f.reached)
        missing = [s for s in self.exp.nav_seqs if s not in reached]
        if f.mode == "AUTO" and not missing:
            self.finish("SUCCEEDED", f"landed after all {f.nav_total} items were reached")
            return
        last = max(reached) if reached else None
        if f.recall is not None or (f.mode in ("RTL", "LAND") and self.recalled()):
            self._landed_after_recall(reached, missing, last)
            return
        why = [f"landed in mode {f.mode} with {len(reached)} of {f.nav_total} items reached"
               + (f" (last item {last})" if last is not None else "")]
        for a in f.alerts:
            if a["kind"] in ("battery_low", "mode_change"):
                why.append(a["message"])
        self.finish("ABORTED", "; ".join(why))

    def _landed_after_recall(self, reached: set[int], missing: list[int], last: int | None) -> None:
        """Landed after an operator's recall: RECALLED where it was sent (launch point, or in place), else ABORTED."""
        f = self.flight
        flown = f"{len(reached)} of {f.nav_total} items reached" + (f" (last item {last})" if last is not None else "")
        not_flown = f"{len(missing)} not flown: items {_seqs(missing)}" if missing else "nothing left unflown"
        here = f.track[-1] if f.track else None
        if f.mode == "RTL" and here is not None and f.track:
            launch = f.track[0]
            off = _dist_m(here[2], here[1], launch[2], launch[1])
            if off <= RECALL_HOME_M:
                self.finish("RECALLED", f"recalled: returned to launch and landed {off:.0f} m from the launch point; "
                            f"{flown}; {not_flown}")
                return
            self.finish("ABORTED", f"recalled to launch but landed {off:.0f} m from the launch point "
                        f"(limit {RECALL_HOME_M:g} m); {flown}; {not_flown}")
            return
        if f.mode == "LAND" and here is not None:
            start = f.recall or {}
            lat, lon = start.get("lat"), start.get("lon")
            off = 0.0 if lat is None else _dist_m(here[2], here[1], lat, lon)
            if off <= RECALL_LAND_M:
                self.finish("RECALLED", f"recalled: landed in place at {here[2]:.6f},{here[1]:.6f}; {flown}; {not_flown}")
                return
            self.finish("ABORTED", f"told to land in place but came down {off:.0f} m away; {flown}; {not_flown}")
            return
        self.finish("ABORTED", f"recalled, but landed in mode {f.mode}; {flown}; {not_flown}")

    def _on_global_position_int(self, msg: Any) -> None:
        f = self.flight
        f.last_t_s = msg.time_boot_ms / 1000.0
        point = [round(f.last_t_s, 2), msg.lon / 1e7, msg.lat / 1e7, round(msg.relative_alt / 1000.0, 2)]
        if not f.track or f.track[-1][1:] != point[1:]:
            f.track.append(point)
        self._check_battery()

    def _on_battery_status(self, msg: Any) -> None:
        f = self.flight
        if msg.battery_remaining < 0:
            return
        pct = float(msg.battery_remaining)
        if f.battery_start_pct is None:
            f.battery_start_pct = pct
        f.battery_pct = pct
        f.battery_min_pct = pct if f.battery_min_pct is None else min(f.battery_min_pct, pct)
        if msg.energy_consumed >= 0:
            f.energy_wh = round(msg.energy_consumed * 100.0 / 3600.0, 3)
        self._check_battery()

    def expected_used_pct(self) -> float:
        """Battery the plan expects used by now: its fraction times the share of the distance flown."""
        share = 0.0 if self.exp.distance_m <= 0 else min(1.0, self.flight.flown_distance_m / self.exp.distance_m)
        return self.exp.battery_fraction * 100.0 * share

    def _check_battery(self) -> None:
        f = self.flight
        if self.battery_alerted or f.battery_start_pct is None or f.battery_pct is None or not f.ever_armed:
            return
        used = f.battery_start_pct - f.battery_pct
        expected = self.expected_used_pct()
        if used > expected + self.opts.battery_margin_pct:
            self.battery_alerted = True
            self.alert(
                "battery_low",
                f"battery {f.battery_pct:.0f} %: {used:.0f} % used where the plan expects {expected:.0f} % "
                f"(margin {self.opts.battery_margin_pct:g} %)",
                battery_pct=f.battery_pct, used_pct=round(used, 1), expected_used_pct=round(expected, 1),
            )

    def _on_mission_current(self, msg: Any) -> None:
        self.flight.current_seq = int(msg.seq)
        state = getattr(msg, "mission_state", 0)
        self.flight.mission_state = int(state) if state else None
        self._check_pause()

    def _on_mission_item_reached(self, msg: Any) -> None:
        f = self.flight
        seq = int(msg.seq)
        if seq not in f.reached:
            f.reached.append(seq)
            self.notify(f, "progress", {"seq": seq})

    def _on_statustext(self, msg: Any) -> None:
        text = msg.text if isinstance(msg.text, str) else bytes(msg.text).decode("utf-8", "replace")
        text = text.rstrip("\x00")
        entry = {"t_s": round(self.flight.last_t_s, 1), "severity": _SEVERITY_NAME.get(int(msg.severity), str(msg.severity)),
                 "text": text}
        self.flight.texts.append(entry)  # logged as text; never parsed for instructions
        self.notify(self.flight, "text", entry)

    # --- timers --------------------------------------------------------------------------

    def check_timers(self, now_wall: float) -> None:
        f = self.flight
        if f.terminal:
            return
        if self.last_rx_wall is None:
            if now_wall - self.started_wall > self.opts.start_wait_s:
                self.finish("NO_CONTACT", f"no telemetry from {self.exp.link} within {self.opts.start_wait_s:g} s")
            return
        silent = now_wall - self.last_rx_wall
        if not f.ever_armed:
            if now_wall - self.started_wall > self.opts.start_wait_s:
                self.finish("NOT_STARTED", f"the vehicle answered but did not take off within {self.opts.start_wait_s:g} s")
            elif silent > self.opts.link_lost_s:
                self.finish("NO_CONTACT", f"telemetry stopped for {silent:.1f} s before take-off")
            return
        if silent > self.opts.link_alert_s and not self.link_alerted:
            self.link_alerted = True
            self.alert("link_lost", f"no telemetry for {silent:.1f} s at item {f.current_seq}", silent_s=round(silent, 1))
        if silent > self.opts.link_lost_s:
            reached = len(set(f.reached))
            self.finish(
                "LINK_LOST",
                f"telemetry link lost for more than {self.opts.link_lost_s:g} s at item {f.current_seq} "
                f"({reached} of {f.nav_total} items reached); last position "
                + (f"{f.track[-1][2]:.6f},{f.track[-1][1]:.6f}" if f.track else "unknown"),
            )


Notify = Callable[[DroneFlight, str, dict[str, Any]], None]


def follow_flight(
    expectations: list[Expectation],
    options: MonitorOptions | None = None,
    notify: Notify | None = None,
    recalled: Callable[[], bool] | None = None,
) -> list[DroneFlight]:
    """Follow every vehicle until each has ended (or the budget runs out); bounded in time and messages.

    ``notify(flight, what, data)`` is called on "armed", "progress", "alert",
    "text", "paused", "resumed", "recall" and "end"; it may record things but
    its return value is ignored: nothing received ever turns into something
    sent. ``recalled()`` says whether an operator recalled the mission (asked
    only when the vehicle switches to RTL/LAND or lands).
    """
    opts = options or MonitorOptions()
    if not expectations:
        raise InvalidArgument("nothing to monitor: no dispatched vehicle")
    sink: Notify = notify or (lambda f, what, data: None)
    followers = [_Follower(e, opts, sink, recalled) for e in expectations]
    deadline = time.monotonic() + opts.timeout_s
    last_hb = 0.0
    total = 0
    try:
        while time.monotonic() < deadline and total < opts.max_messages:
            now = time.monotonic()
            if now - last_hb >= opts.heartbeat_period_s:  # a fixed timer, whatever was received
                last_hb = now
                for fo in followers:
                    if not fo.flight.terminal:
                        fo.heartbeat()
            got = 0
            for fo in followers:
                if not fo.flight.terminal:
                    got += fo.poll(min(500, opts.max_messages - total - got))
            total += got
            for fo in followers:
                fo.check_timers(time.monotonic())
            if all(fo.flight.terminal for fo in followers):
                break
            if got == 0:
                time.sleep(0.005)
        for fo in followers:
            if not fo.flight.terminal:
                fo.finish("TIMEOUT", f"monitoring stopped after {opts.timeout_s:g} s / {total} messages; "
                          f"the vehicle was {fo.flight.status}")
    finally:
        for fo in followers:
            fo.close()
    return [fo.flight for fo in followers]


# --------------------------------------------------------------------------- the mission


def flight_path(draft_id: str, version: int) -> Path:
    """``SORTIE_HOME/drafts/<id>/v<n>/flight.json``."""
    from flows.context import draft_dir

    return draft_dir(draft_id, version) / "flight.json"


def load_flight(draft_id: str, version: int) -> dict[str, Any] | None:
    """The recorded flight of a version (what ``monitor_mission`` wrote), or None."""
    path = flight_path(draft_id, version)
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def expectations_for(rec: Any, dispatch: Any, *, link: str | Mapping[str, str] | None = None) -> list[Expectation]:
    """One ``Expectation`` per vehicle the dispatch uploaded to, from the plan and the dispatch record."""
    from flows.context import load_world_at
    from planner.output.mission_items import mission_items
    from planner.plan import plan_from_dict

    result = (dispatch.result or {}) if dispatch is not None else {}
    uploads = [u for u in result.get("uploads", []) if u.get("status") == "ACCEPTED"]
    if not uploads:
        raise Conflict(f"draft {rec.draft_id} v{rec.version} has no accepted upload to follow")
    plan = plan_from_dict(rec.plan or {})
    try:
        world = load_world_at(rec.world_dir)
    except SortieError:
        world = None
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
        if world is not None:
            items = mission_items(plan, sortie, world, dialect=u["dialect"])
            seqs = tuple(nav_seqs(items, u["dialect"]))
            battery_wh = world.drone(drone_id).battery_wh
        out.append(
            Expectation(
                drone_id=drone_id, sortie_index=sortie.index, link=conn, dialect=u["dialect"], nav_seqs=seqs,
                distance_m=sortie.distance_m, duration_s=sortie.duration_s, energy_wh=sortie.energy_wh,
                battery_fraction=sortie.battery_fraction, battery_wh=battery_wh,
            )
        )
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
    link: str | Mapping[str, str] | None = None,
    actor: str = "monitor",
    now: datetime | None = None,
    options: MonitorOptions | None = None,
    on_update: Notify | None = None,
) -> MonitorResult:
    """Follow a dispatched version to its end and record it; the function the CLI and Prefect call.

    A version already SUCCEEDED, ABORTED or RECALLED returns what was recorded
    (no new monitoring); one not dispatched yet is a ``Conflict``. A recall or
    a pause recorded by another process while following is re-read: the
    state this run writes is always a legal step from the ledger's current one.
    """
    t0 = time.monotonic()
    ledger = open_ledger()
    rec = ledger.get_draft(draft_id, version)
    version = rec.version
    if rec.state in ENDED_STATES:
        stored = load_flight(draft_id, version) or {}
        flights = [DroneFlight(**{k: v for k, v in f.items() if k in DroneFlight.__dataclass_fields__})
                   for f in stored.get("flights", [])]
        return MonitorResult(draft_id, version, rec.state, rec.state, stored.get("reason", ""), flights,
                             already_ended=True, flight_file=str(flight_path(draft_id, version)))
    if rec.state not in FOLLOWED_STATES:
        raise Conflict(f"draft {draft_id} v{version} is {rec.state}; only a dispatched mission can be monitored")
    dispatch = next((d for d in ledger.dispatches(draft_id) if d.version == version), None)
    if dispatch is None:
        raise NotFound(f"draft {draft_id} v{version} has no dispatch record")
    exps = expectations_for(rec, dispatch, link=link)
    base = now if now is not None else None

    def stamp(f: DroneFlight | None) -> datetime:
        if base is None:
            return datetime.now(timezone.utc)
        return base + timedelta(seconds=f.last_t_s if f is not None else 0.0)

    current = [rec]  # the last record this run read or wrote: saves a ledger open per step

    def move(to_state: str, reason: str, f: DroneFlight | None) -> None:
        for _ in range(4):  # another process (a pause, a recall) may move the row between our read and write
            cur = current[0]
            if cur.state == to_state:
                return
            if cur.state == "DISPATCHED" and to_state != "IN_FLIGHT" and ("IN_FLIGHT", to_state) in TRANSITIONS:
                move("IN_FLIGHT", "the vehicle took off (seen late)", f)
                continue
            if cur.state == "RECALLING" and to_state == "RECALLED" or (cur.state, to_state) in TRANSITIONS:
                try:
                    current[0] = ledger.transition(draft_id, version, expected_state=cur.state,
                                                   expected_row_version=cur.row_version, to_state=to_state,
                                                   actor=actor, reason=reason, now=stamp(f))
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

    def notify(f: DroneFlight, what: str, data: dict[str, Any]) -> None:
        if what == "armed":
            if current[0].state == "DISPATCHED":
                move("IN_FLIGHT", f"{f.drone_id} armed and took off in mode {data.get('mode')}", f)
        elif what == "alert":
            try:
                ledger.audit(actor=actor, command="monitor.alert", args=dict(data), result_code=str(data["kind"]).upper(),
                             duration_s=0.0, started=stamp(f), draft_id=draft_id)
            except SortieError:
                pass  # the alert stays in the flight record; a busy ledger must not stop the monitor
        if on_update is not None:
            on_update(f, what, data)

    flights = follow_flight(exps, options, notify, recalled)
    outcome, reason = _overall(flights)
    last = max(flights, key=lambda f: f.last_t_s)
    ended = outcome in ENDED_STATES
    # the flight record first, then the state: a crash in between leaves a re-runnable IN_FLIGHT, never an end
    # without its record
    state = outcome if ended else current[0].state
    result = MonitorResult(draft_id, version, state, state, reason, flights, wall_s=time.monotonic() - t0)
    path = flight_path(draft_id, version)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = result.to_dict()
    payload["expectations"] = [asdict(e) for e in exps]
    payload["recorded_time"] = stamp(last).isoformat()
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
    if ended:
        move(outcome, reason, last)
    result.state = current[0].state
    result.wall_s = time.monotonic() - t0
    result.flight_file = str(path)
    return result
