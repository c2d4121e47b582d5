"""Single-sortie geometry for one job: free area, survey, transit graph, legs of one sortie.

The glue between a validated ``Job``, the ``World`` over the job's flight
window (``planner.airspace.flight_window``: one sortie of the drone from
``job.start_at``; ``DEFAULT_SORTIE_S`` when no drone is named) and one
drone, on top of the single-purpose modules (projection, airspace, coverage,
transit, lanes, points, energy, legs). The router (``planner.mission``) uses
these to price and build sorties; the figures it gets are the ones flown.

Example (a survey with no zones in the way)::

    >>> from datetime import datetime, timezone
    >>> from shapely.geometry import box
    >>> from planner.job import Job
    >>> from planner.world import Weather, World, WorldDefaults
    >>> world = World("w", "UTC", WorldDefaults(), "", (), (), (), (), (), (), Weather(()), ())
    >>> job = Job("AREA_SURVEY", box(24.94, 60.17, 24.945, 60.172),
    ...           datetime(2026, 12, 1, 9, tzinfo=timezone.utc), altitude_m=60, swath_m=40)
    >>> free = job_free_area(job, world)
    >>> round(free.area / job.area_m2, 6)
    1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import shapely
from shapely.geometry import MultiPolygon, Polygon

from planner.airspace import flight_window, no_fly_polygons
from planner.coverage import CoverageResult, plan_coverage
from planner.energy import EnergyModel
from planner.errors import AirspaceBlocked, InvalidArgument
from planner.job import Job
from planner.legs import landing_leg, sortie_totals, sweep_leg, takeoff_leg, transit_leg
from planner.plan import Leg
from planner.transit import TransitGraph
from planner.world import Dock, Drone, World

__all__ = [
    "JobAirspace",
    "job_airspace",
    "job_free_area",
    "survey_job",
    "survey_sortie_legs",
    "MIN_FREE_FRACTION",
]

MIN_FREE_FRACTION = 1e-4  # less of the area left free than this is "wholly inside a zone"

XY = tuple[float, float]


@dataclass(frozen=True)
class JobAirspace:
    """The job's no-fly polygons (local, grown by the safety margin) and the transit graph around them."""

    no_fly_local: tuple[Polygon, ...]
    transit: TransitGraph


def job_airspace(job: Job, world: World, drones: Sequence[Drone] = ()) -> JobAirspace:
    """Zones blocking ``job`` at its altitude at some instant of one sortie of ``drones`` from
    ``job.start_at`` (``flight_window``), grown by its safety margin, and their graph."""
    start, until = flight_window(job.start_at, drones)
    polys = no_fly_polygons(
        world, start, job.altitude_m, job.frame, job.safety_margin_m, job.authorised_zone_ids, until=until
    )
    return JobAirspace(tuple(polys), TransitGraph(polys))


def job_free_area(job: Job, world: World, airspace: JobAirspace | None = None) -> Polygon | MultiPolygon:
    """The job's area (local metres) minus its no-fly polygons.

    Raises ``AirspaceBlocked`` when nothing usable is left (the area lies wholly
    inside a prohibited zone and its margin).
    """
    airspace = airspace or job_airspace(job, world)
    area = job.area_local
    if airspace.no_fly_local:
        area = area.difference(shapely.union_all(list(airspace.no_fly_local)))
    parts = [g for g in shapely.get_parts(area) if isinstance(g, Polygon) and g.area > 0]
    free = parts[0] if len(parts) == 1 else MultiPolygon(parts)
    if not parts or free.area < MIN_FREE_FRACTION * job.area_local.area:
        raise AirspaceBlocked(
            "the selected area lies wholly inside no-fly zones (with the "
            f"{job.safety_margin_m:g} m safety margin) from {job.start_at.isoformat()} and at {job.altitude_m:g} m"
        )
    return free


def survey_job(
    job: Job, world: World, drone: Drone, *, start_local: XY | None = None, airspace: JobAirspace | None = None
) -> CoverageResult:
    """Plan the survey sweeps of ``job`` for ``drone`` (swath from its camera unless the job gives one)."""
    if job.mission_type != "AREA_SURVEY":
        raise InvalidArgument(f"survey_job needs an AREA_SURVEY job, got {job.mission_type}")
    swath = job.swath_for(drone)
    airspace = airspace or job_airspace(job, world, () if drone is None else (drone,))
    free = job_free_area(job, world, airspace)
    return plan_coverage(
        free,
        swath,
        coverage_target=job.coverage_target,
        start=start_local,
        end=start_local,
        bridge=airspace.transit.path,
    )


def survey_sortie_legs(
    job: Job,
    world: World,
    drone: Drone,
    dock: Dock,
    coverage: CoverageResult,
    *,
    airspace: JobAirspace | None = None,
) -> tuple[list[Leg], tuple[float, float, float, float]]:
    """One sortie flying the whole survey from ``dock`` and back: legs and (distance, duration, energy, battery).

    Take-off, transit around no-fly zones to the first sweep, the sweep path at
    inspection speed, transit back, landing. The router splits large surveys
    over several sorties itself; this is the single-sortie case.
    """
    airspace = airspace or job_airspace(job, world, (drone,))
    frame = job.frame
    model = EnergyModel.for_drone(drone, world.weather.hour_at(job.start_at), job.altitude_m)
    dock_xy = frame.forward(dock.lon, dock.lat)
    out_path = airspace.transit.path(dock_xy, coverage.path[0])
    back_path = airspace.transit.path(coverage.path[-1], dock_xy)
    legs: Sequence[Leg] = [
        takeoff_leg(dock_xy, job.altitude_m, frame, model),
        transit_leg(out_path, job.altitude_m, frame, model, drone.cruise_speed_mps),
        sweep_leg(coverage.path, coverage.sweeps, job.altitude_m, frame, model, drone.inspection_speed_mps),
        transit_leg(back_path, job.altitude_m, frame, model, drone.cruise_speed_mps),
        landing_leg(dock_xy, job.altitude_m, frame, model),
    ]
    return list(legs), sortie_totals(legs, drone.battery_wh)
