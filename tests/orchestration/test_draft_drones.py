"""The draft artifact and ``sortie show`` list the drones that could fly the request and why the others could not.

A real plan through the ``sortie`` CLI (in-process, the embedded authority on a real ledger) on a copy of the demo
world where, of city-fire's four drones, M30T-02 is offline (as the demo ships it) and M3TD-02 has a battery at the
reserve: the rows are the rules' own reasons, recorded with the version, and the port authority's drones (another
tenant) are not shown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from flows.orchestration.artifacts import draft_markdown
from testkit import demo_world_copy

NOW = "2026-11-29T07:00:00+02:00"


def test_artifact_and_show_name_the_drones_that_could_fly_it_and_why_not_the_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = demo_world_copy(tmp_path / "world")
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        if d["id"] == "M3TD-02":
            d["battery_pct"] = 20
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    for k, v in {"SORTIE_HOME": str(tmp_path / "home"), "SORTIE_WORLD": str(world), "SORTIE_NOW": NOW,
                 "COLUMNS": "200"}.items():
        monkeypatch.setenv(k, v)
    runner = CliRunner()
    planned = runner.invoke(app, ["plan", "巡一遍消防通道", "--region", "region-1001", "--as", "li.wei", "--json"])
    assert planned.exit_code == 0, planned.output
    draft = json.loads(planned.stdout)
    shown = json.loads(runner.invoke(app, ["show", draft["draft_id"], "--json", "--as", "li.wei"]).stdout)
    choice = shown["notes"]["drones"]
    flying = {s["drone"] for s in shown["sorties"]}
    assert flying and flying <= set(choice["eligible"]) and "M30T-02" not in choice["eligible"]
    why = {e["drone_id"]: [r["code"] for r in e["reasons"]] for e in choice["not_eligible"]}
    assert why["M30T-02"] == ["OFFLINE"] and "LOW_BATTERY" in why["M3TD-02"]
    assert not {"M4TD-01", "M4TD-02"} & (set(why) | set(choice["eligible"]))  # another tenant's drones

    text = draft_markdown(shown)
    table = text.split("## Drones", 1)[1].split("##", 1)[0]
    for drone_id in flying:
        assert f"| {drone_id} | yes, flies this plan |" in table
    assert "| M30T-02 | no | M30T-02 offline since" in table
    assert "| M3TD-02 | no | M3TD-02 battery 20 %, at or below the" in table
    assert "M4TD" not in table

    human = runner.invoke(app, ["show", draft["draft_id"], "--as", "li.wei"])
    assert human.exit_code == 0, human.output
    assert "could fly it: " in human.stdout and "(* flies this plan)" in human.stdout
    assert "  not M30T-02: M30T-02 offline since" in human.stdout
    assert "  not M3TD-02: M3TD-02 battery 20 %" in human.stdout
