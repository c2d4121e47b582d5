"""The ledger on real DuckDB files: transitions, conditional updates, approvals, idempotent dispatch."""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import duckdb
import pytest

from flows.errors import ApprovalRequired, ApprovalStale, Conflict, Forbidden, LedgerUnavailable
from flows.ledger import (
    STATES,
    TRANSITIONS,
    Ledger,
    NewVersion,
    idempotency_key,
    redact,
)
from flows.ledger.schema import SCHEMA_VERSION
from planner.errors import InvalidArgument, NotFound

NOW = datetime(2026, 11, 29, 7, 0, tzinfo=timezone(timedelta(hours=2)))
TERMINAL = {"SUCCEEDED", "INCOMPLETE", "ABORTED", "REJECTED", "EXPIRED", "SUPERSEDED", "CANCELLED", "RECALLED"}


def yes(tenant: str, region: str | None) -> bool:
    return True


def no(tenant: str, region: str | None) -> bool:
    return False


def version(draft_id: str = "d-1", v: int = 1, *, state: str = "DRAFT", plan_hash: str | None = "h" * 64,
            verdict: str = "pass", requested_by: str = "li.wei") -> NewVersion:
    return NewVersion(
        draft_id=draft_id, version=v, state=state, request_key=f"rk-{draft_id}", tenant="city-fire",
        region_id="region-1001", requested_by=requested_by, request_text="patrol", intent={"intent": {}},
        plan=None if plan_hash is None else {"sorties": [{"drone_id": "M30T-01"}]}, plan_hash=plan_hash,
        findings=[], verdict=verdict, missing=[], world_name="w", world_dir="/w", world_hash="wh",
    )


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger(tmp_path / "ledger.duckdb", lock_budget_s=2.0)


def _approve(ledger: Ledger, draft_id: str = "d-1", v: int = 1, *, who: str = "chen.jing", at: datetime = NOW,
             plan_hash: str | None = None, **kw: object):
    return ledger.approve(draft_id, v, approver_id=who, may_approve=yes, plan_hash=plan_hash, comment="ok", now=at,
                          **kw)  # type: ignore[arg-type]


def _path_to(target: str) -> list[str]:
    """A legal path of states from DRAFT to ``target`` through TRANSITIONS (BFS)."""
    queue: deque[list[str]] = deque([["DRAFT"]])
    seen = {"DRAFT"}
    while queue:
        path = queue.popleft()
        if path[-1] == target:
            return path
        for (a, b) in TRANSITIONS:
            if a == path[-1] and b not in seen:
                seen.add(b)
                queue.append(path + [b])
    raise AssertionError(f"{target} unreachable from DRAFT")


# --------------------------------------------------------------------------- the transitions table


def test_every_state_is_reachable_and_terminal_states_have_no_exit() -> None:
    reachable = {b for (_, b) in TRANSITIONS}
    assert reachable == STATES
    assert all(a is None or a in STATES for (a, _) in TRANSITIONS)
    assert {a for (a, _) in TRANSITIONS if a is not None} == STATES - TERMINAL
    for state in STATES - {"WAITING_RESOURCE"}:
        if state != "DRAFT":
            assert _path_to(state)[0] == "DRAFT"


@pytest.mark.parametrize("source", sorted(STATES - {"WAITING_RESOURCE"}))
def test_only_transitions_in_the_table_succeed(ledger: Ledger, source: str) -> None:
    path = _path_to(source)
    ledger.record_versions([version()], actor="li.wei", now=NOW)
    rec = ledger.get_draft("d-1", 1)
    for nxt in path[1:]:
        rec = ledger.transition("d-1", 1, expected_state=rec.state, expected_row_version=rec.row_version,
                                to_state=nxt, actor="t", reason="walk", now=NOW)
    assert rec.state == source
    events_before = len(ledger.events("d-1"))
    for target in sorted(STATES):
        if (source, target) in TRANSITIONS:
            continue
        with pytest.raises(Conflict):
            ledger.transition("d-1", 1, expected_state=source, expected_row_version=rec.row_version,
                              to_state=target, actor="t", reason="illegal", now=NOW)
    after = ledger.get_draft("d-1", 1)
    assert (after.state, after.row_version) == (source, rec.row_version)
    assert len(ledger.events("d-1")) == events_before


