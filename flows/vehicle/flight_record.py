"""What following a flight records: the options, the plan's expectation, the flight seen.

Shared by the per-drone follower (``flows.vehicle.follow``), the mission-level
monitor (``flows.usecases.monitoring``), the simulators and the report; plain data
with no link, so reading a flight never loads MAVLink.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from flows.vehicle.energy_projection import EnergyProfile
from planner.errors import InvalidArgument

__all__ = [
    "TERMINAL",
    "MonitorOptions",
    "Expectation",
    "DroneFlight",
    "MonitorResult",
]

#: How one vehicle's following can end. LINK_LOST is not among them: a vehicle whose telemetry stopped may still be
#: flying, and its flight ends from its own evidence (landed and disarmed, seen when telemetry returns), or LOST
#: once silent for longer than its remaining endurance (``Expectation.endurance_s``).
TERMINAL = frozenset({"SUCCEEDED", "ABORTED", "RECALLED", "LOST", "NO_CONTACT", "NOT_STARTED", "TIMEOUT"})


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
    waiting_every_s: float = 10.0  # before take-off, say what the watch waits for this often (never silent)
    progress_every_s: float = 1.0  # in flight, say where it is (``progress``: item, battery, projection) this often
    endurance_margin: float = 1.25  # LOST after the remaining endurance × this (+ ``lost_grace_s``) of silence
    lost_grace_s: float = 120.0  # vehicle seconds added to that (a landing, a slow descent)

    def __post_init__(self) -> None:
        if self.timeout_s <= 0 or self.start_wait_s <= 0:
            raise InvalidArgument("timeout_s and start_wait_s must be > 0")
        if not 0 < self.link_alert_s <= self.link_lost_s:
            raise InvalidArgument("need 0 < link_alert_s <= link_lost_s")
        if self.max_messages < 1:
            raise InvalidArgument("max_messages must be >= 1")
        if self.waiting_every_s <= 0 or self.progress_every_s <= 0:
            raise InvalidArgument("waiting_every_s and progress_every_s must be > 0")
        if self.endurance_margin < 1.0 or self.lost_grace_s < 0:
            raise InvalidArgument("endurance_margin must be >= 1 and lost_grace_s >= 0")


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
    dock_lat: float | None = None  # where a recalled vehicle returns (its home)
    dock_lon: float | None = None
    # the mission's rally points (lat, lon): ArduCopter's RTL flies to the nearest of them or home
    # (ModeRTL::build_path → AP_Rally::calc_best_rally_or_home_location), so a recall home may land at any
    rally: tuple[tuple[float, float], ...] = ()
    landing_lat: float | None = None  # where the plan lands it (the final NAV_LAND, or the dock after an RTL item)
    landing_lon: float | None = None
    endurance_s: float = 0.0  # the drone's longest endurance on a full battery (0: unknown; never declared LOST)
    profile: EnergyProfile | None = None  # planned time and energy per nav item (the in-flight energy projection)


@dataclass
class DroneFlight:
    """What was seen of one vehicle; JSON-able through ``to_dict``."""

    drone_id: str
    link: str
    sortie_index: int
    status: str = "WAITING"  # WAITING | IN_FLIGHT | PAUSED | LINK_LOST, then one of ``TERMINAL``
    reason: str = ""
    mode: str = ""
    armed: bool = False
    ever_armed: bool = False  # armed and seen airborne (a vehicle armed on the ground has not flown)
    nav_total: int = 0
    reached: list[int] = field(default_factory=list)  # navigation items done, as MISSION_ITEM_REACHED and MISSION_CURRENT show
    reported: list[int] = field(default_factory=list)  # the MISSION_ITEM_REACHED seqs received, as sent (coalesced)
    highest_current: int | None = None  # the highest MISSION_CURRENT seq seen while flying the mission
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
    takeoff_t_s: float | None = None  # the vehicle's time of its take-off (seen), or of the first sight airborne
    takeoff_seen: bool | None = None  # False: the follower attached in flight, so the flight is counted from then
    landing_t_s: float | None = None
    last_t_s: float = 0.0
    texts: list[dict[str, Any]] = field(default_factory=list)
    alerts: list[dict[str, Any]] = field(default_factory=list)
    messages: int = 0
    gaps: list[dict[str, Any]] = field(default_factory=list)  # telemetry losses: when, how long, what changed meanwhile
    failsafes: list[dict[str, Any]] = field(default_factory=list)  # {"name", "t_s", "evidence"}: what the vehicle said
    failsafe: str | None = None  # the failsafe that ended the flight (FAILSAFE_BATTERY, …), when one did
    energy_start_wh: float | None = None  # the battery's consumed-energy counter at take-off
    projection: dict[str, Any] | None = None  # the latest battery-at-landing projection (energy_projection.Projection)

    def mark_recall(self, mode: str) -> dict[str, Any]:
        """Where and when a recall's mode began (a landing in place is judged from here); returns a copy."""
        here = self.track[-1] if self.track else None
        self.recall = {"t_s": round(self.last_t_s, 1), "mode": mode, "seq": self.current_seq,
                       "lat": here[2] if here else None, "lon": here[1] if here else None}
        return dict(self.recall)

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def flown_distance_m(self) -> float:
        return _track_length_m(self.track)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["flown_distance_m"] = round(self.flown_distance_m, 1)
        out["duration_s"] = self.duration_s
        return out

    @property
    def duration_s(self) -> float | None:
        """Take-off (or first sight airborne) to landing, on the vehicle's clock; None before take-off."""
        if self.takeoff_t_s is None:
            return None
        return round(max(0.0, (self.landing_t_s if self.landing_t_s is not None else self.last_t_s) - self.takeoff_t_s), 1)


@dataclass
class MonitorResult:
    """The outcome of ``monitor_mission``: the ledger state it left and what each vehicle did."""

    draft_id: str
    version: int
    outcome: str  # the state, or what names it better: FAILSAFE_BATTERY …, LOST, LINK_LOST, NOT_STARTED
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


def _track_length_m(track: list[list[float]]) -> float:
    total = 0.0
    for a, b in zip(track, track[1:]):
        kx = math.cos(math.radians((a[2] + b[2]) / 2.0)) * 111_320.0
        total += math.hypot((b[1] - a[1]) * kx, (b[2] - a[2]) * 111_320.0)
    return total
