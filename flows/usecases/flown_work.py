"""The planned work a flight really flew, measured on its track: lanes, survey sweeps, inspection points.

Why from the track and not the vehicle's word: ArduPilot coalesces its
"reached" reports and never reports the final landing, and a vehicle can reach
every item while flying wide of a lane; a four-sortie survey ended SUCCEEDED with
15 % of its sweeps flown (issue 43). So a sortie's work is judged where it was
flown: a lane or sweep leg counts the share of its planned line within
``REACH_TOLERANCE_M`` of the track, an inspection point counts when the track
passed within that distance of it. A mission's work is flown when at least
``WORK_SHARE`` of its lane metres, sweep metres and points were (each kind that
it has); otherwise it ended INCOMPLETE and ``unflown`` says what was not.

The track is what was heard, stamped with the vehicle's clock: a straight line
joins two positions heard at most ``JOIN_S`` apart (the follower asks for 5 a
second and keeps a hovering vehicle's position every second); across a longer
silence (a lost link, datagrams lost) nothing is assumed flown — a chord of
many seconds across a corner would count a lane the vehicle cut.

Pure: plan and tracks in, numbers out (used by the monitor to judge the end,
and by the report).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from shapely.geometry import LineString, Point
from shapely.ops import unary_union

from planner.plan import Plan, Sortie

__all__ = ["REACH_TOLERANCE_M", "WORK_SHARE", "JOIN_S", "work_flown", "sortie_work", "work_complete", "unflown"]

REACH_TOLERANCE_M = 5.0
WORK_SHARE = 0.95
JOIN_S = 1.0  # the longest silence a straight line of the track bridges (five positions at the follower's 5 Hz)
_M_PER_DEG = 111_320.0

Track = list[tuple[float, float, float]]  # (t_s on the vehicle's clock, lon, lat)


class _Frame:
    """Equirectangular metres about a reference point (fine at the scale of one sortie)."""

    def __init__(self, lon0: float, lat0: float) -> None:
        self.lon0, self.lat0 = lon0, lat0
        self.kx = math.cos(math.radians(lat0)) * _M_PER_DEG

    def xy(self, lon: float, lat: float) -> tuple[float, float]:
        return ((lon - self.lon0) * self.kx, (lat - self.lat0) * _M_PER_DEG)


def _empty() -> dict[str, Any]:
    return {"lanes": {}, "points": {}, "sweep": [0.0, 0.0]}


def _heard_pieces(track: Track) -> list[list[tuple[float, float]]]:
    """The track cut where two positions were heard more than ``JOIN_S`` apart: (lon, lat) runs."""
    pieces: list[list[tuple[float, float]]] = []
    last_t: float | None = None
    for t, lon, lat in track:
        if last_t is None or not 0.0 <= t - last_t <= JOIN_S:
            pieces.append([])
        pieces[-1].append((lon, lat))
        last_t = t
    return pieces


def _zone(track: Track, frame: _Frame, tolerance_m: float) -> Any:
    """Where the track was within ``tolerance_m``: each heard run's line (a lone position: its point), buffered."""
    shapes = [LineString([frame.xy(*p) for p in run]) if len(run) >= 2 else Point(frame.xy(*run[0]))
              for run in _heard_pieces(track)]
    return unary_union(shapes).buffer(tolerance_m) if shapes else None


def _measure(sortie: Sortie, track: Track, tolerance_m: float, acc: dict[str, Any]) -> None:
    """Add one sortie's planned and reached work to ``acc`` (lanes by id: [planned m, reached m]; points by id:
    reached; sweeps: [planned m, reached m])."""
    first = sortie.waypoints[0] if sortie.waypoints else None
    frame = _Frame(first.lon, first.lat) if first else _Frame(0.0, 0.0)
    zone = _zone(track, frame, tolerance_m)
    prev = None
    for leg in sortie.legs:
        pts = [frame.xy(w.lon, w.lat) for w in leg.waypoints]
        # a lane or sweep leg starts at its own first waypoint (the transit before it ends there)
        line_pts = pts if len(pts) >= 2 else ([prev] if prev is not None else []) + pts
        if leg.kind in ("lane", "sweep") and len(line_pts) >= 2:
            line = LineString(line_pts)
            got = 0.0 if zone is None else line.intersection(zone).length
            if leg.kind == "lane":
                lane = acc["lanes"].setdefault(leg.target_id or f"lane@{sortie.index}", [0.0, 0.0])
                lane[0] += line.length
                lane[1] += got
            else:
                acc["sweep"][0] += line.length
                acc["sweep"][1] += got
        elif leg.kind == "inspect":
            for w, p in zip(leg.waypoints, pts):
                if w.action != "INSPECT" and len(leg.waypoints) > 1:
                    continue
                key = w.target_id or leg.target_id or f"point@{w.lon:.6f},{w.lat:.6f}"
                acc["points"][key] = acc["points"].get(key, False) or (zone is not None and zone.contains(Point(p)))
        if pts:
            prev = pts[-1]


