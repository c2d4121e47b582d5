"""``sortie world show|validate`` through the installed console script, as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo-helsinki"
SORTIE = Path(sys.executable).with_name("sortie")


def _sortie(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    if not SORTIE.exists():
        pytest.fail(f"console script {SORTIE} is missing: run `uv sync` so the project is installed")
    full_env = {k: v for k, v in os.environ.items() if k not in ("SORTIE_NOW", "SORTIE_WORLD")}
    full_env.update({"COLUMNS": "200", **env})
    return subprocess.run([str(SORTIE), *args], capture_output=True, text=True, timeout=120, env=full_env,
                          cwd=ROOT, check=False)


def test_world_show_json_counts_zones_and_telemetry_age() -> None:
    out = _sortie("world", "show", "--json", "--now", "2026-11-29T07:00:00+02:00")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    assert r["counts"] == {"drones": 6, "docks": 3, "zones": 3, "lanes": 182, "regions": 5, "pois": 37,
                           "users": 8, "weather_hours": 216}
    assert r["root"] == str(DEMO) and len(r["snapshot_hash"]) == 64
    assert {z["id"]: z["applies_now"] for z in r["zones"]} == {"HELX001": True, "HELX002": True, "HELX003": False}
    ages = {d["id"]: d["telemetry_age_s"] for d in r["drones"]}
    assert ages["M30T-01"] == 120.0 and ages["M3TD-02"] == 3 * 3600 + 48 * 60
    assert {d["id"]: d["status"] for d in r["drones"]}["M30T-02"] == "OFFLINE"


def test_world_show_takes_now_and_world_from_the_environment(tmp_path: Path) -> None:
    world = tmp_path / "w"
    shutil.copytree(DEMO, world)
    # Friday 2026-12-04 16:00 Helsinki = 14:00 UTC: the event zone HELX003 applies and a forecast hour exists.
    out = _sortie("world", "show", SORTIE_NOW="2026-12-04T16:00:00+02:00", SORTIE_WORLD=str(world))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert str(world) in text and "2026-12-04T16:00:00+02:00" in text
    helx003 = next(line for line in text.splitlines() if "HELX003" in line)
    assert "yes" in helx003
    assert "Weather now: wind 9.2 m/s, gusts 14.7 m/s" in text
    assert "M3TD-02" in text and "OpenStreetMap contributors" in text


def test_world_validate_lists_every_located_problem(tmp_path: Path) -> None:
    world = tmp_path / "bad"
    shutil.copytree(DEMO, world)
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    fleet["drones"][2]["battery_pct"] = 130
    fleet["drones"][4]["dock"] = "DOCK-Z"
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    (world / "users.json").write_text("not json at all", encoding="utf-8")

    human = _sortie("world", "validate", str(world))
    assert human.returncode == 2
    assert "Traceback" not in human.stderr + human.stdout
    assert human.stderr.startswith("INVALID_ARGUMENT: ")
    for where in ("fleet.json $.drones[2].battery_pct", "fleet.json $.drones[4].dock", "users.json $: file is not JSON"):
        assert where in human.stderr

    as_json = _sortie("world", "validate", str(world), "--json")
    assert as_json.returncode == 2
    err = json.loads(as_json.stdout)["error"]
    assert err["code"] == "INVALID_ARGUMENT"
    located = {(d["file"], d["path"]) for d in err["details"]}
    assert located == {("fleet.json", "$.drones[2].battery_pct"), ("fleet.json", "$.drones[4].dock"), ("users.json", "$")}


def test_world_validate_ok_and_user_errors_exit_2() -> None:
    ok = _sortie("world", "validate", str(DEMO))
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith("OK: world demo-helsinki")

    missing = _sortie("world", "show", "--world", "/nonexistent/world", "--json")
    assert missing.returncode == 2
    assert json.loads(missing.stdout)["error"]["code"] == "NOT_FOUND"

    naive = _sortie("world", "show", "--now", "2026-11-29T07:00:00")
    assert naive.returncode == 2
    assert naive.stderr.startswith("INVALID_ARGUMENT: ") and "Traceback" not in naive.stderr
