"""``sortie demo --recall-at 3`` as shipped: the whole path, and a recall end to end (slow: the full demo)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"


def test_demo_recall_at_shows_a_recall_end_to_end(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SORTIE_", "PREFECT_"))}
    env["SORTIE_HOME"] = str(tmp_path)
    p = subprocess.run([str(SORTIE), "demo", "--recall-at", "3", "--json"], env=env, cwd=ROOT, capture_output=True,
                       text=True, timeout=280)
    assert p.returncode == 0, p.stderr[-3000:]
    out = json.loads(p.stdout)
    assert out["outcome"] == "RECALLED", out["outcome"]
    steps = {s["step"]: s for s in out["steps"]}
    recall = steps["recall"]["result"]
    assert recall["state"] == "RECALLING" and recall["vehicles"][0]["outcome"] in ("CONFIRMED", "SETTLED")
    flight = steps["monitor"]["result"]["flights"][0]
    assert flight["status"] == "RECALLED" and flight["recall"]["mode"] == "RTL"
    assert 3 <= len(flight["reached"]) < flight["nav_total"]
    transitions = [(e["from_state"], e["to_state"]) for e in steps["log"]["events"]]
    assert transitions[-2:] == [("IN_FLIGHT", "RECALLING"), ("RECALLING", "RECALLED")]
    report = Path(steps["report"]["files"]["report"]).read_text(encoding="utf-8")
    assert "- **Recalled:**" in report and "**not flown:" in report and "## Stopped by an operator" in report