def test_transition_is_conditional_on_state_and_row_version(ledger: Ledger) -> None:
    ledger.record_versions([version()], actor="li.wei", now=NOW)
    first = ledger.transition("d-1", 1, expected_state="DRAFT", expected_row_version=1, to_state="APPROVED",
                              actor="a", reason="r", now=NOW)
    assert (first.state, first.row_version) == ("APPROVED", 2)
    # the same (lost) update again: the row moved on, so it is a Conflict, not a silent no-op
    with pytest.raises(Conflict):
        ledger.transition("d-1", 1, expected_state="DRAFT", expected_row_version=1, to_state="APPROVED",
                          actor="a", reason="r", now=NOW)
    with pytest.raises(Conflict):  # right state, stale row version
        ledger.transition("d-1", 1, expected_state="APPROVED", expected_row_version=1, to_state="EXPIRED",
                          actor="a", reason="r", now=NOW)
    with pytest.raises(NotFound):
        ledger.transition("d-9", 1, expected_state="DRAFT", expected_row_version=1, to_state="APPROVED",
                          actor="a", reason="r", now=NOW)
    assert [(e.from_state, e.to_state) for e in ledger.events("d-1")] == [(None, "DRAFT"), ("DRAFT", "APPROVED")]


def test_events_carry_actor_time_reason_and_replay_to_the_state(ledger: Ledger) -> None:
    ledger.record_versions([version()], actor="li.wei", now=NOW)
    _approve(ledger)
    later = NOW + timedelta(minutes=1)
    claim = ledger.claim_dispatch("d-1", 1, plan_hash="h" * 64, params={"link": None}, actor="chen.jing", now=later)
    ledger.finish_dispatch(claim.dispatch.idempotency_key, status="ACKED", result={"message": "accepted"},
                           actor="chen.jing", now=later)
    events = ledger.events("d-1")
    assert [(e.from_state, e.to_state, e.actor) for e in events] == [
        (None, "DRAFT", "li.wei"),
        ("DRAFT", "APPROVED", "chen.jing"),
        ("APPROVED", "DISPATCHED", "chen.jing"),
    ]
    assert [e.row_version for e in events] == [1, 2, 3]
    assert events[-1].event_time == later.isoformat() and events[-1].reason == "accepted"
    state = None
    for e in events:
        assert e.from_state == state
        state = e.to_state
    assert state == ledger.get_draft("d-1", 1).state


def test_naive_time_is_refused(ledger: Ledger) -> None:
    with pytest.raises(InvalidArgument):
        ledger.record_versions([version()], actor="li.wei", now=datetime(2026, 11, 29, 7, 0))
    assert ledger.versions("d-1") == []


def test_the_tenant_filter_comes_before_the_limit(ledger: Ledger) -> None:
    """A user of one tenant asking for N drafts gets that tenant's N newest, however many newer ones others have."""
    for i in range(2):
        ledger.record_versions([replace(version(f"old-{i}"), tenant="port-authority")], actor="li.wei",
                               now=NOW + timedelta(minutes=i))
    for i in range(3):
        ledger.record_versions([version(f"new-{i}")], actor="li.wei", now=NOW + timedelta(hours=1, minutes=i))
    assert [d.draft_id for d in ledger.list_drafts(tenants=["port-authority"], limit=2)] == ["old-1", "old-0"]
    assert [d.draft_id for d in ledger.list_drafts(tenants=["city-fire"], limit=2)] == ["new-2", "new-1"]
    assert [d.draft_id for d in ledger.list_drafts(limit=4)] == ["new-2", "new-1", "new-0", "old-1"]
    assert [d.draft_id for d in ledger.list_drafts(tenants=["*"], limit=1)] == ["new-2"]
    assert ledger.list_drafts(tenants=[], limit=5) == []


# --------------------------------------------------------------------------- versions


