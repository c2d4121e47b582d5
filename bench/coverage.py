"""``python -m bench coverage INSTANCE.json``: plan a survey of a benchmark instance.

Reads the instance (outer polygon, holes, swath), plans with
``planner.survey.coverage.plan_coverage`` at the planner's default coverage target
(``DEFAULT_COVERAGE_TARGET``, what an operator gets; ``--coverage-target`` is
not a bench option on purpose), timed after reading, and returns the
contract's keys (instance, sweeps, path, path_length_m, seconds) plus ``wall_s``, ``cpu_s``,
``engine`` (what ordered the sweeps), ``iterations`` (the order searches' guided-local-search
solutions) and ``stopped_by`` (``--budget-s``, default 1 s, is the whole plan's deadline from
the start of planning, every phase included: ``planner.survey.schedule``; ``--clock cpu`` counts
CPU seconds), the ``shortfall`` (where the dark
area lies, when the target is not met), and figures:
coverage (flat-ended strips, as the verifier computes it), the unimaged area,
the lower bound free area / swath, path / LB, ``engine`` (what ordered the
sweeps), the cells with their own direction, the extra passes, the
Fields2Cover reference path and our ratio to it.

``--baseline`` adds what a careful ground-station survey flies on the same area
(``bench.coverage_baseline``: one direction, with and without a headland pass):
its path and coverage, beside ours. Fields2Cover itself is not run: PyPI has only
its C++ source (no wheel), so the README's reference figures are what we compare to.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from shapely.geometry import Polygon

from bench.clocks import budget_from_args
from planner.survey.coverage import DEFAULT_COVERAGE_TARGET, plan_coverage
from planner.survey.repair import shortfall

__all__ = ["DEFAULT_BUDGET_S", "run", "F2C_REFERENCE_M"]

# The plan's deadline (``--budget-s``): the goal for a survey plan is a second, every phase
# included (the best direction by the estimate is always built; ``planner.survey.schedule``).
DEFAULT_BUDGET_S = 1.0

# Fields2Cover 2.1.0 best paths from ../shared/bench/README.md section 5 (name → (path m, coverage))
F2C_REFERENCE_M: dict[str, tuple[float, float]] = {
    "01_rect_400x300": (3360.0, 1.0),
    "03_U_shape": (5960.0, 1.0),
    "04_rect_two_holes": (6847.9, 1.0),
    "06_large_2km2_3holes": (51558.7, 0.9898),
}


def run(instance_path: str, args: Any = None) -> dict[str, Any]:
    inst = json.loads(Path(instance_path).read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    c0 = time.process_time()
    budget = budget_from_args(args, DEFAULT_BUDGET_S, 1)  # the whole plan fits in this deadline
    free = Polygon(inst["polygon"], inst.get("holes") or [])
    if not free.is_valid:
        free = free.buffer(0)
    swath = float(inst["swath_width_m"])
    if float(inst.get("turn_radius_m", 0.0) or 0.0) != 0.0:
        print("bench coverage: turn_radius_m is ignored (point turns)", file=sys.stderr)
    res = plan_coverage(free, swath, coverage_target=DEFAULT_COVERAGE_TARGET, budget=budget)
    seconds = time.perf_counter() - t0
    cpu_seconds = time.process_time() - c0
    name = inst["name"]
    out: dict[str, Any] = {
        "instance": name,
        "sweeps": [[list(a), list(b)] for a, b in res.sweeps],
        "path": [list(p) for p in res.path],
        "path_length_m": round(res.path_length_m, 3),
        "seconds": round(seconds, 4),
        "cpu_seconds": round(cpu_seconds, 4),  # wall time on a shared machine includes waiting for a core
        "wall_s": round(seconds, 4),
        "cpu_s": round(cpu_seconds, 4),
        "budget_s": budget.seconds,
        "clock": getattr(args, "clock", "wall"),
        "iterations": res.solutions,
        "stopped_by": res.stopped_by,
        "engine": res.engine,
        "coverage": round(res.coverage_fraction, 5),
        "coverage_target": res.coverage_target,
        "unimaged_m2": round(res.unimaged_local.area, 1) if res.unimaged_local is not None else None,
        "target_met": res.target_met,
        "shortfall": shortfall(free, res.unimaged_local, swath, res.coverage_target) if res.unimaged_local is not None else None,
        "direction_cells": res.direction_cells,
        "extra_passes": res.extra_passes,
        "lower_bound_m": round(res.lower_bound_m, 1),
        "path_over_lb": round(res.ratio_to_lower_bound, 4),
        "angle_deg": round(res.angle_deg, 3),
        "n_sweeps": len(res.sweeps),
    }
    if getattr(args, "baseline", False):
        from bench.coverage_baseline import ground_station_survey

        out["baseline"] = {}
        for kind, headland in (("headland", True), ("grid", False)):
            b = ground_station_survey(free, swath, headland=headland)
            out["baseline"][kind] = {"path_length_m": round(b["path_length_m"], 1), "coverage": round(b["coverage"], 5)}
    ref = F2C_REFERENCE_M.get(name)
    if ref is not None:
        out["f2c_path_m"] = ref[0]
        out["f2c_coverage"] = ref[1]
        out["path_over_f2c"] = round(res.path_length_m / ref[0], 4)
    return out
