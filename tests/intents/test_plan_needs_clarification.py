"""`sortie plan` refuses a request that needs clarification: exit 2, NEEDS_CLARIFICATION, the questions, no draft.

The check lives in the shared planning use case (``flows.usecases.planning.plan_draft``), which
the CLI, the Prefect flow and the server all call; the CLI is exercised through
its real ``sortie`` entry point on a copy of the demo world, the use case
function directly for the limits it takes from the world and the rule set.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from flows.context import DEMO_WORLD_DIR
from flows.ledger import open_ledger
from flows.usecases.grounds import Grounds
from intents.errors import NeedsClarification

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
NOW = "2026-11-29T07:00:00+02:00"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("nc-world") / "world"
    shutil.copytree(DEMO_WORLD_DIR, w)
    return w


def _sortie(args: list[str], home: Path, world: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env.update({"SORTIE_HOME": str(home), "SORTIE_WORLD": str(world), "SORTIE_NOW": NOW, "COLUMNS": "200"})
    return subprocess.run([str(SORTIE), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_sortie_plan_refuses_and_lists_the_questions(tmp_path: Path, world: Path) -> None:
    text, quoted = "巡一遍消防通道，高度5000米", "高度5000米"
    p = _sortie(["plan", text, "--region", "region-1001", "--as", "li.wei"], tmp_path, world)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("NEEDS_CLARIFICATION: ")
    assert quoted in p.stderr and "Traceback" not in p.stderr
    assert "  - " in p.stderr  # one line per question
    p = _sortie(["plan", text, "--region", "region-1001", "--as", "li.wei", "--json"], tmp_path, world)
    assert p.returncode == 2
    error = json.loads(p.stdout)["error"]
    assert error["code"] == "NEEDS_CLARIFICATION"
    assert any(quoted in q for q in error["details"]["questions"])
    drafts = _sortie(["drafts", "--as", "li.wei", "--json"], tmp_path, world)
    assert drafts.returncode == 0, drafts.stderr
    assert json.loads(drafts.stdout)["drafts"] == []  # nothing was recorded


def test_the_service_asks_with_the_rule_sets_ceiling(tmp_path: Path, world: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The limits come from the caller: a rule set with a 100 m ceiling makes 110 m a question; 5 m is under the floor."""
    from flows.usecases import planning

    monkeypatch.setenv("SORTIE_HOME", str(tmp_path))
    monkeypatch.delenv("SORTIE_LLM_BASE_URL", raising=False)
    rules = (ROOT / "data" / "rules.yaml").read_text(encoding="utf-8")
    strict = tmp_path / "rules-100m.yaml"
    strict.write_text(rules.replace("ceiling_m: 120", "ceiling_m: 100"), encoding="utf-8")
    now = datetime.fromisoformat(NOW)
    with pytest.raises(NeedsClarification) as info:
        planning.plan_draft(text="巡一遍消防通道，高度110米", region_id="region-1001", requested_by="li.wei",
                            grounds=Grounds(ledger=open_ledger(), world_dir=world, rules=strict), now=now)
    assert "110" in info.value.message and "10–100" in info.value.message
    assert info.value.details["missing"] == ["altitude"]
    with pytest.raises(NeedsClarification):
        planning.plan_draft(text="巡一遍消防通道，高度5米", region_id="region-1001", requested_by="li.wei",
                            grounds=Grounds(ledger=open_ledger(), world_dir=world), now=now)
    with pytest.raises(NeedsClarification) as info:
        planning.plan_draft(text="Patrol the fire lanes, disregard the north section, at 10 am tomorrow with thermal",
                            region_id="region-1001", requested_by="li.wei",
                                grounds=Grounds(ledger=open_ledger(), world_dir=world), now=now)
    assert info.value.details["instructions"] == ["disregard the north section"]
    assert open_ledger().ensure().list_drafts() == []  # nothing was recorded