def _summary(acc: dict[str, Any], tolerance_m: float) -> dict[str, Any]:
    lanes, points, sweep = acc["lanes"], acc["points"], acc["sweep"]
    done = sorted(k for k, (planned, got) in lanes.items() if planned > 0 and got / planned >= WORK_SHARE)
    return {
        "tolerance_m": tolerance_m,
        "lanes": {"planned": len(lanes), "reached": len(done), "planned_m": round(sum(v[0] for v in lanes.values()), 1),
                  "reached_m": round(sum(v[1] for v in lanes.values()), 1), "missed": sorted(set(lanes) - set(done))},
        "sweeps": {"planned_m": round(sweep[0], 1), "reached_m": round(sweep[1], 1)},
        "points": {"planned": len(points), "reached": sum(1 for v in points.values() if v),
                   "missed": sorted(k for k, v in points.items() if not v)},
    }


def sortie_work(sortie: Sortie, track: Track, *, tolerance_m: float = REACH_TOLERANCE_M) -> dict[str, Any]:
    """One sortie's planned vs reached work on its own track."""
    acc = _empty()
    _measure(sortie, track, tolerance_m, acc)
    return _summary(acc, tolerance_m)


def work_flown(plan: Plan, tracks: Mapping[int, Track], *, tolerance_m: float = REACH_TOLERANCE_M,
               sorties: Iterable[int] | None = None) -> dict[str, Any]:
    """The mission's planned vs reached work: ``tracks`` maps a sortie index to its flown track ((t_s, lon, lat)
    positions as heard; a sortie with none flew nothing); ``sorties`` limits the judgement to those indices (default: all). Totals, and per sortie."""
    chosen = set(sorties) if sorties is not None else None
    acc = _empty()
    per: dict[int, dict[str, Any]] = {}
    for s in plan.sorties:
        if chosen is not None and s.index not in chosen:
            continue
        track = list(tracks.get(s.index, []))
        _measure(s, track, tolerance_m, acc)
        per[s.index] = sortie_work(s, track, tolerance_m=tolerance_m)
    out = _summary(acc, tolerance_m)
    out["sorties"] = {str(k): v for k, v in sorted(per.items())}
    return out


def _shares(work: Mapping[str, Any]) -> dict[str, float]:
    """The share flown of each kind of work the summary has."""
    out: dict[str, float] = {}
    lanes, sweeps, points = work["lanes"], work["sweeps"], work["points"]
    if lanes["planned_m"] > 0:
        out["lanes"] = lanes["reached_m"] / lanes["planned_m"]
    if sweeps["planned_m"] > 0:
        out["sweeps"] = sweeps["reached_m"] / sweeps["planned_m"]
    if points["planned"] > 0:
        out["points"] = points["reached"] / points["planned"]
    return out


def work_complete(work: Mapping[str, Any]) -> bool:
    """At least ``WORK_SHARE`` of every kind of planned work was flown (a plan with no work: complete)."""
    return all(share >= WORK_SHARE for share in _shares(work).values())


def unflown(work: Mapping[str, Any]) -> str:
    """What was not flown, in words ("" when every kind reached ``WORK_SHARE``)."""
    parts = []
    shares = _shares(work)
    lanes, sweeps, points = work["lanes"], work["sweeps"], work["points"]
    if shares.get("lanes", 1.0) < WORK_SHARE:
        missed = lanes["missed"]
        parts.append(f"lanes: {lanes['reached_m']:.0f} of {lanes['planned_m']:.0f} m flown ({shares['lanes']:.0%}); "
                     f"not in full: {', '.join(missed[:8])}" + (" …" if len(missed) > 8 else ""))
    if shares.get("sweeps", 1.0) < WORK_SHARE:
        parts.append(f"survey sweeps: {sweeps['reached_m']:.0f} of {sweeps['planned_m']:.0f} m flown "
                     f"({shares['sweeps']:.0%})")
    if shares.get("points", 1.0) < WORK_SHARE:
        missed = points["missed"]
        parts.append(f"points: {points['reached']} of {points['planned']} inspected; not reached: {', '.join(missed[:8])}"
                     + (" …" if len(missed) > 8 else ""))
    return "; ".join(parts)
