"""``python -m bench.ils_trace INSTANCE.json [--perms 0,1] [--per-node X]``: where an ILS lane finds its final best.

Issue 27 (branch search1): the evidence behind ``planner.routing.engines.deadline_cap``. The
instance is a lane instance (``../shared/bench/README.md`` section 3, or one cut with
``python -m bench.make_instances lanes``); the routing model ``route_lanes`` would search is
built (no search is run for it), then one OR-Tools ILS lane per renumbering in ``--perms`` searches
it to ``deadline_cap`` solutions (or ``--per-node`` X a node), with a solution callback recording
the objective of every solution. Prints one JSON line per renumbering: the limit, the solutions
done, the final objective, at which solution the final best came, the longest run without an
improvement before it, and the CPU seconds at the best and in all (this process's clock: it
counts the search alone). A lower cap changes OR-Tools' annealing (its temperature falls with the
share of the cap done), so compare caps by running each, never by reading a prefix of a longer run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

__all__ = ["main"]


class _Captured(Exception):
    """Raised by the stand-in search to hand the model back without searching it."""


def _lane_model(path: str):
    import planner.patrol.arc_routing as ar
    from bench.lanes import _nofly
    from planner.geo.transit import TransitGraph
    from planner.routing.budget import Budget

    inst = json.loads(Path(path).read_text(encoding="utf-8"))
    req = [f for f in inst["features"]
           if (f.get("geometry") or {}).get("type") == "LineString" and (f.get("properties") or {}).get("required")]
    lines = [[(float(x), float(y)) for x, y, *_ in f["geometry"]["coordinates"]] for f in req]
    depots = [ar.ArcDepot(float(d["x"]), float(d["y"]), float(inst["max_sortie_m"])) for d in inst["depots"]]
    polys = _nofly(inst)

    def grab(model, *args, **kwargs):
        raise _Captured(model)

    real_ils, real_pyvrp = ar.search_ils, ar.search_pyvrp
    ar.search_ils = ar.search_pyvrp = grab
    try:
        ar.route_lanes(lines, depots, TransitGraph(polys, 0.0) if polys else None, budget=Budget.work(10.0))
    except _Captured as got:
        return got.args[0], ar._FIRST
    finally:
        ar.search_ils, ar.search_pyvrp = real_ils, real_pyvrp
    return None, ar._FIRST


def trace(model, limit: int, permutation: int, first: str, time_limit_s: float) -> dict:
    """One ILS lane on ``model``: the objective of every solution, and CPU seconds (this process)."""
    from planner.routing import model as m

    manager, routing = m._build(model, m._permutation(model.n_nodes, permutation))
    params = m._parameters(m.Search("ils", limit, time_limit_s, permutation, first=first))
    objs: list[int] = []
    cpu: list[float] = []
    t0 = time.process_time()
    routing.AddAtSolutionCallback(lambda: (objs.append(routing.CostVar().Max()), cpu.append(time.process_time() - t0)))
    routing.SolveWithIteratedLocalSearch(params)
    total = time.process_time() - t0
    improvements, low = [], None
    for k, o in enumerate(objs):
        if low is None or o < low:
            improvements.append(k + 1)
            low = o
    best_at = improvements[-1] if improvements else 0
    gaps = [b - a for a, b in zip(improvements, improvements[1:])]
    return {"n_nodes": model.n_nodes, "perm": permutation, "limit": limit, "solutions": len(objs),
            "objective": low, "best_at": best_at, "longest_gap_before_best": max(gaps, default=0),
            "cpu_at_best_s": round(cpu[best_at - 1], 3) if best_at else 0.0, "cpu_s": round(total, 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ils_trace", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("instance")
    ap.add_argument("--perms", default="0,1", help="node renumberings, one ILS lane each (the CLI runs 0, the bench 0,1)")
    ap.add_argument("--per-node", type=float, default=None, help="solutions a node instead of deadline_cap")
    ap.add_argument("--time-limit-s", type=float, default=19.5, help="OR-Tools' wall-clock net (the CLI: ~19.5)")
    args = ap.parse_args(argv)
    from planner.routing.engines import deadline_cap

    model, first = _lane_model(args.instance)
    if model is None:
        print(f"{args.instance}: no line any depot can serve", file=sys.stderr)
        return 1
    limit = deadline_cap(model) if args.per_node is None else max(1, math.ceil(args.per_node * model.n_nodes))
    for p in (int(x) for x in args.perms.split(",")):
        print(json.dumps({"instance": Path(args.instance).stem, **trace(model, limit, p, first, args.time_limit_s)}),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
