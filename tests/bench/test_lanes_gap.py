"""bench.lanes_gap: a lane plan's total split into lines flown, dock legs and the flight between lines."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from bench.lanes import run
from bench.lanes_gap import decompose


def _instance(tmp_path: Path) -> tuple[dict, Path]:
    feats = []
    for k, (a, b) in enumerate((((0, 0), (300, 0)), ((300, 0), (300, 300)), ((1000, 0), (1000, 400)), ((0, 800), (400, 800)))):
        feats.append({"type": "Feature", "id": f"e{k}", "properties": {"required": True},
                      "geometry": {"type": "LineString", "coordinates": [list(a), list(b)]}})
    inst = {"type": "FeatureCollection", "name": "gap_case", "max_sortie_m": 2500.0, "nofly": [],
            "depots": [{"id": "D1", "x": 500.0, "y": 400.0}], "features": feats}
    path = tmp_path / "gap_case.json"
    path.write_text(json.dumps(inst), encoding="utf-8")
    return inst, path


def test_the_parts_add_up_to_the_plan(tmp_path: Path) -> None:
    inst, path = _instance(tmp_path)
    out = run(str(path), argparse.Namespace(budget_s=1.0, clock="wall", seed=0, iterations=None))
    got = decompose(inst, out)
    assert got["service_m"] == pytest.approx(300 + 300 + 400 + 400, abs=0.2)
    assert got["service_m"] + got["legs_m"] + got["inner_deadhead_m"] == pytest.approx(out["total_length_m"], abs=0.5)
    assert got["sorties"] == len(out["sorties"]) >= got["sorties_the_total_needs"] >= 2  # 2 500 m cannot fly it all
    for row in got["per_sortie"]:
        assert row["slack_m"] >= -0.5 and row["legs_m"] > 0.0  # the dock is on no line: every sortie flies out
