"""A sortie's time and energy as its own vehicle flies its own mission.

The plan's figures are the vehicle's: the sortie's waypoints become the mission rows the vehicle will
store (``planner.output.mission_items.waypoint_rows``), the mission engine decides which speed
commands take effect (``planner.output.mission_flight``), the autopilot's waypoint controller flies
them (``planner.flight.ardupilot`` for ArduPilot, ``planner.flight.px4`` for PX4) with the drone's
navigation parameters (``Drone.nav_params``), and the energy is the drone's power integrated over
that flight (``planner.flight.power``). Each leg's figures run from the end of the leg before (the
take-off command for the first) to the departure from its last waypoint; the landing leg ends with
the motors disarmed.

Everything that reads a sortie's time or energy — the plan, the battery-reserve and weather rules,
the dock turnaround, the flight monitor's expectations — reads these figures.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.energy import EnergyModel
from planner.flight.ardupilot import fly_auto
from planner.flight.params import NavLimits
from planner.flight.power import cumulative_wh
from planner.flight.px4 import fly_mission
from planner.flight.timeline import FlightTimeline
from planner.output.mission_flight import nav_points
from planner.output.mission_items import Dialect, MissionItem, dialect_of, waypoint_rows
from planner.plan import Plan, Sortie, Waypoint
from planner.world.model import Dock, Drone, World

__all__ = ["TIMING", "SortieFlight", "ItemFigures", "fly_waypoints", "fly_sortie", "item_figures"]

#: What a plan records (``parameters["timing"]``) when its figures come from this module: the rules
#: then read them as they are, and fly a plan timed otherwise again.
TIMING = "autopilot-waypoint-controller/1"


@dataclass(frozen=True, eq=False)
class SortieFlight:
    """The flown timeline of one sortie and its figures per leg."""

    timeline: FlightTimeline
    leg_duration_s: tuple[float, ...]
    leg_energy_wh: tuple[float, ...]

    @property
    def duration_s(self) -> float:
        return float(sum(self.leg_duration_s))

    @property
    def energy_wh(self) -> float:
        return float(sum(self.leg_energy_wh))


def fly_waypoints(
    wps: tuple[Waypoint, ...],
    leg_ends: tuple[int, ...],
    drone: Drone,
    dock: Dock,
    model: EnergyModel,
    *,
    default_alt: float,
    dialect: Dialect | None = None,
) -> SortieFlight:
    """Fly a sortie's joined waypoints (``Sortie.waypoints``); ``leg_ends`` says where each leg ends."""
    dialect = dialect or dialect_of(drone)
    items, source = waypoint_rows(wps, dock, dialect, default_alt=default_alt, trigger_m=0.0)
    points, seqs = nav_points(items, dialect, dock)
    lim = NavLimits.for_drone(drone)
    timeline = fly_auto(points, lim) if dialect == "ardupilot" else fly_mission(points, lim)
    # waypoint index → the nav point flown for it (a waypoint without a nav row of its own: the one before)
    nav_of_wp: dict[int, int] = {}
    for j, seq in enumerate(seqs):
        k = source[seq]
        if k is not None:
            nav_of_wp[k] = j
    ends_s = []
    last = 0
    for w in range(len(wps)):
        last = nav_of_wp.get(w, last)
        if w in leg_ends:
            ends_s.append((w, timeline.departures_s[last]))
    end_of = dict(ends_s)
    leg_end_s = [min(end_of[w], timeline.end_s) for w in leg_ends]
    if leg_end_s:
        leg_end_s[-1] = timeline.end_s  # the last leg ends with the motors disarmed
    energy = cumulative_wh(timeline, model, leg_end_s)
    durations = [b - a for a, b in zip([0.0] + leg_end_s[:-1], leg_end_s)]
    energies = [b - a for a, b in zip([0.0] + energy[:-1], energy)]
    return SortieFlight(timeline, tuple(durations), tuple(energies))


def fly_sortie(plan: Plan, sortie: Sortie, world: World, model: EnergyModel | None = None) -> SortieFlight:
    """``fly_waypoints`` for a planned sortie, with the world's drone, dock and weather at its start."""
    drone = world.drone(sortie.drone_id)
    if model is None:
        model = EnergyModel.for_drone(drone, world.weather.hour_at(sortie.start_at), plan.altitude_m)
    wps = sortie.waypoints
    alts = [w.alt_m for w in wps if w.alt_m > 0 and w.action != "LAND"]
    return fly_waypoints(wps, sortie.leg_ends, drone, world.dock(sortie.dock_id), model,
                         default_alt=alts[0] if alts else plan.altitude_m)


@dataclass(frozen=True)
class ItemFigures:
    """A mission's planned progress per nav item: on reaching ``seqs[i]`` (its "Reached command", after a
    hold) the vehicle has flown ``time_s[i]`` seconds since the take-off command and spent ``energy_wh[i]``;
    the whole flight, to the disarm, takes ``total_s`` and ``total_wh``."""

    seqs: tuple[int, ...]
    time_s: tuple[float, ...]
    energy_wh: tuple[float, ...]
    total_s: float
    total_wh: float


def item_figures(plan: Plan, sortie: Sortie, world: World, items: tuple[MissionItem, ...]) -> ItemFigures:
    """The flight of the mission ``items`` the vehicle holds (``mission_items(plan, sortie, world)`` as uploaded)
    per nav item, by the same model as the sortie's figures: a flight monitor compares the battery with these
    rather than with a share of the path (a slow lane costs more per metre than a fast transit)."""
    drone = world.drone(sortie.drone_id)
    dock = world.dock(sortie.dock_id)
    model = EnergyModel.for_drone(drone, world.weather.hour_at(sortie.start_at), plan.altitude_m)
    dialect = dialect_of(drone)
    points, seqs = nav_points(items, dialect, dock)
    lim = NavLimits.for_drone(drone)
    timeline = fly_auto(points, lim) if dialect == "ardupilot" else fly_mission(points, lim)
    at = [min(timeline.departures_s[i] if p.kind == "waypoint" and p.hold_s > 0 else timeline.arrivals_s[i], timeline.end_s)
          for i, p in enumerate(points)]
    energy = cumulative_wh(timeline, model, [*at, timeline.end_s])
    return ItemFigures(tuple(seqs), tuple(at), tuple(energy[:-1]), timeline.end_s, energy[-1])
