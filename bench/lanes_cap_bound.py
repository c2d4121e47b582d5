"""A lower bound that counts the sortie limit: ``python -m bench.lanes_cap_bound INSTANCE [--seconds S]``.

``bench.lanes_lp_bound`` models the limit only through the sortie count (the docks'
degree), so on grid8_r35 it lets one sortie serve far lines that no 6 km sortie can
reach together. This LP adds **capacity cuts** over regions of the plane:

* a region Ω (a disk's outside, a half-plane, a quadrant) that does not hold the dock,
  with R(Ω) metres of required line inside it and the nearest of those at ``d`` from the
  dock, can be served by a sortie only after flying ``d`` there and ``d`` back, so each
  sortie serves at most L − 2d of it and at least n(Ω) = ⌈R(Ω) / (L − 2d)⌉ sorties serve
  it;
* each of them is a closed walk through the dock (outside Ω) and a point inside Ω, so it
  crosses Ω's boundary at least twice: the deadheads' crossings (a straight flight
  crosses a convex region's or a disk's boundary 0, 1 or 2 times, computed from its end
  points) plus the required lines' own crossings are at least 2·n(Ω).

The rest is ``bench.lanes_lp_bound``'s LP (parity by Padberg–Rao, connectivity by
max-flow, the docks' degree for m sorties, every pair priced in), without its loops.

**Which plans it bounds.** The capacity cuts count sorties as separate closed walks,
so the bound holds for plans in which every sortie flies each line it serves from end
to end (every planner in this repository and the bench's baseline make such plans),
with straight deadheads (instances without no-fly zones; the module refuses others).
It does not hold as proven for plans whose sorties end or begin part-way along a line
(the bench's coverage rule allows them): ``lanes_lp_bound``'s argument for those joins
two sorties' flights at the split point into one walk, which keeps parity and
connectivity but not the count of walks that enter a region, and this module has no
replacement for it. It also takes the lines as flown exactly, not within the coverage
rule's 1 m, and all of them (not 99 %). Bench only.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from ortools.linear_solver import pywraplp

from bench.lanes import _nofly
from bench.lanes_lp_bound import _Graph, _separate

__all__ = ["Region", "cap_bound", "regions_for", "main"]

_EPS = 1e-6
_ON = 1e-6  # a point this close to a region's boundary is counted as crossing it both ways
_MAX_ROUNDS = 400
_NEAREST = 12


@dataclass(frozen=True)
class Region:
    """A region away from the dock: the outside of the disk of radius ``r`` round it (``kind`` "outside"),
    or the convex set where every ``n_k · p ≥ h_k`` (``kind`` "convex": a half-plane, a quadrant)."""

    kind: str
    r: float = 0.0
    halves: tuple[tuple[float, float, float], ...] = ()  # (n_x, n_y, h)

    def margin(self, pts: np.ndarray, dock: np.ndarray) -> np.ndarray:
        """A signed margin: positive inside, negative outside (the distance for a disk or a half-plane)."""
        if self.kind == "outside":
            return np.hypot(*(pts - dock).T) - self.r
        return np.min([pts @ np.asarray(h[:2]) - h[2] for h in self.halves], axis=0)

    def clip(self, a: np.ndarray, b: np.ndarray, dock: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each straight flight a → b, the parameter interval [t0, t1] inside the region (empty: t0 ≥ t1).
        A disk's outside is not convex: there the interval is only the flight's part beyond the disk's far side."""
        t0, t1 = np.zeros(len(a)), np.ones(len(a))
        d = b - a
        for nx_, ny_, h in self.halves:
            n = np.asarray([nx_, ny_])
            s0, ds = a @ n - h, d @ n  # s0 + t·ds ≥ 0
            with np.errstate(divide="ignore", invalid="ignore"):
                t = -s0 / ds
            t0 = np.where(ds > 0, np.maximum(t0, t), t0)
            t1 = np.where(ds < 0, np.minimum(t1, t), t1)
            t1 = np.where((ds == 0) & (s0 < 0), -1.0, t1)
        return t0, t1

    def crossings(self, a: np.ndarray, b: np.ndarray, dock: np.ndarray) -> np.ndarray:
        """An upper bound on how often each straight flight a[k] → b[k] crosses the boundary (exact off it)."""
        ma, mb = self.margin(a, dock), self.margin(b, dock)
        sa = np.where(ma > _ON, 1, np.where(ma < -_ON, -1, 0))
        sb = np.where(mb > _ON, 1, np.where(mb < -_ON, -1, 0))
        out = np.where(sa * sb == -1, 1, 0)
        out = np.where((sa == 0) | (sb == 0), 2, out)
        if self.kind == "outside":  # both beyond the disk (inside Ω): a chord through the disk crosses twice
            near = _seg_point_dist(a, b, dock) < self.r + _ON
            out = np.where((sa == 1) & (sb == 1) & near, 2, out)
        else:  # both outside a convex region: twice if the flight passes through it
            t0, t1 = self.clip(a, b, dock)
            out = np.where((sa == -1) & (sb == -1) & (t1 > t0 - 1e-9), 2, out)
        return out


