"""The rules benchmark runs on a small instance and reports what it promises (not timed here)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.rules import make_plan, make_world, run

ROOT = Path(__file__).resolve().parents[2]


def test_small_instance_runs_and_is_deterministic(tmp_path: Path) -> None:
    params = json.loads((ROOT / "bench" / "rules_instance.json").read_text(encoding="utf-8"))
    params.update(zones=400, extent_m=20000, waypoints=120, growth_waypoints=[60, 120], repeats=1)
    path = tmp_path / "small.json"
    path.write_text(json.dumps(params), encoding="utf-8")
    out = run(str(path))
    assert out["zones"] == 400 and out["waypoints"] == 120
    assert [g["waypoints"] for g in out["growth"]] == [60, 120]
    assert {"evaluate_ms", "index_build_ms", "cold_evaluate_ms", "within_budget", "growth_exponent"} <= set(out)
    # same seed, same world and plan
    assert make_world(params).zones == make_world(params).zones
    assert make_plan(params, 120) == make_plan(params, 120)
    assert out["findings"] == run(str(path))["findings"]
