"""Where a lane plan's length goes: ``python -m bench.lanes_gap INSTANCE OUTPUT [--free-s S]``.

Splits the total of a ``python -m bench lanes`` output into the parts the plan can
and cannot change, so a gap to the baseline or to ``bench.lanes_bound`` can be read:

* ``service_m``: the required lines flown (fixed: every line is flown once, in full);
* ``legs_m``: each sortie's flight from its dock to the first line it flies and from
  the last line back (what the sortie count and the docks' places cost);
* ``inner_deadhead_m``: the flight between lines inside sorties (odd ends paired,
  components joined);
* per sortie its length and its slack under ``max_sortie_m`` (how tight the limit binds).

``--free-s S`` also plans the same lines with no sortie limit (one depot at a time
kept, S seconds of the planner's search): the difference to the plan is what the
limit costs. Bench only; reads the output's ``lines`` (ids in flight order) and paths.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["decompose", "main"]

_AT_M = 1e-3  # a path point within 1 mm of a line end is that end


def _length(points: np.ndarray) -> float:
    return float(np.hypot(*np.diff(points, axis=0).T).sum()) if len(points) > 1 else 0.0


def _first_at(path: np.ndarray, ends: np.ndarray, reverse: bool) -> int:
    """Index of the first (or last) path point at one of ``ends``."""
    order = range(len(path) - 1, -1, -1) if reverse else range(len(path))
    for i in order:
        if np.min(np.hypot(*(ends - path[i]).T)) <= _AT_M:
            return i
    raise ValueError("a sortie's path does not reach the lines it lists")


def decompose(inst: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """The parts of the output's total (module docstring), per sortie and summed."""
    req = {f.get("id", k): np.asarray(f["geometry"]["coordinates"], float)[:, :2]
           for k, f in enumerate(inst["features"]) if (f.get("properties") or {}).get("required")}
    length = {k: _length(a) for k, a in req.items()}
    cap = float(inst["max_sortie_m"])
    rows = []
    for s in out["sorties"]:
        path = np.asarray(s["path"], float)
        total = _length(path)
        service = sum(length[k] for k in s["lines"])
        first = req[s["lines"][0]]
        last = req[s["lines"][-1]]
        i = _first_at(path, np.asarray([first[0], first[-1]]), False)
        j = _first_at(path, np.asarray([last[0], last[-1]]), True)
        legs = _length(path[: i + 1]) + _length(path[j:])
        rows.append({"depot": s["depot"], "length_m": round(total, 1), "slack_m": round(cap - total, 1),
                     "service_m": round(service, 1), "legs_m": round(legs, 1),
                     "inner_deadhead_m": round(total - service - legs, 1), "lines": len(s["lines"])})
    tot = sum(r["length_m"] for r in rows)
    return {
        "instance": inst.get("name"),
        "total_m": round(tot, 1),
        "service_m": round(sum(r["service_m"] for r in rows), 1),
        "legs_m": round(sum(r["legs_m"] for r in rows), 1),
        "inner_deadhead_m": round(sum(r["inner_deadhead_m"] for r in rows), 1),
        "sorties": len(rows),
        "sorties_the_total_needs": math.ceil(tot / cap - 1e-9),
        "slack_m": round(sum(r["slack_m"] for r in rows), 1),
        "max_sortie_m": cap,
        "per_sortie": rows,
    }


def _free_total(inst: dict[str, Any], seconds: float) -> dict[str, float]:
    """The planner's total with no sortie limit, each depot alone and all of them (``seconds`` of search each)."""
    from bench.lane_pool import ForkPool
    from bench.lanes import SEARCH_LANES, _nofly
    from planner.geo.transit import TransitGraph
    from planner.patrol.arc_routing import ArcDepot, route_lanes
    from planner.routing.budget import Budget

    lines = [np.asarray(f["geometry"]["coordinates"], float)[:, :2]
             for f in inst["features"] if (f.get("properties") or {}).get("required")]
    polys = _nofly(inst)
    transit = TransitGraph(polys, 0.0) if polys else None
    free = 1e9
    out = {}
    for d in inst["depots"]:
        budget = Budget.deadline(seconds, time.monotonic, runner=ForkPool(SEARCH_LANES))
        res = route_lanes(lines, [ArcDepot(float(d["x"]), float(d["y"]), free)], transit, budget=budget,
                          lanes=SEARCH_LANES)
        out[f"free_from_{d['id']}_m"] = round(res.total_length_m, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    """The decomposition of a lanes output, as one JSON object."""
    ap = argparse.ArgumentParser(prog="python -m bench.lanes_gap", description=__doc__)
    ap.add_argument("instance")
    ap.add_argument("output")
    ap.add_argument("--free-s", type=float, default=None, help="also plan with no sortie limit, S seconds each")
    a = ap.parse_args(argv)
    inst = json.loads(Path(a.instance).read_text(encoding="utf-8"))
    got = decompose(inst, json.loads(Path(a.output).read_text(encoding="utf-8")))
    if a.free_s:
        got.update(_free_total(inst, a.free_s))
    print(json.dumps(got))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
