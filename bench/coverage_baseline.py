"""A careful ground-station survey, the baseline sortie's coverage plans are held against.

What an operator gets from a ground station's grid survey (QGroundControl's Survey,
Mission Planner's Survey (Grid)) flown with care, in the benchmark's terms:

* **one sweep direction** for the whole area, the one with the shortest estimated
  flight (a ground station takes one angle; a careful operator turns it to suit);
* a **headland**: one camera-on pass around the outer ring and around every hole,
  half a swath inside the free area, so the band along every edge is imaged and
  no slanted edge leaves triangles;
* **parallel lines** one swath apart filling the area inside the headland, each
  running to the headland pass (so its flat end meets the headland's strip), cut
  where a hole is in the way;
* flown ring by ring, then line by line as a snake; every connection is the
  shortest path inside the free area (``planner.geo.transit.InsideGraph``), so the
  plan is valid under the benchmark's rules.

``headland=False`` gives the plain grid (lines clipped to the free area, no
perimeter pass). Bench only: the planner never calls this.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import shapely
from shapely.geometry import LineString, MultiPolygon, Polygon

from planner.geo.transit import InsideGraph
from planner.survey.sweeps import candidate_angles, coverage_fraction, estimate_lengths, ring_segments, rotation, sweep_pieces

__all__ = ["ground_station_survey"]

XY = tuple[float, float]


def _parts(geom: Any) -> list[Polygon]:
    return [g for g in shapely.get_parts(geom) if isinstance(g, Polygon) and not g.is_empty and g.area > 1e-6]


def _lines(area: Polygon | MultiPolygon, swath: float) -> list[tuple[XY, XY]]:
    """Parallel lines one swath apart across ``area`` in its best single direction, flown as a snake."""
    angles = candidate_angles(area)
    costs, _ = estimate_lengths(ring_segments(area), angles, swath)
    angle = angles[int(np.argmin(costs))]
    c, s = rotation(angle)
    fwd = lambda a: np.column_stack([a[:, 0] * c + a[:, 1] * s, -a[:, 0] * s + a[:, 1] * c])  # noqa: E731
    back = lambda a: np.column_stack([a[:, 0] * c - a[:, 1] * s, a[:, 0] * s + a[:, 1] * c])  # noqa: E731
    pieces, _, _ = sweep_pieces(shapely.transform(area, fwd), swath)
    out: list[tuple[XY, XY]] = []
    ys = np.unique(pieces[:, 0, 1])
    for k, y in enumerate(ys):
        row = pieces[pieces[:, 0, 1] == y]
        row = row[np.argsort(row[:, 0, 0])]
        if k % 2:
            row = row[::-1, ::-1]
        for p in row:
            a, b = back(p)
            out.append(((float(a[0]), float(a[1])), (float(b[0]), float(b[1]))))
    return out


def ground_station_survey(free: Polygon | MultiPolygon, swath: float, headland: bool = True) -> dict[str, Any]:
    """The baseline's sweeps (flight order), whole path, its length and the benchmark's coverage figure."""
    graph = InsideGraph(free)
    rings: list[list[XY]] = []
    area = free
    if headland:
        inner = free.buffer(-swath / 2.0, join_style="mitre", mitre_limit=2.0)
        for part in _parts(inner):
            for ring in [part.exterior, *part.interiors]:
                rings.append([(float(x), float(y)) for x, y in ring.coords])
        area = inner if not inner.is_empty else free
    lines = _lines(area, swath)
    path: list[XY] = []
    sweeps: list[tuple[XY, XY]] = []

    def go_to(q: XY) -> None:
        if not path:
            path.append(q)
            return
        if math.dist(path[-1], q) < 1e-9:
            return
        for p in graph.path(path[-1], q)[1:]:
            if math.dist(path[-1], p) > 1e-9:
                path.append((float(p[0]), float(p[1])))

    for ring in rings:  # each ring closed, from its vertex nearest the drone
        pts = ring[:-1]
        k = 0 if not path else min(range(len(pts)), key=lambda i: math.dist(path[-1], pts[i]))
        loop = pts[k:] + pts[:k] + [pts[k]]
        go_to(loop[0])
        for a, b in zip(loop, loop[1:]):
            if math.dist(a, b) > 1e-9:
                sweeps.append((a, b))
                path.append(b)
    for a, b in lines:
        go_to(a)
        sweeps.append((a, b))
        path.append(b)
    length = float(LineString(path).length) if len(path) > 1 else 0.0
    return {
        "sweeps": sweeps,
        "path": path,
        "path_length_m": length,
        "coverage": coverage_fraction(free, sweeps, swath),
    }
