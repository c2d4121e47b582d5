"""``sortie pending``: what waits for approval, for whom, until when — on a real ledger and the demo world.

Two real plans of city-fire (one then approved) in a temporary ledger; the list
is read as different users (tenant scoping), under two policies (four-eyes,
window) and through the CLI, and rendered to the rows of the Prefect table.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta
from typing import Any

import pytest

from flows.context import DEMO_WORLD_DIR
from flows.ledger import Ledger
from flows.usecases import decisions, planning
from flows.usecases.actor import Policy
from flows.authority.views import pending_rows, time_left
from flows.usecases.pending import pending
from flows.usecases.grounds import Grounds

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("pending")
    world = base / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    ledger = Ledger(base / "home" / "ledger.duckdb").ensure()
    waiting = planning.plan_draft(text="巡一遍消防通道", region_id="region-1001", requested_by="li.wei",
                                  grounds=Grounds(ledger=ledger, world_dir=world), now=NOW)
    decided = planning.plan_draft(text="inspect the hydrants today", region_id="region-1002", requested_by="li.wei",
                                  grounds=Grounds(ledger=ledger, world_dir=world), now=NOW)
    assert waiting.status == decided.status == "DRAFT" and "block" not in (waiting.verdict, decided.verdict)
    decisions.reject(decided.draft_id, decided.version, approver="chen.jing", reason="not today",
                     now=NOW + timedelta(minutes=1), grounds=Grounds(ledger=ledger, world_dir=world))
    return {"world": world, "ledger": ledger, "waiting": waiting, "decided": decided, "home": base / "home"}


def test_a_waiting_draft_is_listed_with_its_approvers_deadline_and_time_left(setup: dict[str, Any]) -> None:
    out = pending(user="chen.jing", grounds=Grounds(ledger=setup["ledger"], world_dir=setup["world"]),
                  now=NOW + timedelta(minutes=10))
    w = setup["waiting"]
    assert out["count"] == 1 and out["by_tenant"] == {"city-fire": 1}
    item = out["pending"][0]
    assert (item["draft_id"], item["version"], item["tenant"], item["plan_hash"]) == (w.draft_id, w.version, "city-fire", w.plan_hash)
    # approver role in city-fire/region-1001, minus the requester (four-eyes); planners are not listed
    assert item["approvers"] == ["admin", "chen.jing", "demo.approver"] and item["approver_role"] == "approver"
    assert item["deadline"] == "2026-11-29T07:30:00+02:00" and item["seconds_left"] == 20 * 60
    row = pending_rows(out)[0]
    assert row["who may approve"] == "admin, chen.jing, demo.approver" and row["time left"] == "20 min"
    assert row["deadline"] == "2026-11-29 07:30+02:00" and row["tenant"] == "city-fire"


def test_the_list_follows_the_policy_and_the_clock(setup: dict[str, Any]) -> None:
    late = pending(grounds=Grounds(ledger=setup["ledger"], world_dir=setup["world"]), now=NOW + timedelta(minutes=40),
                   policy=Policy(four_eyes=False, approval_ttl=timedelta(minutes=15)))
    item = late["pending"][0]
    assert item["deadline"] == "2026-11-29T07:15:00+02:00" and item["seconds_left"] == -25 * 60
    assert pending_rows(late)[0]["time left"] == "overdue 25 min"
    assert [time_left(s) for s in (59, 3900, -61)] == ["59 s", "1 h 05 min", "overdue 1 min"]


def test_another_tenant_sees_nothing_and_an_unknown_user_is_refused(setup: dict[str, Any]) -> None:
    from flows.errors import Forbidden

    assert pending(user="aino.virtanen", grounds=Grounds(ledger=setup["ledger"], world_dir=setup["world"]),
                   now=NOW)["count"] == 0
    with pytest.raises(Forbidden):
        pending(user="nobody", grounds=Grounds(ledger=setup["ledger"], world_dir=setup["world"]), now=NOW)


def test_cli_pending_prints_the_same_list(setup: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    monkeypatch.setenv("SORTIE_HOME", str(setup["home"]))
    monkeypatch.delenv("SORTIE_SERVER", raising=False)
    args = ["pending", "--as", "demo.approver", "--world", str(setup["world"]), "--now", "2026-11-29T07:05:00+02:00"]
    got = CliRunner().invoke(app, [*args, "--json"])
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)
    assert [p["draft_id"] for p in data["pending"]] == [setup["waiting"].draft_id] and data["mode"] == "local"
    text = CliRunner().invoke(app, args, env={"COLUMNS": "80"})  # a terminal's default width: nothing wraps
    assert text.exit_code == 0 and "25 min" in text.stdout, text.stdout
    assert max(len(line) for line in text.stdout.splitlines()) <= 80, text.stdout
    row = next(line for line in text.stdout.splitlines() if setup["waiting"].draft_id in line)
    assert f"{setup['waiting'].draft_id} v{setup['waiting'].version}" in row and "25 min" in row, text.stdout
    refused = CliRunner().invoke(app, ["pending", "--as", "nobody", "--world", str(setup["world"])])
    assert refused.exit_code == 2 and "FORBIDDEN" in refused.output