def test_alternatives_are_recorded_as_superseded_versions_in_one_transaction(ledger: Ledger) -> None:
    recs = ledger.record_versions([version(v=1), version(v=2), version(v=3, state="WAITING_RESOURCE", plan_hash=None)],
                                  actor="li.wei", now=NOW, reasons=["dock A short", "dock B short"])
    assert [r.state for r in recs] == ["SUPERSEDED", "SUPERSEDED", "WAITING_RESOURCE"]
    assert [v.state for v in ledger.versions("d-1")] == ["SUPERSEDED", "SUPERSEDED", "WAITING_RESOURCE"]
    assert ledger.get_draft("d-1").version == 3
    reasons = [e.reason for e in ledger.events("d-1") if e.to_state == "SUPERSEDED"]
    assert reasons == ["dock A short", "dock B short"]


def test_a_failing_batch_writes_nothing(ledger: Ledger) -> None:
    ledger.record_versions([version(v=1)], actor="li.wei", now=NOW)
    with pytest.raises(Conflict):
        ledger.record_versions([version(v=2), version(v=1)], actor="li.wei", now=NOW)
    assert [v.version for v in ledger.versions("d-1")] == [1]
    assert len(ledger.events("d-1")) == 1


def test_replan_supersedes_conditionally(ledger: Ledger) -> None:
    (v1,) = ledger.record_versions([version(v=1)], actor="li.wei", now=NOW)
    ledger.record_versions([version(v=2)], actor="li.wei", now=NOW, supersede=v1)
    assert ledger.get_draft("d-1", 1).state == "SUPERSEDED"
    # a second replan working from the same stale read of v1 loses
    with pytest.raises(Conflict):
        ledger.record_versions([version(v=3)], actor="li.wei", now=NOW, supersede=v1)
    assert [v.version for v in ledger.versions("d-1")] == [1, 2]


# --------------------------------------------------------------------------- approvals


def test_approval_is_bound_to_the_plan_hash_and_expires(ledger: Ledger) -> None:
    ledger.record_versions([version()], actor="li.wei", now=NOW)
    with pytest.raises(ApprovalStale):
        _approve(ledger, plan_hash="0" * 64)
    a = _approve(ledger, plan_hash="h" * 64)
    assert a.plan_hash == "h" * 64 and a.expires_time == (NOW + timedelta(minutes=30)).isoformat()
    assert ledger.valid_approval("d-1", 1, now=NOW + timedelta(minutes=29)).approval_id == a.approval_id
    with pytest.raises(Conflict):  # already validly approved
        _approve(ledger, who="demo.approver")
    late = NOW + timedelta(minutes=30)
    with pytest.raises(ApprovalStale, match="expired"):
        ledger.valid_approval("d-1", 1, now=late)
    with pytest.raises(ApprovalStale):
        ledger.claim_dispatch("d-1", 1, plan_hash="h" * 64, params={}, actor="chen.jing", now=late)
    # re-approval after expiry: APPROVED → APPROVED with its own event
    _approve(ledger, at=late)
    assert ledger.valid_approval("d-1", 1, now=late + timedelta(minutes=1))
    assert [e.to_state for e in ledger.events("d-1")] == ["DRAFT", "APPROVED", "APPROVED"]


def test_a_decision_after_the_versions_deadline_is_refused_and_expires_it(ledger: Ledger) -> None:
    """The deadline is the ledger's (recorded time + window), not an expiry run's: a late approve or reject is
    refused with both times and the version is EXPIRED in the same write; a wrong hash shows both hashes in full."""
    ledger.record_versions([version()], actor="li.wei", now=NOW)
    ledger.record_versions([version("d-2")], actor="li.wei", now=NOW)
    with pytest.raises(ApprovalStale) as wrong:
        _approve(ledger, plan_hash="0" * 64)
    assert "0" * 64 in wrong.value.message and "h" * 64 in wrong.value.message
    with pytest.raises(ApprovalStale, match="deadline") as late:
        _approve(ledger, at=NOW + timedelta(minutes=30), plan_hash="h" * 64)
    assert late.value.details == {"draft_id": "d-1", "version": 1, "state": "EXPIRED"}
    assert ledger.get_draft("d-1", 1).state == "EXPIRED" and ledger.approvals("d-1") == []
    assert [(e.to_state, e.actor) for e in ledger.events("d-1")][-1] == ("EXPIRED", "ledger:deadline")
    # a shorter window (the policy's) counts too, and a rejection is a decision like any other
    with pytest.raises(ApprovalStale, match="deadline"):
        ledger.reject("d-2", 1, approver_id="chen.jing", may_approve=yes, reason="late", now=NOW + timedelta(seconds=61),
                      window=timedelta(minutes=1))
    assert ledger.get_draft("d-2", 1).state == "EXPIRED"


