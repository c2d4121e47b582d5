"""``sortie sim-fleet`` brings a world's fleet to life on its links: the hub (in this process) hears every drone
as its fleet entry binds it (dialect, system id, signing key); ``sortie fleet`` embedded reports the file."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from flows.context import DEMO_WORLD_DIR
from flows.fleet.hub import VehicleHub
from flows.sim.fleet import listen_for
from flows.usecases.common import load_world_at
from flows.vehicle.keys import write_signing_key
from planner.errors import InvalidArgument
from testkit import free_port, popen_ctrl_c, stop_process_group

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"


def env(**extra: str) -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith(("SORTIE_", "PREFECT_"))} | extra


def test_the_vehicle_listens_where_the_ground_station_connects() -> None:
    assert listen_for("udpout:127.0.0.1:14550") == "udpin:127.0.0.1:14550"
    assert listen_for("tcp:127.0.0.1:5760") == "tcpin:127.0.0.1:5760"
    assert listen_for("udpin:0.0.0.0:14550") == "udpout:0.0.0.0:14550"
    with pytest.raises(InvalidArgument):
        listen_for("/dev/ttyACM0")


def test_sim_fleet_runs_every_drone_as_its_entry_binds_it_and_the_hub_hears_them(tmp_path: Path) -> None:
    world, home = tmp_path / "world", tmp_path / "home"
    shutil.copytree(DEMO_WORLD_DIR, world)
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["link"] = f"udpout:127.0.0.1:{free_port('udp')}"
    fleet["drones"][0].update(mavlink_system_id=7, signing_key="m30t-01")
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    write_signing_key(home / "keys", "m30t-01", bytes(range(32)))
    # 10×: an ArduPilot has no position until its EKF has an origin (~35 s of its clock; flows.sim.vehicle.located)
    proc = popen_ctrl_c([str(SORTIE), "sim-fleet", "--world", str(world), "--home", str(home), "--json",
                         "--speedup", "10"], env=env(),
                        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    hub = VehicleHub(now=lambda: datetime.now(timezone.utc), links=dict, key_store=home / "keys")
    try:
        w = load_world_at(world)
        hub.follow(w)
        end = time.monotonic() + 30
        while time.monotonic() < end:
            snap = hub.snapshot()
            if all(d.status == "ONLINE" and d.battery_pct is not None and d.position() for d in snap.values()):
                break
            time.sleep(0.5)
        snap = hub.snapshot()
        assert {k: v.status for k, v in snap.items()} == {d.id: "ONLINE" for d in w.drones}, \
            {k: (v.status, v.fault) for k, v in snap.items()}
        for d in w.drones:
            live = snap[d.id]
            assert live.view.dialect == d.autopilot  # ArduPilot answered the hub's stream requests, PX4 streams
            assert live.battery_pct == d.battery_pct  # the vehicle starts with the file's charge
            dock = w.dock(d.dock_id)
            assert live.position() == {"lat": dock.lat, "lon": dock.lon, "alt_m": 0.0}
        assert hub.watch_of(fleet["drones"][0]["id"]).held.signed  # type: ignore[union-attr]
    finally:
        hub.stop()
        proc.send_signal(signal.SIGINT)  # Ctrl-C stops the fleet
        try:
            out, err = proc.communicate(timeout=60)
        finally:
            stop_process_group(proc)
    assert proc.returncode == 0, err.decode()
    done = json.loads(out)
    assert set(done["vehicles"]) == {d["id"] for d in fleet["drones"]}


def test_sortie_fleet_embedded_reports_the_file(tmp_path: Path) -> None:
    p = subprocess.run([str(SORTIE), "fleet", "--json", "--as", "li.wei"], env=env(SORTIE_HOME=str(tmp_path)),
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["source"] == "file" and d["mode"] == "local"
    assert {x["id"] for x in d["drones"]} == {"M30T-01", "M30T-02", "M3TD-01", "M3TD-02"}  # li.wei's tenant
    assert all(x["source"] == "file" and x["position"] is None for x in d["drones"])
    p = subprocess.run([str(SORTIE), "fleet"], env=env(SORTIE_HOME=str(tmp_path)), cwd=ROOT, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0 and "M4TD-01" in p.stdout and "from the world's fleet.json" in p.stdout, p.stderr
