"""``sortie intent`` as a user runs it: twice through the installed console script, the
error cases through the same typer app in process (the script costs seconds of imports)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from flows.cli import app
from flows.cli.intent_cmds import intent_result, load_selection
from planner.errors import InvalidArgument
from testkit import free_port

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "data" / "demo-helsinki"
SORTIE = Path(sys.executable).with_name("sortie")
NOW = "2026-12-02T07:30:00+02:00"  # Wednesday
SQUARE = {"type": "Polygon", "coordinates": [[[24.93, 60.16], [24.95, 60.16], [24.95, 60.17], [24.93, 60.17], [24.93, 60.16]]]}


def _sortie(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    if not SORTIE.exists():
        pytest.fail(f"console script {SORTIE} is missing: run `uv sync` so the project is installed")
    drop = ("SORTIE_NOW", "SORTIE_WORLD", "SORTIE_LLM_BASE_URL", "SORTIE_LLM_MODEL", "SORTIE_LLM_MODE")
    full_env = {k: v for k, v in os.environ.items() if k not in drop}
    full_env.update({"COLUMNS": "200", **env})
    return subprocess.run([str(SORTIE), *args], capture_output=True, text=True, timeout=120, env=full_env,
                          cwd=ROOT, check=False)


def _write(path: Path, obj: Any) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def test_json_with_region_resolves_tomorrow_morning_in_the_world_timezone() -> None:
    out = _sortie("intent", "明天上午九点用热成像巡查消防通道，不要用变焦", "--region", "region-1001", "--now", NOW, "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["extractor"] == "offline-grammar"
    assert r["timezone"] == "Europe/Helsinki"
    assert r["intent"]["mission_type"] == "FIRE_LANE_PATROL"
    assert r["intent"]["area"] == {"kind": "region", "region_id": "region-1001"}
    assert r["intent"]["sensors"] == ["THERMAL_CAMERA"] and r["intent"]["excluded_sensors"] == ["ZOOM_CAMERA"]
    assert (r["date"], r["start_time"], r["start_at"]) == ("2026-12-03", "09:00", "2026-12-03T09:00:00+02:00")
    assert r["needs_clarification"] is False and r["selection"] is None


def test_area_file_and_another_worlds_timezone(tmp_path: Path) -> None:
    world = tmp_path / "world"
    shutil.copytree(DEMO, world)
    meta = json.loads((world / "world.json").read_text(encoding="utf-8"))
    meta["timezone"] = "Asia/Shanghai"
    _write(world / "world.json", meta)
    area = _write(tmp_path / "sel.geojson", {"type": "Feature", "properties": {}, "geometry": SQUARE})
    out = _sortie("intent", "survey this area tonight", "--area", str(area), "--world", str(world),
                  "--now", "2026-12-02T07:30:00+02:00")  # 13:30 in Shanghai
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(None, 1) for line in out.stdout.splitlines() if line and not line.startswith(" "))
    assert lines["extractor"] == "offline-grammar"
    assert lines["mission"] == "AREA_SURVEY"
    assert lines["area"].startswith("map selection (4 vertices")
    assert lines["start"].startswith("2026-12-02T19:00:00+08:00") and "Asia/Shanghai" in lines["start"]


def _in_process(*args: str, **env: str) -> Any:
    clean = {k: None for k in ("SORTIE_NOW", "SORTIE_WORLD", "SORTIE_LLM_BASE_URL", "SORTIE_LLM_MODEL", "SORTIE_LLM_MODE")}
    return CliRunner().invoke(app, list(args), env={**clean, "COLUMNS": "200", **env})


def test_a_linestring_area_is_invalid_argument(tmp_path: Path) -> None:
    line = _write(tmp_path / "line.geojson", {"type": "LineString", "coordinates": [[24.9, 60.1], [24.95, 60.17]]})
    out = _in_process("intent", "survey", "--area", str(line), "--now", NOW)
    assert out.exit_code == 2
    assert out.stderr.startswith("INVALID_ARGUMENT: --area must be a GeoJSON Polygon")
    assert "Traceback" not in out.stderr


def test_unknown_region_is_not_found_as_json() -> None:
    out = _in_process("intent", "巡查消防通道", "--region", "region-9999", "--now", NOW, "--json")
    assert out.exit_code == 2
    assert json.loads(out.stdout)["error"]["code"] == "NOT_FOUND"


def test_no_mission_asks_a_question_and_exits_zero() -> None:
    out = _in_process("intent", "明天上午这片区域", "--now", NOW)
    assert out.exit_code == 0, out.stderr
    assert "needs clarification:" in out.stdout and "巡查消防通道" in out.stdout


def test_llm_configured_but_down_is_llm_unavailable() -> None:
    port = free_port()
    out = _in_process("intent", "巡查消防通道", "--now", NOW, "--json",
                      SORTIE_LLM_BASE_URL=f"http://127.0.0.1:{port}/v1", SORTIE_LLM_MODEL="m", SORTIE_LLM_TIMEOUT_S="1")
    assert out.exit_code == 2, out.stdout + out.stderr
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "LLM_UNAVAILABLE" and f"127.0.0.1:{port}" in error["message"]


# ---------------------------------------------------------------- in process: the selection checks


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"type": "Point", "coordinates": [24.9, 60.1]}, "must be a GeoJSON Polygon"),
        ({"type": "FeatureCollection", "features": []}, "exactly one Polygon feature"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [2, 2], [2, 0], [0, 1], [0, 0]]]}, "invalid: Self-intersection"),
        ({"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [2, 2], [0, 0]]]}, "no area"),
        ({"type": "Polygon", "coordinates": [[[500, 0], [501, 0], [501, 1], [500, 0]]]}, "WGS84"),
        ({"type": "Polygon", "coordinates": "nope"}, "malformed"),
        ([1, 2, 3], "must be a GeoJSON Polygon"),
    ],
)
def test_bad_selections(tmp_path: Path, doc: Any, message: str) -> None:
    with pytest.raises(InvalidArgument, match=message):
        load_selection(_write(tmp_path / "a.geojson", doc))


def test_selection_not_json_or_missing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.geojson"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InvalidArgument, match="not JSON"):
        load_selection(bad)
    with pytest.raises(InvalidArgument, match="does not exist"):
        load_selection(tmp_path / "missing.geojson")


def test_good_selection_and_conflicting_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SORTIE_LLM_BASE_URL", raising=False)
    area = _write(tmp_path / "sel.geojson", {"type": "FeatureCollection", "features": [{"type": "Feature", "properties": {}, "geometry": SQUARE}]})
    info = load_selection(area)
    assert info["vertices"] == 4 and info["holes"] == 0
    assert info["bounds_wgs84"] == [24.93, 60.16, 24.95, 60.17]
    with pytest.raises(InvalidArgument, match="not both"):
        intent_result("survey", region="region-1001", area=area, now=NOW)
    with pytest.raises(InvalidArgument, match="needs an offset"):
        intent_result("survey", now="2026-12-02T07:30:00")
    with pytest.raises(InvalidArgument, match="--extractor"):
        intent_result("survey", now=NOW, extractor="gpt")
