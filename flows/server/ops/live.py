"""The operations page's live picture: one small row per drone, and the track each drone flew.

Why a row of its own and not ``/v1/fleet``'s: the page asks for every drone of a person's tenants once a second
over one stream; a fleet row carries parameters, pre-arm texts and intrusion counts a map does not draw. These
rows carry what the map and the fleet list show — where (lon, lat, altitude above home, heading, ground speed),
how (status, mode, armed, battery) and whether the link is live (its fault named) — and nothing stale: the hub
already drops a value older than its freshness limit (``flows.fleet.live``).

``Tracks`` keeps what each drone flew since it last armed (at most ``MAX_POINTS``, sampled at most once a second
by whichever stream asks first), so a page opened mid-flight draws the path so far; the last one stays after
landing until the drone arms again. It lives as long as the server (a restart starts empty: the flight's own
record, ``flight.json``, is the record).
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flows.fleet.live import LiveDrone
from planner.world.model import Drone

__all__ = ["drone_row", "Tracks", "MAX_POINTS", "SAMPLE_S"]

#: Points a drone's track keeps (two hours at one a second); the oldest go first.
MAX_POINTS = 7200
#: The shortest time between two samples of the fleet (seconds).
SAMPLE_S = 1.0
#: A point closer than this to the last one is not kept (metres): a drone on its pad adds nothing.
MIN_STEP_M = 1.0


def _r(value: float | None, digits: int) -> float | None:
    return None if value is None else round(float(value), digits)


def drone_row(drone: Drone, live: LiveDrone | None) -> dict[str, Any]:
    """What the page shows of one drone: live from its vehicle when the hub holds it, else the file's status."""
    base = {"id": drone.id, "tenant": drone.tenant, "dock": drone.dock_id, "model": drone.model}
    if live is None:
        return base | {"status": drone.status, "battery_pct": drone.battery_pct, "source": "file", "mode": None,
                       "armed": None, "lon": None, "lat": None, "alt_m": None, "heading_deg": None,
                       "speed_mps": None, "fault": None, "last_seen": drone.last_telemetry_at.isoformat(),
                       "stale": [], "held": False, "paused": None}
    v = live.view
    known = v.lat is not None and v.lon is not None
    return base | {
        "status": "MAINTENANCE" if drone.status == "MAINTENANCE" else live.status, "source": "live",
        "battery_pct": _r(v.battery_pct, 1), "mode": v.mode or None, "armed": v.armed if v.mode else None,
        "lon": _r(v.lon, 7) if known else None, "lat": _r(v.lat, 7) if known else None,
        "alt_m": _r(v.alt_m, 1) if known else None, "heading_deg": _r(v.heading_deg, 1),
        "speed_mps": _r(v.speed_mps, 1), "mission_seq": v.seq, "paused": v.paused if v.mode else None,
        "fault": None if live.fault is None else live.fault.to_dict(),
        "last_seen": None if live.last_seen is None else live.last_seen.isoformat(),
        "stale": list(live.stale), "held": live.held is not None,
    }


def _metres(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    dy = (b[1] - a[1]) * 111_320.0
    dx = (b[0] - a[0]) * 111_320.0 * math.cos(math.radians(a[1]))
    return math.hypot(dx, dy)


@dataclass
class _Track:
    armed: bool = False
    points: deque[tuple[float, float, float]] = field(default_factory=lambda: deque(maxlen=MAX_POINTS))


class Tracks:
    """Each drone's flown track since it last armed (thread-safe; sampled at most every ``SAMPLE_S``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tracks: dict[str, _Track] = {}
        self._sampled_at = -math.inf

    def sample(self, live: Mapping[str, LiveDrone], at_s: float) -> bool:
        """Add each armed drone's position (``at_s``: a monotonic time); False when the last sample is too recent."""
        with self._lock:
            if at_s - self._sampled_at < SAMPLE_S:
                return False
            self._sampled_at = at_s
            for drone_id, d in live.items():
                v = d.view
                t = self._tracks.setdefault(drone_id, _Track())
                if v.armed and not t.armed:
                    t.points.clear()  # a new flight: the last one's path is no longer this drone's picture
                t.armed = v.armed
                if not v.armed or v.lat is None or v.lon is None:
                    continue
                p = (round(v.lon, 7), round(v.lat, 7), round(v.alt_m or 0.0, 1))
                if not t.points or _metres(t.points[-1], p) >= MIN_STEP_M:
                    t.points.append(p)
            return True

    def of(self, drone_ids: Iterable[str]) -> dict[str, list[list[float]]]:
        """The tracks of these drones (``[lon, lat, alt_m]`` each; only drones with one)."""
        with self._lock:
            return {d: [list(p) for p in t.points] for d in drone_ids if (t := self._tracks.get(d)) and t.points}
