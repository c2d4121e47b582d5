"""Deadheads: flight distances between fixed points, straight or around no-fly zones.

Every pipeline prices the flights between its pieces (lane ends, sweep ends,
inspection points, docks) the same way, so the matrix lives beside the transit
graph rather than inside one pipeline.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import shapely
from shapely.geometry import Point, Polygon
from shapely.ops import nearest_points

__all__ = ["UNREACHABLE_M", "Deadheads", "deadhead_matrix"]

UNREACHABLE_M = 1e9  # deadhead between points that no legal flight joins
XY = tuple[float, float]


class Deadheads:
    """Shortest straight-or-around-obstacles distances between fixed points."""

    def __init__(self, points: np.ndarray, transit) -> None:
        self.points = points
        self.transit = transit
        obstacles = getattr(transit, "obstacles_local", None) if transit is not None else None
        moved, extra = points, np.zeros(len(points))
        if obstacles is not None and not obstacles.is_empty:
            # a point inside the margin (a dock near a zone) first steps straight out, as
            # TransitGraph does, to the nearest point of the grown boundary
            probe = obstacles.buffer(-1e-3, join_style="mitre")
            inside = np.nonzero(shapely.contains(probe, shapely.points(points)))[0] if not probe.is_empty else []
            if len(inside):
                moved = points.copy()
                for i in inside:
                    _, q = nearest_points(Point(points[i]), obstacles.boundary)
                    moved[i] = (q.x, q.y)
                    extra[i] = float(np.hypot(*(points[i] - moved[i])))
        diff = moved[:, None, :] - moved[None, :, :]
        D = np.hypot(diff[..., 0], diff[..., 1])
        if obstacles is not None and not obstacles.is_empty:
            D = self._around(moved, D, obstacles)
        D = D + extra[:, None] + extra[None, :]
        np.fill_diagonal(D, 0.0)
        self.D = np.where(np.isfinite(D), D, UNREACHABLE_M)  # separated by zones: never chosen

    def subset(self, idx: Sequence[int]) -> Deadheads:
        """The same distances restricted to some of the points (no recomputation)."""
        out = Deadheads.__new__(Deadheads)
        idx = np.asarray(idx, dtype=np.int64)
        out.points, out.transit, out.D = self.points[idx], self.transit, self.D[np.ix_(idx, idx)]
        return out

    @staticmethod
    def _legal(shrunk, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether each segment a_k→b_k misses the obstacles; exact test only near them."""
        legal = np.ones(len(a), bool)
        near = np.zeros(len(a), bool)
        d = b - a
        dd = np.maximum((d**2).sum(1), 1e-12)
        for poly in getattr(shrunk, "geoms", [shrunk]):
            ring = np.asarray(poly.exterior.coords)
            c = ring.mean(axis=0)
            radius = float(np.hypot(*(ring - c).T).max())
            t = np.clip(((c - a) * d).sum(1) / dd, 0.0, 1.0)
            dist = np.hypot(*(a + t[:, None] * d - c).T)
            near |= dist <= radius + 1e-6
        if near.any():
            segs = shapely.linestrings(np.stack([a[near], b[near]], axis=1))
            legal[near] = ~shapely.intersects(shrunk, segs)
        return legal

    def _around(self, points: np.ndarray, D: np.ndarray, obstacles) -> np.ndarray:
        shrunk = obstacles.buffer(-1e-3, join_style="mitre")
        if shrunk.is_empty:
            return D
        shapely.prepare(shrunk)
        polys = list(getattr(obstacles, "geoms", [obstacles]))
        corners = np.vstack([np.asarray(p.exterior.coords)[:-1] for p in polys if isinstance(p, Polygon)])
        n, m = len(points), len(corners)
        iu, ju = np.triu_indices(n, k=1)
        legal = self._legal(shrunk, points[iu], points[ju])
        if legal.all():
            return D
        # corner graph (Floyd–Warshall on at most a few hundred corners)
        ci, cj = np.triu_indices(m, k=1)
        cd = np.hypot(*(corners[ci] - corners[cj]).T)
        C = np.full((m, m), np.inf)
        np.fill_diagonal(C, 0.0)
        ok = self._legal(shrunk, corners[ci], corners[cj])
        C[ci[ok], cj[ok]] = cd[ok]
        C[cj[ok], ci[ok]] = cd[ok]
        for k in range(m):
            C = np.minimum(C, C[:, k : k + 1] + C[k : k + 1, :])
        pi, pk = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
        pi, pk = pi.ravel(), pk.ravel()
        pd = np.hypot(*(points[pi] - corners[pk]).T)
        pok = self._legal(shrunk, points[pi], corners[pk])
        P = np.where(pok, pd, np.inf).reshape(n, m)
        PC = np.min(P[:, :, None] + C[None, :, :], axis=1)  # point → corner via corners, (n, m)
        bad_i, bad_j = iu[~legal], ju[~legal]
        out = D.copy()
        for s in range(0, len(bad_i), 4096):
            a, b = bad_i[s : s + 4096], bad_j[s : s + 4096]
            via = np.min(PC[a] + P[b], axis=1)
            out[a, b] = via
            out[b, a] = via
        return out

    def path(self, i: int, j: int) -> list[XY]:
        a = (float(self.points[i][0]), float(self.points[i][1]))
        b = (float(self.points[j][0]), float(self.points[j][1]))
        if self.transit is None or i == j:
            return [a, b]
        return [tuple(p) for p in self.transit.path(a, b)]


def deadhead_matrix(points: np.ndarray, transit=None) -> tuple[np.ndarray, Deadheads]:
    """All-pairs flight distances between ``points`` (straight, or around ``transit``'s obstacles).

    Returns the (n, n) matrix and an object whose ``path(i, j)`` gives the polyline.
    """
    dh = Deadheads(np.asarray(points, dtype=float).reshape(-1, 2), transit)
    return dh.D, dh
