"""``python -m bench lanes INSTANCE.geojson [--budget-s S]``: fire-lane patrol from docks.

Reads the instance (section 3 of ``../shared/bench/README.md``), plans with
``planner.patrol.arc_routing.route_lanes`` (deadheads around the ``nofly`` polygons
through ``planner.geo.transit.TransitGraph``) and returns the sorties' paths, the
total, the baseline figure and our ratio to it, ``engine`` (what produced the
sorties: ``"ortools-ils"``, ``"pyvrp-start+ortools"``, ``"pyvrp"``, or ``"rpp-tour"`` when
no search beat the baseline's own tour split exactly, see ``planner/patrol/arc_routing.py``), ``iterations``, ``stopped_by``, ``wall_s`` and
``cpu_s``. ``--budget-s`` (default ``DEFAULT_BUDGET_S``, 10 s) is a deadline from the start of planning (``bench/clocks.py``: ``--clock``, ``--seed``,
``--iterations``). ``--baseline`` plans with the replaced hand-written search instead
(``bench/lanes_baseline.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from shapely.geometry import Polygon

from bench.clocks import budget_from_args, cpu_s, max_rss_mb
from planner.patrol.arc_routing import ArcDepot, route_lanes
from planner.geo.transit import TransitGraph

__all__ = ["BASELINE_M", "run"]

# Two independent search lanes (PyVRP seeds / ILS node renumberings 0 and 1), one per core of the
# 2-core machine (the budget's runner forks one process each, bench/lane_pool.py), as in
# bench/routes.py: the sorties depend on the lanes, not on the processes.
SEARCH_LANES = 2
# The bench's deadline unless --budget-s says otherwise: a district's lanes (900+ lines) need more
# than the planner's nominal 4 s of work; a small network ends sooner, on its work cap.
DEFAULT_BUDGET_S = 10.0
# Baseline totals from ../shared/bench/README.md section 5 (RPP tour + optimal split).
BASELINE_M: dict[str, float] = {"helsinki_service_nofly": 20040.7, "grid8_r35": 38312.9}


def _reference_baseline(name: str) -> float | None:
    """The baseline of an instance under ``bench/instances/`` (``reference.json``; ``bench/rpp_baseline.py``)."""
    table = Path(__file__).parent / "instances" / "reference.json"
    if not table.is_file():
        return None
    entry = json.loads(table.read_text(encoding="utf-8"))["lanes"].get(name)
    return float(entry["baseline_m"]) if entry else None


def _nofly(inst: dict[str, Any]) -> list[Polygon]:
    polys = []
    for p in inst.get("nofly") or []:
        if isinstance(p, dict) and p.get("type") == "Polygon":
            p = p["coordinates"]
        if p and isinstance(p[0][0], (list, tuple)):
            polys.append(Polygon(p[0], p[1:]))
        else:
            polys.append(Polygon(p))
    return polys


def run(instance_path: str, args: argparse.Namespace) -> dict[str, Any]:
    """Plan the instance and return the output object of the bench contract."""
    inst = json.loads(Path(instance_path).read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    c0 = cpu_s()
    budget = budget_from_args(args, DEFAULT_BUDGET_S, SEARCH_LANES)  # planning starts now: deadheads included
    req = [
        f
        for f in inst["features"]
        if (f.get("geometry") or {}).get("type") == "LineString" and (f.get("properties") or {}).get("required")
    ]
    lines = [[(float(x), float(y)) for x, y, *_ in f["geometry"]["coordinates"]] for f in req]
    cap = float(inst["max_sortie_m"])
    depots = [ArcDepot(float(d["x"]), float(d["y"]), cap) for d in inst["depots"]]
    polys = _nofly(inst)
    transit = TransitGraph(polys, 0.0) if polys else None
    if getattr(args, "baseline", False):  # the replaced hand-written search, for comparison only
        from bench.lanes_baseline import route_lanes as baseline_lanes

        res = baseline_lanes(lines, depots, transit)
        engine = "hand-written-baseline"
    else:
        res = route_lanes(lines, depots, transit, budget=budget, lanes=SEARCH_LANES)
        engine = res.engine
    seconds = time.perf_counter() - t0
    cpu_seconds = cpu_s() - c0  # this process and its lane workers: wall time on a shared machine includes waiting
    sorties = [
        {
            "depot": inst["depots"][s.depot]["id"],
            "path": [[round(x, 3), round(y, 3)] for x, y in s.path],
            "length_m": round(s.length_m, 2),
            "lines": [req[k].get("id", k) for k, _ in s.lines],
        }
        for s in res.sorties
    ]
    total = sum(s["length_m"] for s in sorties)
    base = BASELINE_M.get(inst.get("name", "")) or _reference_baseline(inst.get("name", ""))
    print(
        f"lanes {inst.get('name')}: total {total:.1f} m in {len(sorties)} sorties, "
        f"{len(res.unserved)} lines unserved, engine {engine}, {getattr(res, 'work', 0)} iterations "
        f"({getattr(res, 'stopped_by', '')}), {seconds:.2f} s wall, {cpu_seconds:.2f} s CPU",
        file=sys.stderr,
    )
    return {
        "instance": inst.get("name"),
        "sorties": sorties,
        "total_length_m": round(total, 2),
        "unserved": [{"line": req[k].get("id", k), "reason": r} for k, r in res.unserved.items()],
        "baseline_m": base,
        "ratio_to_baseline": round(total / base, 5) if base else None,
        "budget_s": budget.seconds,
        "clock": getattr(args, "clock", "wall"),
        "seed": budget.seed,
        "iterations_cap": budget.iterations,
        "engine": engine,
        "iterations": getattr(res, "work", 0),
        "stopped_by": getattr(res, "stopped_by", ""),
        "search_lanes": SEARCH_LANES,
        "seconds": round(seconds, 3),
        "wall_s": round(seconds, 3),
        "cpu_s": round(cpu_seconds, 3),
        "max_rss_mb": max_rss_mb(),
    }