def test_refused_decisions_are_read_back_per_draft_with_why(ledger: Ledger) -> None:
    ledger.record_versions([version()], actor="li.wei", now=NOW)
    for command, code in (("approve", "FORBIDDEN"), ("prefect.approve", "APPROVAL_STALE"), ("approve", "OK"),
                          ("show", "NOT_FOUND")):
        ledger.audit(actor="li.wei", command=command, args={"draft_id": "d-1", "version": 1, "identity": "asserted"},
                     result_code=code, duration_s=0.0, started=NOW, draft_id="d-1",
                     message=None if code == "OK" else f"why {code}")
    refused = ledger.refusals("d-1", 1)
    assert [(r.command, r.result_code, r.result_message) for r in refused] == [
        ("approve", "FORBIDDEN", "why FORBIDDEN"), ("prefect.approve", "APPROVAL_STALE", "why APPROVAL_STALE")]
    assert ledger.refusals("d-1", 2) == []


def test_approver_needs_the_role_and_four_eyes(ledger: Ledger) -> None:
    ledger.record_versions([version(requested_by="li.wei")], actor="li.wei", now=NOW)
    with pytest.raises(Forbidden, match="may not approve"):
        ledger.approve("d-1", 1, approver_id="chen.jing", may_approve=no, plan_hash=None, comment="", now=NOW)
    with pytest.raises(Forbidden, match="four-eyes"):
        _approve(ledger, who="li.wei")
    assert ledger.get_draft("d-1", 1).state == "DRAFT"
    assert ledger.approvals("d-1") == []
    seen: list[tuple[str, str | None]] = []
    ledger.approve("d-1", 1, approver_id="li.wei", comment="", plan_hash=None, now=NOW, four_eyes=False,
                   may_approve=lambda t, r: seen.append((t, r)) or True)
    assert seen == [("city-fire", "region-1001")]
    assert ledger.get_draft("d-1", 1).state == "APPROVED"


def test_superseded_rejected_waiting_and_blocked_versions_cannot_be_approved(ledger: Ledger) -> None:
    (v1,) = ledger.record_versions([version(v=1)], actor="li.wei", now=NOW)
    ledger.record_versions([version(v=2)], actor="li.wei", now=NOW, supersede=v1)
    with pytest.raises(ApprovalStale, match="superseded"):
        _approve(ledger, v=1)
    ledger.reject("d-1", 2, approver_id="chen.jing", may_approve=yes, reason="wrong area", now=NOW)
    with pytest.raises(Conflict):
        _approve(ledger, v=2)
    with pytest.raises(InvalidArgument):
        ledger.reject("d-1", 2, approver_id="chen.jing", may_approve=yes, reason="  ", now=NOW)
    ledger.record_versions([version("d-2", state="WAITING_RESOURCE", plan_hash=None)], actor="li.wei", now=NOW)
    with pytest.raises(Conflict, match="WAITING_RESOURCE"):
        _approve(ledger, "d-2")
    ledger.record_versions([version("d-3", verdict="block")], actor="li.wei", now=NOW)
    with pytest.raises(Conflict, match="blocking"):
        _approve(ledger, "d-3")
    assert [a.decision for a in ledger.approvals("d-1")] == ["REJECTED"]


