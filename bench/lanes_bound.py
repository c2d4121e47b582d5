"""A lower bound on any lane plan's total, to see where a plan's length is: ``python -m bench.lanes_bound INSTANCE``.

Every plan flies each required line once at least, and its deadheads (depot legs
included) join the lines' ends into closed walks, so at every end where an odd number
of required lines meet, an odd number of deadheads meet too: the deadheads are a
T-join of the odd nodes, and with straight (or around-the-zones shortest) deadheads —
a metric — the cheapest T-join is a minimum-weight perfect matching of them. That gives

* ``bound_odd_m`` = required + that matching (the rural postman's relaxation without
  connectivity), and
* ``bound_m``: the same with the depot legs the sortie count forces. A plan of total
  L needs at least m = ceil(L / max_sortie_m) sorties, so at least 2m depot legs; the
  matching is over the odd nodes plus 2m copies of "a depot" (a copy pairs with an end
  at that end's nearest depot distance, two copies with twice the nearest
  depot-to-line distance: a sortie that goes out and back), m raised until it holds.

Both are valid lower bounds, so ``bound_m`` reports the larger (legs to a depot can pair
two far odd ends more cheaply than a deadhead between them); connectivity between components is not counted, so they
are not tight). Exact matching (networkx): tens of seconds on a district. Bench only.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import networkx as nx
import numpy as np

from bench.lanes import _nofly
from planner.geo.deadheads import Deadheads
from planner.geo.transit import TransitGraph

__all__ = ["lane_bounds", "main"]

_KEY_DECIMALS = 3  # ends closer than 1 mm are one node (as planner.patrol.rpp_start)


def _matching_cost(cost: np.ndarray) -> float:
    n = len(cost)
    if n == 0:
        return 0.0
    G = nx.Graph()
    for i in range(n):
        for j in range(i + 1, n):
            G.add_edge(i, j, weight=float(cost[i, j]))
    return float(sum(cost[i, j] for i, j in nx.min_weight_matching(G)))


def lane_bounds(lines: list[np.ndarray], depots_xy: np.ndarray, max_sortie_m: float, transit) -> dict[str, float]:
    """``required_m``, ``bound_odd_m``, ``bound_m`` and the sorties ``bound_m`` assumes (module docstring)."""
    lengths = np.asarray([float(np.hypot(*np.diff(a, axis=0).T).sum()) for a in lines])
    keys: dict[tuple[float, float], int] = {}
    ids, pts = [], []
    for a in lines:
        for p in (a[0], a[-1]):
            k = (round(float(p[0]), _KEY_DECIMALS), round(float(p[1]), _KEY_DECIMALS))
            if k not in keys:
                keys[k] = len(keys)
                pts.append(p[:2])
            ids.append(keys[k])
    degree = np.bincount(np.asarray(ids), minlength=len(keys))
    odd = np.flatnonzero(degree % 2)
    dh = Deadheads(np.vstack([np.asarray(pts, float), depots_xy]), transit)
    n = len(keys)
    to_depot = dh.D[:n, n:].min(axis=1)  # each end's nearest depot
    required = float(lengths.sum())
    base = dh.D[np.ix_(odd, odd)]
    bound_odd = required + _matching_cost(base)
    m = max(1, math.ceil(bound_odd / max_sortie_m))
    while True:
        c = 2 * m
        cost = np.zeros((len(odd) + c, len(odd) + c))
        cost[: len(odd), : len(odd)] = base
        cost[: len(odd), len(odd) :] = to_depot[odd][:, None]
        cost[len(odd) :, : len(odd)] = to_depot[odd][None, :]
        cost[len(odd) :, len(odd) :] = 2.0 * float(to_depot.min())
        bound = required + _matching_cost(cost)
        if math.ceil(bound / max_sortie_m) <= m:
            break
        m = math.ceil(bound / max_sortie_m)
    return {"required_m": round(required, 1), "odd_nodes": int(len(odd)), "bound_odd_m": round(bound_odd, 1),
            "bound_m": round(max(bound, bound_odd), 1), "bound_sorties": m}


def main(argv: list[str] | None = None) -> int:
    """The bounds of a lanes instance, as one JSON object."""
    ap = argparse.ArgumentParser(prog="python -m bench.lanes_bound", description=__doc__)
    ap.add_argument("instance")
    inst = json.loads(Path(ap.parse_args(argv).instance).read_text(encoding="utf-8"))
    req = [f for f in inst["features"] if (f.get("properties") or {}).get("required")]
    lines = [np.asarray(f["geometry"]["coordinates"], float)[:, :2] for f in req]
    polys = _nofly(inst)
    transit = TransitGraph(polys, 0.0) if polys else None
    depots = np.asarray([(d["x"], d["y"]) for d in inst["depots"]], float)
    out = lane_bounds(lines, depots, float(inst["max_sortie_m"]), transit)
    print(json.dumps({"instance": inst.get("name"), **out}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
