"""The plain parts of the Prefect layer, without a server: input re-validation, artifact text, no-op resume."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flows.orchestration.approval_input import ApprovalInput, approval_form, validate_approval
from flows.orchestration.artifacts import MAX_INLINE_PNG_BYTES, artifact_key, draft_markdown
from planner.errors import InvalidArgument

HASH = "ab" * 32
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


def good(**overrides: object) -> dict[str, object]:
    data: dict[str, object] = {"draft_id": "d-1", "version": 2, "plan_hash": HASH, "decision": "approve", "approver": "chen.jing", "comment": ""}
    data.update(overrides)
    return data


def test_prefilled_form_loses_constraints_and_validate_approval_restores_them() -> None:
    form = approval_form("d-1", 2, HASH)
    lax = form(decision="approve", approver="chen.jing", version=0)  # Prefect's form model lets 0 through
    assert lax.version == 0
    with pytest.raises(InvalidArgument, match="version"):
        validate_approval(lax)
    assert validate_approval(form(decision="approve", approver="chen.jing")) == ApprovalInput(**good())


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"plan_hash": "not-a-hash"}, "plan_hash"),
        ({"decision": "maybe"}, "decision"),
        ({"approver": ""}, "approver"),
        ({"draft_id": "../etc"}, "draft_id"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_validate_approval_names_the_bad_field(overrides: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidArgument, match=field):
        validate_approval(good(**overrides))


def test_form_schema_prefills_the_draft_and_the_decision() -> None:
    schema = approval_form("d-1", 2, HASH).model_json_schema()
    assert set(schema["required"]) == {"approver"}
    assert schema["properties"]["plan_hash"]["default"] == HASH
    assert schema["properties"]["decision"]["enum"] == ["approve", "reject"]
    assert schema["properties"]["decision"]["default"] == "approve"


def _plain_required(schema: dict[str, object], field: str) -> None:
    """The field is required and a plain string: the UI shows no "(Optional)" label and no None toggle."""
    prop = schema["properties"][field]  # type: ignore[index]
    assert field in schema["required"], (field, schema["required"])  # type: ignore[operator]
    assert prop.get("type") == "string" and "anyOf" not in prop and "default" not in prop, prop


def test_every_form_with_a_server_requires_the_one_time_code() -> None:
    """Issue 39: the code field was labelled "(Optional)" with a None toggle though a server requires it. Checked on
    what Prefect stores as the form (its schema) and on the control deployments' parameters."""
    from prefect._internal.pydantic.v2_schema import create_v2_schema
    from prefect.utilities.callables import parameter_schema

    from flows.orchestration.clarify_input import clarification_form
    from flows.orchestration.control_flows import pause_mission, recall_mission, resume_mission

    approval = approval_form("d-1", 2, HASH, relayed=True)
    _plain_required(create_v2_schema(approval.__name__, model_base=approval), "code")
    clarify = clarification_form("r-0123456789", [{"id": "when", "text": "which day?"}], request_text="巡一遍",
                                 relayed=True)
    stored = create_v2_schema(clarify.__name__, model_base=clarify)
    _plain_required(stored, "code")
    assert stored["properties"]["code"]["pattern"] == "^[0-9]{6}$"
    for control in (recall_mission, pause_mission, resume_mission):
        _plain_required(parameter_schema(control).model_dump(), "code")


def test_a_refused_answer_names_the_question_never_the_forms_field() -> None:
    from flows.orchestration.clarify_input import validate_answers

    questions = [{"id": "north-gate", "text": "which gate is the north gate?"}, {"id": "day", "text": "which day?"}]
    with pytest.raises(InvalidArgument) as refused:
        validate_answers({"request_id": "r-0123456789", "answerer": "li.wei", "code": "123456", "answer_1": "",
                          "answer_2": "today"}, "r-0123456789", questions, relayed=True)
    assert "question north-gate (“which gate is the north gate?”): no answer given" in refused.value.message
    assert "answer_" not in refused.value.message


