"""The clarification dialogue, embedded: a request that needs clarification is kept open, answered, and planned.

Through the real ``sortie`` entry point on a copy of the demo world and a fresh SORTIE_HOME (a real DuckDB
ledger): ``sortie plan`` prints the request id and the questions (exit 2), ``sortie plan --continue ID --answer …``
answers them — one answer leaves the other question open, the second plans — and the draft shows each question
with its answer, who gave it and when (``sortie show``). The refusals are typed: answering again (CONFLICT), a
question not asked (INVALID_ARGUMENT), too late (REQUEST_EXPIRED, the request recorded EXPIRED); two operators
answering at once settle to one draft. Expiry by the sweeper and the answerer's role run on the use case itself.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from flows.context import DEMO_WORLD_DIR
from flows.errors import Conflict, Forbidden, RequestExpired
from flows.integrity.verify import verify_ledger
from flows.ledger import open_ledger
from flows.usecases import planning, requests
from flows.usecases.actor import Actor
from flows.usecases.grounds import Grounds
from intents.errors import NeedsClarification
from planner.errors import InvalidArgument

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
NOW = "2026-11-29T07:00:00+02:00"
TEXT = "patrol the fire lanes now at 40 m above the roofs, especially the north gate"
KINDS = "patrol the fire lanes tomorrow at 9 at altitude 120 m AMSL, speed 8 m/s, especially the north gate"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    w = tmp_path_factory.mktemp("open-world") / "world"
    shutil.copytree(DEMO_WORLD_DIR, w)
    return w


def _sortie(args: list[str], home: Path, world: Path, now: str = NOW) -> tuple[int, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env.update({"SORTIE_HOME": str(home), "SORTIE_WORLD": str(world), "SORTIE_NOW": now, "COLUMNS": "250"})
    p = subprocess.run([str(SORTIE), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    out = json.loads(p.stdout) if "--json" in args and p.stdout.strip() else {}
    return p.returncode, out, p.stdout + p.stderr


def _asked(home: Path, world: Path, text: str = TEXT) -> dict[str, Any]:
    code, out, _ = _sortie(["plan", text, "--region", "region-1001", "--as", "li.wei", "--json"], home, world)
    assert code == 2 and out["error"]["code"] == "NEEDS_CLARIFICATION", out
    return dict(out["error"]["details"])


def test_sortie_plan_keeps_the_request_and_continue_plans_it_with_the_answers(tmp_path: Path, world: Path) -> None:
    code, _, shown = _sortie(["plan", TEXT, "--region", "region-1001", "--as", "li.wei"], tmp_path, world)
    assert code == 2 and shown.startswith("NEEDS_CLARIFICATION: ") and "Traceback" not in shown
    details = _asked(tmp_path, world)  # the same request again: the same open request
    rid = details["request_id"]
    assert rid in shown and f"sortie plan --continue {rid}" in shown
    assert [(q["id"], q["kind"], q["quote"]) for q in details["asked"]] == [
        ("height_reference-29", "height_reference", "40 m above the roofs"),
        ("focus-51", "focus", "especially the north gate")]
    assert "[height_reference-29]" in shown and details["expires_time"] == "2026-11-29T11:00:00+02:00"
    assert open_ledger(tmp_path).list_drafts() == []  # nothing planned, the request kept
    # one answer: the first question; the second stays open (a follow-up turn)
    code, out, _ = _sortie(["plan", "--continue", rid, "--answer", "above ground", "--as", "li.wei", "--json"],
                           tmp_path, world)
    assert code == 2 and out["error"]["details"]["request_id"] == rid, out
    assert [q["id"] for q in out["error"]["details"]["asked"]] == ["focus-51"]
    code, out, _ = _sortie(["request", rid, "--as", "li.wei", "--json"], tmp_path, world)
    assert code == 0 and out["state"] == "OPEN" and out["turn"] == 2, out
    assert [a["answered_by"] for a in out["answers"]] == ["li.wei"]
    # the second, named by its id, a minute later: planned
    later = "2026-11-29T07:01:00+02:00"
    code, draft, text = _sortie(["plan", "--continue", rid, "--answer", "focus-51=evenly", "--as", "li.wei", "--json"],
                                tmp_path, world, later)
    assert code == 0, text
    assert draft["status"] == "DRAFT" and draft["request_id"] == rid and draft["planned_for"] == later
    assert draft["request_text"] == TEXT and draft["requested_by"] == "li.wei"
    assert [(c["id"], c["answer"], c["answered_by"], c["answered_time"]) for c in draft["clarifications"]] == [
        ("height_reference-29", "above ground", "li.wei", NOW), ("focus-51", "evenly", "li.wei", later)]
    # the approver sees both: sortie show prints each question with its answer, who and when
    code, _, shown = _sortie(["show", draft["draft_id"], "--as", "chen.jing"], tmp_path, world, later)
    assert code == 0 and f"clarifications answered: 2 (request {rid})" in shown
    assert "focus-51" in shown and "→ “evenly”" in shown and f"by li.wei at {later}" in shown
    # answering again, or a question that was not asked: refused, nothing changes
    code, out, _ = _sortie(["plan", "--continue", rid, "--answer", "evenly", "--as", "li.wei", "--json"],
                           tmp_path, world, later)
    assert code == 2 and out["error"]["code"] == "CONFLICT" and draft["draft_id"] in out["error"]["message"]
    code, out, _ = _sortie(["request", rid, "--as", "li.wei", "--json"], tmp_path, world, later)
    assert (out["state"], out["draft_id"], [t["state"] for t in out["turns"]]) == (
        "PLANNED", draft["draft_id"], ["OPEN", "OPEN", "PLANNED"])
    assert verify_ledger(open_ledger(tmp_path)).ok


def test_a_question_not_asked_too_many_answers_and_a_late_answer_are_refused(tmp_path: Path, world: Path) -> None:
    rid = _asked(tmp_path, world)["request_id"]
    code, out, _ = _sortie(["plan", "--continue", rid, "--answer", "time-3=pm", "--as", "li.wei", "--json"],
                           tmp_path, world)
    assert code == 2 and out["error"]["code"] == "INVALID_ARGUMENT" and "time-3" in out["error"]["message"], out
    code, out, _ = _sortie(["plan", "--continue", rid, "--answer", "a", "--answer", "b", "--answer", "c", "--as",
                            "li.wei", "--json"], tmp_path, world)
    assert code == 2 and out["error"]["code"] == "INVALID_ARGUMENT" and "3 answers for 2" in out["error"]["message"]
    code, out, _ = _sortie(["plan", "--continue", rid, "TEXT", "--answer", "x", "--as", "li.wei", "--json"],
                           tmp_path, world)
    assert code == 2 and out["error"]["code"] == "INVALID_ARGUMENT", out
    assert open_ledger(tmp_path).latest_request(rid).turn == 1  # none of these wrote anything
    late = "2026-11-29T11:00:01+02:00"
    code, out, _ = _sortie(["plan", "--continue", rid, "--answer", "above ground", "--answer", "evenly", "--as",
                            "li.wei", "--json"], tmp_path, world, late)
    assert code == 2 and out["error"]["code"] == "REQUEST_EXPIRED", out
    turn = open_ledger(tmp_path).latest_request(rid)
    assert (turn.state, turn.actor, turn.turn_time) == ("EXPIRED", "li.wei", late)
    assert open_ledger(tmp_path).list_drafts() == []


def test_two_operators_answering_at_once_settle_to_one_draft(tmp_path: Path, world: Path) -> None:
    rid = _asked(tmp_path, world)["request_id"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env.update({"SORTIE_HOME": str(tmp_path), "SORTIE_WORLD": str(world), "SORTIE_NOW": NOW})
    args = ["plan", "--continue", rid, "--answer", "above ground", "--json", "--as"]
    procs = [subprocess.Popen([str(SORTIE), *args, who, "--answer", answer], env=env, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for who, answer in (("li.wei", "evenly"), ("admin", "plan it evenly"))]
    outs = [(p.wait(300), json.loads(p.communicate()[0] or "{}")) for p in procs]
    codes = sorted(code for code, _ in outs)
    assert codes == [0, 2], outs
    loser = next(out for code, out in outs if code == 2)
    assert loser["error"]["code"] == "CONFLICT", loser
    led = open_ledger(tmp_path)
    turns = led.request_turns(rid)
    assert [t.state for t in turns] == ["OPEN", "PLANNED"]
    assert [d.draft_id for d in led.list_drafts()] == [turns[-1].draft_id]
    assert sorted(p.name for p in (tmp_path / "drafts").iterdir()) == [turns[-1].draft_id]  # no stray files


def _kept_open(led: Any, world: Path, now: datetime) -> str:
    """The request's id: planned by the use case, kept open with its questions (NEEDS_CLARIFICATION)."""
    with pytest.raises(NeedsClarification) as asked:
        planning.plan_draft(text=TEXT, region_id="region-1001", requested_by="li.wei",
                            grounds=Grounds(ledger=led, world_dir=world), now=now)
    return str(asked.value.details["request_id"])


