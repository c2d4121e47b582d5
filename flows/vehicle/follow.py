"""Following one drone over MAVLink: telemetry in, state and alerts out.

The per-drone half of ``flows.usecases.monitoring`` (which opens the ledger and moves
the mission's state): ``follow_flight`` polls each vehicle's link
(``flows.vehicle.link``: bound to the drone, the follower's streams asked on
every (re)connection — ArduPilot sends no position, progress or battery to a
port that did not ask), keeps its track, pauses, battery and texts, and judges
its landing the way an autopilot reports a flight (FACTS.md):

- **progress** comes from MISSION_ITEM_REACHED and MISSION_CURRENT together: a
  reached item implies every earlier one (ArduPilot coalesces the reports of
  items done in the same instant), and MISSION_CURRENT at seq k while the
  mission runs means every item before k is done;
- **success** is the last item reached (or current) and then landed and
  disarmed at the planned landing point — ArduPilot never reports the final
  NAV_LAND and resets MISSION_CURRENT to 0 once disarmed;
- **a recall** ends RECALLED once the vehicle is landed and disarmed near its
  dock (or, told to land in place, where its landing began), in whatever mode
  it landed (ArduCopter's RTL lands in RTL).

**Telemetry is data, never instructions**: the only messages sent are GCS
heartbeats on a timer and the stream requests of the link.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants; mavutil is loaded when a link opens)

from flows.vehicle.binding import VehicleBinding  # noqa: E402
from flows.vehicle.flight_record import DroneFlight, Expectation, MonitorOptions  # noqa: E402
from flows.vehicle.modes import mode_name  # noqa: E402
from flows.vehicle.vehicles import PER_CALL, Vehicles  # noqa: E402
from planner.errors import InvalidArgument  # noqa: E402

__all__ = [
    "GCS_SYSTEM_ID",
    "MONITOR_COMPONENT_ID",
    "RECALL_HOME_M",
    "RECALL_LAND_M",
    "Notify",
    "follow_flight",
]

GCS_SYSTEM_ID = 255
MONITOR_COMPONENT_ID = 191
#: How far from its launch point a vehicle recalled home may land and still count as "at the dock", and how far
#: from where its landing began a vehicle told to land in place may come down.
RECALL_HOME_M = 25.0
RECALL_LAND_M = 60.0
#: How far from the planned landing point a completed mission may come down (GPS, wind, the autopilot's own
#: landing); the same margin as a recall home.
LANDING_M = 25.0
_HOLD_PAIRS = ({"AUTO", "LOITER"}, {"AUTO", "BRAKE"}, {"AUTO", "GUIDED"})  # an operator's hold and its end
_RUNNING = (_M.MISSION_STATE_ACTIVE, _M.MISSION_STATE_PAUSED)
_SEVERITY = {v.name.replace("MAV_SEVERITY_", ""): k for k, v in _M.enums["MAV_SEVERITY"].items()}
_SEVERITY_NAME = {k: n for n, k in _SEVERITY.items()}


def _seqs(seqs: list[int], most: int = 8) -> str:
    """``1, 2, 3`` or, for a long list, ``90, 92, 94, 96, 98, 99 … 353`` (the report lists them all)."""
    if len(seqs) <= most:
        return ", ".join(map(str, seqs))
    return ", ".join(map(str, seqs[: most - 2])) + f" … {seqs[-1]}"


def _dist_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    kx = math.cos(math.radians((lat1 + lat2) / 2.0)) * 111_320.0
    return math.hypot((lon2 - lon1) * kx, (lat2 - lat1) * 111_320.0)


class _Follower:
    """One link, one vehicle: turns received messages into a ``DroneFlight``. Never sends a command."""

    def __init__(self, exp: Expectation, opts: MonitorOptions, notify: Callable[[DroneFlight, str, dict[str, Any]], None],
                 recalled: Callable[[], bool] | None = None, *, binding: VehicleBinding | None = None,
                 link: Any = None, vehicles: Vehicles = PER_CALL):
        from flows.vehicle.link import TELEMETRY  # pymavlink: only when a flight is actually followed

        self.exp = exp
        self.recalled = recalled or (lambda: False)
        self.opts = opts
        self.notify = notify
        self.flight = DroneFlight(exp.drone_id, exp.link, exp.sortie_index, nav_total=len(exp.nav_seqs))
        if link is not None:
            self.link, self._owned = link, False
        else:
            self.link = vehicles.open(exp.link, binding, connect=False, streams=TELEMETRY,
                                      component_id=MONITOR_COMPONENT_ID)
            self._owned = True
        self.started_wall = time.monotonic()
        self.waiting_said_s = 0.0  # seconds into the watch of the last "waiting" notice (before take-off)
        self.last_rx_wall: float | None = None
        self.link_alerted = False
        self.battery_alerted = False
        self.not_ours: str | None = None  # why a heard vehicle is not the bound one
        self.autopilot = _M.MAV_AUTOPILOT_ARDUPILOTMEGA if exp.dialect != "px4" else _M.MAV_AUTOPILOT_PX4
        # every message of the vehicle, whoever reads the link (this follower, or a launch or a command through
        # the same link), comes here once
        self._unsubscribe = self.link.subscribe(self.handle)

    def close(self) -> None:
        self._unsubscribe()
        if self._owned:
            self.link.close()

    def heartbeat(self) -> None:
        self.link.heartbeat()

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
        """Read up to ``budget`` waiting messages (each reaches ``handle`` through the subscription); returns how
        many were read. Until the bound vehicle is heard, its first heartbeat is taken here (``adopt``)."""
        n = 0
        while n < budget:
            msg = self.link.recv(None, timeout=0.0)
            if msg is None:
                break
            n += 1
            if not self.link.target_system and msg.get_type() == "HEARTBEAT" and msg.type != _M.MAV_TYPE_GCS \
                    and msg.autopilot != _M.MAV_AUTOPILOT_INVALID and msg.get_srcSystem() not in (0, GCS_SYSTEM_ID):
                why = self.link.adopt(msg)  # the bound vehicle, heard at last: its streams are asked now
                if why is not None:
                    self.not_ours = why
            if self.flight.terminal:
                break
        return n

    def handle(self, msg: Any) -> None:
        """One message of the bound vehicle (the link's subscription): observations only."""
        kind = msg.get_type()
        if self.flight.terminal:
            return
        f = self.flight
        f.messages += 1
        self.last_rx_wall = time.monotonic()
        self.link_alerted = False
        handler = getattr(self, "_on_" + kind.lower(), None)
        if handler is not None:
            handler(msg)
        self._check_airborne()

    # --- per message type: observations only ---------------------------------------------

    def _check_airborne(self) -> None:
        """The take-off: armed *and* off the ground (an armed vehicle on the ground has not flown yet)."""
        f = self.flight
        if f.ever_armed or f.terminal or not f.armed or not self.link.view.airborne:
            return
        f.ever_armed = True
        f.takeoff_t_s = f.last_t_s
        f.status = "IN_FLIGHT"
        self.notify(f, "armed", {"mode": f.mode})

    def _on_heartbeat(self, msg: Any) -> None:
        f = self.flight
        self.autopilot = int(msg.autopilot)
        armed = bool(msg.base_mode & _M.MAV_MODE_FLAG_SAFETY_ARMED)
        mode = mode_name(int(msg.custom_mode), self.autopilot)
        if f.mode and mode != f.mode and f.ever_armed and not f.terminal:
            reached = len(set(f.reached))
            hold = {f.mode, mode} in _HOLD_PAIRS
            if mode in ("RTL", "LAND") and f.recall is None and self.recalled():
                here = f.track[-1] if f.track else None
                f.recall = {"t_s": round(f.last_t_s, 1), "mode": mode, "seq": f.current_seq,
                            "lat": here[2] if here else None, "lon": here[1] if here else None}
                self.notify(f, "recall", dict(f.recall))
            elif not hold:
                self.alert("mode_change", f"vehicle switched from {f.mode} to {mode} at item {f.current_seq} "
                           f"({reached} of {f.nav_total} items reached)", from_mode=f.mode, to_mode=mode)
        f.mode = mode
        self._check_pause()
        was_armed = f.armed
        f.armed = armed
        if f.ever_armed and was_armed and not armed:
            f.landing_t_s = f.last_t_s
            self._landed()

    def _check_pause(self) -> None:
        """PAUSED while the vehicle holds in its mission (ArduPilot: AUTO + mission_state PAUSED, or a forced
        BRAKE; PX4: AUTO.LOITER), as the link's view of it says."""
        f = self.flight
        if not f.ever_armed or f.terminal:
            return
        paused = self.link.view.paused
        if paused == f.paused:
            return
        f.paused = paused
        f.status = "PAUSED" if paused else "IN_FLIGHT"
        entry = {"t_s": round(f.last_t_s, 1), "what": "paused" if paused else "resumed", "seq": f.current_seq,
                 "mode": f.mode}
        f.pauses.append(entry)
        self.notify(f, entry["what"], entry)

    def _reach(self, upto: int, inclusive: bool) -> None:
        """Every navigation item up to ``upto`` is done (a reached item implies the earlier ones)."""
        f = self.flight
        done = set(f.reached)
        if self.exp.nav_seqs:
            new = [s for s in self.exp.nav_seqs if (s <= upto if inclusive else s < upto) and s not in done]
        else:
            new = [upto] if inclusive and upto not in done else []
        if not new:
            return
        f.reached.extend(new)
        self.notify(f, "progress", {"seq": max(new), "items": new})

    def _planned_landing(self) -> tuple[float, float] | None:
        e = self.exp
        if e.landing_lat is not None and e.landing_lon is not None:
            return e.landing_lat, e.landing_lon
        if e.dock_lat is not None and e.dock_lon is not None:
            return e.dock_lat, e.dock_lon
        return None

    def _landed(self) -> None:
        f = self.flight
        f.paused = False
        reached = set(f.reached)
        here = f.track[-1] if f.track else None
        last = self.exp.nav_seqs[-1] if self.exp.nav_seqs else None
        done = last is not None and (last in reached or (f.highest_current is not None and f.highest_current >= last))
        recalled = f.recall is not None or self.recalled()
        if recalled and not (done and f.mode == "AUTO"):
            self._landed_after_recall(reached)
            return
        if done:
            target = self._planned_landing()
            if here is None:
                self.finish("ABORTED", f"landed after the last item (item {last}), but the vehicle sent no position: "
                            "where it came down is unknown")
                return
            off = 0.0 if target is None else _dist_m(here[2], here[1], target[0], target[1])
            if off <= LANDING_M:
                self._reach(last, inclusive=True)  # the final landing: ArduPilot never reports it, the touchdown does
                self.finish("SUCCEEDED", f"landed and disarmed {off:.0f} m from the planned landing point after the "
                            f"last item (item {last}); all {f.nav_total} items flown (mode {f.mode})")
                return
            self.finish("ABORTED", f"the last item (item {last}) was reached but the vehicle came down {off:.0f} m "
                        f"from the planned landing point (limit {LANDING_M:g} m), in mode {f.mode}")
            return
        done_now = set(f.reached)
        top = max(done_now) if done_now else None
        why = [f"landed in mode {f.mode} with {len(done_now)} of {f.nav_total} items reached"
               + (f" (last item {top})" if top is not None else "")]
        for a in f.alerts:
            if a["kind"] in ("battery_low", "mode_change"):
                why.append(a["message"])
        self.finish("ABORTED", "; ".join(why))

    def _landed_after_recall(self, reached: set[int]) -> None:
        """Landed after an operator's recall: RECALLED near its dock (or where a landing in place began), in any
        mode; else ABORTED with the vehicle's figures. Nothing unknown is formatted or compared."""
        f = self.flight
        missing = [s for s in self.exp.nav_seqs if s not in reached]
        top = max(reached) if reached else None
        flown = f"{len(reached)} of {f.nav_total} items reached" + (f" (last item {top})" if top is not None else "")
        not_flown = f"{len(missing)} not flown: items {_seqs(missing)}" if missing else "nothing left unflown"
        here = f.track[-1] if f.track else None
        in_place = (f.recall or {}).get("mode") == "LAND" or (f.recall is None and f.mode == "LAND")
        if here is None:
            self.finish("ABORTED", f"recalled and landed in mode {f.mode}, but the vehicle sent no position: where "
                        f"it came down is unknown; {flown}; {not_flown}")
            return
        if in_place:
            start = f.recall or {}
            lat, lon = start.get("lat"), start.get("lon")
            off = None if lat is None or lon is None else _dist_m(here[2], here[1], lat, lon)
            if off is None or off <= RECALL_LAND_M:
                self.finish("RECALLED", f"recalled: landed in place at {here[2]:.6f},{here[1]:.6f} in mode {f.mode}; "
                            f"{flown}; {not_flown}")
                return
            self.finish("ABORTED", f"told to land in place but came down {off:.0f} m away; {flown}; {not_flown}")
            return
        home = (self.exp.dock_lat, self.exp.dock_lon) if self.exp.dock_lat is not None else \
            ((f.track[0][2], f.track[0][1]) if f.track else None)
        off = None if home is None or home[1] is None else _dist_m(here[2], here[1], home[0], home[1])
        if off is not None and off <= RECALL_HOME_M:
            self.finish("RECALLED", f"recalled: returned and landed {off:.0f} m from the dock, in mode {f.mode}; "
                        f"{flown}; {not_flown}")
            return
        where = "at an unknown distance from the dock" if off is None else f"{off:.0f} m from the dock"
        self.finish("ABORTED", f"recalled to its dock but landed {where} (limit {RECALL_HOME_M:g} m), in mode "
                    f"{f.mode}; {flown}; {not_flown}")

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
        f = self.flight
        seq = int(msg.seq)
        state = getattr(msg, "mission_state", 0)
        f.current_seq = seq
        f.mission_state = int(state) if state else None
        self._check_pause()
        # while the mission runs in the air, item ``seq`` is being flown: every item before it is done (ArduPilot
        # resets MISSION_CURRENT to 0 when it disarms, so only a flying vehicle's counts)
        running = f.mission_state in _RUNNING or (f.mission_state is None and f.mode == "AUTO")
        if f.ever_armed and f.armed and running and f.mode == "AUTO" and not f.terminal:
            f.highest_current = seq if f.highest_current is None else max(f.highest_current, seq)
            self._reach(seq, inclusive=False)

    def _on_mission_item_reached(self, msg: Any) -> None:
        f = self.flight
        seq = int(msg.seq)
        f.reported.append(seq)
        self._reach(seq, inclusive=True)  # coalesced reports: the earlier items were done too

    def _on_statustext(self, msg: Any) -> None:
        text = msg.text if isinstance(msg.text, str) else bytes(msg.text).decode("utf-8", "replace")
        text = text.rstrip("\x00")
        entry = {"t_s": round(self.flight.last_t_s, 1), "severity": _SEVERITY_NAME.get(int(msg.severity), str(msg.severity)),
                 "text": text}
        self.flight.texts.append(entry)  # logged as text; never parsed for instructions
        self.notify(self.flight, "text", entry)

    # --- timers --------------------------------------------------------------------------

    def seen_on_ground(self, now_wall: float) -> str:
        """The vehicle before take-off, from what it last said itself (or its silence)."""
        f = self.flight
        if self.last_rx_wall is None:
            return f"nothing heard on {self.exp.link}"
        return (f"the vehicle is {'in the air' if self.link.view.airborne else 'on the ground'}, "
                f"{'armed' if f.armed else 'disarmed'}, mode {f.mode or '?'}, heard {now_wall - self.last_rx_wall:.0f} "
                "s ago; nothing flies until it is launched (`sortie launch`)")

    def check_timers(self, now_wall: float) -> None:
        f = self.flight
        if f.terminal:
            return
        waited = now_wall - self.started_wall
        if not f.ever_armed and waited >= (self.waiting_said_s + self.opts.waiting_every_s):
            self.waiting_said_s = waited - waited % self.opts.waiting_every_s  # every waiting_every_s, never silent
            heard = self.last_rx_wall is not None
            ends = f"{'NOT_STARTED' if heard else 'NO_CONTACT'} after {min(self.opts.start_wait_s, self.opts.timeout_s):g} s"
            self.notify(f, "waiting", {"message": f"waiting for {'take-off' if heard else 'telemetry'}: "
                                       f"{self.seen_on_ground(now_wall)}; waited {waited:.0f} s (ends {ends})",
                                       "mode": f.mode, "armed": f.armed, "heard": heard, "waited_s": round(waited, 1)})
        if self.last_rx_wall is None:
            if now_wall - self.started_wall > self.opts.start_wait_s:
                why = (f"; heard another vehicle: {self.not_ours}" if self.not_ours else
                       f"; {self.link.silence_causes()}")
                self.finish("NO_CONTACT", f"no telemetry from {self.exp.link} within {self.opts.start_wait_s:g} s{why}")
            return
        silent = now_wall - self.last_rx_wall
        if not f.ever_armed:
            if now_wall - self.started_wall > self.opts.start_wait_s:
                self.finish("NOT_STARTED", f"the vehicle answered but did not take off within "
                            f"{self.opts.start_wait_s:g} s: {self.seen_on_ground(now_wall)}")
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
    *,
    bindings: dict[str, VehicleBinding] | None = None,
    links: dict[str, Any] | None = None,
    vehicles: Vehicles = PER_CALL,
) -> list[DroneFlight]:
    """Follow every vehicle until each has ended (or the budget runs out); bounded in time and messages.

    ``notify(flight, what, data)`` is called on "armed" (airborne), "progress",
    "alert", "text", "paused", "resumed", "recall", "end" and, before take-off,
    "waiting" every ``waiting_every_s`` (what the watch waits for, never silent); it may record
    things but its return value is ignored: nothing received ever turns into
    something sent. ``recalled()`` says whether an operator recalled the mission
    (asked only when the vehicle switches to RTL/LAND or lands). ``bindings``:
    each drone's ``VehicleBinding`` (its links are opened with it); ``links``:
    already connected links to follow through instead (a long-lived owner's); ``vehicles``: the authority's port
    the others are opened through (a held link is lent).
    """
    opts = options or MonitorOptions()
    if not expectations:
        raise InvalidArgument("nothing to monitor: no dispatched vehicle")
    sink: Notify = notify or (lambda f, what, data: None)
    followers = [_Follower(e, opts, sink, recalled, binding=(bindings or {}).get(e.drone_id),
                           link=(links or {}).get(e.drone_id), vehicles=vehicles) for e in expectations]
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
            if not fo.flight.terminal and not fo.flight.ever_armed:  # the watch ended before any take-off
                fo.finish("NOT_STARTED" if fo.last_rx_wall is not None else "NO_CONTACT",
                          f"the vehicle did not take off within the watch's {opts.timeout_s:g} s: "
                          + fo.seen_on_ground(time.monotonic()))
            elif not fo.flight.terminal:
                fo.finish("TIMEOUT", f"monitoring stopped after {opts.timeout_s:g} s / {total} messages; "
                          f"the vehicle was {fo.flight.status}")
    finally:
        for fo in followers:
            fo.close()
    return [fo.flight for fo in followers]
