"""What a vehicle last said about itself, as one immutable value: the link's view of its vehicle.

``apply(view, msg)`` folds one received message into a new view; the link
(``flows.vehicle.link``) calls it for every message of its vehicle, so every
part that speaks through the link (upload, launch, control, the follower) reads
the same state. A field the vehicle has not sent yet is None: nothing may
format or compare it as if it had (the ``recall --land-here`` crash of issue 31).
Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

from flows.vehicle.modes import mode_name  # noqa: E402

__all__ = ["VehicleView", "apply", "boot_ms_of", "PREARM_BIT", "SESSION_SLACK_MS", "PREARM_KEPT", "PREARM_PREFIXES"]

PREARM_BIT = _M.MAV_SYS_STATUS_PREARM_CHECK
#: A boot time this much earlier than the last one is a new session (a reboot), not messages out of order.
SESSION_SLACK_MS = 2000
#: How many distinct pre-arm refusals a view keeps (ArduPilot repeats each every 30 s while it refuses).
PREARM_KEPT = 8
#: STATUSTEXTs that say why a vehicle will not arm: ArduPilot's ``AP_Arming::check_failed`` ("PreArm: …",
#: "Arm: …" at the arming command) and PX4's commander ("Preflight Fail: …", "Arming denied…").
PREARM_PREFIXES = ("PreArm:", "Arm:", "Preflight Fail", "Arming denied")
_AHRS_BIT = _M.MAV_SYS_STATUS_AHRS


@dataclass(frozen=True)
class VehicleView:
    """HEARTBEAT, SYS_STATUS, GPS_RAW_INT, GLOBAL_POSITION_INT, HOME_POSITION, BATTERY_STATUS,
    MISSION_CURRENT, MISSION_ITEM_REACHED, EXTENDED_SYS_STATE and the boot clock, as last received."""

    autopilot: int = _M.MAV_AUTOPILOT_ARDUPILOTMEGA
    mode: str = ""
    armed: bool = False
    system_status: int | None = None
    mission_state: int | None = None
    seq: int | None = None
    mission_total: int | None = None
    mission_count_said: int | None = None  # MISSION_CURRENT ``total`` as sent (0 and 65535 included: a change is news)
    last_reached: int | None = None
    lat: float | None = None
    lon: float | None = None
    alt_m: float | None = None  # above home
    heading_deg: float | None = None  # where it points (GLOBAL_POSITION_INT hdg; else where it moves, 0 = north)
    speed_mps: float | None = None  # ground speed (GLOBAL_POSITION_INT vx, vy)
    home_lat: float | None = None
    home_lon: float | None = None
    home_alt_m: float | None = None  # AMSL
    battery_pct: float | None = None
    energy_wh: float | None = None
    prearm_ok: bool | None = None  # None: the vehicle does not report it (bit absent or not enabled)
    ahrs_ok: bool | None = None
    gps_fix_type: int | None = None
    satellites: int | None = None
    landed_state: int | None = None
    boot_ms: int | None = None
    session: int = 0  # how many times the vehicle's boot time went back on this link (each a new session)
    prearm: tuple[str, ...] = ()  # its latest pre-arm refusals ("PreArm: …"), oldest first, this session only
    params: Mapping[str, float] = field(default_factory=dict, hash=False)  # PARAM_VALUEs received this session

    @property
    def dialect(self) -> str:
        return "px4" if self.autopilot == _M.MAV_AUTOPILOT_PX4 else "ardupilot"

    @property
    def paused(self) -> bool:
        """Held in its mission: ArduPilot AUTO with MISSION_CURRENT PAUSED; PX4 AUTO.LOITER (Hold); a forced
        hold in BRAKE or GUIDED (ArduPilot) counts too."""
        if self.dialect == "px4":
            return self.mode == "LOITER"
        if self.mode in ("BRAKE", "GUIDED"):
            return self.armed and self.airborne
        return self.mode == "AUTO" and self.mission_state == _M.MISSION_STATE_PAUSED

    @property
    def returning(self) -> bool:
        return self.mode in ("RTL", "LAND")

    @property
    def on_ground(self) -> bool | None:
        """From EXTENDED_SYS_STATE when the vehicle sends it, else from the armed flag (None: unknown)."""
        if self.landed_state is not None and self.landed_state != _M.MAV_LANDED_STATE_UNDEFINED:
            return self.landed_state == _M.MAV_LANDED_STATE_ON_GROUND
        return None if not self.mode else not self.armed

    @property
    def airborne(self) -> bool:
        """Armed and off the ground: EXTENDED_SYS_STATE when sent, else more than 1 m above home."""
        if not self.armed:
            return False
        if self.landed_state is not None and self.landed_state != _M.MAV_LANDED_STATE_UNDEFINED:
            return self.landed_state != _M.MAV_LANDED_STATE_ON_GROUND
        return self.alt_m is not None and self.alt_m > 1.0

    @property
    def position_known(self) -> bool:
        return self.lat is not None and self.lon is not None

    def to_dict(self) -> dict[str, Any]:
        return {"dialect": self.dialect, "mode": self.mode, "armed": self.armed, "paused": self.paused,
                "mission_state": self.mission_state, "seq": self.seq, "lat": self.lat, "lon": self.lon,
                "alt_m": None if self.alt_m is None else round(self.alt_m, 1),
                "battery_pct": self.battery_pct, "prearm_ok": self.prearm_ok, "gps_fix_type": self.gps_fix_type,
                "home": None if self.home_lat is None else [self.home_lat, self.home_lon]}


def boot_ms_of(msg: Any) -> int | None:
    """The vehicle's time since boot a message carries (ms), or None."""
    kind = msg.get_type()
    if kind in ("SYSTEM_TIME", "GLOBAL_POSITION_INT"):
        return int(msg.time_boot_ms)
    if kind == "TIMESYNC" and int(msg.tc1) == 0 and int(msg.ts1) > 0:
        return int(msg.ts1 // 1_000_000)  # ArduPilot's request: ts1 = its clock in ns
    return None


def apply(view: VehicleView, msg: Any) -> VehicleView:
    """The view after one message of the vehicle (messages it does not describe itself with leave it as is).

    A boot time that goes back by more than ``SESSION_SLACK_MS`` is a new session of the vehicle (it rebooted):
    everything the old session said is dropped (battery, position, mission, mode, parameters, pre-arm texts),
    and the view starts again from this message (FACTS.md: "a GCS must drop what it knew from before the reboot").
    """
    booted = boot_ms_of(msg)
    if booted is not None and view.boot_ms is not None and booted < view.boot_ms - SESSION_SLACK_MS:
        view = VehicleView(autopilot=view.autopilot, session=view.session + 1)
    return _fold(view, msg)


#: Below this ground speed a heading from the velocity is noise: the last one stands.
_MOVING_MPS = 0.5


def _motion(msg: Any, last_heading: float | None) -> tuple[float, float | None]:
    """Ground speed and heading of a GLOBAL_POSITION_INT: ``hdg`` (centidegrees; UINT16_MAX when the vehicle
    does not know it) or, without it, the direction of the velocity (vx north, vy east, cm/s)."""
    import math

    vn, ve = msg.vx / 100.0, msg.vy / 100.0
    speed = math.hypot(vn, ve)
    if int(msg.hdg) != 65535:
        return speed, int(msg.hdg) / 100.0
    if speed >= _MOVING_MPS:
        return speed, math.degrees(math.atan2(ve, vn)) % 360.0
    return speed, last_heading


def _fold(view: VehicleView, msg: Any) -> VehicleView:
    kind = msg.get_type()
    if kind == "HEARTBEAT":
        return replace(view, autopilot=int(msg.autopilot), mode=mode_name(int(msg.custom_mode), int(msg.autopilot)),
                       armed=bool(msg.base_mode & _M.MAV_MODE_FLAG_SAFETY_ARMED), system_status=int(msg.system_status))
    if kind == "SYS_STATUS":
        enabled, health = int(msg.onboard_control_sensors_enabled), int(msg.onboard_control_sensors_health)
        prearm = bool(health & PREARM_BIT) if enabled & PREARM_BIT else None
        ahrs = bool(health & _AHRS_BIT) if enabled & _AHRS_BIT else None
        pct = None if int(msg.battery_remaining) < 0 else float(msg.battery_remaining)
        return replace(view, prearm_ok=prearm, ahrs_ok=ahrs,
                       battery_pct=pct if pct is not None else view.battery_pct)
    if kind == "BATTERY_STATUS":
        pct = None if int(msg.battery_remaining) < 0 else float(msg.battery_remaining)
        wh = None if int(msg.energy_consumed) < 0 else round(msg.energy_consumed * 100.0 / 3600.0, 3)
        return replace(view, battery_pct=pct if pct is not None else view.battery_pct,
                       energy_wh=wh if wh is not None else view.energy_wh)
    if kind == "GLOBAL_POSITION_INT":
        speed, heading = _motion(msg, view.heading_deg)
        if msg.lat == 0 and msg.lon == 0:
            # no position yet: ArduPilot sends its zeroed location until the EKF has an origin
            # (GCS_MAVLINK::send_global_position_int); 0, 0 read as a place was a 7,000 km move, held as foreign control
            return replace(view, boot_ms=int(msg.time_boot_ms))
        return replace(view, lat=msg.lat / 1e7, lon=msg.lon / 1e7, alt_m=msg.relative_alt / 1000.0,
                       boot_ms=int(msg.time_boot_ms), speed_mps=speed, heading_deg=heading)
    if kind == "GPS_RAW_INT":
        return replace(view, gps_fix_type=int(msg.fix_type), satellites=int(msg.satellites_visible))
    if kind == "HOME_POSITION":
        return replace(view, home_lat=msg.latitude / 1e7, home_lon=msg.longitude / 1e7, home_alt_m=msg.altitude / 1000.0)
    if kind == "MISSION_CURRENT":
        state = getattr(msg, "mission_state", 0)
        total = getattr(msg, "total", 0)
        return replace(view, seq=int(msg.seq), mission_state=int(state) if state else None,
                       mission_total=int(total) if total and int(total) != 65535 else view.mission_total,
                       mission_count_said=int(total) if hasattr(msg, "total") else None)
    if kind == "MISSION_ITEM_REACHED":
        return replace(view, last_reached=int(msg.seq))
    if kind == "EXTENDED_SYS_STATE":
        return replace(view, landed_state=int(msg.landed_state))
    if kind in ("SYSTEM_TIME", "TIMESYNC"):
        booted = boot_ms_of(msg)
        return view if booted is None else replace(view, boot_ms=booted)
    if kind == "STATUSTEXT":
        text = _text(msg.text)
        if not text.startswith(PREARM_PREFIXES):
            return view
        kept = tuple(t for t in view.prearm if t != text) + (text,)
        return replace(view, prearm=kept[-PREARM_KEPT:])
    if kind == "PARAM_VALUE":
        return replace(view, params={**view.params, _text(msg.param_id): float(msg.param_value)})
    return view


def _text(raw: Any) -> str:
    """A MAVLink char array as text (pymavlink gives str or bytes, NUL-padded)."""
    text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8", "replace")
    return text.split("\x00", 1)[0].strip()
