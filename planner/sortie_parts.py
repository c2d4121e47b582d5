"""What every mission pipeline shares: a drone's planning rates, the pieces of a sortie, the builder.

``Rates`` are what a metre, a second of hover and a sortie's climb and descent cost one
drone, planned on the safe side (the worst heading in the forecast wind, 1 % above the
energy model); a route planned within ``Rates.usable_wh`` stays within it when flown.
``Piece`` is one leg to build (transit, lane, sweep run, inspection hover) and
``SortieBuilder`` strings ``planner.legs`` builders into a ``Sortie`` with the figures of its
vehicle flying it. ``schedule`` and ``after_turnaround`` start a drone's next sortie its dock's
turnaround (``turnaround_s``) after its previous one lands. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from shapely.geometry import LineString
from shapely.geometry.base import BaseGeometry

from planner.energy import EnergyModel
from planner.flight.params import NavLimits
from planner.job import Job
from planner.legs import inspect_leg, landing_leg, lane_leg, sortie_totals, sweep_leg, takeoff_leg, transit_leg
from planner.output.sortie_flight import fly_waypoints
from planner.plan import Leg, Sortie
from planner.world.model import Drone, World

__all__ = [
    "BATTERY_SWAP_S", "MAX_SORTIES_PER_DRONE", "XY", "Piece", "Rates", "SortieBuilder", "after_turnaround", "rates", "schedule",
    "turnaround_s",
]

BATTERY_SWAP_S = 600.0  # a dock's turnaround (battery swap or top-up) when the world does not give one
MAX_SORTIES_PER_DRONE = 3  # point inspection: vehicle copies per drone; the airspace window's sorties
_HEADING_STEP_DEG = 5  # headings tried for the worst per-metre cost in the wind
_RATE_MARGIN = 1.01  # planning figures 1 % above the model's, so flown figures stay inside
# How far a flown lane may stray from the mapped one when its vertices are merged: the flown track is
# judged patrolled within 5 m of the lane, and ArduCopter cuts a corner by up to WPNAV_RADIUS (2 m).
LANE_TOLERANCE_M = 2.5

XY = tuple[float, float]


@dataclass(frozen=True)
class Rates:
    """What a metre, a second of hover and a sortie's climb/descent cost one drone, planned safe.

    Per-metre figures are the worst over every heading in the forecast wind at the
    nominal speeds; the sortie's flown figures (``planner.output.sortie_flight``) add what
    the autopilot's corners and stops cost. A router that wants those per piece prices
    it with ``planner.flight.costs.polyline_cost(points, altitude, speed, nav, model)``;
    ``planner.mission`` routes a drone again with less energy when a flown sortie needs
    more than the per-metre figures said.
    """

    model: EnergyModel
    usable_wh: float
    cruise_mps: float
    work_mps: float
    transit_wh_per_m: float
    work_wh_per_m: float
    hover_w: float
    fixed_wh: float
    fixed_s: float
    turnaround_s: float = BATTERY_SWAP_S  # on the dock between two of this drone's sorties
    nav: NavLimits | None = None  # the drone's waypoint controller (``planner.flight.costs.polyline_cost``)

    def reach_m(self) -> float:
        """Metres of the dearer kind of flight the usable energy buys after climb and descent."""
        return max(0.0, (self.usable_wh - self.fixed_wh) / max(self.transit_wh_per_m, self.work_wh_per_m))


def _worst_wh_per_m(model: EnergyModel, speed_mps: float) -> float:
    worst = max(model.power_w(model.airspeed_mps(speed_mps, h)) for h in range(0, 360, _HEADING_STEP_DEG))
    worst = max(worst, model.power_w(model.airspeed_mps(speed_mps, None)))
    return worst * _RATE_MARGIN / 3600.0 / speed_mps


def rates(drone: Drone, job: Job, world: World, usable_wh: float) -> Rates:
    model = EnergyModel.for_drone(drone, world.weather.hour_at(job.start_at), job.altitude_m)
    up = model.leg(0.0, 1.0, climb_m=job.altitude_m)
    down = model.leg(0.0, 1.0, climb_m=-job.altitude_m)
    return Rates(
        model=model,
        usable_wh=usable_wh,
        cruise_mps=drone.cruise_speed_mps,
        work_mps=drone.inspection_speed_mps,
        transit_wh_per_m=_worst_wh_per_m(model, drone.cruise_speed_mps),
        work_wh_per_m=_worst_wh_per_m(model, drone.inspection_speed_mps),
        hover_w=model.power_w(model.wind_speed_mps) * _RATE_MARGIN,
        fixed_wh=(up.energy_wh + down.energy_wh) * _RATE_MARGIN,
        fixed_s=up.duration_s + down.duration_s,
        turnaround_s=turnaround_s(world, drone.dock_id),
        nav=NavLimits.for_drone(drone),
    )


def turnaround_s(world: World, dock_id: str) -> float:
    """Seconds a drone spends on ``dock_id`` between two sorties: the dock's ``turnaround_s``
    (docks.json: battery swap or charge), else ``BATTERY_SWAP_S``."""
    given = world.dock(dock_id).turnaround_s
    return BATTERY_SWAP_S if given is None else float(given)

# ------------------------------------------------------------------ sortie building
@dataclass(frozen=True)
class Piece:
    """One leg to build: a polyline (transit, lane, survey run) or a hover at a point."""

    kind: str  # transit | sweep | lane | inspect
    points: tuple[XY, ...]
    target_id: str | None = None
    hold_s: float = 0.0
    reverse: bool = False
    sweeps: tuple[tuple[XY, XY], ...] = ()


class SortieBuilder:
    """Strings ``planner.legs`` builders into a ``Sortie`` whose figures are its vehicle's flight
    (``planner.output.sortie_flight``: the drone's own waypoint controller flying the sortie's mission)."""

    def __init__(self, job: Job, world: World, keep_out: BaseGeometry | None = None) -> None:
        self.job = job
        self.world = world
        self.keep_out = keep_out  # where no simplified lane may go (the grown no-fly zones)
        self.frame = job.frame
        self.alt = job.altitude_m

    def sortie(self, drone: Drone, rates: Rates, dock_xy: XY, pieces: Sequence[Piece], start_at) -> Sortie:
        m, f, alt = rates.model, self.frame, self.alt
        legs: list[Leg] = [takeoff_leg(dock_xy, alt, f, m)]
        for p in pieces:
            if p.kind == "transit":
                if len(p.points) < 2 or LineString(p.points).length <= 1e-6:
                    continue
                legs.append(transit_leg(p.points, alt, f, m, rates.cruise_mps))
            elif p.kind == "lane":
                legs.append(lane_leg(p.points, alt, f, m, rates.work_mps, lane_edge_id=p.target_id or "", reverse=p.reverse,
                                     tolerance_m=LANE_TOLERANCE_M, keep_out=self.keep_out))
            elif p.kind == "sweep":
                legs.append(sweep_leg(p.points, p.sweeps, alt, f, m, rates.work_mps, target_id=p.target_id))
            elif p.kind == "inspect":
                legs.append(inspect_leg(p.points[0], alt, f, m, target_id=p.target_id or "", hold_s=p.hold_s))
            else:  # pragma: no cover - internal
                raise ValueError(p.kind)
        legs.append(landing_leg(dock_xy, alt, f, m))
        drafted = Sortie(0, drone.id, drone.dock_id, start_at, tuple(legs), 0.0, 0.0, 0.0, 0.0)
        flown = fly_waypoints(drafted.waypoints, drafted.leg_ends, drone, self.world.dock(drone.dock_id), m, default_alt=alt)
        legs = [replace(leg, duration_s=d, energy_wh=e) for leg, d, e in zip(legs, flown.leg_duration_s, flown.leg_energy_wh)]
        distance, duration, energy, fraction = sortie_totals(legs, drone.battery_wh)
        return replace(drafted, legs=tuple(legs), distance_m=distance, duration_s=duration, energy_wh=energy,
                       battery_fraction=fraction)


def schedule(job: Job, items: Sequence[tuple[int, float, object]], turnaround: Sequence[float]) -> list[tuple[int, object, object]]:
    """(drone, duration_s, payload) in flight order per drone → (drone, start_at, payload); a drone's
    next sortie starts ``turnaround[drone]`` seconds after the previous one lands."""
    free: dict[int, object] = {}
    out = []
    for d, dur, payload in items:
        start = free.get(d, job.start_at)
        out.append((d, start, payload))
        free[d] = start + timedelta(seconds=dur + turnaround[d])  # type: ignore[operator]
    return out


def after_turnaround(sorties: Sequence[Sortie], world: World) -> list[Sortie]:
    """``sorties`` with each drone's later sorties moved (never earlier) to start no sooner than its
    previous one lands plus its dock's turnaround: routing schedules on estimates, the flown figures
    (``planner.output.sortie_flight``) decide."""
    free: dict[str, datetime] = {}
    out: list[Sortie] = []
    for s in sorted(sorties, key=lambda s: (s.drone_id, s.start_at)):
        start = max(s.start_at, free.get(s.drone_id, s.start_at))
        moved = s if start == s.start_at else replace(s, start_at=start)
        free[s.drone_id] = moved.end_at + timedelta(seconds=turnaround_s(world, s.dock_id))
        out.append(moved)
    return out