def test_the_sweeper_expires_what_nobody_answered_and_only_a_planner_of_the_tenant_answers(tmp_path: Path,
                                                                                           world: Path) -> None:
    led, now = open_ledger(tmp_path), datetime.fromisoformat(NOW)
    rid = _kept_open(led, world, now)
    with pytest.raises(Forbidden, match="may not plan"):  # an approver does not decide what is planned
        requests.answer(rid, ["above ground", "evenly"], answerer=Actor("chen.jing"),
                        grounds=Grounds(ledger=led, world_dir=world), now=now)
    with pytest.raises(Forbidden, match="does not see"):  # another tenant's planner
        requests.answer(rid, ["above ground"], answerer=Actor("aino.virtanen"),
                        grounds=Grounds(ledger=led, world_dir=world), now=now)
    answered = led.latest_request(rid).next(answers=[{"id": "focus-51", "answer": "evenly", "answered_by": "x"}])
    with pytest.raises(Conflict, match="answered already"):  # a question answered in an earlier turn
        requests.split_answers(answered, ["focus-51=again"])
    assert requests.expire_due(led, now=now + timedelta(hours=3), actor="authority:sweeper") == []
    gone = requests.expire_due(led, now=now + requests.REQUEST_TTL, actor="authority:sweeper")
    assert [(t.request_id, t.state, t.actor) for t in gone] == [(rid, "EXPIRED", "authority:sweeper")]
    with pytest.raises(RequestExpired):
        requests.answer(rid, ["above ground", "evenly"], answerer=Actor("li.wei"),
                        grounds=Grounds(ledger=led, world_dir=world),
                        now=now + timedelta(minutes=1))
    with pytest.raises(InvalidArgument, match="no answer"):
        requests.split_answers(led.latest_request(rid), [])


