"""What every mission pipeline shares: a drone's planning rates, the pieces of a sortie, the builder.

``Rates`` are what a metre, a second of hover and a sortie's climb and descent cost one
drone, planned on the safe side (the worst heading in the forecast wind, 1 % above the
energy model); a route planned within ``Rates.usable_wh`` stays within it when flown.
``Piece`` is one leg to build (transit, lane, sweep run, inspection hover) and
``SortieBuilder`` strings ``planner.legs`` builders into a ``Sortie`` with the true,
heading-dependent figures. ``schedule`` starts a drone's next sortie ``BATTERY_SWAP_S``
after its previous one lands. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from shapely.geometry import LineString

from planner.energy import EnergyModel
from planner.job import Job
from planner.legs import inspect_leg, landing_leg, lane_leg, sortie_totals, sweep_leg, takeoff_leg, transit_leg
from planner.plan import Leg, Sortie
from planner.world.model import Drone, World

__all__ = ["BATTERY_SWAP_S", "MAX_SORTIES_PER_DRONE", "XY", "Piece", "Rates", "SortieBuilder", "rates", "schedule"]

BATTERY_SWAP_S = 600.0  # dock battery swap / top-up between two sorties of one drone
MAX_SORTIES_PER_DRONE = 3  # point inspection: vehicle copies per drone; the airspace window's sorties
_HEADING_STEP_DEG = 5  # headings tried for the worst per-metre cost in the wind
_RATE_MARGIN = 1.01  # planning figures 1 % above the model's, so flown figures stay inside

XY = tuple[float, float]


@dataclass(frozen=True)
class Rates:
    """What a metre, a second of hover and a sortie's climb/descent cost one drone, planned safe.

    Per-metre figures are the worst over every heading in the forecast wind
    (``EnergyModel`` gives the true, heading-dependent figure when the legs are
    built), so a route planned within ``usable_wh`` stays within it when flown.
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
    )

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
    """Strings ``planner.legs`` builders into a ``Sortie``."""

    def __init__(self, job: Job) -> None:
        self.job = job
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
                legs.append(lane_leg(p.points, alt, f, m, rates.work_mps, lane_edge_id=p.target_id or "", reverse=p.reverse))
            elif p.kind == "sweep":
                legs.append(sweep_leg(p.points, p.sweeps, alt, f, m, rates.work_mps, target_id=p.target_id))
            elif p.kind == "inspect":
                legs.append(inspect_leg(p.points[0], alt, f, m, target_id=p.target_id or "", hold_s=p.hold_s))
            else:  # pragma: no cover - internal
                raise ValueError(p.kind)
        legs.append(landing_leg(dock_xy, alt, f, m))
        distance, duration, energy, fraction = sortie_totals(legs, drone.battery_wh)
        return Sortie(
            index=0,
            drone_id=drone.id,
            dock_id=drone.dock_id,
            start_at=start_at,
            legs=tuple(legs),
            distance_m=distance,
            duration_s=duration,
            energy_wh=energy,
            battery_fraction=fraction,
        )


def schedule(job: Job, items: Sequence[tuple[int, float, object]]) -> list[tuple[int, object, object]]:
    """(drone, duration_s, payload) in flight order per drone → (drone, start_at, payload)."""
    free: dict[int, object] = {}
    out = []
    for d, dur, payload in items:
        start = free.get(d, job.start_at)
        out.append((d, start, payload))
        free[d] = start + timedelta(seconds=dur + BATTERY_SWAP_S)  # type: ignore[operator]
    return out
