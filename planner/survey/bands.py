"""Large areas, band by band: a survey whose cost grows with its area, not with its area squared.

One direction of a large field has thousands of sweep pieces. Ordering them as one
problem needs every end-to-end connection (``planner.survey.connector``: an n × n
matrix, and a product over the corners that see each end) and a search whose every
step scans that matrix: 22 CPU s for a 45 km² field of 1 000 sweeps, eight times
more for twice the sweeps. Yet a good order of a large field is local: the
boustrophedon snake flies neighbouring lines one after the other, and a piece's
best successor lies a few lines away.

So the lines are cut into **bands** of consecutive lines, each with at most
``BAND_PIECES`` pieces (a band never cuts a line). Each band is ordered on its own,
exactly as a small area is (its cells as snakes, the routing model over its cells,
the connections inside the free area), beginning where the previous band ended and
ending towards the next band's first line; consecutive bands are joined by the
shortest path inside the area (around a zone between parts with the bridge). Each
band's connections are found in the free area of its own strip (``_strip``), so its
visibility graph holds only the corners near it. The work per band is bounded, so
the whole is linear in the number of bands, i.e. in the area. What is lost is a
better order across a band border, and a detour around a hole the strip cuts: a
few connections in a thousand.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import shapely
from shapely.geometry import MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.geo.transit import InsideGraph
from planner.survey.connector import Bridge
from planner.survey.direction import DirectionPlan, DirectionRouting, prepare_routing, route_direction
from planner.survey.order import OrderControl
from planner.survey.sweeps import XY, rotation

__all__ = ["BAND_PIECES", "CELL_SOLUTIONS_PER_BAND", "banded", "route_banded"]

# pieces per band at most: up to this many the routing model's search over pieces pays (a parcel has
# at most ~70; a guided-local-search step over 200+ pieces cost ~2 s on this machine kind)
BAND_PIECES = 120
CELL_SOLUTIONS_PER_BAND = 30  # the routing model over each band's cells (a small model)
_MARGIN_SWATHS = 4.0  # a band's connections may run this many swaths beyond its first and last line


def banded(n_pieces: int) -> bool:
    """Whether a piece set is large enough to be ordered band by band."""
    return n_pieces > BAND_PIECES


def _bands(pieces: np.ndarray, angle: float) -> tuple[list[np.ndarray], np.ndarray]:
    """Piece indices of each band (consecutive lines, ≤ BAND_PIECES pieces) and each piece's line offset."""
    c, s = rotation(angle)
    offset = np.round(-pieces[:, 0, 0] * s + pieces[:, 0, 1] * c, 6)  # the line each piece lies on
    lines, line_of = np.unique(offset, return_inverse=True)
    per_line = np.bincount(line_of, minlength=len(lines))
    bands: list[list[int]] = [[]]
    count = 0
    for li in range(len(lines)):
        if count and count + per_line[li] > BAND_PIECES:
            bands.append([])
            count = 0
        bands[-1].append(li)
        count += int(per_line[li])
    return [np.nonzero(np.isin(line_of, b))[0] for b in bands if b], offset


def _strip(free_c: BaseGeometry, angle: float, lo: float, hi: float, margin: float) -> BaseGeometry:
    """The free area between two line offsets (± margin): where a band's connections run."""
    c, s = rotation(angle)
    minx, miny, maxx, maxy = free_c.bounds
    reach = 2.0 * math.hypot(maxx - minx, maxy - miny) + 1.0
    across = np.asarray([[-reach, lo - margin], [reach, lo - margin], [reach, hi + margin], [-reach, hi + margin]])
    band = Polygon(np.column_stack([across[:, 0] * c - across[:, 1] * s, across[:, 0] * s + across[:, 1] * c]))
    return free_c.intersection(band)


def _graph(area: BaseGeometry) -> InsideGraph | None:
    parts = [g for g in shapely.get_parts(area) if isinstance(g, Polygon) and g.area > 0]
    if not parts:
        return None
    return InsideGraph(parts[0] if len(parts) == 1 else MultiPolygon(parts))


def _link(free_c: BaseGeometry, angle: float, lo: float, hi: float, margin: float, whole: Callable[[], InsideGraph],
          bridge: Bridge | None, a: XY, b: XY) -> list[XY]:
    """The connection between two bands, inside the free area: through the two bands' strip, else the
    whole area's graph, else bridged around what separates the parts."""
    if a == b:
        return [a]
    for graph in (lambda: _graph(_strip(free_c, angle, lo, hi, margin)), whole):
        try:
            g = graph()
            if g is not None:
                return [tuple(map(float, p)) for p in g.path(a, b)]
        except InvalidArgument:  # parts no inside path joins (the graph says so)
            continue
    return [a, *(bridge(a, b)[1:-1] if bridge is not None else []), b]


def route_banded(
    free_c: BaseGeometry, pieces: np.ndarray, cells: list[list[int]], angle: float, start: XY | None, end: XY | None,
    whole: Callable[[], InsideGraph], bridge: Bridge | None, swath_m: float, n_direction_cells: int = 1,
    control: OrderControl | None = None,
) -> DirectionPlan:
    """One direction of a large area, ordered band by band (module docstring).

    Each band's connections run inside the free area of its own strip (its lines
    ± ``_MARGIN_SWATHS`` swaths): its graph has only the corners near it, so no
    graph of the whole field (whose all-pairs corner distances grow with the cube
    of its corners) is built unless two bands cannot be joined inside their strip.
    """
    bands, offset = _bands(pieces, angle)
    margin = _MARGIN_SWATHS * swath_m
    path: list[XY] = []
    camera: list[bool] = []
    here = start
    prev_lo = prev_hi = 0.0
    for b, idx in enumerate(bands):
        lo, hi = float(offset[idx].min()), float(offset[idx].max())
        local = {int(p): k for k, p in enumerate(idx)}
        band_cells = [c for c in ([local[p] for p in cell if p in local] for cell in cells) if c]
        towards = end if b == len(bands) - 1 else tuple(map(float, pieces[bands[b + 1]].reshape(-1, 2).mean(axis=0)))
        graph = _graph(_strip(free_c, angle, lo, hi, margin)) or whole()
        r = prepare_routing(free_c, pieces[idx], band_cells, here, towards, graph, bridge, control)
        plan = route_direction(r, angle, here is not None, 0, CELL_SOLUTIONS_PER_BAND)
        if path:
            link = _link(free_c, angle, min(lo, prev_lo), max(hi, prev_hi), margin, whole, bridge, path[-1], plan.path[0])
            for q in link[1:]:
                if q != path[-1]:
                    path.append(q)
                    camera.append(False)
        else:
            path.append(plan.path[0])
        for q, on in zip(plan.path[1:], plan.camera):
            path.append(q)
            camera.append(on)
        here, prev_lo, prev_hi = path[-1], lo, hi
    length = float(np.hypot(*np.diff(np.asarray(path), axis=0).T).sum()) if len(path) > 1 else 0.0
    source = DirectionRouting(pieces, cells, None, None, n_direction_cells)  # type: ignore[arg-type]
    return DirectionPlan(angle, path, camera, length, source, n_direction_cells, None)
