"""Does a sortie that ends part-way along a line buy anything? ``python -m bench.lanes_split_probe INSTANCE``.

The lane model (``planner.patrol.arc_routing``) flies each line (or chain) whole in one
sortie; the bench's rules let a line be flown in parts by different sorties. This probe
plans the instance as the product does (``--budget-s``), then cuts every required line
into ``--pieces`` equal parts, builds the same routing model over the parts (a sortie may
now end at any cut and another begin there) and lets PyVRP search it for ``--search-s``
from the whole-line plan (which the parts model holds exactly). If the model with the
finer cuts knew a shorter plan near the whole-line one, the search would find it.
Straight deadheads only (no ``nofly``): the probe is for the capacity-bound grid. Bench only.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from bench.lane_pool import ForkPool
from bench.lanes import SEARCH_LANES
from planner.geo.deadheads import Deadheads
from planner.patrol.arc_routing import ArcDepot, route_lanes
from planner.patrol.arc_search import arc_cost_matrix
from planner.patrol.line_tour import MM
from planner.routing.budget import Budget
from planner.routing.engines import routes_cost, search_pyvrp
from planner.routing.model import ModelVehicle, RouteModel, routes_fit
from planner.routing.pyvrp_start import LANE_NEIGHBOURS

__all__ = ["cut_line", "main"]

_CAP_SLACK_M = 0.25  # as the planner: sorties stay this far inside the limit


def cut_line(a: np.ndarray, pieces: int) -> list[np.ndarray]:
    """``a`` cut into ``pieces`` parts of equal length, in order."""
    seg = np.hypot(*np.diff(a, axis=0).T)
    at = np.concatenate([[0.0], np.cumsum(seg)])
    cuts = [at[-1] * i / pieces for i in range(pieces + 1)]
    point = lambda s: np.array([np.interp(s, at, a[:, 0]), np.interp(s, at, a[:, 1])])  # noqa: E731
    return [np.vstack([point(s), *[a[j] for j in range(len(a)) if s < at[j] < e], point(e)])
            for s, e in zip(cuts[:-1], cuts[1:])]


def main(argv: list[str] | None = None) -> int:
    """The whole-line plan's total and the parts model's best from it, as one JSON object."""
    ap = argparse.ArgumentParser(prog="python -m bench.lanes_split_probe", description=__doc__)
    ap.add_argument("instance")
    ap.add_argument("--pieces", type=int, default=2)
    ap.add_argument("--budget-s", type=float, default=10.0, help="the whole-line plan's deadline (wall)")
    ap.add_argument("--search-s", type=float, default=30.0, help="PyVRP on the parts model (wall)")
    a = ap.parse_args(argv)
    inst = json.loads(Path(a.instance).read_text(encoding="utf-8"))
    if inst.get("nofly"):
        raise SystemExit("the probe takes straight deadheads only: an instance without nofly")
    lines = [np.asarray(f["geometry"]["coordinates"], float)[:, :2]
             for f in inst["features"] if (f.get("properties") or {}).get("required")]
    cap = float(inst["max_sortie_m"])
    depots = [ArcDepot(float(d["x"]), float(d["y"]), cap) for d in inst["depots"]]
    plan = route_lanes(lines, depots, None, budget=Budget.deadline(a.budget_s, time.monotonic, runner=ForkPool(SEARCH_LANES)),
                       lanes=SEARCH_LANES)
    P, nd = a.pieces, len(depots)
    parts = [p for l in lines for p in cut_line(l, P)]  # line k is parts k*P .. k*P + P - 1
    plen = np.asarray([float(np.hypot(*np.diff(p, axis=0).T).sum()) for p in parts])
    ends = np.vstack([np.asarray([[p[0], p[-1]] for p in parts]).reshape(-1, 2), [[d.x, d.y] for d in depots]])
    cost = arc_cost_matrix(Deadheads(ends, None).D, plen, nd, MM)
    per_depot = len(plan.sorties) + 2
    vehicles = tuple(ModelVehicle(d, d, int(math.floor((cap - _CAP_SLACK_M) * MM))) for d in range(nd) for _ in range(per_depot))
    model = RouteModel((cost,), vehicles, tuple((nd + 2 * t, nd + 2 * t + 1) for t in range(len(parts))),
                       int(100 * cap * MM))
    start: list[list[int]] = [[] for _ in vehicles]
    used = [0] * nd
    for s in plan.sorties:
        route = []
        for k, rev in s.lines:
            idx = range(k * P + P - 1, k * P - 1, -1) if rev else range(k * P, k * P + P)
            route += [nd + 2 * t + (1 if rev else 0) for t in idx]
        start[s.depot * per_depot + used[s.depot]] = route
        used[s.depot] += 1
    assert routes_fit(model, start)
    got = search_pyvrp(model, Budget.deadline(a.search_s, time.monotonic, runner=ForkPool(SEARCH_LANES)), SEARCH_LANES,
                       nominal_iterations=10**6, pool=True, neighbours=LANE_NEIGHBOURS, start=start)
    print(json.dumps({"instance": inst.get("name"), "pieces": P, "whole_lines_m": round(plan.total_length_m, 1),
                      "whole_lines_sorties": len(plan.sorties), "start_in_parts_model_m": routes_cost(model, start) / MM,
                      "parts_m": routes_cost(model, got.routes) / MM, "parts_sorties": sum(1 for r in got.routes if r),
                      "pyvrp_iterations": got.work}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
