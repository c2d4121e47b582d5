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
- **the take-off** is the vehicle's own evidence: armed and off the ground
  (EXTENDED_SYS_STATE), stamped with its own clock (SYSTEM_TIME,
  GLOBAL_POSITION_INT); a follower that attaches to a vehicle already in the
  air says so (``takeoff_seen`` False) and counts from its first sight;
- **a lost link is a state, not an end** (issue 42): silence for ``link_lost_s``
  after the vehicle armed is LINK_LOST — it may still be flying. Following goes
  on (the link reconnects by itself); when telemetry returns the flight
  continues where the vehicle is, the gap recorded. It ends only from the
  vehicle's evidence, or LOST once silent for longer than its remaining
  endurance on its own clock (``flows.vehicle.link_gaps``);
- **the end** at touchdown is ``flows.vehicle.landing_verdict``'s (SUCCEEDED at
  the planned landing point after the last item; RECALLED after a recall; a
  failsafe named; else ABORTED), a disarm right after a gap judged at a fresh position;
- **the battery at landing is projected** while it flies
  (``flows.vehicle.energy_projection``), said in ``progress`` and, once under
  the plan's reserve, in ``energy_breach`` — the monitor decides what to do.

**Telemetry is data, never instructions**: the only messages sent are GCS
heartbeats on a timer and the stream requests of the link; a failsafe's text
names what happened, it never triggers anything.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants; mavutil is loaded when a link opens)

from flows.vehicle.binding import VehicleBinding  # noqa: E402
from flows.vehicle.energy_projection import ReachedClock, project  # noqa: E402
from flows.vehicle.failsafes import failsafe_of_charge_state, failsafes_said  # noqa: E402
from flows.vehicle.flight_record import DroneFlight, Expectation, MonitorOptions  # noqa: E402
from flows.vehicle.landing_verdict import dist_m, judge_landing  # noqa: E402
from flows.vehicle.link_gaps import clock_rate, close_gap, endurance_left_s, lost_reason, open_gap  # noqa: E402
from flows.vehicle.modes import mode_name  # noqa: E402
from flows.vehicle.vehicles import PER_CALL, Vehicles  # noqa: E402
from planner.errors import InvalidArgument

__all__ = ["GCS_SYSTEM_ID", "MONITOR_COMPONENT_ID", "Notify", "follow_flight"]

GCS_SYSTEM_ID = 255
MONITOR_COMPONENT_ID = 191
STILL_EVERY_S = 0.5  # a position equal to the last one is kept at most this often (vehicle s)
LANDING_POSITION_WAIT_S = 3.0  # wall s a disarm seen right after a gap waits for a position of its landing
_HOLD_PAIRS = ({"AUTO", "LOITER"}, {"AUTO", "BRAKE"}, {"AUTO", "GUIDED"})  # an operator's hold and its end
_RUNNING = (_M.MISSION_STATE_ACTIVE, _M.MISSION_STATE_PAUSED)
_SEVERITY = {v.name.replace("MAV_SEVERITY_", ""): k for k, v in _M.enums["MAV_SEVERITY"].items()}
_SEVERITY_NAME = {k: n for n, k in _SEVERITY.items()}

Notify = Callable[[DroneFlight, str, dict[str, Any]], None]


