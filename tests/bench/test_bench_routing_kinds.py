"""bench routes / lanes: the outputs pass the independent verifier of ../shared/bench and repeat exactly."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

from bench import lanes as bench_lanes
from bench import routes as bench_routes

SHARED_BENCH = next((p / "shared" / "bench" for p in Path(__file__).resolve().parents if (p / "shared" / "bench").is_dir()),
                    Path("/nonexistent"))  # ../shared beside the repo (or beside the worktrees)

pytestmark = pytest.mark.skipif(not (SHARED_BENCH / "verify.py").exists(), reason="../shared/bench is not beside the repo")


def _verify():
    spec = importlib.util.spec_from_file_location("shared_bench_verify", SHARED_BENCH / "verify.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module.verify


def _run(module, kind: str, name: str, budget_s: float, **flags) -> tuple[dict, dict]:
    path = SHARED_BENCH / kind / name
    out = module.run(str(path), argparse.Namespace(budget_s=budget_s, **flags))
    out = json.loads(json.dumps(out))  # what `python -m bench` prints
    report = _verify()(kind, json.loads(path.read_text()), out)
    return out, report


REPORTED = ("wall_s", "cpu_s", "engine", "iterations", "stopped_by", "budget_s", "seconds")


def test_routes_md_n020_valid_and_reported() -> None:
    out, report = _run(bench_routes, "routes", "md_n020.json", 2.0)
    assert report["ok"], report["errors"]
    assert report["total_distance_m"] == out["total_distance_m"]
    assert out["total_distance_m"] <= 1.01 * bench_routes.BEST_KNOWN_M["md_n020"]
    assert all(k in out for k in REPORTED) and out["engine"] == "ortools-ils" and out["iterations"] > 0
    assert out["wall_s"] < 2.0 + 1.0  # a deadline, start-up included (slack: a loaded machine, the answer's JSON)


def test_routes_repeat_exactly_with_a_seed_and_a_cap() -> None:
    runs = [_run(bench_routes, "routes", "md_n020.json", 60.0, seed=2, iterations=200)[0] for _ in range(2)]
    assert all(r["stopped_by"] == "iterations" for r in runs)
    assert runs[0]["routes"] == runs[1]["routes"] and runs[0]["seed"] == 2 and runs[0]["iterations_cap"] == 200


def test_lanes_grid_valid_and_below_baseline() -> None:
    out, report = _run(bench_lanes, "lanes", "grid8_r35.json", 2.0)
    assert report["ok"], report["errors"]
    assert report["required_covered_ratio"] >= 0.99
    assert report["total_length_m"] < bench_lanes.BASELINE_M["grid8_r35"]
    assert out["engine"] in ("ortools-ils", "pyvrp-start+ortools", "pyvrp")
    assert all(k in out for k in REPORTED)
    capped = [_run(bench_lanes, "lanes", "grid8_r35.json", 60.0, seed=1, iterations=300)[0] for _ in range(2)]
    assert capped[0]["stopped_by"] == capped[1]["stopped_by"] == "iterations"
    assert capped[0]["sorties"] == capped[1]["sorties"]
