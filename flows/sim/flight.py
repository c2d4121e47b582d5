"""Flying the uploaded mission in the vehicle simulator, in accelerated simulated time.

``SimFlight`` is a ``flows.sim.vehicle.VehicleBehaviour``: plugged into a
``SimVehicle`` (``SimVehicle(..., flight=SimFlight(opts))`` or
``attach_flight(sim, opts)`` for a vehicle that already holds a mission) it
loads the stored mission and **waits on the ground until a ground station
launches it** (FACTS.md: "Nothing flies until a GCS launches it"):

- ArduPilot: GUIDED → MAV_CMD_COMPONENT_ARM_DISARM(1) → AUTO →
  MAV_CMD_MISSION_START, each answered with COMMAND_ACK (``flows.sim.flight_commands``
  has each command's source); arming is refused before the pre-arm checks pass
  and in a mode that does not allow it; armed on the ground without taking off,
  it disarms after ``disarm_delay_s`` (``Copter::auto_disarm_check``, DISARM_DELAY 10 s).
- PX4: MAV_CMD_MISSION_START arms and starts the mission
  (``Commander::handle_command`` VEHICLE_CMD_MISSION_START); it too disarms
  after 10 s on the ground (COM_DISARM_PRFLT).

In flight it behaves as ArduCopter was observed to, the vehicle sending the
telemetry a ground station asked for (``flows.sim.vehicle``) from ``snapshot()``:

- **MISSION_ITEM_REACHED is coalesced**: items completed in the same instant
  (one loop turn; a DO_ item next to its waypoint, a waypoint at the take-off
  position) report only the last seq — ``GCS::send_mission_item_reached_message``
  keeps one ``mission_item_reached_index`` per channel and sends once; DO_ items
  count (``ModeAuto::verify_command`` completes them at once), a waypoint counts
  after its hold (``ModeAuto::verify_nav_wp``, with "Reached command #N").
- **no MISSION_ITEM_REACHED for the final NAV_LAND** on ArduPilot:
  ``ModeAuto::verify_land`` disarms and returns false ("After disarming the
  mission will reset"), so MISSION_CURRENT shows seq 0 once disarmed. PX4
  reports the landing item (``MissionBlock::is_mission_item_reached_or_completed``
  is true once landed; ``MavlinkMissionManager::send`` sends ``seq_reached``).
- **RTL lands and disarms in mode RTL**; LAND lands and disarms in LAND;
  **LOITER without a pilot descends** (throttle at minimum: observed 2.4 m/s,
  ``ModeLoiter::run`` takes the climb rate from the throttle stick) and
  disarms on the ground, still in LOITER; BRAKE and GUIDED hold where they
  stop (``ModeBrake::init`` decelerates at BRAKE_MODE_DECEL_RATE_MSS 7.5 m/s²,
  ``ModeGuided::init`` holds the stopping point); a paused AUTO slows down
  along its leg at WPNAV_ACCEL 2.5 m/s² (``AC_WPNav::update_wpnav`` shapes the
  speed to 0 while ``_paused``; observed on SITL: 9.99 m from 7 m/s). PX4's
  AUTO.LOITER holds (``Loiter`` in the navigator) after stopping at MPC_ACC_HOR.

Simulated time runs ``speedup`` times faster than the wall clock in flight,
integrated in steps of at most ``step_s`` simulated seconds (a loaded machine
slows the flight down rather than making it jump); the vehicle's clock, and so
``time_boot_ms``, follows it.

Faults (``FlightFaults``): ``drain_factor`` (the battery failsafe then switches
to RTL), ``link_loss_after_s`` (nothing more is sent), ``abort_at_seq`` (RTL at
that item), ``inject_text`` (a STATUSTEXT that reads like a command: it changes
nothing), ``lose_ack_of`` / ``lose_command_of`` (the first ACK / command of
those MAV_CMDs lost; a command listed k times loses k).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import Any

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only; mavutil loads every dialect)

from flows.sim import flight_commands  # noqa: E402
from flows.sim.flight_options import FlightFaults, FlightOptions  # noqa: E402
from flows.sim.state import IN_AIR, LANDING, ON_GROUND, TAKEOFF, SimState  # noqa: E402
from flows.vehicle.modes import NAV_COMMANDS, NAV_LAND, NAV_RTL, NAV_TAKEOFF, NAV_WAYPOINT, custom_mode, mode_name, nav_seqs  # noqa: E402,F401
from planner.output.mission_items import MISSION, MissionItem  # noqa: E402

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
HOLD_MODES = frozenset({"GUIDED", "BRAKE"})  # hold position by themselves (ArduCopter)
_AP_NAMES = {NAV_TAKEOFF: "Takeoff", NAV_WAYPOINT: "WP", NAV_LAND: "Land", NAV_RTL: "RTL",
             _M.MAV_CMD_DO_CHANGE_SPEED: "ChangeSpeed", _M.MAV_CMD_DO_SET_CAM_TRIGG_DIST: "SetCamTrigDst"}
DECEL_MPS2 = {"BRAKE": 7.5, "GUIDED": 2.5, "AUTO": 2.5}  # BRAKE_MODE_DECEL_RATE_MSS; WPNAV_ACCEL 250 cm/s²
PX4_DECEL_MPS2 = 3.0  # MPC_ACC_HOR default (mc_pos_control_params.c): AUTO.LOITER's stop
NO_PILOT_DESCENT = frozenset({"LOITER", "STABILIZE"})  # ArduCopter modes that follow the (absent) throttle stick


def _dist_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    kx = math.cos(math.radians((lat1 + lat2) / 2.0)) * M_PER_DEG_LAT
    return math.hypot((lon2 - lon1) * kx, (lat2 - lat1) * M_PER_DEG_LAT)


class SimFlight:
    """The flying part of the simulated vehicle (a ``VehicleBehaviour``); one mission, launched by a GCS."""

    def __init__(self, options: FlightOptions | None = None) -> None:
        self.options = options or FlightOptions()
        self.phase = "IDLE"  # IDLE → READY (mission loaded, on the ground) → FLYING → LANDED
        self.mode = "STABILIZE"
        self.armed = False
        self.armed_at: float | None = None  # wall clock of arming on the ground (auto-disarm)
        self.items: tuple[MissionItem, ...] = ()
        self.reached: list[int] = []  # navigation items the vehicle completed (what happened)
        self.reported: list[int] = []  # MISSION_ITEM_REACHED seqs it sent (what a ground station can see)
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
        self.paused = False  # ArduPilot's AUTO pause (wp_nav paused): holds position, mode stays AUTO
        self.commands: list[dict[str, Any]] = []  # every command received: (t_s, command, params, result)
        self._dialect = "ardupilot"
        self._last_tick_s: float | None = None
        self._hold_left_s: float | None = None
        self._vel_ne_mps = (0.0, 0.0)  # horizontal velocity (north, east): what a hold has to brake away
        self._rtl_stage = ""
        self._injected = False
        self._pending_reached: int | None = None
        self._vehicle: Any = None
        self._lost_acks: Counter[int] = Counter()
        self._lost_commands: Counter[int] = Counter()

    # --- VehicleBehaviour ---------------------------------------------------------------

    def on_message(self, vehicle: Any, msg: Any) -> bool:
        kind = msg.get_type()
        if self.phase != "IDLE":
            seen = self.received.setdefault(self.phase, {})
            seen[kind] = seen.get(kind, 0) + 1
        if kind in ("COMMAND_LONG", "COMMAND_INT"):
            target = int(getattr(msg, "target_system", 0))
            if target in (0, getattr(vehicle, "system_id", 1)):
                flight_commands.on_command(self, vehicle, msg)
            return True
        return False  # the mission protocol stays the simulator's

    def on_mission_stored(self, vehicle: Any, mission_type: int, items: tuple[MissionItem, ...]) -> None:
        if mission_type != MISSION or not items:
            return
        if self.phase == "FLYING":
            vehicle.log("flight: a new mission arrived in flight; the running one continues")
            return
        self.load(vehicle, items)

    def tick(self, vehicle: Any, now_s: float) -> float | None:
        """Advance the flight; returns the simulated seconds flown (None on the ground: the clock runs at 1×)."""
        if self.phase != "FLYING":
            self._last_tick_s = now_s
            self._auto_disarm(vehicle, now_s)
            return None
        last = self._last_tick_s if self._last_tick_s is not None else now_s
        self._last_tick_s = now_s
        budget = (now_s - last) * self.options.speedup
        advanced = 0.0
        steps = 0
        while budget > 1e-9 and steps < self.options.max_steps_per_tick and self.phase == "FLYING":
            dt = min(budget, self.options.step_s)
            self._step(vehicle, dt)
            budget -= dt
            advanced += dt
            steps += 1
        self._flush_reached(vehicle)
        return advanced

    def snapshot(self, vehicle: Any) -> SimState:
        """What the vehicle reports (``flows.sim.telemetry``); before a mission, the vehicle's own ground state."""
        if self.phase == "IDLE":
            ground = vehicle.ground
            if not self.commands:
                self.mode = ground.mode
            return SimState(mode=self.mode, armed=self.armed, lat=ground.lat, lon=ground.lon, home=ground.home,
                            battery_pct=self.battery_pct)
        home_alt = float(vehicle.home[2]) if getattr(vehicle, "home", None) is not None else 0.0
        if self.phase == "FLYING":
            landed = TAKEOFF if self._current_is(NAV_TAKEOFF) and self.mode == "AUTO" else IN_AIR
            if self.mode in ("LAND",) or (self.mode == "RTL" and self._rtl_stage == "land"):
                landed = LANDING
        else:
            landed = ON_GROUND
        seq, state = self._mission_current()
        return SimState(mode=self.mode, armed=self.armed, lat=self.lat, lon=self.lon, alt_m=self.alt_m,
                        home=(self.home[0], self.home[1], home_alt), battery_pct=self.battery_pct,
                        energy_j=self.energy_j, landed_state=landed, mission_seq=seq, mission_total=len(self.items),
                        mission_state=state)

    # --- public helpers -------------------------------------------------------------------

    def load(self, vehicle: Any, items: tuple[MissionItem, ...]) -> None:
        """Take ``items`` as the mission to fly; the vehicle waits on the ground for a launch."""
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
        if self.phase in ("IDLE", "LANDED"):
            self.lat, self.lon, self.alt_m = self.home[0], self.home[1], 0.0
            ground = getattr(vehicle, "ground", None)
            self.mode = ground.mode if ground is not None and self.phase == "IDLE" else self.mode
        self.cur = self._first_index()
        self.completed = False
        self.phase = "READY"
        vehicle.log(f"flight: mission of {len(self.items)} items loaded; waiting on the ground for a launch")

    @property
    def total_nav(self) -> int:
        return len(nav_seqs(self.items, self._dialect))

    def _first_index(self) -> int:
        return 1 if self._dialect == "ardupilot" and len(self.items) > 1 else 0

    def _current_is(self, command: int) -> bool:
        return self.cur < len(self.items) and self.items[self.cur].command == command

    def _mission_current(self) -> tuple[int, int]:
        """MISSION_CURRENT's seq and mission_state (ArduCopter ``GCS_MAVLINK_Copter::mission_state``)."""
        if not self.items:
            return 0, _M.MISSION_STATE_NO_MISSION
        seq = self.items[min(self.cur, len(self.items) - 1)].seq
        if self.phase == "LANDED":
            if self._dialect == "ardupilot":
                return 0, _M.MISSION_STATE_NOT_STARTED  # AP_Arming_Copter::disarm resets the mission
            return seq, _M.MISSION_STATE_COMPLETE if self.completed else _M.MISSION_STATE_ACTIVE
        if self.mode != "AUTO":
            return seq, _M.MISSION_STATE_NOT_STARTED  # ModeAuto::exit stops the mission: MISSION_STOPPED
        if self.paused:
            return seq, _M.MISSION_STATE_PAUSED
        # in AUTO the mission runs (ModeAuto::run → start_or_resume), also armed on the ground before MISSION_START
        return seq, _M.MISSION_STATE_ACTIVE

    # --- launch (called by flight_commands) -------------------------------------------------------

    def arm(self, vehicle: Any) -> None:
        self.armed = True
        self.armed_at = time.monotonic()
        if self.phase == "LANDED":
            self.phase = "READY"
            self.cur = self._first_index()
            self.completed = False
        self.text(vehicle, _M.MAV_SEVERITY_INFO, "Arming motors")

    def disarm(self, vehicle: Any, why: str = "Disarming motors") -> None:
        """Disarm on the ground; ArduPilot resets its mission (``AP_Arming_Copter::disarm``)."""
        self.armed = False
        self.armed_at = None
        self.paused = False
        self.text(vehicle, _M.MAV_SEVERITY_INFO, why)
        if self._dialect == "ardupilot" and self.items and self.phase != "LANDED":
            self.cur = self._first_index()

    def take_off(self, vehicle: Any) -> None:
        """The mission starts: from now on the flight advances in simulated time."""
        self.phase = "FLYING"
        self.mode = "AUTO"
        self.paused = False
        self.armed_at = None
        self._last_tick_s = time.monotonic()
        self._announce(vehicle)

    def _auto_disarm(self, vehicle: Any, now_s: float) -> None:
        if self.armed and self.armed_at is not None and now_s - self.armed_at > self.options.disarm_delay_s:
            self.disarm(vehicle, "Disarming motors (auto disarm)")

    # --- flying -------------------------------------------------------------------------------

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
        if self.mode in ("AUTO", "LOITER", "GUIDED", "BRAKE") and self.battery_pct < self.options.failsafe_pct:
            self.start_rtl(vehicle, f"Battery failsafe {self.battery_pct:.0f}%: RTL")
        if self.mode == "RTL":
            self._rtl_step(vehicle, dt)
            return
        if self.mode == "LAND" or (self._dialect == "ardupilot" and self.mode in NO_PILOT_DESCENT):
            rate = self.options.descent_mps if self.mode == "LAND" else self.options.no_pilot_descent_mps
            self._battery_step(self.options.hover_power_w, dt)
            self.alt_m = max(0.0, self.alt_m - rate * dt)
            if self.alt_m <= 0.0:
                self._touchdown(vehicle, "Hit ground" if self.mode != "LAND" else "Land complete")
            return
        if self.mode != "AUTO" or self.paused:
            self._battery_step(self.options.hover_power_w, dt)  # holding position: hover power, no progress
            self._brake(DECEL_MPS2.get(self.mode, 2.5) if self._dialect == "ardupilot" else PX4_DECEL_MPS2, dt)
            return
        self._mission_step(vehicle, dt)

    def _mission_step(self, vehicle: Any, dt: float) -> None:
        faults = self.options.faults
        if self.cur >= len(self.items):
            self._touchdown(vehicle, "Mission complete")
            return
        item = self.items[self.cur]
        if faults.abort_at_seq is not None and item.seq >= faults.abort_at_seq:
            self.start_rtl(vehicle, f"Mission aborted at item {item.seq}: RTL")
            return
        if faults.inject_text and not self._injected and item.seq >= faults.inject_at_seq:
            self._injected = True
            self.text(vehicle, _M.MAV_SEVERITY_NOTICE, faults.inject_text)
        if item.command not in NAV_COMMANDS:
            if item.command == _M.MAV_CMD_DO_CHANGE_SPEED and item.param2 > 0:
                self.speed_mps = float(item.param2)
            self._complete(vehicle, item)  # ModeAuto::verify_command: a DO_ item completes at once
            return
        if item.command == NAV_TAKEOFF:
            self._battery_step(self.options.hover_power_w, dt)
            self.alt_m = min(item.alt_m, self.alt_m + self.options.climb_mps * dt)
            if self.alt_m >= item.alt_m - 0.05:
                self._complete(vehicle, item)
            return
        if item.command == NAV_RTL:
            self._battery_step(self.options.cruise_power_w, dt)
            if self._fly_towards(self.home[0], self.home[1], max(self.alt_m, 1.0), dt) and self._descend(dt):
                self._complete(vehicle, item)
                self._touchdown(vehicle, "Mission complete")
            return
        if item.command == NAV_LAND:
            self._battery_step(self.options.cruise_power_w, dt)
            if self._fly_towards(item.lat, item.lon, self.alt_m, dt) and self._descend(dt):
                if self._dialect == "px4":
                    self._complete(vehicle, item)  # PX4 reports the landing item once landed
                self.completed = True
                self._touchdown(vehicle, "Land complete")  # ArduPilot: verify_land disarms, no REACHED
            return
        if self._hold_left_s is not None:
            self._battery_step(self.options.hover_power_w, dt)
            self._hold_left_s -= dt
            if self._hold_left_s <= 0:
                self._hold_left_s = None
                self._complete(vehicle, item)
            return
        self._battery_step(self.options.cruise_power_w, dt)
        if self._fly_towards(item.lat, item.lon, item.alt_m, dt):
            if item.param1 > 0:
                self._hold_left_s = float(item.param1)
            else:
                self._complete(vehicle, item)

    def on_leg(self) -> bool:
        """Flying towards a waypoint (ArduCopter's SubMode::WP, not yet at its destination)."""
        if self.phase != "FLYING" or self.cur >= len(self.items) or self._hold_left_s is not None:
            return False
        return self.items[self.cur].command == NAV_WAYPOINT

    def _complete(self, vehicle: Any, item: MissionItem) -> None:
        """One item done: queue its MISSION_ITEM_REACHED (coalesced per loop turn) and move on."""
        if item.command in NAV_COMMANDS:
            self.reached.append(item.seq)
            if item.command == NAV_WAYPOINT and self._dialect == "ardupilot":
                self.text(vehicle, _M.MAV_SEVERITY_INFO, f"Reached command #{item.seq}")  # ModeAuto::verify_nav_wp
        self._pending_reached = item.seq
        self.cur += 1
        vehicle.mission_current_changed()
        self._announce(vehicle)

    def _announce(self, vehicle: Any) -> None:
        """ArduCopter's "Mission: N <command>" as each item starts (``AP_Mission::start_command``; observed on SITL:
        "Mission: 2 ChangeSpeed", "Mission: 3 WP", … "Mission: 11 Land")."""
        if self._dialect != "ardupilot" or self.cur >= len(self.items):
            return
        item = self.items[self.cur]
        name = _AP_NAMES.get(item.command, str(item.command))
        self.text(vehicle, _M.MAV_SEVERITY_INFO, f"Mission: {item.seq} {name}")

    def _flush_reached(self, vehicle: Any) -> None:
        seq = self._pending_reached
        if seq is None:
            return
        self._pending_reached = None
        self.reported.append(seq)
        vehicle.broadcast(lambda m: m.mission_item_reached_send(seq))

    def _fly_towards(self, lat: float, lon: float, alt_m: float, dt: float) -> bool:
        """Move straight towards the point at the current speed; True when there."""
        d = _dist_m(self.lat, self.lon, lat, lon)
        dz = alt_m - self.alt_m
        step = self.speed_mps * dt
        total = math.hypot(d, dz)
        if total <= step or total < 0.01:
            self.lat, self.lon, self.alt_m = lat, lon, alt_m
            self._vel_ne_mps = (0.0, 0.0)  # at the point: the leg's S-curve has already slowed down
            return True
        f = step / total
        kx = math.cos(math.radians(self.lat)) * M_PER_DEG_LAT
        self._vel_ne_mps = ((lat - self.lat) * f * M_PER_DEG_LAT / dt, (lon - self.lon) * f * kx / dt)
        self.lat += (lat - self.lat) * f
        self.lon += (lon - self.lon) * f
        self.alt_m += dz * f
        return False

    def _brake(self, decel_mps2: float, dt: float) -> None:
        """Slow down at ``decel_mps2`` along the current velocity, then hold (a stop takes v²/2a metres)."""
        vn, ve = self._vel_ne_mps
        speed = math.hypot(vn, ve)
        if speed <= 0.0:
            return
        left = max(0.0, speed - decel_mps2 * dt)
        moving_s = min(dt, speed / decel_mps2)
        travel_m = (speed + left) / 2.0 * moving_s
        kx = math.cos(math.radians(self.lat)) * M_PER_DEG_LAT
        self.lat += vn / speed * travel_m / M_PER_DEG_LAT
        self.lon += ve / speed * travel_m / kx
        self._vel_ne_mps = (vn / speed * left, ve / speed * left)

    def _descend(self, dt: float) -> bool:
        self.alt_m = max(0.0, self.alt_m - self.options.descent_mps * dt)
        return self.alt_m <= 0.0

    def start_rtl(self, vehicle: Any, why: str, severity: int = _M.MAV_SEVERITY_CRITICAL) -> None:
        self.mode = "RTL"
        self.paused = False
        self._hold_left_s = None
        self._rtl_stage = "climb"
        self.text(vehicle, severity, why)

    def _rtl_step(self, vehicle: Any, dt: float) -> None:
        """ModeRTL: climb to RTL_ALT, return, descend, land and disarm — still in RTL (``ModeRTL::land_run``)."""
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
            self._touchdown(vehicle, "Land complete")

    def _touchdown(self, vehicle: Any, why: str) -> None:
        self._flush_reached(vehicle)
        self.phase = "LANDED"
        self.alt_m = 0.0
        self._vel_ne_mps = (0.0, 0.0)
        self._hold_left_s = None
        self.text(vehicle, _M.MAV_SEVERITY_INFO, why)
        self.disarm(vehicle)
        vehicle.log(f"flight: landed at t={self.sim_t:.0f} s, mode {self.mode}, battery {self.battery_pct:.1f} %")

    def text(self, vehicle: Any, severity: int, text: str) -> None:
        """A STATUSTEXT to every port (``GCS::send_text``)."""
        self.texts_sent.append(text)
        if self.link_lost:
            return
        data = text.encode("utf-8")[:50]
        vehicle.broadcast(lambda m: m.statustext_send(severity, data))


def attach_flight(vehicle: Any, options: FlightOptions | None = None) -> SimFlight:
    """Give a running ``SimVehicle`` a flight; if it already holds a mission, load that one (it waits for a launch).

    For a vehicle started without ``flight=`` (``sortie demo`` starts its
    simulators before dispatch).
    """
    flight = SimFlight(options)
    held = vehicle.missions.get(MISSION, ())
    if held:
        flight.load(vehicle, tuple(held))
    vehicle.flight = flight
    return flight
