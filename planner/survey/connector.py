"""Connections between sweep ends that stay inside the free area (stage 3 of the survey).

``planner.survey.coverage`` needs every end-to-end distance of a direction's pieces and
the polyline behind the chosen ones; this is its own concept (visibility, reflex-corner
paths, bridges between parts) and its own cost centre, so it sits apart from the sweeps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from shapely.geometry import Polygon

from planner.geo.transit import InsideGraph
from planner.survey.sweeps import XY

__all__ = [
    "Bridge",
    "CHUNK_ELEMENTS",
    "Connector",
]

Bridge = Callable[[XY, XY], Sequence[XY]]
CHUNK_ELEMENTS = 2_000_000  # largest temporary array in the distance products (16 MB)
_UNREACHABLE = 1e9  # cost of a connection between disconnected parts of the area


class Connector:
    """Distances and paths between sweep ends inside the free area.

    Straight visibility is tested for each end's ``NEAREST_CHECKED`` nearest
    ends (the connections a good order uses); every other pair is priced by its
    shortest path through the reflex corners, a legal upper bound. The final
    path re-tests any connection it uses, so a straight hop is never missed.
    """

    NEAREST_CHECKED = 12

    def __init__(self, graph: InsideGraph, pts: np.ndarray, bridge: Bridge | None = None) -> None:
        self.bridge = bridge
        self.g = graph
        self.pts = pts
        m = len(pts)
        diff = pts[:, None, :] - pts[None, :, :]
        euclid = np.hypot(diff[..., 0], diff[..., 1])
        self.euclid = euclid
        nodes = graph.node_xy()
        self.convex = len(nodes) == 0 and isinstance(graph.free_area_local, Polygon)
        self.V = np.ones((m, m), bool)
        self.checked = np.ones((m, m), bool)
        self.via: np.ndarray | None = None
        if self.convex:  # a convex area: every straight hop is inside
            self.D = euclid
            return
        if len(nodes) == 0:  # convex parts of a MultiPolygon: straight inside a part, never between parts
            iu, ju = np.triu_indices(m, k=1)
            V = np.eye(m, dtype=bool)
            if len(iu):
                vis = graph.visible_pairs(pts[iu], pts[ju])
                V[iu[vis], ju[vis]] = V[ju[vis], iu[vis]] = True
            self.V = V
            self.D = np.where(V, euclid, _UNREACHABLE + euclid)
            return
        k = min(m - 1, self.NEAREST_CHECKED)
        near = np.argsort(euclid, axis=1, kind="stable")[:, : k + 1]
        checked = np.zeros((m, m), bool)
        checked[np.repeat(np.arange(m), k + 1), near.ravel()] = True
        checked |= checked.T
        np.fill_diagonal(checked, False)
        iu, ju = np.nonzero(np.triu(checked, 1))
        V = np.zeros((m, m), bool)
        if len(iu):
            vis = graph.visible_pairs(pts[iu], pts[ju])
            V[iu[vis], ju[vis]] = True
            V[ju[vis], iu[vis]] = True
        np.fill_diagonal(V, True)
        np.fill_diagonal(checked, True)
        # paths through the corners
        Dn, self.nxt = graph.node_distances()
        # which corners each end sees (tangentially): a sparse list, padded with a dummy corner R
        R = len(nodes)
        vis_pn = graph.corners_seen(pts)
        dist_pn = np.hypot(*(pts[:, None, :] - nodes[None, :, :]).transpose(2, 0, 1))
        counts = vis_pn.sum(axis=1)
        K = max(1, int(counts.max()))
        order_k = np.argsort(~vis_pn, axis=1, kind="stable")[:, :K]  # visible corners first
        Vidx = np.where(np.take_along_axis(vis_pn, order_k, axis=1), order_k, R)
        Aval = np.where(Vidx < R, np.take_along_axis(dist_pn, np.minimum(Vidx, R - 1), axis=1), np.inf)
        Dn_ext = np.full((R + 1, R + 1), np.inf)
        Dn_ext[:R, :R] = Dn
        # M[r, f] = min over corners s seen from f of Dn[r, s] + |s f|
        step = max(1, CHUNK_ELEMENTS // max(1, (R + 1) * K))
        M = np.empty((R + 1, m))
        self.M_arg = np.empty((R + 1, m), int)
        for f0 in range(0, m, step):
            T = Dn_ext[:, Vidx[f0 : f0 + step]] + Aval[None, f0 : f0 + step, :]  # (r, f, k)
            kbest = np.argmin(T, axis=2)
            M[:, f0 : f0 + step] = np.take_along_axis(T, kbest[:, :, None], axis=2)[:, :, 0]
            self.M_arg[:, f0 : f0 + step] = np.take_along_axis(
                np.broadcast_to(Vidx[None, f0 : f0 + step], T.shape), kbest[:, :, None], axis=2
            )[:, :, 0]
        # via[e, f] = min over corners r seen from e of |e r| + M[r, f]
        via = np.empty((m, m))
        self.via_arg = np.empty((m, m), int)
        step = max(1, CHUNK_ELEMENTS // max(1, K * m))
        for e0 in range(0, m, step):
            tot = Aval[e0 : e0 + step, :, None] + M[Vidx[e0 : e0 + step]]  # (e, k, f)
            kbest = np.argmin(tot, axis=1)
            via[e0 : e0 + step] = np.take_along_axis(tot, kbest[:, None, :], axis=1)[:, 0, :]
            self.via_arg[e0 : e0 + step] = np.take_along_axis(Vidx[e0 : e0 + step], kbest, axis=1)
        self.via = via
        D = np.where(V, euclid, via)
        # pairs never checked and with no corner path: check them now (rare)
        todo = ~checked & ~np.isfinite(via)
        ti, tj = np.nonzero(np.triu(todo, 1))
        if len(ti):
            vis = graph.visible_pairs(pts[ti], pts[tj])
            V[ti[vis], tj[vis]] = V[tj[vis], ti[vis]] = True
            D[ti[vis], tj[vis]] = D[tj[vis], ti[vis]] = euclid[ti[vis], tj[vis]]
            checked[ti, tj] = checked[tj, ti] = True
        self.V, self.checked = V, checked
        self.D = np.where(np.isfinite(D), D, _UNREACHABLE + euclid)

    def path(self, i: int, j: int) -> list[XY]:
        """Polyline from point i to point j (both included)."""
        p, q = self.pts[i], self.pts[j]
        straight = [(float(p[0]), float(p[1])), (float(q[0]), float(q[1]))]
        if self.convex or self.V[i, j]:
            return straight
        if not self.checked[i, j] and self.g.visible_pairs(p[None], q[None])[0]:
            return straight
        if self.via is None or not np.isfinite(self.via[i, j]):
            if self.bridge is not None:  # disconnected parts: fly around whatever separates them
                return [straight[0], *self.bridge(straight[0], straight[1])[1:-1], straight[1]]
            return straight
        r = int(self.via_arg[i, j])
        s = int(self.M_arg[r, j])
        nodes = self.g.node_xy()
        seq = [r]
        for _ in range(len(nodes)):
            if seq[-1] == s:
                break
            seq.append(int(self.nxt[seq[-1], s]))
        return [straight[0], *((float(nodes[k][0]), float(nodes[k][1])) for k in seq), straight[1]]
