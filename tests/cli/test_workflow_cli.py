"""The workflow CLI through its real entry point (the ``sortie`` script), on a copy of the demo world.

The copy keeps the demo geozones (the fire-lane patrol of region-1001 is planned,
approved and dispatched around a real fence) and gives the drones fresh telemetry
(dispatch checks it again).
Refusals that need no new process run in-process through the same typer app.
"""

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
from flows.context import DEMO_WORLD_DIR
from flows.ledger import open_ledger

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
NOW = "2026-11-29T07:00:00+02:00"
TEXT = "这块地今天巡一遍消防通道"


def _env(home: Path, world: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env.update({"SORTIE_HOME": str(home), "SORTIE_WORLD": str(world), "SORTIE_NOW": NOW, "COLUMNS": "200"})
    return env


def _sortie(args: list[str], home: Path, world: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SORTIE), *args], env={**_env(home, world), **env}, cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def _json(p: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return json.loads(p.stdout)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("cliworld") / "world"
    shutil.copytree(DEMO_WORLD_DIR, w)
    fleet = json.loads((w / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["last_telemetry_at"] = "2026-11-29T06:59:40+02:00"
    (w / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    return w


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory, world: Path) -> tuple[Path, dict[str, Any]]:
    """``sortie plan --json`` once for the module."""
    home = tmp_path_factory.mktemp("clihome")
    p = _sortie(["plan", TEXT, "--region", "region-1001", "--as", "li.wei", "--json"], home, world)
    assert p.returncode == 0, p.stderr
    return home, _json(p)


def test_plan_json_has_the_promised_fields(planned: tuple[Path, dict[str, Any]]) -> None:
    home, d = planned
    assert {"draft_id", "version", "plan_hash", "status", "findings", "sorties", "files"} <= set(d)
    assert d["status"] == "DRAFT" and d["version"] == 1 and len(d["plan_hash"]) == 64
    assert d["sorties"] and {"drone", "dock", "distance_m", "duration_s", "energy_wh", "battery_fraction"} <= set(
        d["sorties"][0]
    )
    assert all(f["severity"] != "block" for f in d["findings"])
    for name in ("plan", "plan_geojson", "map"):
        assert Path(d["files"][name]).is_file() and str(home) in d["files"][name]
    assert Path(d["files"]["map"]).read_bytes()[:4] == b"\x89PNG"
    plan_json = Path(d["files"]["plan"]).read_text(encoding="utf-8")
    import hashlib

    assert hashlib.sha256(plan_json.encode()).hexdigest() == d["plan_hash"]


def test_the_workflow_plan_show_approve_dispatch_log(planned: tuple[Path, dict[str, Any]], world: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    home, d = planned
    draft = d["draft_id"]
    for k, v in _env(home, world).items():
        monkeypatch.setenv(k, v)
    runner = CliRunner()

    def cli(*args: str) -> Any:
        return runner.invoke(app, list(args))

    shown = cli("show", draft, "--json")
    assert shown.exit_code == 0 and json.loads(shown.stdout)["plan_hash"] == d["plan_hash"]

    # four-eyes: the requester may not approve their own draft (real entry point)
    own = cli("approve", draft, "--version", "1", "--as", "li.wei")
    assert own.exit_code == 2 and own.stderr.startswith("FORBIDDEN:") and "four-eyes" in own.stderr
    assert "Traceback" not in own.output
    # wrong role: a planner; wrong tenant: the port authority's approver
    for who in ("jussi.koski", "mikko.laine"):
        r = cli("approve", draft, "--version", "1", "--as", who, "--json")
        assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "FORBIDDEN", r.stdout
    # a plan hash that is not this version's
    stale = cli("approve", draft, "--version", "1", "--as", "chen.jing", "--plan-hash", "0" * 64, "--json")
    assert stale.exit_code == 2 and json.loads(stale.stdout)["error"]["code"] == "APPROVAL_STALE"
    # dispatch before approval
    early = cli("dispatch", draft, "--dry-run", "--as", "chen.jing", "--json")
    assert early.exit_code == 2 and json.loads(early.stdout)["error"]["code"] == "APPROVAL_REQUIRED"

    ok = _sortie(["approve", draft, "--version", "1", "--as", "chen.jing", "--plan-hash", d["plan_hash"], "--json"],
                 home, world)
    assert ok.returncode == 0, ok.stderr
    assert _json(ok)["status"] == "APPROVED"
    again = cli("approve", draft, "--version", "1", "--as", "demo.approver", "--json")
    assert again.exit_code == 2 and json.loads(again.stdout)["error"]["code"] == "CONFLICT"

    dry = _sortie(["dispatch", draft, "--dry-run", "--as", "chen.jing", "--json"], home, world)
    assert dry.returncode == 0, dry.stderr
    out = _json(dry)
    assert out["status"] == "DRY_RUN" and out["draft_status"] == "APPROVED" and len(out["idempotency_key"]) == 64
    assert any("fresh world" in c for c in out["checks"])
    assert open_ledger().dispatches(draft) == []  # a dry run claims nothing

    log = cli("log", draft)
    assert log.exit_code == 0
    assert "DRAFT → APPROVED" in log.stdout and "chen.jing" in log.stdout

    audit = open_ledger().audit_rows(limit=50)
    commands = [(a.command, a.actor, a.result_code) for a in audit]
    assert ("approve", "li.wei", "FORBIDDEN") in commands and ("approve", "chen.jing", "OK") in commands
    assert ("plan", "li.wei", "OK") in commands and ("dispatch", "chen.jing", "OK") in commands


def test_reject_then_approve_is_a_conflict_and_replan_makes_version_two(planned: tuple[Path, dict[str, Any]],
                                                                         world: Path, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    src, d = planned
    home = tmp_path / "home"
    shutil.copytree(src, home)
    for k, v in _env(home, world).items():
        monkeypatch.setenv(k, v)
    runner = CliRunner()
    draft = d["draft_id"]
    state = json.loads(runner.invoke(app, ["show", draft, "--json"]).stdout)["status"]
    if state != "DRAFT":  # the workflow test may have approved it first; replan gives a fresh version
        r = runner.invoke(app, ["replan", draft, "--as", "li.wei", "--json"])
        assert r.exit_code == 0, r.output
    latest = json.loads(runner.invoke(app, ["show", draft, "--json"]).stdout)
    v = str(latest["version"])
    no_reason = runner.invoke(app, ["reject", draft, "--version", v, "--as", "chen.jing", "--reason", " ", "--json"])
    assert json.loads(no_reason.stdout)["error"]["code"] == "INVALID_ARGUMENT"
    rej = runner.invoke(app, ["reject", draft, "--version", v, "--as", "chen.jing", "--reason", "wrong day", "--json"])
    assert rej.exit_code == 0 and json.loads(rej.stdout)["status"] == "REJECTED"
    late = runner.invoke(app, ["approve", draft, "--version", v, "--as", "chen.jing", "--json"])
    assert json.loads(late.stdout)["error"]["code"] == "CONFLICT"
    re = runner.invoke(app, ["replan", draft, "--as", "li.wei", "--json"])
    assert re.exit_code == 0, re.output
    nxt = json.loads(re.stdout)
    assert nxt["version"] == int(v) + 1 and nxt["status"] == "DRAFT"
    diff = runner.invoke(app, ["diff", draft, v, str(nxt["version"]), "--json"])
    assert diff.exit_code == 0 and json.loads(diff.stdout)["changes"]["status"] == {"from": "REJECTED", "to": "DRAFT"}
    old = runner.invoke(app, ["approve", draft, "--version", v, "--as", "chen.jing", "--json"])
    assert json.loads(old.stdout)["error"]["code"] == "APPROVAL_STALE"
    exp = runner.invoke(app, ["export", draft, "--format", "geojson", "--out", str(tmp_path / "m.geojson"), "--json"])
    assert exp.exit_code == 0, exp.output
    assert json.loads((tmp_path / "m.geojson").read_text())["type"] == "FeatureCollection"
    listed = json.loads(runner.invoke(app, ["drafts", "--json", "--as", "li.wei"]).stdout)["drafts"]
    assert [x["draft_id"] for x in listed] == [draft]
    assert json.loads(runner.invoke(app, ["drafts", "--json", "--as", "aino.virtanen"]).stdout)["drafts"] == []
    hidden = runner.invoke(app, ["show", draft, "--json", "--as", "aino.virtanen"])
    assert hidden.exit_code == 2 and json.loads(hidden.stdout)["error"]["code"] == "FORBIDDEN"


def test_export_formats_for_ground_stations(planned: tuple[Path, dict[str, Any]], world: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    home, d = planned
    for k, v in _env(home, world).items():
        monkeypatch.setenv(k, v)
    runner = CliRunner()
    for fmt, name, head in (("qgc", "m.plan", b"{"), ("waypoints", "m.waypoints", b"QGC WPL 110"), ("kml", "m.kml", b"<?xml")):
        r = runner.invoke(app, ["export", d["draft_id"], "--format", fmt, "--out", str(tmp_path / name), "--json"])
        assert r.exit_code == 0, r.output
        assert (tmp_path / name).read_bytes().startswith(head)
        assert json.loads(r.stdout)["bytes"] == (tmp_path / name).stat().st_size
    qgc = json.loads((tmp_path / "m.plan").read_text())
    assert qgc["fileType"] == "Plan" and qgc["mission"]["items"]
    # the world's zones are kept: the sortie's vehicle gets them as a real fence
    fence = qgc["geoFence"]
    assert fence["polygons"] or fence["circles"], fence
    bad = runner.invoke(app, ["export", d["draft_id"], "--format", "qgc", "--sortie", "99", "--json"])
    assert json.loads(bad.stdout)["error"]["code"] == "INVALID_ARGUMENT"


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["show", "d-nope"], "NOT_FOUND"),
        (["plan", TEXT, "--region", "region-1001", "--as", "li.wei", "--now", "yesterday"], "INVALID_ARGUMENT"),
        (["plan", TEXT, "--region", "region-1001", "--as", "li.wei", "--now", "2026-11-29T07:00:00"], "INVALID_ARGUMENT"),
        (["plan", TEXT, "--region", "region-9999", "--as", "li.wei"], "NOT_FOUND"),
        (["plan", TEXT, "--as", "li.wei"], "INVALID_ARGUMENT"),
        (["plan", TEXT, "--region", "region-1001"], "INVALID_ARGUMENT"),
        (["plan", TEXT, "--region", "region-1001", "--as", "nobody"], "FORBIDDEN"),
        (["plan", TEXT, "--region", "region-1001", "--as", "aino.virtanen"], "FORBIDDEN"),
        (["plan", TEXT, "--area", "/nonexistent.geojson", "--as", "li.wei"], "INVALID_ARGUMENT"),
        (["export", "d-nope", "--format", "dxf"], "INVALID_ARGUMENT"),
    ],
)
def test_bad_input_is_code_colon_message_exit_2(args: list[str], code: str, world: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in _env(tmp_path, world).items():
        monkeypatch.setenv(k, v)
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"{code}:"), r.stderr
    assert "Traceback" not in r.output + r.stderr


@pytest.mark.parametrize(("content", "said"), [("not json at all\n", "is not JSON"), ("[1, 2]", "holds a JSON list, not a GeoJSON object")])
def test_an_area_file_that_is_not_geojson_is_named_as_such(content: str, said: str, world: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 41: a non-JSON area file was reported as "area file '<its contents>' does not exist"."""
    for k, v in _env(tmp_path, world).items():
        monkeypatch.setenv(k, v)
    area = tmp_path / "area.geojson"
    area.write_text(content, encoding="utf-8")
    r = CliRunner().invoke(app, ["plan", TEXT, "--area", str(area), "--as", "li.wei"])
    assert r.exit_code == 2 and r.stderr.startswith("INVALID_ARGUMENT:"), r.stderr
    assert f"area file {str(area)!r} {said}" in r.stderr and "does not exist" not in r.stderr, r.stderr


def test_bad_input_through_the_script_has_no_traceback(world: Path, tmp_path: Path) -> None:
    bad_area = tmp_path / "area.geojson"
    bad_area.write_text('{"type": "Polygon", "coordinates": [[[24.94, 60.17], [24.95, 60.17]]]}')
    p = _sortie(["plan", TEXT, "--area", str(bad_area), "--as", "li.wei"], tmp_path, world)
    assert p.returncode == 2 and p.stderr.startswith("INVALID_ARGUMENT:"), p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_demo_runs_the_whole_path_to_the_simulated_vehicle(tmp_path: Path) -> None:
    """``uv run sortie demo`` as shipped: the bundled world, plan → approve → dispatch → fly → monitor → report."""
    env = {k: v for k, v in _env(tmp_path, DEMO_WORLD_DIR).items() if k not in ("SORTIE_WORLD", "SORTIE_NOW")}
    p = subprocess.run([str(SORTIE), "demo", "--json"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr + p.stdout
    out = json.loads(p.stdout)
    steps = {s["step"]: s for s in out["steps"]}
    assert steps["plan"]["draft"]["requested_by"] == "li.wei"
    assert steps["plan"]["draft"]["verdict"] == "pass"
    assert steps["approve"]["status"] == "APPROVED"
    assert steps["dispatch"]["result"]["status"] == "ACKED"
    assert out["outcome"] == "SUCCEEDED"
    # launch is its own step: nothing took off before it, and the ledger shows it between dispatch and flight
    order = [s["step"] for s in out["steps"]]
    assert order.index("dispatch") < order.index("launch") < order.index("monitor")
    launched = steps["launch"]["result"]
    assert launched["action"] == "launch" and launched["changed"] and launched["state"] == "LAUNCHED", launched
    assert [e["to_state"] for e in steps["log"]["events"]] == [
        "DRAFT", "APPROVED", "DISPATCHED", "LAUNCHED", "IN_FLIGHT", "SUCCEEDED"]
    home = Path(out["home"])
    assert home.parent.parent == tmp_path and (home / "ledger.duckdb").is_file()
    assert Path(steps["plan"]["draft"]["files"]["map"]).is_file()
    report = Path(steps["report"]["files"]["report"]).read_text(encoding="utf-8")
    assert "SUCCEEDED" in report and "Planned vs flown" in report
    # the fleet is live: the demo's vehicles report through the hub, no file is rewritten (not even its own copy)
    assert out["fleet_source"] == "live" and steps["fleet"]["result"]["source"] == "live"
    assert all(r["source"] == "live" for r in steps["fleet"]["result"]["drones"])
    assert (DEMO_WORLD_DIR / "fleet.json").read_bytes() == (home / "world" / "fleet.json").read_bytes()
    assert order.index("fleet") < order.index("plan")


def test_dispatch_rechecks_a_fresh_world(planned: tuple[Path, dict[str, Any]], world: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Approved on one snapshot; the world changes for the worse before dispatch → refused, nothing claimed."""
    src, d = planned
    home = tmp_path / "home"
    shutil.copytree(src, home)
    draft = d["draft_id"]
    for k, v in _env(home, world).items():
        monkeypatch.setenv(k, v)
    runner = CliRunner()
    state = json.loads(runner.invoke(app, ["show", draft, "--json"]).stdout)
    if state["status"] != "APPROVED":
        ok = runner.invoke(app, ["approve", draft, "--version", str(state["version"]), "--as", "chen.jing", "--json"])
        assert ok.exit_code == 0, ok.output
    drones = {s["drone"] for s in d["sorties"]}

    offline = tmp_path / "offline"
    shutil.copytree(world, offline)
    fleet = json.loads((offline / "fleet.json").read_text())
    for x in fleet["drones"]:
        if x["id"] in drones:
            x["status"] = "OFFLINE"
    (offline / "fleet.json").write_text(json.dumps(fleet))
    r = runner.invoke(app, ["dispatch", draft, "--dry-run", "--as", "chen.jing", "--world", str(offline), "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "DEVICE_UNAVAILABLE", r.stdout

    zoned = tmp_path / "zoned"
    shutil.copytree(world, zoned)
    # a new PROHIBITED zone over the whole area, issued after the approval (the demo's own zone file as template)
    template = json.loads((DEMO_WORLD_DIR / "zones" / "helx.json").read_text(encoding="utf-8"))
    zone = dict(template["features"][0])
    zone.update(identifier="TEST-NFZ", name="Closed after approval", restriction="PROHIBITED")
    zone["geometry"] = [{**zone["geometry"][0], "horizontalProjection": {
        "type": "Polygon",
        "coordinates": [[[24.90, 60.15], [24.99, 60.15], [24.99, 60.19], [24.90, 60.19], [24.90, 60.15]]]}}]
    (zoned / "zones" / "closure.json").write_text(json.dumps({**template, "features": [zone]}), encoding="utf-8")
    r = runner.invoke(app, ["dispatch", draft, "--dry-run", "--as", "chen.jing", "--world", str(zoned), "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "AIRSPACE_BLOCKED", r.stdout

    fine = runner.invoke(app, ["dispatch", draft, "--dry-run", "--as", "chen.jing", "--json"])
    assert fine.exit_code == 0 and json.loads(fine.stdout)["status"] == "DRY_RUN", fine.output
    assert open_ledger().dispatches(draft) == []


def test_plan_follows_the_rule_file_of_rules_or_sortie_rules(world: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """``--rules FILE`` (else ``SORTIE_RULES``) picks the rule set; the plan is made inside its limits."""
    from flows.context import RULES_FILE

    low = tmp_path / "low-ceiling.yaml"
    text = RULES_FILE.read_text(encoding="utf-8")
    assert "ceiling_m: 120" in text
    low.write_text(text.replace("ceiling_m: 120", "ceiling_m: 30"), encoding="utf-8")
    runner = CliRunner()
    altitudes = {}
    for how in ("bundled", "--rules", "SORTIE_RULES"):
        for k, v in _env(tmp_path / how, world).items():
            monkeypatch.setenv(k, v)
        extra = ["--rules", str(low)] if how == "--rules" else []
        if how == "SORTIE_RULES":
            monkeypatch.setenv("SORTIE_RULES", str(low))
        r = runner.invoke(app, ["plan", TEXT, "--region", "region-1001", "--as", "li.wei", "--json", *extra])
        assert r.exit_code == 0, r.output
        draft = json.loads(r.stdout)
        assert draft["verdict"] == "pass", draft["findings"]
        altitudes[how] = open_ledger().get_draft(draft["draft_id"]).plan["altitude_m"]
    # the world's default altitude is 40 m; under a 30 m ceiling the plan flies at 30 m
    assert altitudes == {"bundled": 40.0, "--rules": 30.0, "SORTIE_RULES": 30.0}
    # In one ledger, the same words at the same instant under another rule set are another draft, not the
    # draft already recorded under the first rules.
    monkeypatch.delenv("SORTIE_RULES")
    for k, v in _env(tmp_path / "one-ledger", world).items():
        monkeypatch.setenv(k, v)
    ids = {}
    for how, extra in (("bundled", []), ("--rules", ["--rules", str(low)])):
        r = runner.invoke(app, ["plan", TEXT, "--region", "region-1001", "--as", "li.wei", "--json", *extra])
        assert r.exit_code == 0, r.output
        ids[how] = json.loads(r.stdout)["draft_id"]
    assert ids["bundled"] != ids["--rules"]
    assert open_ledger().get_draft(ids["--rules"]).plan["altitude_m"] == 30.0
    monkeypatch.setenv("SORTIE_HOME", str(tmp_path / "missing"))
    missing = runner.invoke(app, ["plan", TEXT, "--region", "region-1001", "--as", "li.wei", "--json",
                                  "--rules", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and json.loads(missing.stdout)["error"]["code"] == "INVALID_ARGUMENT"


def test_plan_takes_the_operators_coverage_target(tmp_path: Path, world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--coverage-target`` reaches the plan, which says what it reached; out of range is INVALID_ARGUMENT, exit 2."""
    for k, v in _env(tmp_path, world).items():
        monkeypatch.setenv(k, v)
    runner = CliRunner()
    bad = runner.invoke(app, ["plan", "今天航测这块地", "--region", "region-1001", "--as", "li.wei", "--what-if",
                              "--coverage-target", "1.5"])
    assert bad.exit_code == 2 and bad.stderr.startswith("INVALID_ARGUMENT:") and "out of range" in bad.stderr
    assert "Traceback" not in bad.output
    ok = runner.invoke(app, ["plan", "今天航测这块地", "--region", "region-1001", "--as", "li.wei", "--what-if",
                             "--coverage-target", "0.995"])
    assert ok.exit_code == 0, ok.output
    assert "coverage: images" in ok.stdout and "target 99.5%" in ok.stdout


def test_plan_takes_a_deadline_and_repeats_with_a_seed_and_a_cap(tmp_path: Path, world: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """``--budget-s/--seed/--iterations`` reach the planner (``flows.usecases.common.planning_budget``): two
    what-ifs with a seed and a cap give the same plan; a budget that is no positive number is INVALID_ARGUMENT;
    with SORTIE_SERVER set they are refused, never ignored."""
    for k, v in _env(tmp_path, world).items():
        monkeypatch.setenv(k, v)
    for k in ("SORTIE_PLAN_BUDGET_S", "SORTIE_PLAN_SEED", "SORTIE_PLAN_ITERATIONS"):
        monkeypatch.setenv(k, "")  # recorded, so the value the command sets for its process is undone after the
        monkeypatch.delenv(k)      # test (a delenv of an absent name records nothing and the value would leak)
    runner = CliRunner()
    args = ["plan", TEXT, "--region", "region-1001", "--as", "li.wei", "--what-if", "--json"]
    runs = [runner.invoke(app, [*args, "--budget-s", "60", "--seed", "3", "--iterations", "150"]) for _ in range(2)]
    assert all(r.exit_code == 0 for r in runs), runs[0].output
    a, b = (json.loads(r.stdout) for r in runs)
    assert a["plan_hash"] == b["plan_hash"] and a["sorties"]
    bad = runner.invoke(app, [*args, "--budget-s", "-2"])
    assert bad.exit_code == 2 and json.loads(bad.stdout)["error"]["code"] == "INVALID_ARGUMENT"
    monkeypatch.setenv("SORTIE_SERVER", "http://127.0.0.1:9")
    monkeypatch.setenv("SORTIE_TOKEN", "sortie_test")
    refused = runner.invoke(app, ["plan", TEXT, "--region", "region-1001", "--json", "--budget-s", "5"])
    assert refused.exit_code == 2 and json.loads(refused.stdout)["error"]["code"] == "OVERRIDE_REFUSED"