def test_concurrent_approve_and_reject_exactly_one_wins(ledger: Ledger) -> None:
    for i in range(3):
        ledger.record_versions([version(f"d-{i}")], actor="li.wei", now=NOW)
        outcomes: list[str] = []
        barrier = threading.Barrier(6)

        def decide(kind: str, who: str, draft_id: str = f"d-{i}") -> None:
            barrier.wait()
            try:
                if kind == "approve":
                    _approve(ledger, draft_id, who=who)
                else:
                    ledger.reject(draft_id, 1, approver_id=who, may_approve=yes, reason="no", now=NOW)
                outcomes.append(kind)
            except Conflict:
                outcomes.append("CONFLICT")

        threads = [threading.Thread(target=decide, args=(k, f"u{j}")) for j, k in
                   enumerate(["approve", "reject"] * 3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        winners = [o for o in outcomes if o != "CONFLICT"]
        assert len(outcomes) == 6 and len(winners) == 1, outcomes
        rec = ledger.get_draft(f"d-{i}", 1)
        assert rec.state == {"approve": "APPROVED", "reject": "REJECTED"}[winners[0]]
        assert len(ledger.approvals(f"d-{i}")) == 1
        assert len(ledger.events(f"d-{i}")) == 2


# --------------------------------------------------------------------------- dispatch claims


def test_claim_is_idempotent_and_parameters_must_match(ledger: Ledger) -> None:
    ledger.record_versions([version()], actor="li.wei", now=NOW)
    with pytest.raises(ApprovalRequired):
        ledger.claim_dispatch("d-1", 1, plan_hash="h" * 64, params={"link": None}, actor="chen.jing", now=NOW)
    _approve(ledger)
    with pytest.raises(ApprovalStale):
        ledger.claim_dispatch("d-1", 1, plan_hash="0" * 64, params={"link": None}, actor="chen.jing", now=NOW)
    first = ledger.claim_dispatch("d-1", 1, plan_hash="h" * 64, params={"link": None}, actor="chen.jing", now=NOW)
    assert first.claimed and first.dispatch.status == "PENDING"
    assert first.dispatch.idempotency_key == idempotency_key("d-1", 1, "h" * 64)
    again = ledger.claim_dispatch("d-1", 1, plan_hash="h" * 64, params={"link": None}, actor="other", now=NOW)
    assert not again.claimed and again.dispatch == first.dispatch
    with pytest.raises(Conflict, match="other parameters"):
        ledger.claim_dispatch("d-1", 1, plan_hash="h" * 64, params={"link": "udp:x"}, actor="chen.jing", now=NOW)
    done = ledger.finish_dispatch(first.dispatch.idempotency_key, status="ACKED", result={"message": "ok"},
                                  actor="chen.jing", now=NOW)
    assert done.status == "ACKED" and ledger.get_draft("d-1", 1).state == "DISPATCHED"
    later = ledger.claim_dispatch("d-1", 1, plan_hash="h" * 64, params={"link": None}, actor="x",
                                  now=NOW + timedelta(hours=5))
    assert not later.claimed and later.dispatch.status == "ACKED"
    with pytest.raises(Conflict):  # an outcome is recorded once
        ledger.finish_dispatch(first.dispatch.idempotency_key, status="FAILED", result={}, actor="x", now=NOW)
    assert len(ledger.dispatches("d-1")) == 1


def test_failed_dispatch_aborts_and_attempts_are_logged(ledger: Ledger) -> None:
    ledger.record_versions([version()], actor="li.wei", now=NOW)
    _approve(ledger)
    claim = ledger.claim_dispatch("d-1", 1, plan_hash="h" * 64, params={}, actor="chen.jing", now=NOW)
    key = claim.dispatch.idempotency_key
    ledger.record_attempt(key, {"kind": "mission", "outcome": "NACK"}, now=NOW)
    ledger.record_attempt(key, {"kind": "mission", "outcome": "NACK"}, now=NOW)
    done = ledger.finish_dispatch(key, status="FAILED", result={"message": "MAV_MISSION_DENIED"}, actor="c", now=NOW)
    assert done.attempts == 2 and [a["outcome"] for a in done.attempt_log] == ["NACK", "NACK"]
    assert ledger.get_draft("d-1", 1).state == "ABORTED"
    with pytest.raises(InvalidArgument):
        ledger.finish_dispatch(key, status="BOGUS", result={}, actor="c", now=NOW)


def test_idempotency_key_depends_on_id_version_and_hash() -> None:
    keys = {idempotency_key("d-1", 1, "a"), idempotency_key("d-1", 2, "a"), idempotency_key("d-2", 1, "a"),
            idempotency_key("d-1", 1, "b")}
    assert len(keys) == 4 and idempotency_key("d-1", 1, "a") == idempotency_key("d-1", 1, "a")


# --------------------------------------------------------------------------- file, schema, audit


def test_migrations_are_recorded_once(ledger: Ledger, tmp_path: Path) -> None:
    ledger.ensure()
    assert ledger.schema_versions() == list(range(1, SCHEMA_VERSION + 1))
    again = Ledger(ledger.path)
    again.record_versions([version()], actor="li.wei", now=NOW)
    assert again.schema_versions() == list(range(1, SCHEMA_VERSION + 1))


def test_a_ledger_from_a_newer_sortie_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "newer.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, "
                "applied_time VARCHAR NOT NULL)")
    con.execute("INSERT INTO schema_migrations VALUES (?, 'future', 'x')", [SCHEMA_VERSION + 1])
    con.close()
    with pytest.raises(LedgerUnavailable, match="newer"):
        Ledger(path).list_drafts()


def test_corrupt_file_is_reported_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "ledger.duckdb"
    junk = b"SQLite format 3\x00" + bytes(range(256)) * 8
    path.write_bytes(junk)
    for call in (lambda L: L.list_drafts(), lambda L: L.record_versions([version()], actor="x", now=NOW),
                 lambda L: L.get_draft("d-1")):
        with pytest.raises(LedgerUnavailable, match="not a DuckDB database"):
            call(Ledger(path))
    assert path.read_bytes() == junk


def test_missing_ledger_next_to_drafts_is_reported_not_recreated(tmp_path: Path) -> None:
    (tmp_path / "drafts" / "d-1" / "v1").mkdir(parents=True)
    path = tmp_path / "ledger.duckdb"
    with pytest.raises(LedgerUnavailable, match="missing"):
        Ledger(path).record_versions([version()], actor="x", now=NOW)
    with pytest.raises(LedgerUnavailable, match="missing"):
        Ledger(path).list_drafts()
    assert not path.exists()


def test_fresh_home_reads_empty_and_unknown_drafts_are_not_found(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb")
    assert ledger.list_drafts() == [] and ledger.events("d-1") == []
    with pytest.raises(NotFound):
        ledger.get_draft("d-1")


def test_audit_rows_hash_and_redact_arguments(ledger: Ledger) -> None:
    args = {"text": "巡一遍", "api_key": "sk-secret", "nested": {"password": "p", "ok": 1}, "long": "x" * 900}
    ledger.audit(actor="li.wei", command="plan", args=args, result_code="OK", duration_s=0.25, started=NOW)
    (row,) = ledger.audit_rows()
    assert row.args_redacted["api_key"] == "***" and row.args_redacted["nested"] == {"password": "***", "ok": 1}
    assert "sk-secret" not in str(row.args_redacted) and len(row.args_redacted["long"]) < 600
    assert row.args_sha256 != ledger.audit_rows()[0].args_sha256.upper()
    assert (row.actor, row.command, row.result_code, row.duration_ms) == ("li.wei", "plan", "OK", 250.0)
    assert redact({"token": None}) == {"token": None}


def test_draft_records_round_trip(ledger: Ledger) -> None:
    v = replace(version(), findings=[{"rule_id": "r", "severity": "warn"}], missing=["x"], notes={"k": [1, 2]})
    (rec,) = ledger.record_versions([v], actor="li.wei", now=NOW)
    assert (rec.findings, rec.missing, rec.notes, rec.intent) == (v.findings, v.missing, v.notes, v.intent)
    assert ledger.find_by_request_key("rk-d-1") == rec
    assert ledger.list_drafts(tenants=["port-authority"]) == []
    assert [d.draft_id for d in ledger.list_drafts(tenants=["city-fire"])] == ["d-1"]
