"""Shortest flight paths around no-fly polygons, or inside a free area (visibility graphs).

Two graphs share one engine:

* ``TransitGraph(obstacles_local, margin_m)`` — fly anywhere except inside the
  obstacles (no-fly zones grown by ``margin_m``). Used dock → job → dock and
  between pieces of work.
* ``InsideGraph(free_area_local)`` — stay inside a free area (the survey area
  minus its holes). Used for the connections between coverage sweeps, which must
  go around holes and must not cut across concave notches.

A shortest path among polygons bends only at vertices that stick into the free
space (convex corners of obstacles = reflex corners of a free area), and leaves
each such vertex tangentially. The graph keeps only those vertices and only the
edges tangent at both ends, which prunes a 64-gon circle pair from 4 096 to a
few dozen candidate edges before any geometry test; the remaining segments are
tested in one vectorised Shapely call. Queries add the two end points, run A*
(networkx, Euclidean heuristic) and are cached. Everything is deterministic:
nodes are numbered in ring order of the oriented geometry, ties are broken by
node number.

Bounds: at most ``MAX_NODES`` graph vertices (more → ``InvalidArgument``), at
most ``CACHE_SIZE`` cached queries.

Example::

    >>> from shapely.geometry import box
    >>> g = TransitGraph([box(-10, -10, 10, 10)])
    >>> round(g.length((-20, 0), (20, 0)), 3)   # around a corner pair of the square
    48.284
    >>> g.path((-20, 0), (-20, 5))              # straight when legal
    [(-20.0, 0.0), (-20.0, 5.0)]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import networkx as nx
import numpy as np
import shapely
from shapely.geometry import MultiPolygon, Point, Polygon
from shapely.geometry.polygon import orient
from shapely.geometry.base import BaseGeometry
from shapely.ops import nearest_points, unary_union

from planner.errors import AirspaceBlocked, InvalidArgument

__all__ = ["TransitGraph", "InsideGraph", "MAX_NODES", "polyline_length"]

MAX_NODES = 3000
CACHE_SIZE = 8192
EPS_M = 1e-4  # visibility tests use obstacles shrunk (areas grown) by this much
_CROSS_TOL = 1e-8  # on the product of two sines

XY = tuple[float, float]


def polyline_length(points: Sequence[XY]) -> float:
    """Length of a polyline in metres."""
    if len(points) < 2:
        return 0.0
    a = np.asarray(points, dtype=float)
    return float(np.hypot(*(a[1:] - a[:-1]).T).sum())


def _polygons(geom: BaseGeometry) -> list[Polygon]:
    if geom.is_empty:
        return []
    if isinstance(geom, Polygon):
        return [geom]
    if isinstance(geom, MultiPolygon):
        return list(geom.geoms)
    return [g for g in getattr(geom, "geoms", []) if isinstance(g, Polygon) and not g.is_empty]


def _ring_nodes(polys: Sequence[Polygon], convex_sign: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Vertices whose turn has sign ``convex_sign`` (material on the left), with their ring neighbours.

    ``convex_sign=+1`` keeps left turns (convex corners of an obstacle),
    ``-1`` right turns (reflex corners of a free area).
    """
    nodes, prevs, nexts = [], [], []
    for poly in polys:
        poly = orient(poly, 1.0)  # exterior counter-clockwise, holes clockwise: material on the left
        for ring in [poly.exterior, *poly.interiors]:
            c = np.asarray(ring.coords, dtype=float)[:-1]
            if len(c) < 3:
                continue
            p = np.roll(c, 1, axis=0)
            q = np.roll(c, -1, axis=0)
            d1 = c - p
            d2 = q - c
            turn = d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]
            scale = np.hypot(*d1.T) * np.hypot(*d2.T) + 1e-300
            keep = (turn * convex_sign) / scale > 1e-9
            nodes.append(c[keep])
            prevs.append(p[keep])
            nexts.append(q[keep])
    if not nodes:
        z = np.zeros((0, 2))
        return z, z, z
    return np.vstack(nodes), np.vstack(prevs), np.vstack(nexts)


