"""``sortie demo``'s fleet is live (``flows.cli.demo_fleet``): it plans with what its simulated vehicles report.

Through the real entry point (the ``sortie`` script) on the bundled world, with ``--dry-run`` (nothing is
flown; the full flight is ``tests/cli/test_workflow_cli.py``'s demo test). Each run starts one simulated
vehicle per drone on 127.0.0.1 and a vehicle hub holding one link per drone; ``--vehicle-battery`` gives a
vehicle another charge than fleet.json's, ``--vehicle-off`` switches a vehicle off. The bundled fleet.json is
read first so each test fails if the file stops saying what makes it meaningful (the file alone would plan
otherwise).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from flows.cli.demo_cmds import DEMO_NOW
from flows.context import DEMO_WORLD_DIR

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
NOW = datetime.fromisoformat(DEMO_NOW)


def _demo(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SORTIE_", "PREFECT_"))}
    env.update({"SORTIE_HOME": str(tmp_path), "COLUMNS": "200"})
    p = subprocess.run([str(SORTIE), "demo", "--json", "--dry-run", *args], env=env, cwd=ROOT, capture_output=True,
                       text=True, timeout=200)
    return p.returncode, (json.loads(p.stdout) if p.stdout.strip() else {}), p.stderr


def _file_fleet() -> dict[str, dict[str, Any]]:
    return {d["id"]: d for d in json.loads((DEMO_WORLD_DIR / "fleet.json").read_text(encoding="utf-8"))["drones"]}


def test_demo_plans_with_the_battery_its_vehicle_reports(tmp_path: Path) -> None:
    """The file says M3TD-01 has 91 % and M3TD-02 was last heard 4 h ago; the vehicles say M3TD-01 has 10 % and
    M3TD-02 talks now: the demo plans M3TD-02 (the M30Ts are switched off)."""
    file = _file_fleet()
    assert file["M3TD-01"]["battery_pct"] > 50 and file["M3TD-01"]["status"] == "ONLINE"
    assert NOW - datetime.fromisoformat(file["M3TD-02"]["last_telemetry_at"]) > timedelta(hours=1)

    code, out, err = _demo(tmp_path, "--vehicle-battery", "M3TD-01=10", "--vehicle-off", "M30T-01",
                           "--vehicle-off", "M30T-02")
    assert code == 0, err[-3000:]
    steps = {s["step"]: s for s in out["steps"]}
    assert [s["step"] for s in out["steps"]][:2] == ["fleet", "plan"]  # the fleet is shown before planning
    fleet = steps["fleet"]["result"]
    assert fleet["source"] == "live" == out["fleet_source"]
    rows = {r["id"]: r for r in fleet["drones"]}
    assert set(rows) == {"M30T-01", "M30T-02", "M3TD-01", "M3TD-02"}  # li.wei's tenant only
    assert all(r["source"] == "live" for r in rows.values())
    assert (rows["M3TD-01"]["status"], rows["M3TD-01"]["battery_pct"]) == ("ONLINE", 10.0)
    assert (rows["M3TD-02"]["status"], rows["M3TD-02"]["battery_pct"]) == ("ONLINE", file["M3TD-02"]["battery_pct"])
    assert rows["M30T-01"]["status"] == rows["M30T-02"]["status"] == "OFFLINE"
    for d in ("M3TD-01", "M3TD-02"):  # stamped on the demo's clock (its fixed time), not the wall clock
        seen = datetime.fromisoformat(rows[d]["last_seen"])
        assert NOW - timedelta(seconds=15) <= seen <= NOW, (d, seen)

    draft = steps["plan"]["draft"]
    assert draft["status"] == "DRAFT" and draft["verdict"] == "pass", draft["missing"]
    assert {s["drone"] for s in draft["sorties"]} == {"M3TD-02"}
    assert steps["dispatch"]["result"]["status"] == "DRY_RUN"
    # nothing rewrote any fleet.json: not the bundled one, not the demo's own copy
    home = Path(out["home"])
    assert (home / "world" / "fleet.json").read_bytes() == (DEMO_WORLD_DIR / "fleet.json").read_bytes()
    assert json.loads((home / "links.json").read_text())["links"]["M3TD-02"].startswith("udpout:127.0.0.1:")


def test_demo_refuses_a_drone_whose_vehicle_is_not_running(tmp_path: Path) -> None:
    """M30T-01 is ONLINE in the file, heard 2 min before the demo's time with 96 %: with its vehicle switched off
    (and no other drone able to fly) the demo's plan waits for a drone and names M30T-01 offline."""
    file = _file_fleet()
    m30 = file["M30T-01"]
    assert m30["status"] == "ONLINE" and m30["battery_pct"] > 50
    assert NOW - datetime.fromisoformat(m30["last_telemetry_at"]) < timedelta(minutes=5)

    code, out, err = _demo(tmp_path, "--vehicle-off", "M30T-01", "--vehicle-off", "M30T-02",
                           "--vehicle-off", "M3TD-02", "--vehicle-battery", "M3TD-01=10")
    assert code == 0, err[-3000:]
    steps = {s["step"]: s for s in out["steps"]}
    rows = {r["id"]: r for r in steps["fleet"]["result"]["drones"]}
    assert rows["M30T-01"]["status"] == "OFFLINE" and rows["M30T-01"]["source"] == "live"
    draft = steps["plan"]["draft"]
    assert draft["status"] == "WAITING_RESOURCE" == out["outcome"] and draft["sorties"] == []
    assert any(m.startswith("M30T-01 offline") for m in draft["missing"]), draft["missing"]
    assert "M3TD-01 battery 10 %, at or below the 25 % reserve" in draft["missing"], draft["missing"]
    assert "dispatch" not in steps


@pytest.mark.parametrize("args, says", [
    (["--vehicle-battery", "M3TD-01=150"], "PCT from 0 to 100"),
    (["--vehicle-battery", "M3TD-01"], "expected DRONE=PCT"),
    (["--vehicle-battery", "NOPE-1=50"], "NOPE-1, not in the fleet"),
    (["--vehicle-off", "NOPE-2"], "NOPE-2, not in the fleet"),
])
def test_demo_refuses_a_bad_vehicle_option_before_writing(tmp_path: Path, args: list[str], says: str) -> None:
    code, out, err = _demo(tmp_path, *args)
    assert code == 2 and out["error"]["code"] == "INVALID_ARGUMENT" and says in out["error"]["message"], (out, err)
    assert "Traceback" not in err
    assert not (tmp_path / "demo").exists()  # no demo home was made
