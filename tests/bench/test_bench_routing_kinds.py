"""bench routes / lanes: the outputs pass the independent verifier of ../shared/bench and repeat exactly."""

from __future__ import annotations

import argparse
import importlib.util
import json
from pathlib import Path

import pytest

from bench import lanes as bench_lanes
from bench import routes as bench_routes

SHARED_BENCH = Path(__file__).resolve().parents[3] / "shared" / "bench"

pytestmark = pytest.mark.skipif(not (SHARED_BENCH / "verify.py").exists(), reason="../shared/bench is not beside the repo")


def _verify():
    spec = importlib.util.spec_from_file_location("shared_bench_verify", SHARED_BENCH / "verify.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module.verify


def _run(module, kind: str, name: str, budget_s: float) -> tuple[dict, dict]:
    path = SHARED_BENCH / kind / name
    out = module.run(str(path), argparse.Namespace(budget_s=budget_s))
    out = json.loads(json.dumps(out))  # what `python -m bench` prints
    report = _verify()(kind, json.loads(path.read_text()), out)
    return out, report


def test_routes_md_n020_valid_and_repeatable() -> None:
    out, report = _run(bench_routes, "routes", "md_n020.json", 1.0)
    assert report["ok"], report["errors"]
    assert report["total_distance_m"] == out["total_distance_m"]
    assert out["total_distance_m"] <= 1.01 * bench_routes.BEST_KNOWN_M["md_n020"]
    assert out["engine"] == "ortools-ils"
    again, _ = _run(bench_routes, "routes", "md_n020.json", 1.0)
    timings = ("seconds", "cpu_seconds")
    assert {k: v for k, v in again.items() if k not in timings} == {k: v for k, v in out.items() if k not in timings}


def test_lanes_grid_valid_and_below_baseline() -> None:
    out, report = _run(bench_lanes, "lanes", "grid8_r35.json", 2.0)
    assert report["ok"], report["errors"]
    assert report["required_covered_ratio"] >= 0.99
    assert report["total_length_m"] < bench_lanes.BASELINE_M["grid8_r35"]
    assert out["engine"] in ("ortools-ils", "pyvrp-start+ortools")
    again, _ = _run(bench_lanes, "lanes", "grid8_r35.json", 2.0)
    assert again["sorties"] == out["sorties"] and again["engine"] == out["engine"]