def _tangent(u: np.ndarray, p: np.ndarray, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Whether the line u→v leaves u tangentially (both ring neighbours on one side). Broadcasts."""
    d = v - u
    pu, qu = p - u, q - u
    c1 = d[..., 0] * pu[..., 1] - d[..., 1] * pu[..., 0]
    c2 = d[..., 0] * qu[..., 1] - d[..., 1] * qu[..., 0]
    # normalise to sines so the collinear case (along an edge) survives float noise at UTM magnitudes
    nd = np.hypot(d[..., 0], d[..., 1]) + 1e-300
    s1 = c1 / (nd * (np.hypot(pu[..., 0], pu[..., 1]) + 1e-300))
    s2 = c2 / (nd * (np.hypot(qu[..., 0], qu[..., 1]) + 1e-300))
    return s1 * s2 >= -_CROSS_TOL


class _VisibilityGraph:
    """Shared engine: tangent visibility graph + A* queries + cache."""

    _nodes: np.ndarray
    _prev: np.ndarray
    _next: np.ndarray

    def __init__(self, nodes: np.ndarray, prevs: np.ndarray, nexts: np.ndarray) -> None:
        if len(nodes) > MAX_NODES:
            raise InvalidArgument(
                f"the geometry has {len(nodes)} corner vertices, more than the {MAX_NODES} the transit graph allows; "
                "simplify the zones or the area"
            )
        self._nodes, self._prev, self._next = nodes, prevs, nexts
        self._graph = nx.Graph()
        n = len(nodes)
        self._graph.add_nodes_from(range(n))
        self._cache: dict[tuple[XY, XY], tuple[XY, ...]] = {}
        if n < 2:
            return
        # tangent pairs, a block of rows at a time so memory stays bounded for big graphs
        keep_i, keep_j = [], []
        rows = max(1, 400_000 // n)
        for r0 in range(0, n, rows):
            bi, bj = np.nonzero(np.triu(np.ones((min(rows, n - r0), n), bool), k=r0 + 1))
            bi = bi + r0
            ok = _tangent(nodes[bi], prevs[bi], nexts[bi], nodes[bj]) & _tangent(nodes[bj], prevs[bj], nexts[bj], nodes[bi])
            keep_i.append(bi[ok])
            keep_j.append(bj[ok])
        iu, ju = np.concatenate(keep_i), np.concatenate(keep_j)
        if len(iu):
            vis = self._visible(nodes[iu], nodes[ju])
            iu, ju = iu[vis], ju[vis]
            w = np.hypot(*(nodes[iu] - nodes[ju]).T)
            self._graph.add_weighted_edges_from(zip(iu.tolist(), ju.tolist(), w.tolist()))

    # --- to implement per graph kind
    def _visible(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _check_point(self, p: XY) -> XY:  # pragma: no cover - abstract
        raise NotImplementedError

    # --- queries
    def visible(self, a: XY, b: XY) -> bool:
        """Whether the straight segment a→b is legal."""
        return bool(self._visible(np.asarray([a], float), np.asarray([b], float))[0])

    def visible_pairs(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Vectorised ``visible`` over (n, 2) arrays of segment ends."""
        a = np.asarray(a, float).reshape(-1, 2)
        b = np.asarray(b, float).reshape(-1, 2)
        if len(a) == 0:
            return np.zeros(0, bool)
        return self._visible(a, b)

    def _links(self, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Nodes visible from p and tangent at the node, with distances."""
        n = len(self._nodes)
        if n == 0:
            return np.zeros(0, int), np.zeros(0)
        P = np.broadcast_to(p, (n, 2))
        ok = _tangent(self._nodes, self._prev, self._next, P)
        idx = np.nonzero(ok)[0]
        if len(idx):
            vis = self._visible(np.broadcast_to(p, (len(idx), 2)).copy(), self._nodes[idx])
            idx = idx[vis]
        return idx, np.hypot(*(self._nodes[idx] - p).T)

    def path(self, a: XY, b: XY) -> list[XY]:
        """Shortest legal polyline from a to b (both included), in metres."""
        a = (float(a[0]), float(a[1]))
        b = (float(b[0]), float(b[1]))
        key = (a, b)
        hit = self._cache.get(key)
        if hit is None:
            hit = tuple(self._solve(a, b))
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = hit
            self._cache[(b, a)] = tuple(reversed(hit))
        return list(hit)

    def length(self, a: XY, b: XY) -> float:
        """Length of ``path(a, b)`` in metres."""
        return polyline_length(self.path(a, b))

    def _solve(self, a: XY, b: XY) -> list[XY]:
        a2 = self._check_point(a)
        b2 = self._check_point(b)
        head = [a] if a2 != a else []
        tail = [b] if b2 != b else []
        if a2 == b2 or self.visible(a2, b2):
            core = [a2, b2]
        else:
            core = self._search(a2, b2)
        out: list[XY] = []
        for p in head + core + tail:
            if not out or out[-1] != p:
                out.append(p)
        if len(out) == 1:
            out.append(out[0])
        return out

    def _search(self, a: XY, b: XY) -> list[XY]:
        pa, pb = np.asarray(a, float), np.asarray(b, float)
        ia, da = self._links(pa)
        ib, db = self._links(pb)
        g = self._graph
        src, dst = "a", "b"
        g.add_node(src)
        g.add_node(dst)
        try:
            g.add_weighted_edges_from((src, int(i), float(d)) for i, d in zip(ia, da))
            g.add_weighted_edges_from((dst, int(i), float(d)) for i, d in zip(ib, db))
            nodes = self._nodes

            def h(u: object, v: object) -> float:
                pu = pa if u == src else pb if u == dst else nodes[u]  # type: ignore[index]
                return float(math.hypot(pu[0] - pb[0], pu[1] - pb[1]))

            try:
                seq = nx.astar_path(g, src, dst, heuristic=h, weight="weight")
            except nx.NetworkXNoPath:
                raise InvalidArgument(
                    f"no legal path from ({a[0]:.1f}, {a[1]:.1f}) to ({b[0]:.1f}, {b[1]:.1f}): "
                    "they are separated by no-fly zones or lie in different parts of the area"
                ) from None
        finally:
            g.remove_node(src)
            g.remove_node(dst)
        out: list[XY] = [a]
        for u in seq[1:-1]:
            out.append((float(nodes[u][0]), float(nodes[u][1])))
        out.append(b)
        return out

    def node_count(self) -> int:
        return len(self._nodes)

    def edge_count(self) -> int:
        return self._graph.number_of_edges()


class TransitGraph(_VisibilityGraph):
    """Fly anywhere except inside ``obstacles_local`` grown by ``margin_m``.

    A query point inside a grown obstacle but outside the obstacle itself (a dock
    near a zone) first steps straight out to the nearest point of the grown
    boundary; a point inside an obstacle proper raises ``AirspaceBlocked``.
    """

    def __init__(self, obstacles_local: Sequence[Polygon], margin_m: float = 0.0) -> None:
        if not (math.isfinite(margin_m) and margin_m >= 0):
            raise InvalidArgument(f"margin_m must be >= 0, got {margin_m}")
        polys = [p for g in obstacles_local for p in _polygons(g if g.is_valid else g.buffer(0))]
        self.margin_m = float(margin_m)
        self._raw = unary_union(polys) if polys else Polygon()
        grown = self._raw.buffer(margin_m, join_style="mitre", mitre_limit=2.0) if margin_m > 0 else self._raw
        self.obstacles_local: BaseGeometry = grown
        self._shrunk = grown.buffer(-EPS_M, join_style="mitre") if not grown.is_empty else grown
        self._raw_shrunk = self._raw.buffer(-EPS_M, join_style="mitre") if not self._raw.is_empty else self._raw
        shapely.prepare(self._shrunk)
        shapely.prepare(self._raw_shrunk)
        super().__init__(*_ring_nodes(_polygons(grown), +1.0))

    def _visible(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if self._shrunk.is_empty:
            return np.ones(len(a), bool)
        segs = shapely.linestrings(np.stack([a, b], axis=1))
        return ~shapely.intersects(self._shrunk, segs)

    def _check_point(self, p: XY) -> XY:
        if self._shrunk.is_empty or not self._shrunk.contains(Point(p)):
            return p
        if self._raw_shrunk.contains(Point(p)):
            raise AirspaceBlocked(f"point ({p[0]:.1f}, {p[1]:.1f}) lies inside a no-fly zone")
        _, q = nearest_points(Point(p), self.obstacles_local.boundary)
        out = (float(q.x), float(q.y))
        seg = shapely.linestrings([p, out])
        if shapely.intersects(self._raw_shrunk, seg):
            raise AirspaceBlocked(f"point ({p[0]:.1f}, {p[1]:.1f}) is boxed in by no-fly zones")
        return out


class InsideGraph(_VisibilityGraph):
    """Stay inside ``free_area_local`` (a Polygon or MultiPolygon, holes allowed)."""

    def __init__(self, free_area_local: Polygon | MultiPolygon) -> None:
        polys = _polygons(free_area_local)
        if not polys:
            raise InvalidArgument("the free area is empty")
        self.free_area_local = free_area_local
        self._grown = free_area_local.buffer(EPS_M, join_style="mitre")
        self._grown_edge = self._grown.boundary
        shapely.prepare(self._grown)
        shapely.prepare(self._grown_edge)
        super().__init__(*_ring_nodes(polys, -1.0))

    def _visible(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """A segment stays inside when its start is inside and it never meets the (grown) boundary.

        Why not ``covers(area, segment)``: the same answer (the area is connected
        along the segment), but a prepared boundary's intersection test is about
        twice as fast on parcels with many building holes, and this runs for
        every pair of corners.
        """
        segs = shapely.linestrings(np.stack([a, b], axis=1))
        # a point lies in a polygon's closure (covers) exactly when it intersects it; ``intersects_xy``
        # asks that of the coordinates without making a point object each (a third of this call)
        start_in = shapely.intersects_xy(self._grown, a[:, 0], a[:, 1])
        return start_in & ~shapely.intersects(self._grown_edge, segs)

    def _check_point(self, p: XY) -> XY:
        if not self._grown.covers(Point(p)):
            raise InvalidArgument(f"point ({p[0]:.1f}, {p[1]:.1f}) is outside the free area")
        return p

    def visible_matrix(self, pts_a: np.ndarray, pts_b: np.ndarray) -> np.ndarray:
        """(len(a), len(b)) booleans: which straight segments a_i→b_j stay inside."""
        A = np.asarray(pts_a, float)
        B = np.asarray(pts_b, float)
        ia, ib = np.meshgrid(np.arange(len(A)), np.arange(len(B)), indexing="ij")
        ia, ib = ia.ravel(), ib.ravel()
        same = np.all(A[ia] == B[ib], axis=1)
        out = np.ones(len(ia), bool)
        todo = ~same
        if todo.any():
            out[todo] = self._visible(A[ia[todo]], B[ib[todo]])
        return out.reshape(len(A), len(B))

    def node_xy(self) -> np.ndarray:
        """The graph's corner vertices (reflex corners of the free area), (n, 2)."""
        return self._nodes

    def node_distances(self) -> tuple[np.ndarray, np.ndarray]:
        """All-pairs shortest distances between corner vertices (Floyd–Warshall) and the next-hop matrix.

        Computed once per graph and cached (read-only arrays). Why in place and the next hops
        after: the graph is sparse (a parcel with 36 buildings: 545 corners, 1 420 edges) and
        carrying the next hops through every step of Floyd–Warshall cost 2.6× the distances
        alone (0.34 → 0.13 CPU s there); a next hop is the neighbour on a shortest path, found
        from the distances in one pass (between paths of equal length it may pick another). The
        distances are summed in float32 (half the memory traffic of the n³ loop: 545 corners 0.31 ->
        0.135 CPU s), exact to a millimetre at these sizes: they rank connections; the flown
        lengths are measured on the coordinates.
        """
        cached = getattr(self, "_apsp", None)
        if cached is not None:
            return cached
        n = len(self._nodes)
        W = np.full((n, n), np.inf)
        np.fill_diagonal(W, 0.0)
        for u, v, w in self._graph.edges(data="weight"):
            W[u, v] = W[v, u] = w
        D = W.astype(np.float32)  # half the memory traffic: 2.3x faster (545 corners: 0.31 -> 0.135 CPU s)
        for k in range(n):
            np.minimum(D, D[:, k : k + 1] + D[k : k + 1, :], out=D)
        D = D.astype(float)
        nxt = np.tile(np.arange(n), (n, 1))  # unreachable and i == j: the target itself
        for i in range(n):
            nb = np.nonzero(np.isfinite(W[i]))[0]
            nb = nb[nb != i]
            if len(nb):
                reach = np.isfinite(D[i])
                reach[i] = False
                nxt[i, reach] = nb[np.argmin(W[i, nb][:, None] + D[np.ix_(nb, np.nonzero(reach)[0])], axis=0)]
        D.setflags(write=False)
        nxt.setflags(write=False)
        self._apsp = (D, nxt)
        return D, nxt

    def corners_seen(self, pts: np.ndarray) -> np.ndarray:
        """(len(pts), n) booleans: which corners each point sees, the line leaving the corner tangentially.

        Remembered per point (exact coordinates) for the graph's life: a survey re-ordered with its
        extra passes has mostly the ends its first order had, and these tests were half the time
        of its connections (``planner.survey.connector``).
        """
        seen: dict[bytes, np.ndarray] = self.__dict__.setdefault("_seen", {})
        keys = [p.tobytes() for p in np.ascontiguousarray(pts, dtype=float).reshape(-1, 2)]
        fresh_keys = [k for k in dict.fromkeys(keys) if k not in seen]
        if fresh_keys:
            fresh = np.frombuffer(b"".join(fresh_keys), dtype=float).reshape(-1, 2)
            vis = np.zeros((len(fresh), len(self._nodes)), bool)
            ii, kk = np.nonzero(self.tangent_mask(fresh))
            if len(ii):
                vis[ii, kk] = self.visible_pairs(fresh[ii], self._nodes[kk])
            seen.update(zip(fresh_keys, vis))
        if not keys:
            return np.zeros((0, len(self._nodes)), bool)
        return np.stack([seen[k] for k in keys])

    def tangent_mask(self, pts: np.ndarray) -> np.ndarray:
        """(len(pts), n) booleans: whether the line pt→node is tangent at the node."""
        P = np.asarray(pts, float)[:, None, :]
        return _tangent(self._nodes[None], self._prev[None], self._next[None], P)
