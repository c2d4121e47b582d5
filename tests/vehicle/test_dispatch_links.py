"""``sortie dispatch --link DRONE=CONN``: a multi-drone plan to one simulator per drone, raced five times.

A copy of the demo world where every battery is low enough that the fire-lane
patrol of region-1001 needs two drones (M3TD-01 and M3TD-02, PX4), both
bound to their MAVLink system ids. The draft is planned and approved through
the use cases; then five ``sortie`` processes dispatch it at once, each with
``--link M3TD-01=… --link M3TD-02=…``. The ledger's idempotency claim must let
exactly one of them upload: each simulator stores exactly one fence, one
mission and one rally, and the audit records the links.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

os.environ.setdefault("MAVLINK20", "1")

from flows.cli import app  # noqa: E402
from flows.vehicle.linkspec import parse_links  # noqa: E402
from flows.usecases.grounds import Grounds  # noqa: E402
from testkit import sim_vehicle  # noqa: E402
from integrity import kit  # noqa: E402  (tests/ is on the path)
from planner.errors import InvalidArgument
from planner.output.mission_items import FENCE, MISSION, RALLY  # noqa: E402

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
NOW = "2026-11-29T07:00:00+02:00"
TEXT = "这块地今天巡一遍消防通道"
SYSIDS = {"M3TD-01": 11, "M3TD-02": 12}


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("links")
    world = kit.make_world(root)  # the demo world without geozones, telemetry fresh
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["battery_pct"] = 36  # one drone's usable charge no longer covers the whole patrol
        if d["id"] in SYSIDS:
            d["mavlink_system_id"], d["mavlink_component_id"] = SYSIDS[d["id"]], 1
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env.update({"SORTIE_HOME": str(root / "home"), "SORTIE_WORLD": str(world), "SORTIE_NOW": NOW, "COLUMNS": "200"})
    saved = {k: os.environ.get(k) for k in ("SORTIE_HOME", "SORTIE_WORLD", "SORTIE_NOW")}
    os.environ.update({k: env[k] for k in saved})
    from flows.ledger import open_ledger
    from flows.usecases import decisions, planning

    now = datetime.fromisoformat(NOW)
    draft = planning.plan_draft(text=TEXT, region_id="region-1001", requested_by="li.wei",
                                grounds=Grounds(ledger=open_ledger(), world_dir=str(world)), now=now).to_dict()
    drones = sorted({s["drone"] for s in draft["sorties"]})
    assert drones == sorted(SYSIDS), f"the low batteries should split the patrol over two drones: {draft['sorties']}"
    decisions.approve(draft["draft_id"], draft["version"], approver="chen.jing", plan_hash=draft["plan_hash"], now=now,
                      grounds=Grounds(ledger=open_ledger(), world_dir=str(world)))
    try:
        yield {"env": env, "world": world, "draft": draft}
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def test_parse_links() -> None:
    assert parse_links(None) is None and parse_links([]) is None
    assert parse_links(["udpout:127.0.0.1:14550"]) == "udpout:127.0.0.1:14550"
    assert parse_links(["A=udpout:127.0.0.1:1", "B=udpout:127.0.0.1:2"]) == {"A": "udpout:127.0.0.1:1", "B": "udpout:127.0.0.1:2"}
    assert parse_links(["A=udpout:127.0.0.1:1"]) == {"A": "udpout:127.0.0.1:1"}
    for bad in (["A=x", "udpout:127.0.0.1:2"], ["A=x", "A=y"], ["=x", "B=y"]):
        with pytest.raises(InvalidArgument):
            parse_links(bad)


@pytest.mark.timeout(240)
def test_five_racing_dispatches_upload_once_to_each_drone_s_own_simulator(setup: dict[str, Any]) -> None:
    draft = setup["draft"]
    runner = CliRunner()
    # a single --link for a two-drone plan, and a link for a drone the plan does not fly: refused before any claim
    for links in (["udpout:127.0.0.1:9"], ["M3TD-01=udpout:127.0.0.1:9", "M30T-01=udpout:127.0.0.1:9"]):
        args = ["dispatch", draft["draft_id"], "--as", "chen.jing", "--json"] + [x for v in links for x in ("--link", v)]
        r = runner.invoke(app, args)
        assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "INVALID_ARGUMENT", r.stdout
    from flows.ledger import open_ledger

    assert open_ledger().dispatches(draft["draft_id"]) == [], "a refused --link claims nothing"

    sims = {d: sim_vehicle("udpin:127.0.0.1:0", "px4", system_id=sid, heartbeat_s=0.2).start() for d, sid in SYSIDS.items()}
    try:
        link_args = [x for d, sim in sims.items() for x in ("--link", f"{d}={sim.address}")]
        cmd = [str(SORTIE), "dispatch", draft["draft_id"], "--version", "1", "--as", "chen.jing", "--json", *link_args]
        procs = [subprocess.Popen(cmd, env=setup["env"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(5)]
        outs = []
        for p in procs:
            stdout, stderr = p.communicate(timeout=200)
            assert p.returncode == 0, stderr
            outs.append(json.loads(stdout))
        firsts = [o for o in outs if o["first"]]
        assert len(firsts) == 1 and firsts[0]["status"] == "ACKED", outs
        assert all(o["status"] in ("ACKED", "PENDING") for o in outs)
        for drone, sim in sims.items():
            assert sim.stats.uploads_completed == 3, f"{drone}: exactly one fence, mission and rally upload"
            assert all(len(sim.missions[t]) > 0 for t in (FENCE, MISSION, RALLY))
    finally:
        for sim in sims.values():
            sim.stop()
    ledger = open_ledger()
    (dispatch,) = ledger.dispatches(draft["draft_id"])
    assert dispatch.status == "ACKED" and dispatch.params["link"] == {d: s.address for d, s in sims.items()}
    audited = [a for a in ledger.audit_rows(limit=50) if a.command == "dispatch" and a.result_code == "OK"]
    assert len(audited) == 5
    assert all(a.args_redacted["link"] == {d: s.address for d, s in sims.items()} for a in audited), audited[0].args_redacted
