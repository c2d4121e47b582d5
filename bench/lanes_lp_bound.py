"""A lower bound that counts connectivity: ``python -m bench.lanes_lp_bound INSTANCE [--seconds S]``.

``bench.lanes_bound`` pairs the odd line ends (a T-join) and adds the depot legs the
sortie count forces, but counts no flight between the network's components, so on
the sparse public pair it leaves ~20 % that no plan may be able to use. This is the
linear relaxation of the same plan with the cuts a plan must cross, solved by GLOP:

* variables x_e ≥ 0: deadhead flights between any two line ends or docks (straight,
  or around the no-fly zones: ``planner.geo.deadheads``), cost the flight's length;
* parity: at an odd end, x(δ(v)) ≥ 1; for a set S holding an odd number of odd ends,
  x(δ(S)) ≥ 1 (Padberg–Rao: the Gomory–Hu tree of the support finds the most violated);
* connectivity: a set S of whole components without a dock is entered and left (an even
  number of crossings, at least one), so x(δ(S)) ≥ 2 (max-flow separation: S is the
  far side of a minimum cut from the docks);
* the docks: the sum of their degrees (an edge between two docks counted at both) + 2·loops
  ≥ 2m for m sorties, m raised while the bound needs more; a loop (a dock's two legs to one
  point inside a line, where one sortie ends and another begins) costs twice the straight
  distance from that dock to the nearest line.

Every constraint holds for every valid plan, including plans whose sorties end part-way
along a line: at such a point P its two deadheads (to X, from Y) are replaced by one
from Y to X, no longer (the deadheads are a metric: shortest legal flights), which keeps
every parity, every node's connection to a dock and the docks' degrees (two legs to P
become a loop, or an edge between two docks).
So the LP optimum is a lower bound whatever cuts were found; the cut rounds only raise
it. Edges are priced in (column generation over all pairs): the bound is over the
complete graph. Bench only.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import networkx as nx
import numpy as np
from ortools.linear_solver import pywraplp
from shapely.geometry import LineString, Point

from bench.lanes import _nofly
from planner.geo.deadheads import Deadheads
from planner.geo.transit import TransitGraph

__all__ = ["lp_bound", "main"]

_KEY_DECIMALS = 3  # ends closer than 1 mm are one node (as planner.patrol.rpp_start)
_NEAREST = 12  # edges each node starts with; the rest are priced in
_EPS = 1e-6
_MAX_ROUNDS = 200


class _Graph:
    """Line ends and docks as nodes, the lines as required edges, their components."""

    def __init__(self, lines: list[np.ndarray], depots_xy: np.ndarray, transit) -> None:
        keys: dict[tuple[float, float], int] = {}
        pts, ends = [], []
        for a in lines:
            pair = []
            for p in (a[0], a[-1]):
                k = (round(float(p[0]), _KEY_DECIMALS), round(float(p[1]), _KEY_DECIMALS))
                if k not in keys:
                    keys[k] = len(keys)
                    pts.append(p[:2])
                pair.append(keys[k])
            ends.append(tuple(pair))
        self.n, self.nd = len(keys), len(depots_xy)
        self.N = self.n + self.nd
        self.D = Deadheads(np.vstack([np.asarray(pts, float), depots_xy]), transit).D
        deg = np.zeros(self.n, dtype=np.int64)
        G = nx.MultiGraph()
        G.add_nodes_from(range(self.n))
        for k, (u, v) in enumerate(ends):
            deg[u] += 1
            deg[v] += 1
            G.add_edge(u, v, line=k)
        self.odd = np.zeros(self.N, bool)
        self.odd[: self.n] = deg % 2 == 1
        comps = sorted(sorted(c) for c in nx.connected_components(G))
        self.comp = np.full(self.N, -1, dtype=np.int64)
        for c, members in enumerate(comps):
            self.comp[members] = c
        self.comps = len(comps)
        self.required = float(sum(float(np.hypot(*np.diff(a, axis=0).T).sum()) for a in lines))
        # a loop: a dock's two legs to a point inside a line; no legal flight is shorter than straight
        geoms = [LineString(a[:, :2]) for a in lines]
        self.loop_m = np.asarray([2.0 * min(g.distance(Point(*d)) for g in geoms) for d in depots_xy])


def _solve(g: _Graph, edges: np.ndarray, cuts: list[tuple[np.ndarray, float]], m: int):
    """The LP over ``edges`` with ``cuts`` (node masks, right-hand sides): value, x, node duals, cut duals."""
    s = pywraplp.Solver.CreateSolver("GLOP")
    x = [s.NumVar(0.0, s.infinity(), "") for _ in range(len(edges))]
    cost = g.D[edges[:, 0], edges[:, 1]]
    loops = [s.NumVar(0.0, s.infinity(), "") for _ in range(g.nd)]
    s.Minimize(sum(float(c) * v for c, v in zip(cost, x)) + sum(float(c) * v for c, v in zip(g.loop_m, loops)))
    inc: list[list[int]] = [[] for _ in range(g.N)]
    for e, (i, j) in enumerate(edges):
        inc[i].append(e)
        inc[j].append(e)
    node_rows = {}
    for v in np.flatnonzero(g.odd):
        node_rows[int(v)] = s.Add(sum(x[e] for e in inc[v]) >= 1.0)
    masks = [mask for mask, _ in cuts]
    rows = []
    for mask, r in cuts:
        cross = np.flatnonzero(mask[edges[:, 0]] != mask[edges[:, 1]])
        rows.append(s.Add(sum(x[e] for e in cross) >= r))
    # the docks' degrees: an edge between two docks counts at both (two sorties' legs to one point
    # inside a line, from two docks, are replaced by it), a loop twice
    at_dock = (edges >= g.n).sum(axis=1)
    rows.append(s.Add(sum(float(at_dock[e]) * x[e] for e in np.flatnonzero(at_dock)) + sum(2.0 * v for v in loops)
                      >= 2.0 * m))
    status = s.Solve()
    if status != pywraplp.Solver.OPTIMAL:
        raise RuntimeError(f"GLOP ended with status {status}")
    y = np.zeros(g.N)
    for v, row in node_rows.items():
        y[v] = row.dual_value()
    z = np.asarray([row.dual_value() for row in rows])
    return s.Objective().Value(), np.asarray([v.solution_value() for v in x]), y, masks, z


def _price(g: _Graph, y: np.ndarray, masks: list[np.ndarray], z: np.ndarray) -> np.ndarray:
    """Reduced cost of every pair (i < j); ``z``: the cuts' duals, then the docks' row's."""
    dock = (np.arange(g.N) >= g.n).astype(float)
    red = g.D - y[:, None] - y[None, :] - z[-1] * (dock[:, None] + dock[None, :])
    for mask, zz in zip(masks, z[:-1]):
        if zz > _EPS:
            red = red - zz * (mask[:, None] != mask[None, :])
    red[np.tril_indices(g.N)] = np.inf
    return red


