"""The simulated vehicle's flight: launch, modes, battery, failsafes and faults, stepped on the vehicle's clock.

Long on purpose (~530 lines): one vehicle's flight is one state machine, stepped in one place so that launch,
modes, battery, failsafes and faults act in the order the autopilot's loop gives them; its parts (modes,
failsafe rules, command handling, telemetry, the battery) already live in modules of their own.

``SimFlight`` is a ``flows.sim.vehicle.VehicleBehaviour``. Every vehicle has one
unless a test plugs in another behaviour: it holds the stored mission and
**waits on the ground until a ground station launches it** (FACTS.md: "Nothing
flies until a GCS launches it"):

- ArduPilot: GUIDED → MAV_CMD_COMPONENT_ARM_DISARM(1) → AUTO → MAV_CMD_MISSION_START,
  each answered with COMMAND_ACK (``flows.sim.flight_commands`` has each command's
  source); arming is refused before the pre-arm checks pass ("PreArm: …") and in a
  mode that does not allow it; **home moves to where it arms**
  (``AP_Arming_Copter::arm`` → ``Copter::set_home_to_current_location``); armed on
  the ground without taking off, it disarms after ``disarm_delay_s`` (DISARM_DELAY).
- PX4: MAV_CMD_MISSION_START arms and starts the mission (``Commander::handle_command``).

In flight the dialect's modes move the vehicle (``flows.sim.copter`` for ArduCopter,
sourced from AC_WPNav / SCurve / ModeAuto / ModeRTL; ``flows.sim.px4`` for PX4),
stepped in ``options.step_s`` slices of simulated time — and in the autopilot's own
loop period right after the mission moved on, so that what AP_Mission does in
consecutive loops (starting DO commands one per loop, finishing a zero-length leg)
happens in the same order. The battery drains by the power the flight draws
(``flows.sim.battery``). Failsafes act as the autopilot's parameters say:

- battery (``AP_BattMonitor::check_failsafes`` → ``Copter::handle_battery_failsafe``): a level
  raised says "Battery 1 is low …" and, with BATT_FS_LOW_ACT / BATT_FS_CRT_ACT set,
  "Battery Failsafe" and RTL (2) or LAND (1, after LAND_WITH_DELAY_MS); the SITL
  defaults (0) take no action. PX4: COM_LOW_BAT_ACT at BAT_LOW_THR / BAT_CRIT_THR.
- GCS (``Copter::failsafe_gcs_check``): with FS_GCS_ENABLE set, no heartbeat from the
  ground station (SYSID_MYGCS) for FS_GCS_TIMEOUT while armed says "GCS Failsafe" and
  RTL (1) or LAND (5); the silence is measured on the wall clock (a ground station's
  heartbeat runs on it, whatever the speed-up). PX4: NAV_DLL_ACT after COM_DL_LOSS_T.

Reported like ArduCopter was observed (FACTS.md): MISSION_ITEM_REACHED coalesced per
loop (``GCS::send_mission_item_reached_message`` keeps one index per channel); none
for the final NAV_LAND (``ModeAuto::verify_land`` disarms and returns false) — PX4
reports the landing item; RTL lands and disarms in RTL; LAND in LAND; LOITER without a
pilot sinks and disarms still in LOITER.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from typing import Any

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only; mavutil loads every dialect)

from flows.sim import failsafes, flight_commands  # noqa: E402
from flows.sim.ardupilot_mission import StoredCommand  # noqa: E402
from flows.sim.battery import FAILSAFE_CRITICAL, FAILSAFE_LOW, FAILSAFE_NONE, BatteryMonitor, Pack, PowerModel  # noqa: E402
from flows.sim.copter import CopterModes  # noqa: E402
from flows.sim.copter_motion import Body  # noqa: E402
from flows.sim.flight_options import FlightFaults, FlightOptions  # noqa: E402
from flows.sim.local_frame import LocalFrame  # noqa: E402
from flows.sim.px4 import Px4Modes  # noqa: E402
from flows.sim.state import IN_AIR, LANDING, ON_GROUND, TAKEOFF, SimState  # noqa: E402
from flows.vehicle.modes import NAV_COMMANDS, custom_mode, mode_name, nav_seqs  # noqa: E402,F401
from planner.output.mission_items import MISSION, MissionItem  # noqa: E402

#: ``AP_BattMonitor::get_mavlink_charge_state`` (PX4 likewise from its battery warning)
_CHARGE_STATES = {FAILSAFE_NONE: _M.MAV_BATTERY_CHARGE_STATE_OK, FAILSAFE_LOW: _M.MAV_BATTERY_CHARGE_STATE_LOW,
                  FAILSAFE_CRITICAL: _M.MAV_BATTERY_CHARGE_STATE_CRITICAL}

__all__ = ["FlightFaults", "FlightOptions", "SimFlight", "attach_flight", "NAV_COMMANDS", "mode_name", "custom_mode",
           "nav_seqs"]

LOOP_S = 0.0025  # ArduCopter's 400 Hz main loop: the step after the mission moves on


class SimFlight:
    """The flying part of the simulated vehicle (a ``VehicleBehaviour``): one stored mission, launched by a GCS."""

    def __init__(self, options: FlightOptions | None = None) -> None:
        self.configured = options is not None  # given the drone's figures (a vehicle's default flight is not)
        self.options = options or FlightOptions()
        self.phase = "IDLE"  # IDLE → READY (mission loaded, on the ground) → FLYING → LANDED
        self.mode = "STABILIZE"
        self.armed = False
        self.armed_at: float | None = None  # wall clock of arming on the ground (auto-disarm)
        self.items: tuple[MissionItem, ...] = ()
        self.commands_stored: tuple[StoredCommand, ...] = ()
        self.reached: list[int] = []  # navigation items the vehicle completed (what happened)
        self.reported: list[int] = []  # MISSION_ITEM_REACHED seqs it sent (what a ground station can see)
        self.sim_t = 0.0  # seconds flown since the launch (the vehicle's clock)
        self.body = Body()
        self.frame = LocalFrame(0.0, 0.0)
        self.completed = False
        self.link_lost = False
        self.stall_until: float | None = None  # wall clock: the link is stalled until then
        self.texts_sent: list[str] = []
        self.received: dict[str, dict[str, int]] = {}  # phase → message type → count, from the mission's load on
        self.commands: list[dict[str, Any]] = []  # every command received: (t_s, command, params, result)
        self.modes: CopterModes | Px4Modes | None = None
        self.battery_failsafe: str | None = None  # the failsafe the vehicle acted on: "low", "critical" or "gcs"
        self.pack: Pack | None = None
        self.monitor: BatteryMonitor | None = None
        self.power = PowerModel(self.options.hover_power_w, self.options.cruise_power_w, self.options.cruise_speed_mps)
        self.energy_j = 0.0
        self._dialect = "ardupilot"
        self._clock_s: float | None = None  # the vehicle's clock at the last tick
        self._budget_s = 0.0  # vehicle time not flown yet (less than a step)
        self._small_step = False
        self._pending_reached: int | None = None
        self._injected = False
        self._landed_at_s: float | None = None
        self.last_gcs_wall: float | None = None
        self.heading_deg = 0.0
        self._lost_acks: Counter[int] = Counter()
        self._lost_commands: Counter[int] = Counter()
        self._vehicle: Any = None

    # --- the vehicle's parts this flight reads --------------------------------------------------

    def params(self) -> dict[str, float]:
        return self._vehicle.params if self._vehicle is not None else {}

    def attach(self, vehicle: Any) -> None:
        """Join ``vehicle``: its dialect, origin, parameters and battery (``attach_flight`` and the vehicle call this)."""
        self._vehicle = vehicle
        self._dialect = vehicle.dialect
        lat, lon, _ = vehicle.home
        self.frame = LocalFrame(lat, lon)
        self.body = Body()
        self.mode = vehicle.ground.mode
        for name, value in self.options.param_overrides(self._dialect).items():
            vehicle.set_param(name, value)
        charge = self.options.battery_pct if self.options.battery_pct is not None else vehicle.ground.battery_pct
        self.new_battery(charge)
        held = vehicle.stored_mission()
        if held:
            self.load(vehicle, held)

    def new_battery(self, charge_pct: float) -> None:
        """A pack of the drone's energy at ``charge_pct``, and a monitor that reads it from boot."""
        cells = int(self.params().get("SIM_BATT_CELLS", 3.0)) or 3
        self.pack = Pack.of(self.options.battery_wh, charge_pct, cells)
        capacity_mah = self.pack.capacity_ah * 1000.0
        self.monitor = BatteryMonitor(capacity_mah=capacity_mah, consumed_mah=capacity_mah - self.pack.charge_ah * 1000.0,
                                      voltage=self.pack.volts())
        if self._vehicle is not None and self._dialect == "ardupilot":
            params = self._vehicle.params
            changed = params.get("BATT_CAPACITY") != round(capacity_mah)
            self._vehicle.set_param("BATT_CAPACITY", round(capacity_mah))
            for name, fraction in getattr(self._vehicle, "reserves", {}).items():
                if name in self.options.params:
                    continue
                if changed or not params.get(name):  # a new pack (or none set); a reboot keeps what a GCS set
                    self._vehicle.set_param(name, round(capacity_mah * fraction))

    @property
    def battery_pct(self) -> float:
        return self.monitor.remaining_pct if self.monitor is not None else 0.0

    @battery_pct.setter
    def battery_pct(self, charge_pct: float) -> None:
        """Another pack at ``charge_pct`` (a test's swap on the ground)."""
        self.new_battery(charge_pct)

    @property
    def lat(self) -> float:
        return self.frame.to_latlon(self.body.pos[0], self.body.pos[1])[0]

    @property
    def lon(self) -> float:
        return self.frame.to_latlon(self.body.pos[0], self.body.pos[1])[1]

    @property
    def alt_m(self) -> float:
        return self.body.pos[2]

    @property
    def speed_mps(self) -> float:
        """The waypoint speed the mission flies at now (WPNAV_SPEED or a DO_CHANGE_SPEED; PX4 MPC_XY_CRUISE …)."""
        m = self.modes
        if isinstance(m, CopterModes) and m.auto is not None and m.auto.nav is not None:
            return m.auto.nav.speed_xy
        if isinstance(m, Px4Modes) and m.speed:
            return m.speed
        p = self.params()
        return p.get("WPNAV_SPEED", 1000.0) / 100.0 if self._dialect == "ardupilot" else p.get("MPC_XY_CRUISE", 5.0)

    @property
    def paused(self) -> bool:
        m = self.modes
        if isinstance(m, CopterModes):
            return bool(m.auto is not None and m.auto.paused and self.mode == "AUTO")
        return bool(m is not None and m.paused)

    @property
    def cur(self) -> int:
        """Index into ``items`` of the item being flown."""
        seq = self._current_seq()
        return next((i for i, it in enumerate(self.items) if it.seq == seq), 0)

    @property
    def total_nav(self) -> int:
        return len(nav_seqs(self.items, self._dialect))

    # --- VehicleBehaviour ---------------------------------------------------------------------

    def on_message(self, vehicle: Any, msg: Any) -> bool:
        kind = msg.get_type()
        if self.phase != "IDLE":
            seen = self.received.setdefault(self.phase, {})
            seen[kind] = seen.get(kind, 0) + 1
        if kind == "HEARTBEAT" and msg.get_srcSystem() == int(self.params().get("SYSID_MYGCS", 255)):
            self.last_gcs_wall = time.monotonic()
        if kind in ("COMMAND_LONG", "COMMAND_INT"):
            target = int(getattr(msg, "target_system", 0))
            if target in (0, getattr(vehicle, "system_id", 1)):
                flight_commands.on_command(self, vehicle, msg)
            return True
        return False  # the mission protocol stays the vehicle's

    def on_mission_stored(self, vehicle: Any, mission_type: int, items: tuple[MissionItem, ...]) -> None:
        if mission_type != MISSION or not items:
            return
        if self.phase == "FLYING":
            vehicle.log("flight: a new mission arrived in flight; the running one continues")
            return
        self.load(vehicle, vehicle.stored_mission())

    def tick(self, vehicle: Any, now_s: float) -> None:
        """Advance the flight to the vehicle's clock in whole steps of ``step_s`` (the loop period right after a
        change), carrying what is left to the next tick: the same flight whatever the wall clock did."""
        clock = vehicle.clock_s
        last = self._clock_s if self._clock_s is not None else clock
        self._clock_s = clock
        self._budget_s += max(0.0, clock - last)
        self._auto_disarm(vehicle, now_s)
        self._link_faults(vehicle, now_s)
        if self.phase != "FLYING":
            self._budget_s = 0.0  # on the ground nothing moves: no steps to take
            return
        while True:
            dt = LOOP_S if self._small_step else self.options.step_s
            if self._budget_s < dt - 1e-9:
                break
            before = self._mission_moves()
            self._step(vehicle, dt, now_s)
            self._budget_s -= dt
            self._small_step = self._mission_moves() != before
            if dt >= 0.01:
                self._flush_reached(vehicle)
        self._flush_reached(vehicle)

    def _mission_moves(self) -> int:
        """How many commands ArduPilot's mission has started: after one starts, AP_Mission goes on in the next loop."""
        auto = getattr(self.modes, "auto", None)
        return auto.started if auto is not None else 0

    def snapshot(self, vehicle: Any) -> SimState:
        """What the vehicle reports (``flows.sim.telemetry``); before any launch, the vehicle's ground state."""
        lat, lon, alt = vehicle.home
        if self.phase in ("IDLE", "READY") and not self.armed and vehicle.ground.armed:
            g = vehicle.ground  # a test set the vehicle's own state directly (no flight to say otherwise)
            return SimState(mode=g.mode, armed=g.armed, lat=g.lat, lon=g.lon, alt_m=g.alt_m, home=(lat, lon, alt),
                            battery_pct=self.battery_pct, landed_state=g.landed_state)
        landed = ON_GROUND
        if self.phase == "FLYING" and self.modes is not None:
            landed = IN_AIR
            if self.modes.taking_off:
                landed = TAKEOFF
            elif self.modes.landing:
                landed = LANDING
        seq, state = self._mission_current()
        m = self.monitor
        vn, ve = self.body.vel[0], self.body.vel[1]
        if math.hypot(vn, ve) > 1.0 and not (self._dialect == "ardupilot" and self.mode == "RTL"):
            # WP_YAW_BEHAVIOR 2 (``AutoYaw::default_mode``): look at the next waypoint — the way the vehicle goes —
            # except in RTL, which holds its yaw; PX4's MPC_YAW_MODE 0 faces the waypoint, RTL included
            self.heading_deg = math.degrees(math.atan2(ve, vn)) % 360.0
        charge = _CHARGE_STATES.get(m.failsafe if m else FAILSAFE_NONE, _M.MAV_BATTERY_CHARGE_STATE_OK)
        return SimState(mode=self.mode, armed=self.armed, lat=self.lat, lon=self.lon, alt_m=self.alt_m,
                        home=(lat, lon, alt), battery_pct=self.battery_pct, energy_j=self.energy_j,
                        landed_state=landed, mission_seq=seq, mission_total=len(self.items), mission_state=state,
                        voltage_v=m.voltage if m else 0.0, current_a=m.current_a if m else 0.0,
                        consumed_mah=m.consumed_mah if m else 0.0,
                        velocity=self.body.vel, heading_deg=self.heading_deg, charge_state=charge)

    # --- the mission ---------------------------------------------------------------------------

    def load(self, vehicle: Any, items: tuple[MissionItem, ...]) -> None:
        """Take the stored ``items`` as the mission to fly; the vehicle waits on the ground for a launch."""
        self._vehicle = vehicle
        self.items = tuple(sorted(items, key=lambda i: i.seq))
        if self._dialect == "ardupilot":
            self.commands_stored = vehicle.stored_commands()
        self.completed = False
        if self.phase in ("IDLE", "LANDED"):
            self.phase = "READY"
        vehicle.log(f"flight: mission of {len(self.items)} items loaded; waiting on the ground for a launch")

    def _current_seq(self) -> int:
        m = self.modes
        if isinstance(m, CopterModes) and m.auto is not None and m.auto.nav_cmd is not None:
            return m.auto.nav_cmd.index
        if isinstance(m, Px4Modes) and m.items:
            item = m.current
            return item.seq if item is not None else m.items[-1].seq
        return 1 if self._dialect == "ardupilot" and len(self.items) > 1 else (self.items[0].seq if self.items else 0)

    def _mission_current(self) -> tuple[int, int]:
        """MISSION_CURRENT's seq and mission_state (ArduCopter ``GCS_MAVLINK_Copter::mission_state``)."""
        if not self.items:
            return 0, _M.MISSION_STATE_NO_MISSION
        seq = self._current_seq()
        if self.phase == "LANDED":
            if self._dialect == "ardupilot":
                return 0, _M.MISSION_STATE_NOT_STARTED  # AP_Arming_Copter::disarm resets the mission
            return seq, _M.MISSION_STATE_COMPLETE if self.completed else _M.MISSION_STATE_ACTIVE
        if self.mode != "AUTO":
            return seq, _M.MISSION_STATE_NOT_STARTED  # ModeAuto::exit stops the mission: MISSION_STOPPED
        if self.paused:
            return seq, _M.MISSION_STATE_PAUSED
        return seq, _M.MISSION_STATE_ACTIVE

    def on_leg(self) -> bool:
        """Flying towards a waypoint (ArduCopter's SubMode::WP, not yet at its destination)."""
        m = self.modes
        if self.phase != "FLYING" or m is None:
            return False
        if isinstance(m, CopterModes):
            return m.mode == "AUTO" and m.auto is not None and m.auto.on_leg
        return m.on_leg

    # --- launch, modes and landing (flight_commands calls these) --------------------------------

    def arm(self, vehicle: Any) -> None:
        """Armed: home moves here (``Copter::set_home_to_current_location``), the mission starts from its top."""
        self.armed = True
        self.armed_at = time.monotonic()
        if self.phase == "LANDED":
            self.phase = "READY"
        self.completed = False
        vehicle.set_home(self.lat, self.lon, vehicle.home[2])
        self.text(vehicle, _M.MAV_SEVERITY_INFO, "Arming motors")

    def disarm(self, vehicle: Any, why: str = "Disarming motors") -> None:
        """Disarm on the ground; ArduPilot resets its mission (``AP_Arming_Copter::disarm``)."""
        self.armed = False
        self.armed_at = None
        self.text(vehicle, _M.MAV_SEVERITY_INFO, why)

    def take_off(self, vehicle: Any) -> None:
        """The mission starts: AUTO from the top, flown from here on the vehicle's clock."""
        self.phase = "FLYING"
        self.mode = "AUTO"
        self.armed_at = None
        self.sim_t = 0.0
        self._landed_at_s = None
        self.battery_failsafe = None
        self.modes = self._new_modes(vehicle)
        self.modes.enter("AUTO", self.body, self.commands_stored if self._dialect == "ardupilot" else self.items)

    def _new_modes(self, vehicle: Any) -> CopterModes | Px4Modes:
        home_ne = self.frame.to_ne(vehicle.home[0], vehicle.home[1])
        rally = [self.frame.to_ne(r.lat, r.lon) for r in vehicle.stored_rally()]
        say = lambda text: self.text(vehicle, _M.MAV_SEVERITY_INFO, text)  # noqa: E731
        if self._dialect == "ardupilot":
            return CopterModes(self.frame, self.params, say, self._item_reached, home_ne, rally, vehicle.home[2],
                               mode=self.mode)
        return Px4Modes(self.frame, self.params, say, self._item_reached, home_ne, mode=self.mode)

    def enter_mode(self, vehicle: Any, mode: str, *, land_pause: bool = False) -> None:
        """Switch mode; in flight the mode's controller takes over from where the vehicle is."""
        self.mode = mode
        if self.phase == "FLYING" and self.modes is not None:
            self.modes.enter(mode, self.body, self.commands_stored if self._dialect == "ardupilot" else self.items,
                             land_pause=land_pause)

    def start_rtl(self, vehicle: Any, why: str, severity: int = _M.MAV_SEVERITY_CRITICAL) -> None:
        self.enter_mode(vehicle, "RTL")
        self.text(vehicle, severity, why)

    def set_paused(self, paused: bool) -> None:
        if self.modes is not None:
            if isinstance(self.modes, CopterModes):
                if self.modes.auto is not None:
                    self.modes.auto.set_paused(paused)
            else:
                self.modes.set_paused(paused)

    def _item_reached(self, seq: int) -> None:
        """One item done: its MISSION_ITEM_REACHED waits for the end of the loop (coalesced per channel)."""
        item = next((i for i in self.items if i.seq == seq), None)
        if item is not None and item.command in NAV_COMMANDS:
            self.reached.append(seq)
        self._pending_reached = seq
        if self._vehicle is not None:
            self._vehicle.mission_current_changed()

    def _flush_reached(self, vehicle: Any) -> None:
        seq = self._pending_reached
        if seq is None:
            return
        self._pending_reached = None
        self.reported.append(seq)
        vehicle.broadcast(lambda m: m.mission_item_reached_send(seq))

    def _auto_disarm(self, vehicle: Any, now_s: float) -> None:
        if self.armed and self.armed_at is not None and now_s - self.armed_at > self.options.disarm_delay_s:
            self.disarm(vehicle, "Disarming motors (auto disarm)")

    # --- flying ----------------------------------------------------------------------------------

    def _step(self, vehicle: Any, dt: float, now_wall: float) -> None:
        if self.phase != "FLYING" or self.modes is None:
            return
        self.sim_t += dt
        self._faults(vehicle)
        before = self.body.pos
        self.modes.step(self.body, dt)
        self.mode = self.modes.mode if self._dialect == "px4" else self.mode
        self._drain(vehicle, dt, before)
        self._failsafes(vehicle, now_wall)
        if self.modes.disarm_due:
            self._touchdown(vehicle)

    def _drain(self, vehicle: Any, dt: float, before: tuple[float, float, float]) -> None:
        """The power this step draws, out of the pack and into the monitor's count; a ``drain_factor`` fault empties
        the pack (and the count) that much faster at the current the flight really draws — a weak pack, not a
        short circuit."""
        if self.pack is None or self.monitor is None or self.modes is None or self.modes.on_ground:
            return
        speed = math.hypot(self.body.vel[0], self.body.vel[1])
        power = self.power.power_w(speed, self.body.vel[2])
        factor = self.options.faults.drain_factor
        current = self.pack.draw(power, dt * factor)
        self.energy_j += power * dt * factor
        self.monitor.measure(self.pack.volts(current), current, dt * factor)

    def _failsafes(self, vehicle: Any, now_wall: float) -> None:
        """The battery and GCS failsafes, as the vehicle's parameters say (``flows.sim.failsafes``)."""
        if self.monitor is None or self.modes is None:
            return
        for text, severity, kind, mode, name in failsafes.check(self, vehicle, now_wall):
            if text:
                self.text(vehicle, severity, text)
            if name:
                self._failsafe_action(vehicle, kind, mode, name)

    def _failsafe_action(self, vehicle: Any, kind: str, mode: str | None, name: str) -> None:
        """``Copter::announce_failsafe`` + ``do_failsafe_action`` (RTL or LAND with its pause); None: no action."""
        if mode is None:
            return
        self.battery_failsafe = name  # the failsafe the vehicle acted on
        if self.mode == mode:
            return
        if self._dialect == "ardupilot":
            self.text(vehicle, _M.MAV_SEVERITY_WARNING, f"{kind} Failsafe")
        else:
            self.text(vehicle, _M.MAV_SEVERITY_CRITICAL, f"Failsafe activated: {mode}")
        self.enter_mode(vehicle, mode, land_pause=mode == "LAND")

    def _faults(self, vehicle: Any) -> None:
        faults = self.options.faults
        if faults.link_loss_after_s is not None and not self.link_lost and self.sim_t >= faults.link_loss_after_s:
            self.link_lost = True
            vehicle.log(f"flight: link lost at t={self.sim_t:.0f} s (fault)")
        if (faults.stall_after_s is not None and self.stall_until is None and self.sim_t >= faults.stall_after_s):
            self.stall_until = time.monotonic() + faults.stall_s
            vehicle.log(f"flight: link stalls for {faults.stall_s:g} s (wall) at t={self.sim_t:.0f} s (fault)")
        seq = self._current_seq()
        if faults.abort_at_seq is not None and seq >= faults.abort_at_seq and self.mode == "AUTO":
            self.start_rtl(vehicle, f"Mission aborted at item {seq}: RTL")
        if faults.inject_text and not self._injected and seq >= faults.inject_at_seq:
            self._injected = True
            self.text(vehicle, _M.MAV_SEVERITY_NOTICE, faults.inject_text)

    def _link_faults(self, vehicle: Any, now_wall: float) -> None:
        if self.stall_until is not None and now_wall >= self.stall_until and self.stall_until > 0:
            self.stall_until = -1.0  # over: the link is back (one stall per flight)
            vehicle.log("flight: the link is back (fault)")
        faults = self.options.faults
        if (faults.reboot_after_s is not None and self._landed_at_s is not None
                and vehicle.clock_s - self._landed_at_s >= faults.reboot_after_s):
            self._landed_at_s = None
            vehicle.reboot("watchdog (fault)")

    def rebooted(self, vehicle: Any, battery_pct: float | None = None) -> None:
        """A new session on the ground where the vehicle stands: the EKF origin and home here, disarmed in the boot
        mode, the mission reloaded from storage, the battery monitor reading the pack afresh."""
        lat, lon = self.lat, self.lon
        vehicle.set_home(lat, lon, vehicle.home[2])
        self.frame = LocalFrame(lat, lon)
        self.body = Body()
        self.armed, self.armed_at, self.modes = False, None, None
        self.mode = vehicle.ground.mode
        self.phase = "IDLE"
        self._clock_s = None
        self.stall_until = None if self.stall_until is not None and self.stall_until > 0 else self.stall_until
        charge = battery_pct if battery_pct is not None else (self.pack.charge_pct if self.pack else 100.0)
        self.new_battery(charge)
        held = vehicle.stored_mission()
        if held:
            self.load(vehicle, held)

    def link_down(self, now_wall: float) -> bool:
        """Whether the link carries nothing now (lost for good, or stalled)."""
        return self.link_lost or (self.stall_until is not None and now_wall < self.stall_until)

    def _touchdown(self, vehicle: Any) -> None:
        self._flush_reached(vehicle)
        in_auto = self.mode == "AUTO"
        self.phase = "LANDED"
        self.completed = in_auto
        self.body.vel = (0.0, 0.0, 0.0)
        hit = getattr(self.modes, "hit_ground", False)
        if hit:
            self.text(vehicle, _M.MAV_SEVERITY_INFO, "SIM Hit ground at 2.4 m/s")
        self.disarm(vehicle)
        if in_auto and self._dialect == "ardupilot":
            self.text(vehicle, _M.MAV_SEVERITY_INFO, "Mission: 1 Takeoff")  # the mission resets; AUTO restarts it
        self._landed_at_s = vehicle.clock_s
        vehicle.log(f"flight: landed at t={self.sim_t:.0f} s, mode {self.mode}, battery {self.battery_pct:.1f} %")

    def text(self, vehicle: Any, severity: int, text: str) -> None:
        """A STATUSTEXT to every port (``GCS::send_text``)."""
        self.texts_sent.append(text)
        data = text.encode("utf-8")[:50]
        vehicle.broadcast(lambda m: m.statustext_send(severity, data))


def attach_flight(vehicle: Any, options: FlightOptions | None = None) -> SimFlight:
    """Give a running ``SimVehicle`` a new flight with ``options`` (the drone's figures, faults); it takes over the
    vehicle's stored mission and waits for a launch (``sortie demo`` starts its simulators before dispatch)."""
    flight = SimFlight(options)
    vehicle.use_flight(flight)
    return flight
