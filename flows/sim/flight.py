"""Flying the uploaded mission in the vehicle simulator, in accelerated simulated time.

``SimFlight`` is a ``flows.sim.vehicle.VehicleBehaviour``: plugged into a
``SimVehicle`` (``SimVehicle(..., flight=SimFlight(opts))`` or
``attach_flight(sim, opts)`` for a vehicle that already holds a mission) it
flies the stored mission once the upload has gone quiet for
``start_delay_s`` wall seconds and (``wait_for_gcs``) a ground station's
heartbeat arrived after it (the monitor's hello: so no telemetry of the
take-off goes to the uploader's closed socket), and streams the telemetry a ground station
sees from a real autopilot:

- HEARTBEAT (mode AUTO / RTL / LOITER as the dialect encodes it, armed flag),
- GLOBAL_POSITION_INT (also once at every item reached, so the track has its corners),
- BATTERY_STATUS (remaining %, energy consumed in hJ), from a two-level power
  model (cruise and hover watts, the spec-calibrated model of FACTS.md),
- MISSION_CURRENT, MISSION_ITEM_REACHED for navigation items, STATUSTEXT.

Simulated time runs ``speedup`` times faster than the wall clock, integrated in
steps of at most ``step_s`` simulated seconds (a loaded machine slows the
flight down rather than making it jump). ``time_boot_ms`` carries simulated
time, so a monitor can stamp what it sees in flight time.

Faults (``FlightFaults``):

- ``drain_factor``: the battery drains that many times faster than the model
  says; the vehicle's own battery failsafe (``failsafe_pct``) then switches to
  RTL, as an autopilot would.
- ``link_loss_after_s``: after that many simulated seconds of flight nothing
  more is sent (the vehicle flies on and lands, unseen).
- ``abort_at_seq``: when the mission reaches that item the vehicle switches to
  RTL ("mission aborted") and comes home.
- ``inject_text``: a STATUSTEXT that reads like a command is sent at item
  ``inject_at_seq``. The vehicle itself ignores it too: it changes nothing.
- ``lose_ack_of``: the first COMMAND_ACK of each of these MAV_CMDs is lost on
  the way back (the command WAS executed); ``lose_command_of``: the first
  COMMAND_LONG/INT of each of these is lost on the way in (nothing happens).
  A command listed k times loses its first k ACKs (commands).

Commands (COMMAND_LONG / COMMAND_INT, answered with COMMAND_ACK), with each
autopilot's own semantics (see ``_on_command`` for the sources mimicked):

- ``MAV_CMD_DO_PAUSE_CONTINUE``: ArduPilot holds position in AUTO (the mode
  stays AUTO; MISSION_CURRENT reports ``MISSION_STATE_PAUSED``) and continues
  on param1 = 1; PX4 does not implement it (UNSUPPORTED): a PX4 ground
  station switches to AUTO.LOITER (hold) with ``MAV_CMD_DO_SET_MODE`` and back
  to AUTO.MISSION.
- ``MAV_CMD_DO_SET_MODE`` to AUTO, LOITER, RTL or LAND.
- ``MAV_CMD_NAV_RETURN_TO_LAUNCH`` (mode RTL: climb, return home, land) and
  ``MAV_CMD_NAV_LAND`` (mode LAND: descend where it is).

The simulator takes over the vehicle's heartbeat while a flight is loaded
(``SimVehicle.heartbeat_s`` is set to infinity and the flight sends its own),
so a ground station never sees two contradicting heartbeats.

Long on purpose: ``SimFlight`` is one state machine (position, battery, mode, the
item being flown, pending operator commands) whose steps all read and write the
same state; the faults and options it is built from live in ``flows.sim.flight_options``.
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter
from typing import Any

os.environ.setdefault("MAVLINK20", "1")
from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only; mavutil loads every dialect)

from flows.vehicle.modes import NAV_COMMANDS, NAV_LAND, NAV_RTL, NAV_TAKEOFF, NAV_WAYPOINT, custom_mode, mode_name, nav_seqs  # noqa: E402,F401
from planner.output.mission_items import MISSION, MissionItem  # noqa: E402
from flows.sim.flight_options import FlightFaults, FlightOptions  # noqa: E402

__all__ = [
    "FlightFaults",
    "FlightOptions",
    "SimFlight",
    "attach_flight",
    "NAV_COMMANDS",
    "mode_name",
    "custom_mode",
    "nav_seqs",
]


M_PER_DEG_LAT = 111_320.0


def _dist_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    kx = math.cos(math.radians((lat1 + lat2) / 2.0)) * M_PER_DEG_LAT
    return math.hypot((lon2 - lon1) * kx, (lat2 - lat1) * M_PER_DEG_LAT)


class SimFlight:
    """The flying part of the simulated vehicle (a ``VehicleBehaviour``); one mission, flown once."""

    def __init__(self, options: FlightOptions | None = None) -> None:
        self.options = options or FlightOptions()
        self.phase = "IDLE"  # IDLE → WAITING → FLYING → LANDED
        self.mode = "LOITER"
        self.armed = False
        self.items: tuple[MissionItem, ...] = ()
        self.reached: list[int] = []
        self.sim_t = 0.0
        self.lat = 0.0
        self.lon = 0.0
        self.alt_m = 0.0
        self.home: tuple[float, float] = (0.0, 0.0)
        self.battery_pct = self.options.battery_pct
        self.energy_j = 0.0
        self.speed_mps = self.options.default_speed_mps
        self.cur = 0  # index into items
        self.completed = False
        self.link_lost = False
        self.texts_sent: list[str] = []
        self.received: dict[str, dict[str, int]] = {}  # phase → message type → count, from the mission's load on
        self._dialect = "ardupilot"
        self._stored_s = 0.0
        self._last_protocol_s = 0.0
        self._gcs_seen_s = 0.0
        self._last_tick_s: float | None = None
        self._last_telemetry_s = 0.0
        self._last_heartbeat_s = 0.0
        self._hold_left_s: float | None = None
        self._vehicle: Any = None
        self._saved_heartbeat_s: float | None = None
        self._injected = False
        self._rtl_stage = ""
        self.paused = False  # ArduPilot's AUTO pause (wp_nav paused): holds position, mode stays AUTO
        self.commands: list[dict[str, Any]] = []  # every command received: (t_s, command, params, result)
        self._lost_acks: Counter[int] = Counter()
        self._lost_commands: Counter[int] = Counter()

    # --- VehicleBehaviour ---------------------------------------------------------------

    def on_message(self, vehicle: Any, msg: Any) -> bool:
        kind = msg.get_type()
        if self.phase != "IDLE":
            seen = self.received.setdefault(self.phase, {})
            seen[kind] = seen.get(kind, 0) + 1
        if kind.startswith("MISSION_"):
            self._last_protocol_s = time.monotonic()
        elif kind == "HEARTBEAT" and msg.type == _M.MAV_TYPE_GCS:
            self._gcs_seen_s = time.monotonic()
        elif kind in ("COMMAND_LONG", "COMMAND_INT"):
            target = int(getattr(msg, "target_system", 0))
            if target in (0, getattr(vehicle, "system_id", 1)):
                self._on_command(vehicle, msg)
            return True
        return False  # the mission protocol stays the simulator's

    def on_mission_stored(self, vehicle: Any, mission_type: int, items: tuple[MissionItem, ...]) -> None:
        if mission_type != MISSION or not items:
            return
        if self.phase in ("FLYING",):
            vehicle.log("flight: a new mission arrived in flight; the running one continues")
            return
        self.load(vehicle, items)

    def tick(self, vehicle: Any, now_s: float) -> None:
        if self.phase == "IDLE":
            return
        if self.phase == "WAITING":
            quiet = now_s - max(self._stored_s, self._last_protocol_s) >= self.options.start_delay_s
            listened = not self.options.wait_for_gcs or self._gcs_seen_s > max(self._stored_s, self._last_protocol_s)
            if quiet and listened:
                self._take_off(vehicle, now_s)
            self._heartbeat(vehicle, now_s, period_s=0.2)
            return
        last = self._last_tick_s if self._last_tick_s is not None else now_s
        self._last_tick_s = now_s
        if self.phase == "FLYING":
            budget = (now_s - last) * self.options.speedup
            steps = 0
            while budget > 1e-9 and steps < self.options.max_steps_per_tick and self.phase == "FLYING":
                dt = min(budget, self.options.step_s)
                self._step(vehicle, dt)
                budget -= dt
                steps += 1
        period = 1.0 / self.options.telemetry_hz if self.phase == "FLYING" else 0.25
        if now_s - self._last_telemetry_s >= period:
            self._last_telemetry_s = now_s
            self._telemetry(vehicle)
        self._heartbeat(vehicle, now_s, period_s=min(0.2, max(0.02, 1.0 / self.options.speedup)))

    # --- public helpers -------------------------------------------------------------------

    def load(self, vehicle: Any, items: tuple[MissionItem, ...]) -> None:
        """Take ``items`` as the mission to fly and wait for the upload to go quiet."""
        self._vehicle = vehicle
        self._dialect = getattr(vehicle, "dialect", "ardupilot")
        self.items = tuple(sorted(items, key=lambda i: i.seq))
        first_nav = next((i for i in self.items if i.command in NAV_COMMANDS and i.lat), self.items[0])
        home = getattr(vehicle, "home", None)
        if home is not None:
            self.home = (float(home[0]), float(home[1]))
        elif self._dialect == "ardupilot":
            self.home = (self.items[0].lat, self.items[0].lon)
        else:
            self.home = (first_nav.lat, first_nav.lon)
        self.lat, self.lon, self.alt_m = self.home[0], self.home[1], 0.0
        self.cur = 1 if self._dialect == "ardupilot" and len(self.items) > 1 else 0
        now = time.monotonic()
        self._stored_s = now
        self._last_protocol_s = max(self._last_protocol_s, now)
        if self._saved_heartbeat_s is None:
            self._saved_heartbeat_s = vehicle.heartbeat_s
            vehicle.heartbeat_s = math.inf  # the flight speaks for the vehicle from now on
        self.phase = "WAITING"
        vehicle.log(
            f"flight: mission of {len(self.items)} items loaded; starting after {self.options.start_delay_s:g} s of quiet"
        )

    @property
    def total_nav(self) -> int:
        return len(nav_seqs(self.items, self._dialect))

    # --- flying -------------------------------------------------------------------------------

    def _take_off(self, vehicle: Any, now_s: float) -> None:
        self.phase = "FLYING"
        self.mode = "AUTO"
        self.armed = True
        self._last_tick_s = now_s
        self._text(vehicle, _M.MAV_SEVERITY_INFO, "Arming motors; mission started")
        self._heartbeat(vehicle, now_s, period_s=0.0)
        self._send_current(vehicle)

    def _battery_step(self, power_w: float, dt: float) -> None:
        joules = power_w * self.options.faults.drain_factor * dt
        self.energy_j += joules
        self.battery_pct = max(0.0, self.battery_pct - joules / (self.options.battery_wh * 3600.0) * 100.0)

    def _step(self, vehicle: Any, dt: float) -> None:
        """Advance the simulated vehicle by ``dt`` simulated seconds."""
        faults = self.options.faults
        self.sim_t += dt
        if faults.link_loss_after_s is not None and not self.link_lost and self.sim_t >= faults.link_loss_after_s:
            self.link_lost = True
            vehicle.log(f"flight: link lost at t={self.sim_t:.0f} s (fault)")
        if self.mode in ("AUTO", "LOITER") and self.battery_pct < self.options.failsafe_pct:
            self._start_rtl(vehicle, f"Battery failsafe {self.battery_pct:.0f}%: RTL")
        if self.mode == "RTL":
            self._rtl_step(vehicle, dt)
            return
        if self.mode == "LAND":
            self._battery_step(self.options.hover_power_w, dt)
            if self._descend(dt):
                self._land_done(vehicle)
            return
        if self.mode == "LOITER" or self.paused:
            self._battery_step(self.options.hover_power_w, dt)  # holding position: hover power, no progress
            return
        if self.cur >= len(self.items):
            self._land_done(vehicle)
            return
        item = self.items[self.cur]
        if faults.abort_at_seq is not None and item.seq >= faults.abort_at_seq:
            self._start_rtl(vehicle, f"Mission aborted at item {item.seq}: RTL")
            return
        if faults.inject_text and not self._injected and item.seq >= faults.inject_at_seq:
            self._injected = True
            self._text(vehicle, _M.MAV_SEVERITY_NOTICE, faults.inject_text)
        if item.command not in NAV_COMMANDS:
            if item.command == _M.MAV_CMD_DO_CHANGE_SPEED and item.param2 > 0:
                self.speed_mps = float(item.param2)
            self._advance(vehicle, reached=False)
            return
        if item.command == NAV_TAKEOFF:
            self._battery_step(self.options.hover_power_w, dt)
            self.alt_m = min(item.alt_m, self.alt_m + self.options.climb_mps * dt)
            if self.alt_m >= item.alt_m - 0.05:
                self._advance(vehicle, reached=True)
            return
        if item.command == NAV_RTL:
            self._battery_step(self.options.cruise_power_w, dt)
            if self._fly_towards(self.home[0], self.home[1], max(self.alt_m, 1.0), dt):
                if self._descend(dt):
                    self._advance(vehicle, reached=True)
            return
        target_alt = 0.0 if item.command == NAV_LAND else item.alt_m
        if item.command == NAV_LAND:
            self._battery_step(self.options.cruise_power_w, dt)
            if self._fly_towards(item.lat, item.lon, self.alt_m, dt) and self._descend(dt):
                self._advance(vehicle, reached=True)
            return
        if self._hold_left_s is not None:
            self._battery_step(self.options.hover_power_w, dt)
            self._hold_left_s -= dt
            if self._hold_left_s <= 0:
                self._hold_left_s = None
                self._advance(vehicle, reached=False)
            return
        self._battery_step(self.options.cruise_power_w, dt)
        if self._fly_towards(item.lat, item.lon, target_alt, dt):
            self._reached(vehicle, item.seq)
            if item.param1 > 0:
                self._hold_left_s = float(item.param1)
            else:
                self._advance(vehicle, reached=False)

    def _fly_towards(self, lat: float, lon: float, alt_m: float, dt: float) -> bool:
        """Move straight towards the point at the current speed; True when there."""
        d = _dist_m(self.lat, self.lon, lat, lon)
        dz = alt_m - self.alt_m
        step = self.speed_mps * dt
        total = math.hypot(d, dz)
        if total <= step or total < 0.01:
            self.lat, self.lon, self.alt_m = lat, lon, alt_m
            return True
        f = step / total
        self.lat += (lat - self.lat) * f
        self.lon += (lon - self.lon) * f
        self.alt_m += dz * f
        return False

    def _descend(self, dt: float) -> bool:
        self.alt_m = max(0.0, self.alt_m - self.options.descent_mps * dt)
        return self.alt_m <= 0.0

    def _reached(self, vehicle: Any, seq: int) -> None:
        self.reached.append(seq)
        if not self.link_lost:
            self._send_position(vehicle)
            vehicle.send(lambda m: m.mission_item_reached_send(seq))

    def _advance(self, vehicle: Any, *, reached: bool) -> None:
        item = self.items[self.cur]
        if reached:
            self._reached(vehicle, item.seq)
        if item.command in (NAV_LAND, NAV_RTL):
            self._land_done(vehicle)
            return
        self.cur += 1
        if self.cur >= len(self.items):
            self._land_done(vehicle)
            return
        self._send_current(vehicle)

    def _start_rtl(self, vehicle: Any, why: str, severity: int = _M.MAV_SEVERITY_CRITICAL) -> None:
        self.mode = "RTL"
        self.paused = False
        self._hold_left_s = None
        self._rtl_stage = "climb"
        self._text(vehicle, severity, why)
        self._heartbeat(vehicle, time.monotonic(), period_s=0.0)  # a mode change is announced at once

    def _rtl_step(self, vehicle: Any, dt: float) -> None:
        self._battery_step(self.options.cruise_power_w, dt)
        if self._rtl_stage == "climb":
            if self.alt_m < self.options.rtl_alt_m:
                self.alt_m = min(self.options.rtl_alt_m, self.alt_m + self.options.climb_mps * dt)
                return
            self._rtl_stage = "return"
        if self._rtl_stage == "return":
            if self._fly_towards(self.home[0], self.home[1], self.alt_m, dt):
                self._rtl_stage = "land"
            return
        if self._descend(dt):
            self._land_done(vehicle)

    def _land_done(self, vehicle: Any) -> None:
        self.phase = "LANDED"
        self.armed = False
        self.alt_m = 0.0
        self.completed = self.mode == "AUTO"
        self._text(vehicle, _M.MAV_SEVERITY_INFO, "Mission complete; landed" if self.completed else "Landed; disarmed")
        self._telemetry(vehicle)
        self._heartbeat(vehicle, time.monotonic(), period_s=0.0)
        vehicle.log(f"flight: landed at t={self.sim_t:.0f} s, mode {self.mode}, battery {self.battery_pct:.1f} %")

    # --- commands --------------------------------------------------------------------------------

    def _on_command(self, vehicle: Any, msg: Any) -> None:
        """One COMMAND_LONG/COMMAND_INT: execute it, then answer COMMAND_ACK to its sender (faults aside).

        Both autopilots answer every command with exactly one COMMAND_ACK
        (ArduPilot ``GCS_MAVLINK::handle_command_long``/``handle_command_int``
        in ``libraries/GCS_MAVLink/GCS_Common.cpp``; PX4 ``Commander::answer_command``
        in ``src/modules/commander/Commander.cpp``); a repeated command is simply
        executed again, which is why a ground station must not re-send blind.
        """
        cmd = int(msg.command)
        faults = self.options.faults
        if self._lost_commands[cmd] < faults.lose_command_of.count(cmd):
            self._lost_commands[cmd] += 1
            vehicle.log(f"flight: command {cmd} lost on the way in (fault)")
            return
        params = [float(msg.param1), float(msg.param2), float(msg.param3), float(msg.param4)]
        if msg.get_type() == "COMMAND_INT":
            params += [msg.x / 1e7, msg.y / 1e7, float(msg.z)]
        else:
            params += [float(msg.param5), float(msg.param6), float(msg.param7)]
        result = self._execute(vehicle, cmd, params)
        self.commands.append({"t_s": round(self.sim_t, 2), "command": cmd, "params": params[:4],
                              "confirmation": int(getattr(msg, "confirmation", 0)), "result": result, "mode": self.mode,
                              "lat": self.lat, "lon": self.lon})
        if self._lost_acks[cmd] < faults.lose_ack_of.count(cmd):
            self._lost_acks[cmd] += 1
            vehicle.log(f"flight: COMMAND_ACK of {cmd} lost on the way back (fault); the command was executed")
            return
        src = (msg.get_srcSystem(), msg.get_srcComponent())
        vehicle.send(lambda m: m.command_ack_send(cmd, result, 0, 0, src[0], src[1]))

    def _execute(self, vehicle: Any, cmd: int, p: list[float]) -> int:
        flying = self.phase == "FLYING"
        if cmd == _M.MAV_CMD_DO_PAUSE_CONTINUE:
            if self._dialect == "px4":
                # PX4 src/modules/commander/Commander.cpp Commander::handle_command(): no case for
                # VEHICLE_CMD_DO_PAUSE_CONTINUE, so the default branch answers VEHICLE_CMD_RESULT_UNSUPPORTED.
                return _M.MAV_RESULT_UNSUPPORTED
            # ArduCopter GCS_Mavlink.cpp GCS_MAVLINK_Copter::handle_command_pause_continue(): param1 0 →
            # flightmode->pause(), 1 → flightmode->resume(), else DENIED; a refusal says "Failed to pause"/
            # "Failed to resume" and answers FAILED. ArduCopter mode_auto.cpp ModeAuto::pause() refuses when
            # already paused or not flying a waypoint leg (SubMode::WP); resume() refuses when not paused; other
            # modes (RTL, LAND, LOITER) keep Mode::pause()/resume()'s default "false".
            if int(p[0]) == 0:
                if flying and self.mode == "AUTO" and not self.paused and self._on_leg():
                    self.paused = True
                    self._send_current(vehicle)
                    return _M.MAV_RESULT_ACCEPTED
                self._text(vehicle, _M.MAV_SEVERITY_INFO, "Failed to pause")
                return _M.MAV_RESULT_FAILED
            if int(p[0]) == 1:
                if flying and self.mode == "AUTO" and self.paused:
                    self.paused = False
                    self._send_current(vehicle)
                    return _M.MAV_RESULT_ACCEPTED
                self._text(vehicle, _M.MAV_SEVERITY_INFO, "Failed to resume")
                return _M.MAV_RESULT_FAILED
            return _M.MAV_RESULT_DENIED
        if cmd == _M.MAV_CMD_DO_SET_MODE:
            # ArduPilot GCS_MAVLINK::handle_command_do_set_mode (GCS_Common.cpp): param1 base mode with
            # MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, param2 the custom mode number. PX4 Commander::handle_command
            # (VEHICLE_CMD_DO_SET_MODE): param2 custom main mode, param3 custom sub mode (px4_custom_mode.h).
            if not int(p[0]) & _M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED:
                return _M.MAV_RESULT_DENIED
            if self._dialect == "px4":
                wanted = mode_name((int(p[1]) << 16) | (int(p[2]) << 24), _M.MAV_AUTOPILOT_PX4)
            else:
                wanted = mode_name(int(p[1]), _M.MAV_AUTOPILOT_ARDUPILOTMEGA)
            if wanted not in ("AUTO", "LOITER", "RTL", "LAND"):
                return _M.MAV_RESULT_DENIED
            return self._enter(vehicle, wanted) if flying else _M.MAV_RESULT_FAILED
        if cmd == _M.MAV_CMD_NAV_RETURN_TO_LAUNCH:
            # ArduPilot GCS_MAVLINK::handle_command_int_packet → set_mode(RTL, GCS_COMMAND); PX4
            # Commander::handle_command VEHICLE_CMD_NAV_RETURN_TO_LAUNCH → NAVIGATION_STATE_AUTO_RTL.
            return self._enter(vehicle, "RTL") if flying else _M.MAV_RESULT_FAILED
        if cmd == _M.MAV_CMD_NAV_LAND:
            # ArduCopter GCS_MAVLINK_Copter::handle_command_int_packet MAV_CMD_NAV_LAND → set_mode(LAND): descend
            # where it is; PX4 VEHICLE_CMD_NAV_LAND → NAVIGATION_STATE_AUTO_LAND.
            return self._enter(vehicle, "LAND") if flying else _M.MAV_RESULT_FAILED
        return _M.MAV_RESULT_UNSUPPORTED

    def _on_leg(self) -> bool:
        """Flying towards a waypoint (ArduCopter's SubMode::WP), not taking off, landing or returning."""
        if self.cur >= len(self.items):
            return False
        return self.items[self.cur].command == NAV_WAYPOINT

    def _enter(self, vehicle: Any, mode: str) -> int:
        """Switch flight mode on a ground station's request (ArduCopter Copter::set_mode: same mode → true)."""
        if mode == self.mode:
            return _M.MAV_RESULT_ACCEPTED
        if mode == "RTL":
            self._start_rtl(vehicle, "RTL: returning home (GCS command)", _M.MAV_SEVERITY_INFO)
            return _M.MAV_RESULT_ACCEPTED
        self.paused = False
        self.mode = mode
        # AUTO again: ArduCopter ModeAuto::init → mission.start_or_resume(): the current item is flown on.
        self._text(vehicle, _M.MAV_SEVERITY_INFO, {"LAND": "Landing here (GCS command)", "LOITER": "Holding position",
                                                    "AUTO": "Mission resumed"}[mode])
        self._heartbeat(vehicle, time.monotonic(), period_s=0.0)
        self._send_current(vehicle)
        return _M.MAV_RESULT_ACCEPTED

    # --- telemetry ------------------------------------------------------------------------------

    def _text(self, vehicle: Any, severity: int, text: str) -> None:
        self.texts_sent.append(text)
        if self.link_lost:
            return
        data = text.encode("utf-8")[:50]
        vehicle.send(lambda m: m.statustext_send(severity, data))

    def _boot_ms(self) -> int:
        return int(self.sim_t * 1000.0) & 0xFFFFFFFF

    def _send_current(self, vehicle: Any) -> None:
        if self.link_lost or not self.items:
            return
        seq = self.items[min(self.cur, len(self.items) - 1)].seq
        if self.phase == "LANDED":
            state = _M.MISSION_STATE_COMPLETE if self.completed else _M.MISSION_STATE_ACTIVE
        elif self.phase != "FLYING":
            state = _M.MISSION_STATE_NOT_STARTED
        else:
            # ArduCopter GCS_MAVLINK_Copter::mission_state(): PAUSED while ModeAuto::paused()
            state = _M.MISSION_STATE_PAUSED if self.paused else _M.MISSION_STATE_ACTIVE
        vehicle.send(lambda m: m.mission_current_send(seq, len(self.items), state))

    def _send_position(self, vehicle: Any) -> None:
        lat, lon, alt = int(round(self.lat * 1e7)), int(round(self.lon * 1e7)), int(round(self.alt_m * 1000))
        t = self._boot_ms()
        vehicle.send(lambda m: m.global_position_int_send(t, lat, lon, alt, alt, 0, 0, 0, 65535))

    def _telemetry(self, vehicle: Any) -> None:
        if self.link_lost:
            return
        self._send_position(vehicle)
        remaining = int(round(self.battery_pct))
        hj = int(self.energy_j / 100.0)
        volts = [3900] * 4 + [65535] * 6
        vehicle.send(
            lambda m: m.battery_status_send(
                0, _M.MAV_BATTERY_FUNCTION_ALL, _M.MAV_BATTERY_TYPE_LIPO, 32767, volts, -1, -1, hj, remaining
            )
        )
        self._send_current(vehicle)

    def _heartbeat(self, vehicle: Any, now_s: float, *, period_s: float) -> None:
        if self.link_lost or now_s - self._last_heartbeat_s < period_s:
            return
        self._last_heartbeat_s = now_s
        base = _M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED
        if self.armed:
            base |= _M.MAV_MODE_FLAG_SAFETY_ARMED
        if self.mode == "AUTO":
            base |= _M.MAV_MODE_FLAG_AUTO_ENABLED
        status = _M.MAV_STATE_ACTIVE if self.armed else _M.MAV_STATE_STANDBY
        autopilot = _M.MAV_AUTOPILOT_PX4 if self._dialect == "px4" else _M.MAV_AUTOPILOT_ARDUPILOTMEGA
        cm = custom_mode(self.mode, self._dialect)
        vehicle.send(lambda m: m.heartbeat_send(_M.MAV_TYPE_QUADROTOR, autopilot, base, cm, status))


def attach_flight(vehicle: Any, options: FlightOptions | None = None) -> SimFlight:
    """Give a running ``SimVehicle`` a flight; if it already holds a mission, fly that one.

    For a vehicle started without ``flight=`` (``sortie demo`` starts its
    simulators before dispatch): the mission it stored is flown after
    ``start_delay_s``.
    """
    flight = SimFlight(options)
    held = vehicle.missions.get(MISSION, ())
    if held:
        flight.load(vehicle, tuple(held))
    vehicle.flight = flight
    return flight
