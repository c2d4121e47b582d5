"""bench carp: literature CARP instances planned by the lane planner's room, valid by ../shared's checker, repeatable."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

from bench import carp as bench_carp
from bench.carp_file import read_carplib
from planner.patrol.arc_search import solve_arcs
from planner.routing.budget import Budget

CARP = next((p / "shared" / "bench" / "carp" for p in Path(__file__).resolve().parents
             if (p / "shared" / "bench" / "carp").is_dir()), Path("/nonexistent"))

pytestmark = pytest.mark.skipif(not (CARP / "verify_carp.py").exists(), reason="../shared/bench/carp is not beside the repo")


def _verify(instance: Path, out: dict) -> dict:
    spec = importlib.util.spec_from_file_location("shared_verify_carp", CARP / "verify_carp.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    bks = json.loads((CARP / "bks.json").read_text())
    return module.check(module.Instance(str(instance)), json.loads(json.dumps(out)), bks)


def _plan(name: str, budget: Budget, fleet_spare: int | None = None) -> tuple[Path, dict, int]:
    path = next(CARP.glob(f"*/{name}.dat"))
    inst = read_carplib(path)
    sp = bench_carp.shortest_paths(inst)
    plan = solve_arcs(bench_carp.carp_problem(inst, sp, fleet_spare), budget)
    routes = [[(inst.required[t].v, inst.required[t].u) if r else (inst.required[t].u, inst.required[t].v) for t, r in seq]
              for _, seq in plan.sorties]
    out = {"instance": name, "routes": [{"serve_sequence": [list(p) for p in seq]} for seq in routes]}
    return path, out, plan.cost


@pytest.mark.parametrize("name, optimum", [("gdb1", 316), ("gdb4", 287), ("gdb19", 55)])
def test_load_limited_sorties_reach_the_known_optimum_with_a_small_work_cap(name: str, optimum: int) -> None:
    path, out, cost = _plan(name, Budget.work(0.1))
    report = _verify(path, out)
    assert report["ok"], report["errors"]
    assert report["cost"] == cost == optimum
    assert report["max_load"] <= report["capacity"]


@pytest.mark.parametrize("name, optimum", [("gdb1", 316), ("gdb4", 287), ("gdb19", 55)])
def test_a_search_within_hgs_carps_fleet_reaches_the_known_optimum(name: str, optimum: int) -> None:
    """VEHICULOS + 1 routes at most (``bench carp --fleet-spare 1``), as HGS-CARP searches."""
    path, out, cost = _plan(name, Budget.work(0.1), fleet_spare=bench_carp.HGS_FLEET_SPARE)
    report = _verify(path, out)
    assert report["ok"], report["errors"]
    assert report["cost"] == cost == optimum
    assert len(out["routes"]) <= read_carplib(path).vehicles + bench_carp.HGS_FLEET_SPARE


def test_the_same_seed_and_work_give_the_same_routes() -> None:
    a = _plan("gdb8", Budget.work(0.1, seed=3))[1]
    assert _plan("gdb8", Budget.work(0.1, seed=3))[1] == a


def test_the_command_prints_a_valid_solution_with_its_cost_and_seconds() -> None:
    path = CARP / "val" / "1A.dat"
    out = json.loads(json.dumps(bench_carp.run(str(path), argparse.Namespace(budget_s=2.0))))
    report = _verify(path, out)
    assert report["ok"], report["errors"]
    assert out["cost"] == report["cost"] and out["instance"] == "1A"
    assert out["best_known"] == 173 and out["gap_pct"] == pytest.approx(100 * (out["cost"] - 173) / 173, abs=1e-3)
    assert out["seconds"] < 2.0 + 2.0  # a deadline from the start of planning (slack: a loaded machine)
    capped = [bench_carp.run(str(path), argparse.Namespace(budget_s=60.0, seed=1, iterations=40)) for _ in range(2)]
    assert capped[0]["stopped_by"] == capped[1]["stopped_by"] == "iterations"
    assert capped[0]["routes"] == capped[1]["routes"]
