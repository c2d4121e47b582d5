"""The use cases called directly, with a temporary ledger handed in (no CLI, no environment).

One real plan on a copy of the demo world (zones kept; the morning fire-lane
patrol of region-1001 is approvable with them), then the decisions, reads and
a dry-run dispatch against the same ledger object. Also the pure drafting
pieces and the strict (server) world loading that fails closed.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from flows.context import DEMO_WORLD_DIR
from flows.errors import ApprovalRequired, Forbidden, WorldUnavailable
from flows.ledger import Ledger
from flows.usecases import decisions, dispatching, drafting, planning, reading
from flows.usecases.actor import Actor, Policy
from flows.usecases.common import check_zones_readable, load_world_at
from flows.usecases.grounds import Grounds
from planner.errors import InvalidArgument, NotFound

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")
TEXT = "这块地今天巡一遍消防通道"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("ucworld") / "world"
    shutil.copytree(DEMO_WORLD_DIR, w)
    fleet = json.loads((w / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["last_telemetry_at"] = "2026-11-29T06:59:40+02:00"
    (w / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    return w


@pytest.fixture(scope="module")
def planned(tmp_path_factory: pytest.TempPathFactory, world: Path) -> tuple[Ledger, dict]:
    ledger = Ledger(tmp_path_factory.mktemp("uchome") / "ledger.duckdb")
    s = planning.plan_draft(text=TEXT, region_id="region-1001", requested_by="li.wei",
                            grounds=Grounds(ledger=ledger, world_dir=world), now=NOW)
    return ledger, s.to_dict()


def test_plan_records_in_the_ledger_it_was_given(planned: tuple[Ledger, dict], world: Path) -> None:
    ledger, d = planned
    assert d["status"] == "DRAFT" and d["verdict"] != "block", d
    assert ledger.get_draft(d["draft_id"]).plan_hash == d["plan_hash"]
    assert Path(d["files"]["map"]).parent.parent.parent.parent == ledger.path.parent
    again = planning.plan_draft(text=TEXT, region_id="region-1001", requested_by="li.wei",
                                grounds=Grounds(ledger=ledger, world_dir=world), now=NOW)
    assert again.created is False and again.draft_id == d["draft_id"]


def test_a_recorded_draft_whose_files_are_gone_gets_them_back(world: Path, tmp_path: Path) -> None:
    """The "already recorded" path rewrites a version's files from the ledger when a crash left them missing
    (issue 38: ``ensure_files`` called ``write_files`` without importing it: a NameError, INTERNAL)."""
    import shutil

    ledger = Ledger(tmp_path / "home" / "ledger.duckdb")
    d = planning.plan_draft(text=TEXT, region_id="region-1001", requested_by="li.wei",
                            grounds=Grounds(ledger=ledger, world_dir=world), now=NOW)
    folder = Path(d.files["draft"]).parent
    shutil.rmtree(folder)
    again = planning.plan_draft(text=TEXT, region_id="region-1001", requested_by="li.wei",
                                grounds=Grounds(ledger=ledger, world_dir=world), now=NOW)
    assert again.created is False and again.draft_id == d.draft_id
    assert set(again.files) == {"draft", "plan", "plan_geojson", "map"}, again.files
    assert (folder / "plan.json").read_text(encoding="utf-8") == Path(again.files["plan"]).read_text(encoding="utf-8")


def test_what_if_records_nothing(planned: tuple[Ledger, dict], world: Path) -> None:
    ledger, d = planned
    before = [x.draft_id for x in ledger.list_drafts()]
    out = planning.what_if(text=TEXT, region_id="region-1001", requested_by="li.wei", world_dir=world,
                           now=NOW)
    assert out["status"] == "WHAT_IF" and out["what_if"] is True and out["plan_hash"]
    assert [x.draft_id for x in ledger.list_drafts()] == before


def test_the_operator_sets_the_coverage_target_of_a_survey(planned: tuple[Ledger, dict], world: Path) -> None:
    """The option lands on the recorded intent (a replan keeps it), the job and the plan, which says what it reached."""
    ledger, _ = planned
    survey = "今天航测这块地"
    out = planning.plan_draft(text=survey, region_id="region-1001", requested_by="li.wei",
                              grounds=Grounds(ledger=ledger, world_dir=world), now=NOW, coverage_target=0.995).to_dict()
    rec = ledger.get_draft(out["draft_id"])
    assert rec.intent["intent"]["coverage_target"] == 0.995
    assert rec.plan["parameters"]["coverage_target"] == 0.995
    assert out["coverage"] == {"reached": rec.plan["coverage_fraction"], "target": 0.995,
                               "met": rec.plan["coverage_fraction"] >= 0.995}
    # the same target stated in the text is read into the intent (what-if: nothing recorded)
    said = planning.what_if(text=survey + "，覆盖率不低于99.5%", region_id="region-1001", requested_by="li.wei",
                            world_dir=world, now=NOW)
    assert said["coverage"]["target"] == 0.995
    refusals = [
        (dict(text=survey, coverage_target=0.3), "out of range"),
        (dict(text=survey + "，覆盖率99%", coverage_target=0.995), "give one"),
        (dict(text=TEXT, coverage_target=0.995), "area surveys"),
    ]
    for kwargs, match in refusals:
        with pytest.raises(InvalidArgument, match=match) as err:
            planning.what_if(region_id="region-1001", requested_by="li.wei", world_dir=world, now=NOW, **kwargs)
        assert err.value.code == "INVALID_ARGUMENT"


def test_visibility_local_is_forbidden_server_is_not_found(planned: tuple[Ledger, dict], world: Path) -> None:
    ledger, d = planned
    with pytest.raises(Forbidden):
        reading.check_visible(d["draft_id"], "aino.virtanen", grounds=Grounds(ledger=ledger, world_dir=world))
    with pytest.raises(NotFound):
        reading.check_visible(d["draft_id"], Actor("aino.virtanen", "server", "token"),
                              grounds=Grounds(ledger=ledger, world_dir=world))
    reading.check_visible(d["draft_id"], "chen.jing", grounds=Grounds(ledger=ledger, world_dir=world))
    assert [x.draft_id for x in reading.list_drafts(user="aino.virtanen",
                                                    grounds=Grounds(ledger=ledger, world_dir=world))] == []
    assert d["draft_id"] in [x.draft_id for x in reading.list_drafts(user="admin",
                                                                     grounds=Grounds(ledger=ledger, world_dir=world))]


def test_local_approval_records_its_mode_and_never_satisfies_a_server(planned: tuple[Ledger, dict], world: Path) -> None:
    ledger, d = planned
    with pytest.raises(Forbidden):
        decisions.approve(d["draft_id"], d["version"], approver="li.wei", now=NOW,
                          grounds=Grounds(ledger=ledger, world_dir=world))
    out = decisions.approve(d["draft_id"], d["version"], approver="chen.jing", plan_hash=d["plan_hash"], now=NOW,
                            grounds=Grounds(ledger=ledger, world_dir=world),
                            policy=Policy(four_eyes=True, approval_ttl=timedelta(minutes=10)))
    assert out.status == "APPROVED"
    (a,) = ledger.approvals(d["draft_id"], d["version"])
    assert a.evidence["mode"] == "local" and a.evidence["identity"] == "asserted"
    assert a.evidence["policy"] == {"four_eyes": True, "approval_ttl_s": 600}
    assert a.expires_time == (NOW + timedelta(minutes=10)).isoformat()
    ok = dispatching.dispatch(d["draft_id"], d["version"], actor="chen.jing", now=NOW, dry_run=True,
                              grounds=Grounds(ledger=ledger, world_dir=world))
    assert ok.status == "DRY_RUN" and any("rules pass" in c for c in ok.checks)
    with pytest.raises(ApprovalRequired, match="local mode"):
        dispatching.dispatch(d["draft_id"], d["version"], actor=Actor("chen.jing", "server", "token"), now=NOW,
                             dry_run=True, grounds=Grounds(ledger=ledger, world_dir=world))
    log = reading.draft_log(d["draft_id"], ledger=ledger)
    assert [e["to_state"] for e in log["events"]][-1] == "APPROVED"


def test_diff_is_pure_over_two_records(planned: tuple[Ledger, dict]) -> None:
    ledger, d = planned
    rec = ledger.get_draft(d["draft_id"], d["version"])
    same = reading.diff_versions(d["draft_id"], d["version"], d["version"], ledger=ledger)
    assert same["changes"] == {} and same["sorties_added"] == [] and same["findings_added"] == []
    assert drafting.request_key("a", 1) != drafting.request_key("a", 2)
    assert rec.world_hash == load_world_at(rec.world_dir).snapshot_hash


def test_parse_area_refuses_what_is_not_a_polygon() -> None:
    with pytest.raises(InvalidArgument, match="Polygon"):
        drafting.parse_area({"type": "Point", "coordinates": [24.9, 60.2]})
    with pytest.raises(InvalidArgument, match="out of range"):
        drafting.parse_area({"type": "Polygon", "coordinates": [[[200, 0], [201, 0], [201, 1], [200, 0]]]})
    g = drafting.parse_area('{"type": "Polygon", "coordinates": [[[24.9, 60.2], [24.91, 60.2], [24.91, 60.21], [24.9, 60.2]]]}')
    assert g.geom_type == "Polygon"


def test_strict_world_fails_closed_on_unreadable_zone_data(tmp_path: Path) -> None:
    w = tmp_path / "w"
    shutil.copytree(DEMO_WORLD_DIR, w)
    check_zones_readable(w)
    (w / "zones" / "sub").mkdir()
    with pytest.raises(WorldUnavailable, match="not a regular file"):
        load_world_at(w, strict=True)
    (w / "zones" / "sub").rmdir()
    (w / "zones" / "link.json").symlink_to(w / "zones" / "helx.json")
    with pytest.raises(WorldUnavailable, match="not a regular file"):
        check_zones_readable(w)
    (w / "zones" / "link.json").unlink()
    shutil.rmtree(w / "zones")
    with pytest.raises(WorldUnavailable, match="no zones/ folder"):
        load_world_at(w, strict=True)
    assert load_world_at(w).zones == ()  # the lenient (local) loader plans on it: the server must not