def _separate(g: _Graph, edges: np.ndarray, x: np.ndarray) -> list[tuple[np.ndarray, float]]:
    """Violated connectivity and odd-set cuts of the LP solution ``x``."""
    out = []
    use = x > _EPS
    # connectivity: components contracted, every dock one node "dock"
    H = nx.Graph()
    H.add_nodes_from(list(range(g.comps)) + ["dock"])
    for (i, j), w in zip(edges[use], x[use]):
        a = "dock" if i >= g.n else int(g.comp[i])
        b = "dock" if j >= g.n else int(g.comp[j])
        if a != b:
            cur = H.get_edge_data(a, b, {"capacity": 0.0})["capacity"]
            H.add_edge(a, b, capacity=cur + float(w))
    seen = set()
    for c in range(g.comps):
        value, (side, _) = nx.minimum_cut(H, c, "dock")
        members = np.asarray(sorted(side), dtype=np.int64)
        key = tuple(members.tolist())
        if key not in seen and value < 2.0 - _EPS:
            seen.add(key)
            out.append((np.isin(g.comp, members), 2.0))
    # parity: the most violated odd set on each Gomory-Hu tree edge
    G = nx.Graph()
    G.add_nodes_from(range(g.N))
    for (i, j), w in zip(edges[use], x[use]):
        G.add_edge(int(i), int(j), capacity=float(w))
    for comp in nx.connected_components(G):
        if len(comp) < 2:
            continue
        T = nx.gomory_hu_tree(G.subgraph(comp))
        for u, v, d in list(T.edges(data=True)):
            if d["weight"] >= 1.0 - _EPS:
                continue
            T.remove_edge(u, v)
            side = nx.node_connected_component(T, u)
            T.add_edge(u, v, **d)
            mask = np.zeros(g.N, bool)
            mask[list(side)] = True
            if int(g.odd[mask].sum()) % 2 == 1:
                out.append((mask, 1.0))
    # an odd set alone in its support component crosses nothing: each such component is a cut
    for comp in nx.connected_components(G):
        mask = np.zeros(g.N, bool)
        mask[list(comp)] = True
        if int(g.odd[mask].sum()) % 2 == 1:
            out.append((mask, 1.0))
    return out