@given(st.text(min_size=0, max_size=40), st.integers(min_value=1, max_value=10_000))
def test_artifact_keys_use_prefects_alphabet(draft_id: str, version: int) -> None:
    key = artifact_key(draft_id, version)
    assert re.fullmatch(r"draft-[a-z0-9]+(-[a-z0-9]+)*-v[0-9]+", key), key
    assert key.endswith(f"-v{version}")


def test_artifact_key_keeps_a_plain_id() -> None:
    assert artifact_key("d-7380d8ba6546", 3) == "draft-d-7380d8ba6546-v3"
    assert artifact_key("D_Foo.1", 2) == "draft-d-foo-1-v2"


SUMMARY = {
    "draft_id": "d-1",
    "version": 2,
    "plan_hash": HASH,
    "status": "DRAFT",
    "sorties": [
        {"drone": "M3TD-01", "dock": "DOCK-B", "distance_m": 3097.77, "duration_s": 382.95, "energy_wh": 16.821, "battery_fraction": 0.1605},
        {"drone": "M30T-01", "dock": "DOCK-A", "distance_m": 1500.0, "duration_s": 120.0, "energy_wh": 9.5, "battery_fraction": 0.5},
    ],
    "findings": [{"rule_id": "weather-limits", "severity": "warn", "message_en": "no forecast | covers it"}],
}


def test_draft_markdown_has_a_row_per_sortie_findings_map_and_how_to_approve() -> None:
    text = draft_markdown(SUMMARY, PNG)
    assert "| 1 | M3TD-01 | DOCK-B | 3.10 | 6.4 | 16.8 | 16 |" in text
    assert "| 2 | M30T-01 | DOCK-A | 1.50 | 2.0 | 9.5 | 50 |" in text
    assert "| warn | weather-limits | no forecast \\| covers it |" in text  # a pipe cannot break the table
    assert "](data:image/png;base64,iVBORw0KGgo" in text
    assert "sortie approve d-1 --version 2 --as" in text
    assert HASH in text


def test_draft_markdown_without_sorties_map_or_findings_says_so() -> None:
    text = draft_markdown({"draft_id": "d-2", "version": 1, "plan_hash": None, "status": "WAITING_RESOURCE", "missing": ["a drone with LIDAR"]})
    assert "_No sorties" in text and "a drone with LIDAR" in text
    assert "No findings" in text and "No map picture" in text
    too_big = draft_markdown(SUMMARY, b"\x89PNG" + b"\x00" * MAX_INLINE_PNG_BYTES)
    assert "data:image/png" not in too_big and "too large to inline" in too_big


def test_resume_is_a_quick_no_op_without_a_prefect_api(monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.authority.waking import find_waiting_runs, resume_waiting_run

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    started = time.monotonic()
    assert resume_waiting_run("d-1", 2, plan_hash=HASH, approver="chen.jing") is None
    assert find_waiting_runs("d-1", 2) == []
    assert time.monotonic() - started < 1.0  # no ephemeral server was started


def test_sortie_serve_refuses_without_a_prefect_api(monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    import flows.cli.serve_cmds  # noqa: F401 - registers the command
    from flows.cli.app import app

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    result = CliRunner().invoke(app, ["serve"])
    assert result.exit_code == 2
    assert "INVALID_ARGUMENT" in result.output and "prefect server start" in result.output


def test_with_a_server_the_form_requires_the_code_and_nothing_hints_at_as() -> None:
    from flows.orchestration.approval_input import RelayedApprovalInput

    form = approval_form("d-1", 2, HASH, relayed=True)
    schema = form.model_json_schema()
    assert set(schema["required"]) == {"approver", "code"}
    assert "--as" not in form._description and "one-time code are required" in form._description
    with pytest.raises(InvalidArgument, match="code"):
        validate_approval(good(), RelayedApprovalInput)
    assert validate_approval(good(code="123456"), RelayedApprovalInput).code == "123456"
    local, server = draft_markdown(SUMMARY, PNG), draft_markdown(dict(SUMMARY, mode="server"), PNG)
    assert "--as" in local and "--as" not in server and "one-time code (required)" in server
