"""``sortie rules validate`` and ``sortie rules list`` through the real typer app."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from flows.cli import app

runner = CliRunner()

BAD = """\
version: 1
rules:
  - id: ceiling
    kind: altitude_ceiling
    severity: block
    params: {ceiling_m: 120, ceiling_ft: 400}
  - id: wind
    kind: weather
    severity: warn
    params: {wind_margin: 2}
"""


def test_validate_default_file_ok() -> None:
    r = runner.invoke(app, ["rules", "validate"])
    assert r.exit_code == 0, r.output
    assert "no problems" in r.output


def test_validate_reports_every_problem_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(BAD, encoding="utf-8")
    r = runner.invoke(app, ["rules", "validate", str(path), "--json"])
    assert r.exit_code == 2
    err = json.loads(r.stdout)["error"]
    assert err["code"] == "INVALID_ARGUMENT"
    assert [(d["file"], d["line"], d["rule_id"], d["field"]) for d in err["details"]] == [
        (str(path), 6, "ceiling", "params"),
        (str(path), 10, "wind", "params.wind_margin"),
    ]
    r = runner.invoke(app, ["rules", "validate", str(path)])
    assert r.exit_code == 2
    assert "INVALID_ARGUMENT" in r.output and "rule wind" in r.output and "params.wind_margin" in r.output


def test_validate_missing_file_exits_2(tmp_path: Path) -> None:
    r = runner.invoke(app, ["rules", "validate", str(tmp_path / "none.yaml"), "--json"])
    assert r.exit_code == 2 and "does not exist" in r.stdout


def test_list_json_and_text() -> None:
    r = runner.invoke(app, ["rules", "list", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert [x["id"] for x in data["rules"]][:3] == ["airspace", "ceiling-120m", "battery-reserve"]
    assert len(data["sha256"]) == 64
    r = runner.invoke(app, ["rules", "list"])
    assert r.exit_code == 0 and "geozone_clearance" in r.output and "dispatch-fresh-telemetry" in r.output