def lp_bound(lines: list[np.ndarray], depots_xy: np.ndarray, max_sortie_m: float, transit,
             seconds: float = 120.0) -> dict[str, float]:
    """``required_m``, ``lp_bound_m`` (a valid lower bound, module docstring), the sorties it assumes, its rounds."""
    t0 = time.monotonic()
    g = _Graph(lines, depots_xy, transit)
    near = np.argsort(g.D, axis=1, kind="stable")[:, 1 : _NEAREST + 1]
    pairs = {(min(i, int(j)), max(i, int(j))) for i in range(g.N) for j in near[i]}
    edges = np.asarray(sorted(pairs), dtype=np.int64)
    cuts: list[tuple[np.ndarray, float]] = []
    m = max(1, math.ceil(g.required / max_sortie_m))
    value, rounds, proven, best = 0.0, 0, False, None
    while rounds < _MAX_ROUNDS and time.monotonic() - t0 < seconds:
        rounds += 1
        value, x, y, masks, z = _solve(g, edges, cuts, m)
        red = _price(g, y, masks, z)
        neg = np.argwhere(red < -_EPS)
        if len(neg):  # the LP over these edges is not the LP over all pairs yet
            order = np.argsort(red[neg[:, 0], neg[:, 1]], kind="stable")[:2000]
            edges = np.unique(np.vstack([edges, neg[order]]), axis=0)
            continue
        # value is the LP optimum over every pair with these cuts: a valid bound for plans of >= m sorties
        best = value if best is None else max(best, value)
        need = math.ceil((g.required + value) / max_sortie_m - 1e-9)
        if need > m:
            m = need
            continue
        found = _separate(g, edges, x)
        if not found:
            proven = True
            break
        cuts.extend(found)
    # only a fully priced LP is a bound (the last round may have ended on the clock with edges to add)
    return {"required_m": round(g.required, 1), "lp_bound_m": None if best is None else round(g.required + best, 1),
            "lp_sorties": m, "rounds": rounds, "cuts": len(cuts), "converged": proven,
            "components": g.comps, "seconds": round(time.monotonic() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    """The LP bound of a lanes instance, as one JSON object."""
    ap = argparse.ArgumentParser(prog="python -m bench.lanes_lp_bound", description=__doc__)
    ap.add_argument("instance")
    ap.add_argument("--seconds", type=float, default=120.0, help="stop adding cuts after this long (wall)")
    a = ap.parse_args(argv)
    inst = json.loads(Path(a.instance).read_text(encoding="utf-8"))
    req = [f for f in inst["features"] if (f.get("properties") or {}).get("required")]
    lines = [np.asarray(f["geometry"]["coordinates"], float)[:, :2] for f in req]
    polys = _nofly(inst)
    transit = TransitGraph(polys, 0.0) if polys else None
    depots = np.asarray([(d["x"], d["y"]) for d in inst["depots"]], float)
    out = lp_bound(lines, depots, float(inst["max_sortie_m"]), transit, a.seconds)
    print(json.dumps({"instance": inst.get("name"), **out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