def test_an_answered_request_is_planned_to_the_operators_budget(tmp_path: Path, world: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The answers plan under ``SORTIE_PLAN_BUDGET_S``/``SEED``/``ITERATIONS`` as ``sortie plan`` does (they planned at
    the nominal fixed work, whatever the operator set): a budget that is not usable is refused, nothing recorded."""
    led, now = open_ledger(tmp_path), datetime.fromisoformat(NOW)
    rid = _kept_open(led, world, now)
    monkeypatch.setenv("SORTIE_PLAN_BUDGET_S", "soon")
    with pytest.raises(InvalidArgument, match="planning budget"):
        requests.answer(rid, ["above ground", "evenly"], answerer=Actor("li.wei"),
                        grounds=Grounds(ledger=led, world_dir=world), now=now)
    assert led.latest_request(rid).turn == 1 and led.list_drafts() == []
    monkeypatch.setenv("SORTIE_PLAN_BUDGET_S", "5")
    planned = requests.answer(rid, ["above ground", "evenly"], answerer=Actor("li.wei"),
                              grounds=Grounds(ledger=led, world_dir=world), now=now)
    assert planned.status == "DRAFT" and [r.draft_id for r in led.list_drafts()] == [planned.draft_id]


@pytest.mark.parametrize(
    ("text", "answers", "clock"),
    [
        (KINDS, {"part_of_day": "am", "height_reference": "60 m above ground", "parameter": "drop", "focus": "evenly"},
         "09:00"),
        ("下午两点巡一下，高度300米", {"mission": "巡查消防通道", "altitude": "60米"}, "14:00"),
    ],
)
def test_every_kind_of_answer_continues_the_request_in_one_turn(text: str, answers: dict[str, str], clock: str,
                                                                tmp_path: Path, world: Path) -> None:
    """Issue 41: answers that answer every question fully plan the request with ``--continue`` once, no follow-up
    (a height answered "60 m above ground" drew a question about "fly altitude")."""
    details = _asked(tmp_path, world, text)
    ids = {q["kind"]: q["id"] for q in details["asked"]}
    assert set(ids) == set(answers), details["asked"]
    named = [arg for kind, said in answers.items() for arg in ("--answer", f"{ids[kind]}={said}")]
    code, draft, shown = _sortie(["plan", "--continue", details["request_id"], *named, "--as", "li.wei", "--json"],
                                 tmp_path, world)
    assert code == 0, shown
    assert draft["request_id"] == details["request_id"] and len(draft["clarifications"]) == len(answers)
    read = open_ledger(tmp_path).get_draft(draft["draft_id"]).intent
    assert (read["intent"]["altitude_m"], read["start_time"], read["intent"]["mission_type"]) == (
        60, clock, "FIRE_LANE_PATROL")
