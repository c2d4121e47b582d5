"""What the plan says about one sortie's flight: the follower's yardstick (``Expectation``).

Built from the approved plan and the world the draft recorded: the navigation
items the vehicle holds (``planner.output.mission_items``, the dialect's own
layout), its dock (where a recall brings it), the planned landing point (the
last NAV_LAND, else the dock), the drone's longest endurance (after how long a
silent vehicle has surely come down: ``flows.vehicle.follow``) and the sortie's
planned time and energy per navigation item (``EnergyProfile``: the in-flight
projection of the battery at landing), from the planner's own model of the
vehicle flying those items (``planner.output.sortie_flight.item_figures``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from flows.errors import Conflict
from flows.vehicle.energy_projection import EnergyProfile
from flows.vehicle.flight_record import Expectation
from flows.vehicle.modes import NAV_LAND, NAV_RTL, nav_seqs
from planner.errors import SortieError
from planner.output.mission_items import MissionItem, mission_items, rally_items
from planner.plan import Plan, Sortie, plan_from_dict
from planner.world.model import World

__all__ = ["expectation_of", "expectations_for", "energy_profile", "accepted_uploads"]


def _path_shares(items: tuple[MissionItem, ...], seqs: list[int], dock: Any) -> list[float]:
    """For each nav item, the share of the mission's path (3-D, from the dock) flown on reaching it."""
    by_seq = {i.seq: i for i in items}
    kx = math.cos(math.radians(dock.lat)) * 111_320.0
    here = (0.0, 0.0, 0.0)
    cum: list[float] = []
    total = 0.0
    for s in seqs:
        it = by_seq[s]
        if it.command == NAV_RTL or (it.lat == 0.0 and it.lon == 0.0):
            x, y = (0.0, 0.0) if it.command == NAV_RTL else here[:2]
        else:
            x, y = (it.lon - dock.lon) * kx, (it.lat - dock.lat) * 111_320.0
        z = 0.0 if it.command in (NAV_LAND, NAV_RTL) else it.alt_m
        total += math.dist(here, (x, y, z))
        cum.append(total)
        here = (x, y, z)
    return [c / total if total > 0 else 1.0 for c in cum]


def energy_profile(plan: Plan, sortie: Sortie, items: tuple[MissionItem, ...], seqs: list[int], dock: Any,
                   battery_wh: float, world: World | None = None) -> EnergyProfile:
    """The sortie's planned time and energy per nav item and its reserve: the planner's own flight model of the
    items (``planner.output.sortie_flight.item_figures``: a slow lane costs more per metre than a fast transit);
    without the world, or for items it does not time, the sortie's totals shared along the path."""
    reserve = float(plan.parameters.get("reserve_fraction", 0.0) or 0.0)
    if world is not None:
        from planner.output.sortie_flight import item_figures

        try:
            fig = item_figures(plan, sortie, world, items)
        except SortieError:  # items the model does not time (say a PX4 list that does not start with a take-off)
            fig = None
        at = {} if fig is None else dict(zip(fig.seqs, zip(fig.time_s, fig.energy_wh)))
        if fig is not None and seqs and all(s in at for s in seqs):
            return EnergyProfile(seqs=tuple(seqs), time_s_at=tuple(at[s][0] for s in seqs),
                                 energy_wh_at=tuple(at[s][1] for s in seqs), total_s=fig.total_s,
                                 total_wh=fig.total_wh, battery_wh=battery_wh, reserve_fraction=reserve)
    shares = _path_shares(items, seqs, dock)
    return EnergyProfile(seqs=tuple(seqs), time_s_at=tuple(sh * sortie.duration_s for sh in shares),
                         energy_wh_at=tuple(sh * sortie.energy_wh for sh in shares), total_s=sortie.duration_s,
                         total_wh=sortie.energy_wh, battery_wh=battery_wh, reserve_fraction=reserve)


def expectation_of(plan: Plan, sortie: Sortie, world: World | None, *, link: str, dialect: str) -> Expectation:
    """One sortie's ``Expectation`` (without ``world``, it no longer loads: followed without items, dock or
    profile)."""
    seqs: tuple[int, ...] = ()
    battery_wh = endurance = 0.0
    dock: Any = None
    landing: tuple[float, float] | None = None
    profile = None
    rally: tuple[tuple[float, float], ...] = ()
    if world is not None:
        items = mission_items(plan, sortie, world, dialect=dialect)  # type: ignore[arg-type]
        seqs = tuple(nav_seqs(items, dialect))
        drone = world.drone(sortie.drone_id)
        battery_wh = drone.battery_wh
        endurance = max(drone.flight_time_s, drone.hover_time_s)
        dock = world.dock(sortie.dock_id)
        lands = [i for i in items if i.command == NAV_LAND]
        landing = (lands[-1].lat, lands[-1].lon) if lands else (dock.lat, dock.lon)
        profile = energy_profile(plan, sortie, items, list(seqs), dock, battery_wh, world) if seqs else None
        rally = tuple((r.lat, r.lon) for r in rally_items(plan, sortie, world))
    return Expectation(
        drone_id=sortie.drone_id, sortie_index=sortie.index, link=link, dialect=dialect, nav_seqs=seqs,
        distance_m=sortie.distance_m, duration_s=sortie.duration_s, energy_wh=sortie.energy_wh,
        battery_fraction=sortie.battery_fraction, battery_wh=battery_wh,
        dock_lat=None if dock is None else dock.lat, dock_lon=None if dock is None else dock.lon,
        landing_lat=None if landing is None else landing[0], landing_lon=None if landing is None else landing[1],
        endurance_s=endurance, profile=profile, rally=rally,
    )


def accepted_uploads(rec: Any, dispatch: Any) -> list[dict[str, Any]]:
    """The dispatch's accepted uploads (each drone's first sortie), or ``Conflict`` when there is none."""
    result = (dispatch.result or {}) if dispatch is not None else {}
    uploads = [u for u in result.get("uploads", []) if u.get("status") == "ACCEPTED"]
    if not uploads:
        raise Conflict(f"draft {rec.draft_id} v{rec.version} has no accepted upload to follow")
    return uploads


def expectations_for(rec: Any, dispatch: Any, world: World | None, *,
                     link: str | Mapping[str, str] | None = None) -> list[Expectation]:
    """One ``Expectation`` per vehicle the dispatch uploaded to (its first sortie), ``link`` overriding the
    dispatch's addresses."""
    plan = plan_from_dict(rec.plan or {})
    out: list[Expectation] = []
    for u in accepted_uploads(rec, dispatch):
        sortie = next(s for s in plan.sorties if s.index == u["sortie_index"])
        conn = u["link"]
        if isinstance(link, str):
            conn = link
        elif isinstance(link, Mapping) and u["drone_id"] in link:
            conn = link[u["drone_id"]]
        out.append(expectation_of(plan, sortie, world, link=conn, dialect=u["dialect"]))
    return out