def _seg_point_dist(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    ab = b - a
    den = np.maximum((ab * ab).sum(axis=1), 1e-18)
    t = np.clip(((p - a) * ab).sum(axis=1) / den, 0.0, 1.0)
    return np.hypot(*(a + t[:, None] * ab - p).T)


def regions_for(lines: list[np.ndarray], dock: np.ndarray, step_m: float = 25.0,
                angles: int = 24) -> list[Region]:
    """Disk outsides every ``step_m``; half-planes facing ``angles`` directions, offsets every ``step_m``;
    axis quadrants (x beyond a, y beyond b, each sign), offsets every 2·``step_m``."""
    pts = np.vstack(lines)
    far = float(np.hypot(*(pts - dock).T).max())
    out = [Region("outside", r=float(r)) for r in np.arange(step_m, far, step_m)]
    for k in range(angles):
        th = 2.0 * math.pi * k / angles
        n = (math.cos(th), math.sin(th))
        for h in np.arange(step_m, far, step_m):
            out.append(Region("convex", halves=((n[0], n[1], float(h + n[0] * dock[0] + n[1] * dock[1])),)))
    for sx in (-1.0, 1.0):
        for sy in (-1.0, 1.0):
            for a in np.arange(0.0, far, 2 * step_m):
                for b in np.arange(0.0, far, 2 * step_m):
                    if a == 0.0 and b == 0.0:
                        continue
                    out.append(Region("convex", halves=((sx, 0.0, float(sx * dock[0] + a)),
                                                        (0.0, sy, float(sy * dock[1] + b)))))
    return out


@dataclass
class _Cap:
    region: Region
    need: int  # n(Ω)
    lines_cross: float  # the required lines' own crossings


def _capacity(lines: list[np.ndarray], dock: np.ndarray, L: float, reg: Region) -> _Cap | None:
    """The region's cut, or None when it asks for nothing (no line inside it, or the dock inside it)."""
    if reg.margin(dock[None], dock)[0] >= -_ON:
        return None
    a = np.vstack([l[:-1] for l in lines])
    b = np.vstack([l[1:] for l in lines])
    if reg.kind == "outside":
        inside_len, near = _outside_disk_lines(a, b, dock, reg.r)
    else:
        t0, t1 = reg.clip(a, b, dock)
        keep = t1 - t0 > 1e-12
        seg = np.hypot(*(b - a).T)
        inside_len = float(((t1 - t0) * seg)[keep].sum())
        if inside_len <= _EPS:
            return None
        pa = a[keep] + t0[keep, None] * (b - a)[keep]
        pb = a[keep] + t1[keep, None] * (b - a)[keep]
        near = float(_seg_point_dist(pa, pb, dock).min())
    if inside_len <= _EPS:
        return None
    room = L - 2.0 * near
    if room <= 0:
        raise ValueError(f"required line at {near:.1f} m: no sortie of {L} m reaches it and back")
    need = math.ceil(inside_len / room - 1e-6)  # float error in the lengths must not round a cut up
    return _Cap(reg, need, float(reg.crossings(a, b, dock).sum()))


def _outside_disk_lines(a: np.ndarray, b: np.ndarray, dock: np.ndarray, r: float) -> tuple[float, float]:
    """Required length strictly outside the disk (exact, per straight segment) and its nearest point's distance."""
    total, near = 0.0, math.inf
    for p, q in zip(a, b):
        d, w = q - p, p - dock
        qa, qb, qc = float(d @ d), 2.0 * float(d @ w), float(w @ w) - r * r
        if qa <= 0.0:
            continue
        disc = qb * qb - 4.0 * qa * qc
        t_in = 0.0
        if disc > 0.0:
            s0, s1 = (-qb - math.sqrt(disc)) / (2 * qa), (-qb + math.sqrt(disc)) / (2 * qa)
            t_in = max(0.0, min(1.0, s1) - max(0.0, s0))
        out = (1.0 - t_in) * math.sqrt(qa)
        if out > _EPS:
            total += out
            near = min(near, max(r, float(_seg_point_dist(p[None], q[None], dock)[0])))
    return total, near


def _coef(g: _Graph, xy: np.ndarray, reg: Region, dock: np.ndarray) -> np.ndarray:
    iu, ju = np.triu_indices(g.N, 1)
    c = reg.crossings(xy[iu], xy[ju], dock).astype(float)
    coef = np.zeros((g.N, g.N))
    coef[iu, ju] = c
    coef[ju, iu] = c
    return coef


def _solve(g: _Graph, edges: np.ndarray, cuts: list[tuple[np.ndarray, float]], m: int):
    """The LP over ``edges``: every cut is (N × N coefficients, right-hand side); value, x, node duals, cut duals."""
    s = pywraplp.Solver.CreateSolver("GLOP")
    x = [s.NumVar(0.0, s.infinity(), "") for _ in range(len(edges))]
    cost = g.D[edges[:, 0], edges[:, 1]]
    s.Minimize(sum(float(c) * v for c, v in zip(cost, x)))
    inc: list[list[int]] = [[] for _ in range(g.N)]
    for e, (i, j) in enumerate(edges):
        inc[i].append(e)
        inc[j].append(e)
    node_rows = {int(v): s.Add(sum(x[e] for e in inc[v]) >= 1.0) for v in np.flatnonzero(g.odd)}
    rows = []
    for coef, rhs in cuts:
        c = coef[edges[:, 0], edges[:, 1]]
        nz = np.flatnonzero(c)
        rows.append(s.Add(sum(float(c[e]) * x[e] for e in nz) >= rhs))
    at_dock = (edges >= g.n).sum(axis=1)
    rows.append(s.Add(sum(float(at_dock[e]) * x[e] for e in np.flatnonzero(at_dock)) >= 2.0 * m))
    if s.Solve() != pywraplp.Solver.OPTIMAL:
        raise RuntimeError("GLOP did not reach an optimum")
    y = np.zeros(g.N)
    for v, row in node_rows.items():
        y[v] = row.dual_value()
    z = np.asarray([row.dual_value() for row in rows])
    return s.Objective().Value(), np.asarray([v.solution_value() for v in x]), y, z


def _price(g: _Graph, y: np.ndarray, cuts: list[tuple[np.ndarray, float]], z: np.ndarray) -> np.ndarray:
    dock = (np.arange(g.N) >= g.n).astype(float)
    red = g.D - y[:, None] - y[None, :] - z[-1] * (dock[:, None] + dock[None, :])
    for (coef, _), zz in zip(cuts, z[:-1]):
        if zz > _EPS:
            red = red - zz * coef
    red[np.tril_indices(g.N)] = np.inf
    return red


def cap_bound(lines: list[np.ndarray], dock_xy: np.ndarray, max_sortie_m: float, seconds: float = 300.0,
              step_m: float = 25.0, angles: int = 24, capacity: bool = True) -> dict[str, object]:
    """``cap_bound_m``: a lower bound on whole-line plans from one dock (module docstring); ``capacity=False``
    drops the capacity cuts (the same LP as ``lanes_lp_bound`` without its loops)."""
    t0 = time.monotonic()
    dock = np.asarray(dock_xy, float).reshape(-1, 2)
    if len(dock) != 1:
        raise ValueError("the capacity cuts are written for one dock")
    g = _Graph(lines, dock, None)
    xy = _node_xy(g, lines, dock)
    caps = []
    if capacity:
        for reg in regions_for(lines, dock[0], step_m, angles):
            cap = _capacity(lines, dock[0], max_sortie_m, reg)
            if cap is not None and 2.0 * cap.need - cap.lines_cross > _EPS:
                caps.append(cap)
    near = np.argsort(g.D, axis=1, kind="stable")[:, 1: _NEAREST + 1]
    pairs = {(min(i, int(j)), max(i, int(j))) for i in range(g.N) for j in near[i]}
    edges = np.asarray(sorted(pairs), dtype=np.int64)
    cuts: list[tuple[np.ndarray, float]] = []
    used: set[int] = set()
    m = max(1, math.ceil(g.required / max_sortie_m))
    rounds, proven, best = 0, False, None
    while rounds < _MAX_ROUNDS and time.monotonic() - t0 < seconds:
        rounds += 1
        value, x, y, z = _solve(g, edges, cuts, m)
        red = _price(g, y, cuts, z)
        neg = np.argwhere(red < -_EPS)
        if len(neg):
            order = np.argsort(red[neg[:, 0], neg[:, 1]], kind="stable")[:2000]
            edges = np.unique(np.vstack([edges, neg[order]]), axis=0)
            continue
        best = value if best is None else max(best, value)
        need = math.ceil((g.required + value) / max_sortie_m - 1e-9)
        if need > m:
            m = need
            continue
        found = [(_mask_coef(mask), rhs) for mask, rhs in _separate(g, edges, x)]
        viol = []
        sup = x > _EPS
        ea, eb, xs = xy[edges[sup, 0]], xy[edges[sup, 1]], x[sup]
        for k, cap in enumerate(caps):
            if k in used:
                continue
            lhs = float((cap.region.crossings(ea, eb, dock[0]) * xs).sum())
            short = 2.0 * cap.need - cap.lines_cross - lhs
            if short > 1e-4:
                viol.append((short, k))
        viol.sort(reverse=True)
        for _, k in viol[:40]:
            used.add(k)
            found.append((_coef(g, xy, caps[k].region, dock[0]), 2.0 * caps[k].need - caps[k].lines_cross))
        if not found:
            proven = True
            break
        cuts.extend(found)
    return {"required_m": round(g.required, 1), "cap_bound_m": None if best is None else round(g.required + best, 1),
            "lp_sorties": m, "rounds": rounds, "cuts": len(cuts), "capacity_cuts": len(used),
            "regions": len(caps), "converged": proven, "seconds": round(time.monotonic() - t0, 1)}


def _mask_coef(mask: np.ndarray) -> np.ndarray:
    return (mask[:, None] != mask[None, :]).astype(float)


def _node_xy(g: _Graph, lines: list[np.ndarray], dock: np.ndarray) -> np.ndarray:
    """The nodes' coordinates in ``_Graph``'s order (first-seen line ends, then the dock)."""
    seen: dict[tuple[float, float], np.ndarray] = {}
    for a in lines:
        for p in (a[0], a[-1]):
            k = (round(float(p[0]), 3), round(float(p[1]), 3))
            seen.setdefault(k, np.asarray(p[:2], float))
    xy = np.vstack([np.asarray(list(seen.values())), dock])
    assert len(xy) == g.N
    return xy


def main(argv: list[str] | None = None) -> int:
    """The capacity bound of a one-dock lanes instance without no-fly zones, as one JSON object."""
    ap = argparse.ArgumentParser(prog="python -m bench.lanes_cap_bound", description=__doc__)
    ap.add_argument("instance")
    ap.add_argument("--seconds", type=float, default=300.0, help="stop adding cuts after this long (wall)")
    ap.add_argument("--step-m", type=float, default=25.0, help="spacing of the regions' offsets")
    a = ap.parse_args(argv)
    inst = json.loads(Path(a.instance).read_text(encoding="utf-8"))
    if _nofly(inst):
        raise SystemExit("lanes_cap_bound: no-fly zones bend deadheads; the crossing counts assume straight flights")
    req = [f for f in inst["features"] if (f.get("properties") or {}).get("required")]
    lines = [np.asarray(f["geometry"]["coordinates"], float)[:, :2] for f in req]
    depots = np.asarray([(d["x"], d["y"]) for d in inst["depots"]], float)
    out = cap_bound(lines, depots, float(inst["max_sortie_m"]), a.seconds, a.step_m)
    print(json.dumps({"instance": inst.get("name"), **out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
