"""Lane geometry for fire-lane patrol: a graph split at junctions, and the edges a selection requires.

Lanes come from the world as lon/lat LineStrings (fire lanes, roads, power
lines). Two lanes meet where they share a vertex; the lane graph splits every
lane at each vertex used by another lane (or by itself twice), so each
``LaneEdge`` runs from junction to junction, as the benchmark's lane instances
do. ``required_lane_edges`` keeps the edges of the wanted kinds that lie in the
selected area, clipped to it, in a deterministic order (lane id, then piece).

Vertices are matched after rounding to ``NODE_DECIMALS`` degrees (≈1 cm), so
a junction drawn twice with float noise is still one junction.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import networkx as nx
import shapely
from shapely.geometry import LineString, MultiLineString
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.geo.projection import LocalFrame
from planner.world.model import LANE_KINDS, Lane, World

__all__ = ["LaneEdge", "NODE_DECIMALS", "split_lanes", "lane_graph", "required_lane_edges"]

NODE_DECIMALS = 7
LonLat = tuple[float, float]


@dataclass(frozen=True)
class LaneEdge:
    """One junction-to-junction piece of a lane (possibly clipped to a selection).

    ``id`` is ``"<lane_id>#<k>"`` (k-th piece along the lane, then ``.<j>`` for
    the j-th part left after clipping); ``coords_wgs84`` are lon/lat in the
    lane's own direction.
    """

    id: str
    lane_id: str
    kind: str
    name: str
    coords_wgs84: tuple[LonLat, ...]

    @property
    def line_wgs84(self) -> LineString:
        return LineString(self.coords_wgs84)

    def coords_local(self, frame: LocalFrame) -> tuple[tuple[float, float], ...]:
        """The coordinates in ``frame``'s metres."""
        return tuple((float(x), float(y)) for x, y in frame.forward_many(self.coords_wgs84))

    def length_m(self, frame: LocalFrame) -> float:
        return float(LineString(self.coords_local(frame)).length)


def _key(p: Iterable[float]) -> LonLat:
    x, y = p
    return (round(float(x), NODE_DECIMALS), round(float(y), NODE_DECIMALS))


def _lanes_of(world: World, kinds: Iterable[str]) -> list[Lane]:
    kinds = frozenset(kinds)
    unknown = kinds - LANE_KINDS
    if unknown:
        raise InvalidArgument(f"unknown lane kinds {sorted(unknown)}; known: {sorted(LANE_KINDS)}")
    return sorted((ln for ln in world.lanes if ln.kind in kinds), key=lambda ln: ln.id)


def split_lanes(lanes: Iterable[Lane]) -> list[LaneEdge]:
    """Every lane cut at the vertices it shares with another lane (or revisits)."""
    lanes = list(lanes)
    use: dict[LonLat, int] = {}
    for ln in lanes:
        coords = [_key(c) for c in ln.line.coords]
        for i, c in enumerate(coords):
            use[c] = use.get(c, 0) + (1 if 0 < i < len(coords) - 1 else 2)
    out: list[LaneEdge] = []
    for ln in lanes:
        coords = [(float(x), float(y)) for x, y in ln.line.coords]
        piece: list[LonLat] = [coords[0]]
        k = 0
        for i, c in enumerate(coords[1:], start=1):
            if piece[-1] != c:
                piece.append(c)
            last = i == len(coords) - 1
            if (last or use.get(_key(c), 0) >= 2) and len(piece) >= 2:
                out.append(LaneEdge(f"{ln.id}#{k}", ln.id, ln.kind, ln.name, tuple(piece)))
                k += 1
                piece = [c]
    return out


def lane_graph(world: World, kinds: Iterable[str] = ("fire_lane",), frame: LocalFrame | None = None) -> nx.Graph:
    """Undirected multigraph-free lane graph: nodes are rounded lon/lat junctions, one edge per piece.

    Edge data: ``edge`` (the ``LaneEdge``) and ``length_m`` (in ``frame``, or in
    the frame of the lanes' centroid). Parallel pieces between the same two
    junctions keep the shorter one.
    """
    edges = split_lanes(_lanes_of(world, kinds))
    g = nx.Graph()
    if not edges:
        return g
    if frame is None:
        frame = LocalFrame.for_geometry(MultiLineString([e.coords_wgs84 for e in edges]))
    for e in edges:
        a, b = _key(e.coords_wgs84[0]), _key(e.coords_wgs84[-1])
        length = e.length_m(frame)
        if g.has_edge(a, b) and g.edges[a, b]["length_m"] <= length:
            continue
        g.add_edge(a, b, edge=e, length_m=length)
    return g


def required_lane_edges(
    world: World, area_wgs84: BaseGeometry, kinds: Iterable[str] = ("fire_lane",)
) -> list[LaneEdge]:
    """The lane pieces of ``kinds`` inside ``area_wgs84``, clipped to it, sorted by id.

    A piece crossing the area's edge keeps only its inside part(s); parts
    shorter than a centimetre-scale sliver (touching the boundary) are dropped.
    """
    if area_wgs84 is None or area_wgs84.is_empty:
        raise InvalidArgument("the selection is empty")
    prepared = area_wgs84
    shapely.prepare(prepared)
    out: list[LaneEdge] = []
    for e in split_lanes(_lanes_of(world, kinds)):
        line = e.line_wgs84
        if not prepared.intersects(line):
            continue
        if prepared.covers(line):
            out.append(e)
            continue
        clipped = line.intersection(area_wgs84)
        parts = [g for g in shapely.get_parts(clipped) if g.geom_type == "LineString" and g.length > 1e-7]
        if not parts:
            continue
        merged = shapely.line_merge(shapely.union_all(parts)) if len(parts) > 1 else parts[0]
        pieces = [g for g in shapely.get_parts(merged) if g.geom_type == "LineString"]
        for j, g in enumerate(pieces):
            coords = tuple((float(x), float(y)) for x, y in g.coords)
            # keep the lane's own direction
            if len(coords) >= 2 and _forward_position(line, coords[0]) > _forward_position(line, coords[-1]):
                coords = coords[::-1]
            out.append(LaneEdge(f"{e.id}.{j}", e.lane_id, e.kind, e.name, coords))
    out.sort(key=lambda e: e.id)
    return out


def _forward_position(line: LineString, p: LonLat) -> float:
    return float(line.project(shapely.Point(p)))
