"""``python -m bench.ils_stall [demo] [INSTANCE.json …] [--perms 0,1,2,3] [--stall-per-node 0,1,2,3]``: what the stall stop costs.

Issue 27 (branch plancpu3): the evidence behind ``planner.patrol.arc_routing._STALL_PER_NODE``. For each
lane model — ``demo`` (the model ``sortie plan`` of the demo request searches, captured from a real plan
in this process) or a lane instance (``bench.ils_trace``'s reading of it) — one OR-Tools ILS lane per
renumbering in ``--perms`` runs to ``deadline_cap`` solutions, once per stall setting (solutions a node
without a cheaper one before local search ends, at least ``--stall-min``; 0: the full search). Prints one JSON line per run: the
objective, the solutions counted and this process's CPU seconds for the search alone. A stall setting is
safe on a model when its objective equals the full search's on every renumbering.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import sys
import tempfile
import time

__all__ = ["main"]


def _demo_model():
    """The demo request's lane model, as ``sortie plan`` builds it (a real plan, its search run once)."""
    import os

    import planner.patrol.arc_routing as ar

    got = []
    real = ar.search_ils

    def keep(model, *args, **kwargs):
        got.append(model)
        return real(model, *args, **kwargs)

    ar.search_ils = keep
    argv = sys.argv
    home = os.environ.get("SORTIE_HOME")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["SORTIE_HOME"] = tmp
            sys.argv = ["sortie", "plan", "这块地今天巡一遍消防通道", "--region", "region-1001",
                        "--now", "2026-11-29T07:00:00+02:00", "--as", "li.wei", "--json"]
            from flows.cli import main

            try:
                with contextlib.redirect_stdout(io.StringIO()):  # the plan's JSON is not this bench's output
                    main()
            except SystemExit as e:
                if e.code:
                    raise
    finally:
        ar.search_ils, sys.argv = real, argv
        if home is None:
            os.environ.pop("SORTIE_HOME", None)
        else:
            os.environ["SORTIE_HOME"] = home
    return got[0], ar._FIRST


def run(model, first: str, permutation: int, stall: int, time_limit_s: float) -> dict:
    """One ILS lane at ``deadline_cap`` solutions with ``stall``: objective, solutions, CPU seconds."""
    from planner.routing.engines import deadline_cap
    from planner.routing.model import Search, solve_model

    limit = deadline_cap(model)
    t0 = time.process_time()
    out = solve_model(model, Search("ils", limit, time_limit_s, permutation, first=first, stall=stall))
    return {"n_nodes": model.n_nodes, "perm": permutation, "limit": limit, "stall": stall,
            "objective": out.objective, "solutions": out.solutions, "cpu_s": round(time.process_time() - t0, 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.ils_stall", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("instances", nargs="+", help="'demo' or lane instance files")
    ap.add_argument("--perms", default="0,1,2,3")
    ap.add_argument("--stall-per-node", default="0,1,2,3", help="0: the full search")
    ap.add_argument("--stall-min", type=int, default=0, help="at least this many solutions (a non-zero setting)")
    ap.add_argument("--time-limit-s", type=float, default=19.5, help="OR-Tools' wall-clock net")
    args = ap.parse_args(argv)
    from bench.ils_trace import _lane_model

    for name in args.instances:
        model, first = _demo_model() if name == "demo" else _lane_model(name)
        if model is None:
            print(f"{name}: no line any depot can serve", file=sys.stderr)
            continue
        for p in (int(x) for x in args.perms.split(",")):
            for per_node in (float(x) for x in args.stall_per_node.split(",")):
                stall = max(int(math.ceil(per_node * model.n_nodes)), args.stall_min) if per_node > 0 else 0
                print(json.dumps({"instance": name, "per_node": per_node, **run(model, first, p, stall, args.time_limit_s)}),
                      flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
