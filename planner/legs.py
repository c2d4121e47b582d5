"""Builders turning local-frame geometry into ``planner.plan.Leg`` values with figures.

Every builder takes local metres (the job's ``LocalFrame``), an AGL altitude and
an ``EnergyModel`` and returns one ``Leg`` whose waypoints are lon/lat and whose
``distance_m``, ``duration_s`` and ``energy_wh`` come from the model, segment by
segment (each segment's heading meets the wind on its own). The router
(``planner.mission``) strings them into sorties:

    takeoff_leg → transit_leg → sweep_leg | lane_leg | inspect_leg … → transit_leg → landing_leg

Actions: a sweep leg switches the camera on at the start of every camera-on
segment and off at its end; a lane leg films the whole lane; an inspect leg
hovers ``hold_s`` at its point; take-off and landing are vertical at the dock.
``sortie_totals`` sums legs for a ``Sortie``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from shapely.geometry import LineString
from shapely.geometry.base import BaseGeometry

from planner.energy import EnergyModel, LegCost
from planner.errors import InvalidArgument
from planner.plan import Leg, LegKind, Waypoint, WaypointAction
from planner.geo.projection import LocalFrame

__all__ = [
    "takeoff_leg",
    "landing_leg",
    "transit_leg",
    "sweep_leg",
    "lane_leg",
    "inspect_leg",
    "polyline_leg",
    "simplify_within",
    "sortie_totals",
]

XY = tuple[float, float]


def _check_alt(altitude_m: float) -> None:
    if not (isinstance(altitude_m, (int, float)) and math.isfinite(altitude_m) and altitude_m > 0):
        raise InvalidArgument(f"altitude_m must be > 0 m AGL, got {altitude_m!r}")


def _wp(frame: LocalFrame, p: XY, alt_m: float, action: WaypointAction, speed_mps: float, **kw: object) -> Waypoint:
    lon, lat = frame.inverse(p[0], p[1])
    return Waypoint(lon=lon, lat=lat, alt_m=alt_m, action=action, speed_mps=speed_mps, **kw)  # type: ignore[arg-type]


def _dedupe(points: Sequence[XY]) -> list[XY]:
    out: list[XY] = []
    for p in points:
        q = (float(p[0]), float(p[1]))
        if not out or out[-1] != q:
            out.append(q)
    return out


def polyline_leg(
    kind: LegKind,
    points_local: Sequence[XY],
    altitude_m: float,
    frame: LocalFrame,
    model: EnergyModel,
    speed_mps: float,
    *,
    actions: Sequence[WaypointAction] | None = None,
    target_id: str | None = None,
) -> Leg:
    """A leg along a local polyline at one altitude; ``actions`` per point (default WAYPOINT)."""
    _check_alt(altitude_m)
    pts = [(float(p[0]), float(p[1])) for p in points_local]
    if not pts:
        raise InvalidArgument(f"a {kind} leg needs at least one point")
    if actions is None:
        actions = ["WAYPOINT"] * len(pts)
    if len(actions) != len(pts):
        raise InvalidArgument("one action per point")
    cost = model.polyline(pts, speed_mps)
    distance = sum(math.dist(a, b) for a, b in zip(pts, pts[1:]))
    wps = tuple(_wp(frame, p, altitude_m, a, speed_mps, target_id=target_id) for p, a in zip(pts, actions))
    return Leg(kind, wps, distance, cost.duration_s, cost.energy_wh, target_id)


def takeoff_leg(dock_local: XY, altitude_m: float, frame: LocalFrame, model: EnergyModel) -> Leg:
    """Vertical climb from the dock to ``altitude_m`` (one TAKEOFF waypoint at that altitude)."""
    _check_alt(altitude_m)
    cost = model.leg(0.0, 1.0, climb_m=altitude_m)
    return Leg("takeoff", (_wp(frame, dock_local, altitude_m, "TAKEOFF", 0.0),), 0.0, cost.duration_s, cost.energy_wh)


def landing_leg(dock_local: XY, altitude_m: float, frame: LocalFrame, model: EnergyModel) -> Leg:
    """Vertical descent onto the dock (one LAND waypoint at 0 m AGL)."""
    _check_alt(altitude_m)
    cost = model.leg(0.0, 1.0, climb_m=-altitude_m)
    return Leg("landing", (_wp(frame, dock_local, 0.0, "LAND", 0.0),), 0.0, cost.duration_s, cost.energy_wh)


def transit_leg(
    points_local: Sequence[XY], altitude_m: float, frame: LocalFrame, model: EnergyModel, speed_mps: float
) -> Leg:
    """Camera-off flight along a legal polyline (``TransitGraph.path``), at cruise speed."""
    return polyline_leg("transit", _dedupe(points_local), altitude_m, frame, model, speed_mps)


def sweep_leg(
    path_local: Sequence[XY],
    sweeps_local: Sequence[tuple[XY, XY]],
    altitude_m: float,
    frame: LocalFrame,
    model: EnergyModel,
    speed_mps: float,
    *,
    target_id: str | None = None,
) -> Leg:
    """The survey path of a ``CoverageResult``: CAMERA_ON where a sweep starts, CAMERA_OFF where it ends.

    Consecutive sweeps that join end to start keep the camera on (one CAMERA_OFF
    at the end of the run), so the camera toggles only around real connections.
    """
    pts = _dedupe(path_local)

    def key(p: XY) -> tuple[float, float]:
        return (round(p[0], 6), round(p[1], 6))

    camera_segments = {(key(a), key(b)) for a, b in sweeps_local}
    seg_on = [(key(a), key(b)) in camera_segments for a, b in zip(pts, pts[1:])]
    actions: list[WaypointAction] = []
    for i in range(len(pts)):
        before = seg_on[i - 1] if i > 0 else False
        after = seg_on[i] if i < len(seg_on) else False
        actions.append("CAMERA_ON" if after and not before else "CAMERA_OFF" if before and not after else "WAYPOINT")
    return polyline_leg("sweep", pts, altitude_m, frame, model, speed_mps, actions=actions, target_id=target_id)


def simplify_within(points: Sequence[XY], tolerance_m: float, keep_out: BaseGeometry | None = None) -> list[XY]:
    """``points`` with the vertices that lie within ``tolerance_m`` of a straighter line dropped
    (Douglas-Peucker), unless the straighter line would enter ``keep_out`` (then ``points`` as they are).

    A lane mapped with a vertex every few metres is flown as a few long legs: every vertex is a
    corner the autopilot slows for (``planner.flight``), and a line within a few metres of the lane
    films the same lane.
    """
    pts = _dedupe(points)
    if len(pts) < 3 or tolerance_m <= 0:
        return pts
    simple = LineString(pts).simplify(tolerance_m, preserve_topology=False)
    out = _dedupe(list(simple.coords))
    if len(out) < 2 or out[0] != pts[0] or out[-1] != pts[-1]:
        return pts
    if keep_out is not None and not keep_out.is_empty and LineString(out).intersects(keep_out):
        return pts
    return out


def lane_leg(
    coords_local: Sequence[XY],
    altitude_m: float,
    frame: LocalFrame,
    model: EnergyModel,
    speed_mps: float,
    *,
    lane_edge_id: str,
    reverse: bool = False,
    tolerance_m: float = 0.0,
    keep_out: BaseGeometry | None = None,
) -> Leg:
    """Fly along a lane piece with the camera on (CAMERA_ON first point, CAMERA_OFF last), its vertices
    merged within ``tolerance_m`` where that stays out of ``keep_out`` (``simplify_within``)."""
    pts = simplify_within(list(coords_local)[::-1] if reverse else coords_local, tolerance_m, keep_out)
    if len(pts) < 2:
        raise InvalidArgument(f"lane piece {lane_edge_id} has no length")
    actions: list[WaypointAction] = ["CAMERA_ON"] + ["WAYPOINT"] * (len(pts) - 2) + ["CAMERA_OFF"]
    return polyline_leg("lane", pts, altitude_m, frame, model, speed_mps, actions=actions, target_id=lane_edge_id)


def inspect_leg(
    point_local: XY, altitude_m: float, frame: LocalFrame, model: EnergyModel, *, target_id: str, hold_s: float
) -> Leg:
    """Hover ``hold_s`` over a point (one INSPECT waypoint)."""
    _check_alt(altitude_m)
    cost = model.leg(0.0, 1.0, hold_s=hold_s)
    wp = _wp(frame, point_local, altitude_m, "INSPECT", 0.0, hold_s=float(hold_s), target_id=target_id)
    return Leg("inspect", (wp,), 0.0, cost.duration_s, cost.energy_wh, target_id)


def sortie_totals(legs: Sequence[Leg], battery_wh: float) -> tuple[float, float, float, float]:
    """(distance_m, duration_s, energy_wh, battery_fraction) of a sequence of legs."""
    cost = LegCost(sum(leg.duration_s for leg in legs), sum(leg.energy_wh for leg in legs))
    distance = sum(leg.distance_m for leg in legs)
    frac = cost.energy_wh / battery_wh if battery_wh > 0 else math.inf
    return distance, cost.duration_s, cost.energy_wh, frac
