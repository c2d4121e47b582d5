"""A plan-mission run whose request needs clarification waits on a form, takes the answers, and plans.

Against the session's real Prefect server on 127.0.0.1 (``tests/orchestration/conftest.py``), a real ledger file and the
demo world; the run is paused in a thread of this process (the suspended path differs only in how it waits). The
form shows each question; a junk input and an answer from a user without the planner role are refused in the run
(its request artifact lists them) and it waits again; the answers of the requester plan the request, and the
draft's record, its artifact and ``sortie show`` carry each question with its answer, who gave it and when. A run
nobody answers ends EXPIRED at its window, the request EXPIRED in the ledger, and no traceback.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.prefect, pytest.mark.timeout(300)]

TEXT = "patrol the fire lanes now at 40 m above the roofs, especially the north gate"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> str:
    from flows.context import DEMO_WORLD_DIR

    path = tmp_path_factory.mktemp("clarify-world") / "demo"
    shutil.copytree(DEMO_WORLD_DIR, path)
    return str(path)


@pytest.fixture(scope="module")
def home(prefect_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("clarify-home")
    saved = os.environ.get("SORTIE_HOME")
    os.environ["SORTIE_HOME"] = str(path)
    yield path
    if saved is None:
        os.environ.pop("SORTIE_HOME", None)
    else:
        os.environ["SORTIE_HOME"] = saved


def _until(what: str, probe: Callable[[], Any], budget_s: float) -> Any:
    deadline = time.monotonic() + budget_s
    while not (value := probe()):
        assert time.monotonic() < deadline, f"timed out after {budget_s} s waiting for {what}"
        time.sleep(0.5)
    return value


def _started(**kwargs: Any) -> tuple[threading.Thread, dict[str, Any]]:
    from flows.orchestration.mission_flows import plan_mission

    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["state"] = plan_mission(return_state=True, poll_interval_s=1, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def _paused_run(request_id: str) -> Any:
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType, FlowRunFilterTags
    from prefect.client.schemas.objects import StateType

    def probe() -> Any:
        with get_client(sync_client=True) as client:
            runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                tags=FlowRunFilterTags(all_=[f"request:{request_id}"]),
                state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.PAUSED]))))
        return runs[0] if runs else None

    return _until(f"a run paused on {request_id}", probe, 90)


def _resume_and_wait_again(run: Any, run_input: dict[str, Any]) -> None:
    from prefect import get_client

    with get_client(sync_client=True) as client:
        before = client.read_flow_run(run.id).state.id
        assert str(client.resume_flow_run(run.id, run_input=run_input).status.value).upper() == "ACCEPT"

        def again() -> bool:
            state = client.read_flow_run(run.id).state
            return bool(state.is_paused() and state.id != before)

        _until("the run to wait again", again, 60)


def _open_request() -> str:
    from flows.ledger import open_ledger

    return str(_until("an open request", lambda: open_ledger().open_requests(), 90)[-1].request_id)


def test_the_run_waits_on_a_form_refuses_bad_inputs_and_plans_with_the_answers(home: Path, world: str) -> None:
    from prefect import get_client
    from prefect.artifacts import Artifact

    from flows.ledger import open_ledger

    now = "2026-11-29T06:58:20+02:00"
    thread, box = _started(text=TEXT, requested_by="li.wei", region_id="region-1001", world=world, now=now)
    rid = _open_request()
    run = _paused_run(rid)
    with get_client(sync_client=True) as client:
        schema = client.read_flow_run(run.id).state.state_details.run_input_keyset
    assert schema  # the run waits for a typed input
    _resume_and_wait_again(run, {"request_id": rid, "answerer": "li.wei"})  # no answers: refused
    _resume_and_wait_again(run, {"request_id": rid, "answerer": "chen.jing", "answer_1": "above ground",
                                 "answer_2": "evenly"})  # an approver does not decide what is planned
    page = str(Artifact.get(f"request-{rid}").data).replace("\\", "")  # markdown escapes dropped
    assert "INVALID_ARGUMENT" in page and "FORBIDDEN" in page and "chen.jing" in page, page
    assert "height_reference-29" in page and "focus-51" in page  # the questions are on the request's page
    assert open_ledger().latest_request(rid).state == "OPEN"  # refused inputs wrote nothing
    with get_client(sync_client=True) as client:
        client.resume_flow_run(run.id, run_input={"request_id": rid, "answerer": "li.wei", "answer_1": "above ground",
                                                  "answer_2": "evenly"})
    thread.join(120)
    assert not thread.is_alive() and "error" not in box, box.get("error")
    state = box["state"]
    result = state.result(raise_on_failure=False)
    assert state.type.value == "COMPLETED" and result["status"] == "DRAFT", result
    rec = open_ledger().get_draft(result["draft_id"])
    assert [(c["id"], c["answer"], c["answered_by"]) for c in rec.intent["clarifications_answered"]] == [
        ("height_reference-29", "above ground", "li.wei"), ("focus-51", "evenly", "li.wei")]
    assert rec.intent["request_id"] == rid and open_ledger().latest_request(rid).draft_id == result["draft_id"]
    artifact = str(Artifact.get(result["artifact_key"]).data)
    assert f"(request {rid})" in artifact and "focus-51" in artifact and "by li.wei" in artifact, artifact


def test_a_run_nobody_answers_ends_expired_and_so_does_its_request(home: Path, world: str) -> None:
    from flows.ledger import open_ledger
    from flows.orchestration.clarify import DEADLINE_ACTOR

    thread, box = _started(text="这块地巡一遍消防通道，重点看北门那段", requested_by="li.wei", region_id="region-1001",
                           world=world, now="2026-11-29T06:58:25+02:00", clarification_window_s=3)
    thread.join(120)
    assert not thread.is_alive() and "error" not in box, box.get("error")
    state = box["state"]
    result = state.result(raise_on_failure=False)
    assert (state.type.value, state.name) == ("CANCELLED", "EXPIRED") and result["outcome"] == "EXPIRED", result
    turn = open_ledger().latest_request(result["request_id"])
    assert (turn.state, turn.actor) == ("EXPIRED", DEADLINE_ACTOR)
    assert all(d.intent.get("request_id") != turn.request_id for d in open_ledger().list_drafts())  # nothing planned


def test_every_kind_of_answer_in_one_form_plans_the_request(home: Path, world: str) -> None:
    """Issue 41: one form with every question answered fully plans the request — a height answered "60 m above
    ground" drew "fly altitude: this parameter cannot be set from the request" and a second wait."""
    from prefect import get_client

    from flows.ledger import open_ledger

    text = "patrol the fire lanes tomorrow at 9, fly altitude 300 m, speed 8 m/s, especially the north gate"
    thread, box = _started(text=text, requested_by="li.wei", region_id="region-1001", world=world,
                           now="2026-11-29T06:58:30+02:00")
    rid = _open_request()
    run = _paused_run(rid)
    said = {"part_of_day": "am", "altitude": "60 m above ground", "parameter": "drop", "focus": "evenly"}
    asked = open_ledger().latest_request(rid).questions
    assert [q["kind"] for q in asked] == list(said)
    fields = {f"answer_{i}": said[q["kind"]] for i, q in enumerate(asked, start=1)}
    with get_client(sync_client=True) as client:
        client.resume_flow_run(run.id, run_input={"request_id": rid, "answerer": "li.wei", **fields})
    thread.join(120)
    assert not thread.is_alive() and "error" not in box, box.get("error")
    result = box["state"].result(raise_on_failure=False)
    assert box["state"].type.value == "COMPLETED" and result["status"] == "DRAFT", result
    rec = open_ledger().get_draft(result["draft_id"])
    assert (rec.intent["intent"]["altitude_m"], rec.intent["start_time"]) == (60, "09:00")
    assert [c["read_as"] for c in rec.intent["clarifications_answered"]] == [
        "at 9 am", "altitude 60 m", "dropped", "dropped"]
    assert [t.state for t in open_ledger().request_turns(rid)] == ["OPEN", "PLANNED"]  # one turn, no follow-up
