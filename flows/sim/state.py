"""What the simulated vehicle says about itself: one snapshot its telemetry is built from.

The vehicle (``flows.sim.vehicle``) owns the ports and the streams; the flight
(``flows.sim.flight``) owns the dynamics. They meet here: the flight hands the
vehicle a ``SimState`` each time telemetry is due, and the vehicle turns it into
HEARTBEAT, SYS_STATUS, GLOBAL_POSITION_INT, … on the ports that asked. A vehicle
without a flight reports itself on the ground at home.
"""

from __future__ import annotations

from dataclasses import dataclass

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

__all__ = ["SimState", "ON_GROUND", "IN_AIR", "TAKEOFF", "LANDING"]

ON_GROUND = _M.MAV_LANDED_STATE_ON_GROUND
IN_AIR = _M.MAV_LANDED_STATE_IN_AIR
TAKEOFF = _M.MAV_LANDED_STATE_TAKEOFF
LANDING = _M.MAV_LANDED_STATE_LANDING


@dataclass
class SimState:
    """The vehicle's own view of itself; ``alt_m`` is above home, ``home`` is (lat, lon, altitude AMSL m)."""

    mode: str
    armed: bool = False
    lat: float = 0.0
    lon: float = 0.0
    alt_m: float = 0.0
    home: tuple[float, float, float] = (0.0, 0.0, 0.0)
    battery_pct: float = 96.0
    energy_j: float = 0.0
    landed_state: int = ON_GROUND
    mission_seq: int = 0
    mission_total: int = 0
    mission_state: int = _M.MISSION_STATE_NO_MISSION
    voltage_v: float = 0.0  # the pack as the battery monitor measures it (0: not measured)
    current_a: float = 0.0
    consumed_mah: float = 0.0
    velocity: tuple[float, float, float] = (0.0, 0.0, 0.0)  # north, east, up m/s