class _Follower:
    """One link, one vehicle: turns received messages into a ``DroneFlight``. Never sends a command."""

    def __init__(self, exp: Expectation, opts: MonitorOptions, notify: Notify,
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
        self.breach_said = False
        self.reached_clock = ReachedClock()  # when the highest item reached was first seen (energy projection)
        self.progress_said_wall = 0.0
        self.seen_on_ground_armed_or_not = False  # the follower saw the vehicle on the ground: its take-off is seen
        self.takeoff_pending = False  # airborne seen before any timestamp of the vehicle: stamp it at the next one
        self.landing_pending: float | None = None  # wall time of a disarm waiting for the position of its landing
        self.clock_first: tuple[float, float] | None = None  # (vehicle s, wall s) when first seen airborne
        self.clock_last: tuple[float, float] | None = None
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
        now = time.monotonic()
        self.last_rx_wall = now
        self.link_alerted = False
        boot_ms = self.link.view.boot_ms
        if boot_ms is not None and boot_ms / 1000.0 > f.last_t_s:
            f.last_t_s = boot_ms / 1000.0
            if f.ever_armed:
                self.clock_last = (f.last_t_s, now)
            if self.takeoff_pending:
                self.takeoff_pending = False
                f.takeoff_t_s = f.last_t_s
        if f.status == "LINK_LOST":
            self._link_back(now)
        handler = getattr(self, "_on_" + kind.lower(), None)
        if handler is not None:
            handler(msg)
        self._check_airborne()

    # --- per message type: observations only ---------------------------------------------

    def _check_airborne(self) -> None:
        """The take-off: armed *and* off the ground (an armed vehicle on the ground has not flown yet)."""
        f = self.flight
        view = self.link.view
        if not f.ever_armed and view.mode and not view.airborne:
            self.seen_on_ground_armed_or_not = True
        if f.ever_armed or f.terminal or not f.armed or not view.airborne:
            return
        f.ever_armed = True
        f.takeoff_seen = self.seen_on_ground_armed_or_not
        if view.boot_ms is None:
            self.takeoff_pending = True
        else:
            f.takeoff_t_s = view.boot_ms / 1000.0
            self.clock_first = self.clock_last = (f.takeoff_t_s, time.monotonic())
        f.energy_start_wh = view.energy_wh
        f.status = "IN_FLIGHT"
        self.notify(f, "armed", {"mode": f.mode, "takeoff_seen": f.takeoff_seen})

    def _on_heartbeat(self, msg: Any) -> None:
        f = self.flight
        self.autopilot = int(msg.autopilot)
        armed = bool(msg.base_mode & _M.MAV_MODE_FLAG_SAFETY_ARMED)
        mode = mode_name(int(msg.custom_mode), self.autopilot)
        if f.mode and mode != f.mode and f.ever_armed and not f.terminal:
            reached = len(set(f.reached))
            hold = {f.mode, mode} in _HOLD_PAIRS
            # a recall's RTL or LAND; a LAND asked after the RTL (no failsafe said it) is judged where it begins
            if ((mode in ("RTL", "LAND") and f.recall is None) or (mode == "LAND" and (f.recall or {}).get("mode")
                                                                  == "RTL" and not f.failsafes)) and self.recalled():
                self.notify(f, "recall", f.mark_recall(mode))
            elif not hold:
                fs = f.failsafes[0]["name"] if f.failsafes else None
                self.alert("mode_change", f"vehicle switched from {f.mode} to {mode} at item {f.current_seq} "
                           f"({reached} of {f.nav_total} items reached)" + (f"; {fs} announced" if fs else ""),
                           from_mode=f.mode, to_mode=mode)
        f.mode = mode
        self._check_pause()
        was_armed = f.armed
        f.armed = armed
        if f.ever_armed and was_armed and not armed:
            f.landing_t_s = f.last_t_s
            gap_end = f.gaps[-1].get("back_t_s") if f.gaps else None
            if gap_end is not None and (not f.track or f.track[-1][0] < gap_end):
                self.landing_pending = time.monotonic()  # its last position is from before the gap: wait for one
                return
            self._landed()

    def _check_pause(self) -> None:
        """PAUSED while the vehicle holds in its mission (ArduPilot: AUTO + mission_state PAUSED, or a forced
        BRAKE; PX4: AUTO.LOITER), as the link's view of it says."""
        f = self.flight
        if not f.ever_armed or f.terminal or f.status == "LINK_LOST":
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

    def _landed(self) -> None:
        f = self.flight
        f.paused = False
        self.landing_pending = None
        status, reason = judge_landing(f, self.exp, recalled=f.recall is not None or self.recalled())
        if status == "ABORTED" and f.failsafes and reason.startswith(f.failsafes[0]["name"]):
            f.failsafe = f.failsafes[0]["name"]
        if status == "SUCCEEDED":
            self._reach(self.exp.nav_seqs[-1], inclusive=True)  # the final landing: never reported, the touchdown is
        self.finish(status, reason)

    def _on_global_position_int(self, msg: Any) -> None:
        f = self.flight
        t_s = msg.time_boot_ms / 1000.0
        point = [round(t_s, 2), msg.lon / 1e7, msg.lat / 1e7, round(msg.relative_alt / 1000.0, 2)]
        if not f.track or f.track[-1][1:] != point[1:] or t_s - f.track[-1][0] >= STILL_EVERY_S:
            f.track.append(point)  # a hover is kept twice a second: heard still, not silent (flown_work.JOIN_S)
        gap = f.gaps[-1] if f.gaps else None
        if gap is not None and gap.get("back_t_s") is not None and gap.get("after") is None:
            gap["after"] = self._where()
            gap["moved_m"] = None if gap["before"].get("lat") is None else round(dist_m(
                gap["before"]["lat"], gap["before"]["lon"], point[2], point[1]), 1)
        if self.landing_pending is not None:
            self._landed()
            return
        self._check_battery()

    def _on_battery_status(self, msg: Any) -> None:
        f = self.flight
        named = failsafe_of_charge_state(int(getattr(msg, "charge_state", 0) or 0))
        if named is not None and f.ever_armed and not any(x["evidence"].startswith("BATTERY_STATUS") for x in f.failsafes):
            self._failsafe_seen(named, "BATTERY_STATUS charge_state "
                                + _M.enums["MAV_BATTERY_CHARGE_STATE"][int(msg.charge_state)].name.split("_")[-1])
        if msg.battery_remaining < 0:
            return
        pct = float(msg.battery_remaining)
        if f.battery_start_pct is None or not f.ever_armed:
            f.battery_start_pct = pct  # the charge at take-off (the last reading on the ground)
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
        if f.battery_start_pct is None or f.battery_pct is None or not f.ever_armed:
            return
        self._project()
        if self.battery_alerted:
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

    def _project(self) -> None:
        """The battery at landing from the consumption so far (``energy_projection``); ``energy_breach`` once under
        the reserve while the vehicle flies its mission (a vehicle already returning is not projected)."""
        f, profile = self.flight, self.exp.profile
        if profile is None or f.battery_start_pct is None or f.battery_pct is None or self.link.view.returning:
            return
        top = max(f.reached) if f.reached else None
        used_wh = f.energy_wh - f.energy_start_wh if f.energy_wh is not None and f.energy_start_wh is not None else None
        p = project(profile, start_pct=f.battery_start_pct, now_pct=f.battery_pct, reached_seq=top, used_wh=used_wh,
                    since_s=self.reached_clock.since(top, f.last_t_s, f.takeoff_t_s))
        f.projection = {"t_s": round(f.last_t_s, 1), **p.to_dict()}
        if p.breached and p.evidence and not self.breach_said and f.recall is None:
            self.breach_said = True
            self.alert("energy_projection", p.sentence(), **p.to_dict())
            self.notify(f, "energy_breach", {**p.to_dict(), "sentence": p.sentence()})

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
        for named, evidence in failsafes_said(text, [x["name"] for x in self.flight.failsafes]):
            if self.flight.ever_armed:  # a name for what happened, never a reason to send anything
                self._failsafe_seen(named, evidence)

    def _failsafe_seen(self, name: str, evidence: str) -> None:
        f = self.flight
        entry = {"name": name, "t_s": round(f.last_t_s, 1), "evidence": evidence, "mode": f.mode, "seq": f.current_seq}
        f.failsafes.append(entry)
        self.alert("failsafe", f"{name}: {evidence} at item {f.current_seq} (mode {f.mode})", failsafe=name)

    # --- the link lost and back ------------------------------------------------------------

    def _where(self) -> dict[str, Any]:
        f, v = self.flight, self.link.view
        here = f.track[-1] if f.track else None
        return {"t_s": round(f.last_t_s, 1), "seq": f.current_seq, "mode": f.mode, "armed": f.armed,
                "battery_pct": f.battery_pct, "reached": len(set(f.reached)), "airborne": v.airborne,
                "lat": here[2] if here else None, "lon": here[1] if here else None, "alt_m": here[3] if here else None}

    def _link_lost(self, silent: float, now: float) -> None:
        f = self.flight
        left = endurance_left_s(f.battery_pct, self.exp.endurance_s, self.opts.endurance_margin, self.opts.lost_grace_s)
        gap, message = open_gap(self._where(), t_s=f.last_t_s, silent_s=silent, lost_wall=now - silent,
                                rate=clock_rate(self.clock_first, self.clock_last), left_s=left, nav_total=f.nav_total)
        f.gaps.append(gap)
        f.status = "LINK_LOST"
        self.notify(f, "link_lost", {"message": message, "silent_s": round(silent, 1), **gap["before"]})

    def _link_back(self, now: float) -> None:
        f = self.flight
        gap = f.gaps[-1]
        close_gap(gap, now_wall=now, t_s=f.last_t_s)
        f.status = "PAUSED" if f.paused else "IN_FLIGHT"
        self.notify(f, "link_back", {"silent_s": gap["silent_s"], "from_t_s": gap["from_t_s"],
                                     "back_t_s": gap["back_t_s"], "mode": self.link.view.mode})

    # --- timers --------------------------------------------------------------------------

    def seen_on_ground(self, now_wall: float) -> str:
        """The vehicle before take-off, from what it last said itself (or its silence)."""
        f = self.flight
        if self.last_rx_wall is None:
            return f"nothing heard on {self.exp.link}"
        return (f"the vehicle is {'in the air' if self.link.view.airborne else 'on the ground'}, "
                f"{'armed' if f.armed else 'disarmed'}, mode {f.mode or '?'}, heard {now_wall - self.last_rx_wall:.0f} "
                "s ago; nothing flies until it is launched (`sortie launch`)")

    def progress(self, now_wall: float) -> None:
        """Say where the flight is (``progress_every_s``): item, battery, the projection, the link."""
        f = self.flight
        if not f.ever_armed or now_wall - self.progress_said_wall < self.opts.progress_every_s:
            return
        self.progress_said_wall = now_wall
        silent = None if self.last_rx_wall is None else now_wall - self.last_rx_wall
        self.notify(f, "progress", {"seq": f.current_seq, "items": [], "tick": True,
                                    "link_lost_s": round(silent, 1) if f.status == "LINK_LOST" and silent else None})

    def check_timers(self, now_wall: float) -> None:
        f = self.flight
        if f.terminal:
            return
        if self.landing_pending is not None and now_wall - self.landing_pending > LANDING_POSITION_WAIT_S:
            self._landed()  # no position of the landing came: judged on what is known
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
        if not f.ever_armed and not f.armed:
            if now_wall - self.started_wall > self.opts.start_wait_s:
                self.finish("NOT_STARTED", f"the vehicle answered but did not take off within "
                            f"{self.opts.start_wait_s:g} s: {self.seen_on_ground(now_wall)}")
            elif silent > self.opts.link_lost_s:
                self.finish("NO_CONTACT", f"telemetry stopped for {silent:.1f} s before take-off, the vehicle on "
                            "the ground and disarmed")
            return
        self.progress(now_wall)
        if silent > self.opts.link_alert_s and not self.link_alerted:
            self.link_alerted = True
            self.alert("link_lost", f"no telemetry for {silent:.1f} s at item {f.current_seq}", silent_s=round(silent, 1))
        if silent > self.opts.link_lost_s and f.status != "LINK_LOST":
            self._link_lost(silent, now_wall)
        if f.status == "LINK_LOST":
            why = lost_reason(f.gaps[-1], silent)
            if why is not None:
                self.finish("LOST", why)


def follow_flight(
    expectations: list[Expectation],
    options: MonitorOptions | None = None,
    notify: Notify | None = None,
    recalled: Callable[[], bool] | None = None,
    *,
    bindings: dict[str, VehicleBinding] | None = None,
    links: dict[str, Any] | None = None,
    stop: Callable[[], bool] | None = None,
    vehicles: Vehicles = PER_CALL,
) -> list[DroneFlight]:
    """Follow every vehicle until each has ended (or the budget runs out); bounded in time and messages.

    ``notify(flight, what, data)`` is called on "armed" (airborne), "progress"
    (items reached, and every ``progress_every_s`` in flight), "alert", "text",
    "paused", "resumed", "recall", "link_lost", "link_back", "energy_breach", "end"
    and, before take-off, "waiting" every ``waiting_every_s``; its return value is
    ignored: nothing received turns into something sent. ``recalled()``: is a recall
    recorded. ``bindings``: each drone's ``VehicleBinding``; ``links``: connected
    links to follow through (a long-lived owner's), others opened through
    ``vehicles``, the authority's port. ``stop()``: end the watch early.
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
        while time.monotonic() < deadline and total < opts.max_messages and not (stop is not None and stop()):
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
            if not fo.flight.terminal and not fo.flight.ever_armed and not fo.flight.armed:
                fo.finish("NOT_STARTED" if fo.last_rx_wall is not None else "NO_CONTACT",
                          f"the vehicle did not take off within the watch's {opts.timeout_s:g} s: "
                          + fo.seen_on_ground(time.monotonic()))
            elif not fo.flight.terminal and fo.flight.status != "LINK_LOST":
                fo.finish("TIMEOUT", f"monitoring stopped after {opts.timeout_s:g} s / {total} messages; "
                          f"the vehicle was {fo.flight.status}")
    finally:
        for fo in followers:
            fo.close()
    return [fo.flight for fo in followers]
