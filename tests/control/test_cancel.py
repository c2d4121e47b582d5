"""Cancel before dispatch: the approval is withdrawn (CANCELLED, event with actor and reason), a repeat changes
nothing, a later dispatch is refused, and only approvers and dispatchers may do it; once a dispatch was claimed
the answer is "recall it". Also through the ``sortie`` CLI (exit 2 and ``CODE: message`` for a user error)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from control.controlkit import APPROVER_ONLY, NOW, OPERATOR, PLANNER, Template
from flows.cli import app
from flows.ledger import open_ledger
from flows.usecases import control, dispatching
from flows.usecases.grounds import Grounds
from flows.errors import Conflict, Forbidden
from planner.errors import InvalidArgument

pytestmark = pytest.mark.timeout(60)


def test_cancel_withdraws_the_approval_and_a_later_dispatch_is_refused(approved_home: Template,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    ledger, d = open_ledger(), approved_home.draft_id
    with pytest.raises(Forbidden, match="approver or dispatcher"):
        control.cancel(Grounds(ledger=ledger), d, actor=PLANNER, reason="not needed", now=NOW)
    with pytest.raises(InvalidArgument, match="reason"):
        control.cancel(Grounds(ledger=ledger), d, actor=APPROVER_ONLY, reason=" ", now=NOW)
    assert ledger.get_draft(d).state == "APPROVED"
    out = control.cancel(Grounds(ledger=ledger), d, actor=APPROVER_ONLY, reason="the hydrant check was done by hand",
                         now=NOW)
    assert (out.state, out.changed, out.run_id) == ("CANCELLED", True, None)
    events = [(e.from_state, e.to_state, e.actor, e.reason) for e in ledger.events(d)]
    assert events[-1] == ("APPROVED", "CANCELLED", APPROVER_ONLY,
                          f"cancelled by {APPROVER_ONLY}: the hydrant check was done by hand")
    again = control.cancel(Grounds(ledger=ledger), d, actor=OPERATOR, reason="twice", now=NOW)
    assert (again.state, again.changed) == ("CANCELLED", False) and len(ledger.events(d)) == len(events)
    with pytest.raises(Conflict, match="CANCELLED"):
        dispatching.dispatch(d, actor=OPERATOR, now=NOW, link="udpout:127.0.0.1:9", timeout_s=2.0,
                             grounds=Grounds(ledger=ledger))
    assert ledger.dispatches(d) == []
    audit = [(a.command, a.result_code, a.actor) for a in ledger.audit_rows(limit=10) if a.command == "control.cancel"]
    assert audit == [("control.cancel", "OK", OPERATOR), ("control.cancel", "OK", APPROVER_ONLY),
                     ("control.cancel", "INVALID_ARGUMENT", APPROVER_ONLY), ("control.cancel", "FORBIDDEN", PLANNER)]


def test_a_claimed_dispatch_cannot_be_cancelled_only_recalled(approved_home: Template) -> None:
    ledger, d = open_ledger(), approved_home.draft_id
    rec = ledger.get_draft(d)
    ledger.claim_dispatch(d, rec.version, plan_hash=rec.plan_hash, params={"link": None}, actor=OPERATOR, now=NOW)
    with pytest.raises(Conflict, match="sortie recall"):
        control.cancel(Grounds(ledger=ledger), d, actor=OPERATOR, reason="too late", now=NOW)
    assert ledger.get_draft(d).state == "APPROVED"
    with pytest.raises(Conflict, match="only a mission in flight can be recalled"):
        control.recall(Grounds(ledger=ledger), d, actor=OPERATOR, now=NOW)


def test_the_cli_cancels_and_reports_user_errors_with_their_code(approved_home: Template,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    runner = CliRunner()
    denied = runner.invoke(app, ["cancel", approved_home.draft_id, "--reason", "x", "--as", PLANNER])
    assert denied.exit_code == 2 and "FORBIDDEN:" in denied.output
    ok = runner.invoke(app, ["cancel", approved_home.draft_id, "--reason", "weather", "--as", OPERATOR, "--json"])
    assert ok.exit_code == 0, ok.output
    body = json.loads(ok.output)
    assert body["state"] == "CANCELLED" and body["changed"] is True
    paused = runner.invoke(app, ["pause", approved_home.draft_id, "--as", OPERATOR])
    assert paused.exit_code == 2 and "CONFLICT:" in paused.output and "in flight" in paused.output
