"""The approval wait of a run, and the named state the run ends in.

Why its own module: the wait is where an operator meets the run, so every
input must get an answer they can see, and a restart must not replay what was
already answered.

- **Each input is answered once.** A deployed run restarts from the top on
  every resume (FACTS), and Prefect hands a fired wait's recorded input back
  again. So after judging the input of wait ``approval-<n>`` the run stores a
  keyed run input ``sortie-answer-<n>`` (the verdict); a restart reads those
  first and waits at ``approval-<next>``. Earlier refused inputs are neither
  re-judged, re-logged nor re-audited.
- **A refused input is answered in the run**: one log line (no traceback:
  the decision task returns the refusal instead of raising), the run's
  approval artifact ``draft-<id>-v<n>-approval`` says ``refused: <reason>``,
  an audit row in the ledger says who tried, how their identity was proven,
  when and why (``flows.usecases.decisions.record_attempt``; with a sortie
  server the server audits what reaches it, and what the run refused before
  asking is sent to it for its audit too), and the run waits again with a
  fresh Resume.
- **A code is judged when it was typed.** A deployed run reads its input only
  when a worker restarts it, a minute or more after Submit (FACTS); the input
  carries Prefect's own record of when it was submitted (the run input's
  ``created``), and the authority judges a one-time code at that time
  (``flows.server.totp.judged_at``, bounded by the server's clock).
- **A decision made elsewhere is never missed.** Before every wait the run
  reads the ledger again: a decision recorded between the run tagging itself
  and suspending (when the authority found no paused run to wake) ends the
  wait at once.
- **Told once, at once.** The first wait of a run announces it before the run
  waits (``notify.announce_wait``: the ``sortie.approval.waiting`` event the
  "approval needed" automation listens to, posted to the Prefect API); a re-wait
  after a refused input, or the same wait after a restart, does not announce
  again.
- **Bounded.** After ``max_refused`` refused inputs the run ends REFUSED (the
  reasons in its state message); the ledger gets a REFUSED audit row, shown
  by ``sortie show``. The draft stays DRAFT: an approver can still approve it
  before its deadline (``sortie approve``, then ``sortie dispatch`` or a new
  ``dispatch-mission`` run, which dispatches an approved version at once).

The named state a run ends in is ``flows.orchestration.named_end``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flows.orchestration.approval_input import ApprovalInput, RelayedApprovalInput, validate_approval
from flows.orchestration.notify import announce_wait
from planner.errors import InvalidArgument, SortieError

__all__ = ["Gate", "GateOps", "wait_for_decision", "short_reason", "MAX_REFUSED_INPUTS", "answer_key"]

#: Refused inputs a run answers before it ends REFUSED (a flow parameter overrides it).
MAX_REFUSED_INPUTS = 5
_ANSWER_PREFIX = "sortie-answer-"
WAIT_ACTOR = "prefect:approval-wait"


@dataclass(frozen=True)
class Gate:
    """What one run waits for: the draft version and plan, how it waits, who dispatches after an approval."""

    draft_id: str
    version: int
    plan_hash: str
    deadline: str
    suspend: bool
    timeout_s: int
    poll_interval_s: int
    max_refused: int = MAX_REFUSED_INPUTS
    dispatcher: str | None = None
    relayed: bool = False  # a sortie server decides: the form requires the one-time code


@dataclass(frozen=True)
class GateOps:
    """The authority's operations the wait needs (the flow's tasks), passed in so this module stays flow-agnostic.

    ``state()`` → the version's state after expiring it if its deadline passed; ``record(decision)`` →
    ``{"state": ...}`` or ``{"refused": code, "message": ...}``; ``strands(user)`` → whether their approval
    would never fly (they may approve but no dispatch of theirs could pass: ``Authority.dispatch_refusal``);
    ``audit(command, actor, args, code, message)`` keeps a refused input (``Authority.record_attempt``).
    """

    state: Callable[[], str]
    record: Callable[[dict[str, Any]], dict[str, Any]]
    strands: Callable[[str], bool]
    audit: Callable[[str, str, dict[str, Any], str, str | None], None]


def answer_key(attempt: int) -> str:
    return f"{_ANSWER_PREFIX}{int(attempt)}"


def short_reason(code: str, message: str) -> str:
    """The few words an operator reads first: four-eyes, role, wrong-hash, wrong-draft, junk, …"""
    text = message.lower()
    for needle, reason in (("four-eyes", "four-eyes"), ("may not approve", "role"), ("plan hash", "wrong-hash"),
                           ("the one-time code expired", "code-expired"), ("expired when it was submitted", "code-expired"),
                           ("superseded", "superseded"), ("expired", "expired"), ("is invalid", "junk"),
                           ("the input is for", "wrong-draft"), ("dispatcher role", "no-dispatcher"),
                           ("one-time code", "one-time-code")):
        if needle in text:
            return reason
    return code.lower().replace("_", "-")


def _answered() -> dict[int, dict[str, Any]]:
    """The verdicts this run already gave, by attempt number (kept as keyed run inputs across restarts)."""
    from prefect.input import filter_flow_run_input

    out: dict[int, dict[str, Any]] = {}
    for item in filter_flow_run_input(key_prefix=_ANSWER_PREFIX, limit=200):
        try:
            out[int(item.key[len(_ANSWER_PREFIX):])] = dict(item.decoded_value)
        except (ValueError, TypeError):
            continue
    return out


def _remember(attempt: int, verdict: dict[str, Any]) -> None:
    from prefect.input import create_flow_run_input

    create_flow_run_input(key=answer_key(attempt), value=verdict)


def publish_wait_artifact(gate: Gate, status: str, refused: list[dict[str, Any]]) -> None:
    """The run's approval artifact ``draft-<id>-v<n>-approval``: what the run waits for and every refusal."""
    from prefect.artifacts import create_markdown_artifact

    from flows.safe_text import markdown_text
    from flows.orchestration.artifacts import artifact_key

    lines = [f"# Approval of {markdown_text(gate.draft_id)} v{gate.version}", "", f"**{markdown_text(status)}**", "",
             f"Plan hash `{gate.plan_hash}`; decide by {gate.deadline} (wall clock) and before the ledger's deadline.",
             ""]
    if refused:
        lines += ["| # | Refused | Who | Why |", "|---|---|---|---|"]
        lines += [f"| {r['attempt']} | {markdown_text(r['reason'])} | {markdown_text(r.get('approver') or '?')} | "
                  f"{markdown_text(r['message'])} |" for r in refused]
        lines.append("")
    left = gate.max_refused - len(refused)
    if status.startswith("waiting"):
        terminal = (f"`sortie approve {gate.draft_id} --version {gate.version}` with your own token" if gate.relayed
                    else f"`sortie approve {gate.draft_id} --version {gate.version} --as <you>`")
        code = " with your user id and one-time code" if gate.relayed else ""
        lines.append(f"Resume the run with a corrected input{code} ({left} refused input(s) left before it ends "
                     f"REFUSED), or {terminal}.")
    create_markdown_artifact(key=f"{artifact_key(gate.draft_id, gate.version)}-approval",
                             markdown="\n".join(lines) + "\n",
                             description=f"Approval of draft {gate.draft_id} v{gate.version}: {status}")


def _wait(gate: Gate, form: Any, attempt: int) -> tuple[Any, str | None]:
    """Wait at ``approval-<attempt>``; the input and when it was submitted (Prefect's record, ISO 8601)."""
    from prefect.flow_runs import pause_flow_run, suspend_flow_run

    key = f"approval-{attempt}"
    if gate.suspend:
        raw = suspend_flow_run(wait_for_input=form, timeout=gate.timeout_s, key=key)
    else:
        raw = pause_flow_run(wait_for_input=form, timeout=gate.timeout_s, poll_interval=gate.poll_interval_s, key=key)
    return raw, submitted_at(f"{'suspended' if gate.suspend else 'paused'}-{key}-response")


def submitted_at(response_key: str) -> str | None:
    """When the input stored under ``response_key`` reached the Prefect server (its ``created``), or None.

    Prefect's ``resume_flow_run`` stores a resumed run's input as a run input keyed ``<state>-<pause key>-response``
    (``prefect.input.run_input.keyset_from_paused_state``), stamped by the Prefect server when the operator pressed
    Submit; the run reads it only when it restarts, which may be a minute later.
    """
    from prefect import get_client
    from prefect.context import FlowRunContext

    ctx = FlowRunContext.get()
    if ctx is None or ctx.flow_run is None:
        return None
    with get_client(sync_client=True) as client:
        found = client.filter_flow_run_input(ctx.flow_run.id, key_prefix=response_key, limit=1, exclude_keys=set())
    return found[0].created.isoformat() if found and found[0].created is not None else None


def _judge(gate: Gate, ops: GateOps, raw: Any, when: str | None) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(verdict, decision): the input checked against the form, this draft, the dispatch policy and the ledger."""
    try:
        decision = validate_approval(raw, RelayedApprovalInput if gate.relayed else ApprovalInput)
        if (decision.draft_id, decision.version) != (gate.draft_id, gate.version):
            raise InvalidArgument(f"the input is for {decision.draft_id} v{decision.version}, this run waits for "
                                  f"{gate.draft_id} v{gate.version}")
        if decision.plan_hash != gate.plan_hash:  # both in full: two hashes may share a long prefix
            raise InvalidArgument(f"plan hash {decision.plan_hash} is not the hash of draft {gate.draft_id} "
                                  f"v{gate.version} ({gate.plan_hash}): the plan you reviewed is not this one")
    except SortieError as exc:
        approver = raw.get("approver") if isinstance(raw, dict) else getattr(raw, "approver", None)
        return {"refused": exc.code, "message": exc.message, "approver": str(approver or "")[:64] or None}, None
    d = decision.model_dump() | {"submitted_at": when}
    if decision.decision == "approve" and gate.dispatcher is None and ops.strands(decision.approver):
        return {"refused": "FORBIDDEN", "approver": decision.approver,
                "message": f"{decision.approver} does not hold the dispatcher role and this run names no dispatcher: "
                           "an approval would never fly (start the run with a dispatcher, or approve as a user who "
                           "also dispatches)"}, d
    out = ops.record(d)
    if "refused" in out:
        return {"refused": out["refused"], "message": out["message"], "approver": decision.approver,
                "by_ledger": True}, d
    return {"state": out["state"], "approver": decision.approver}, d


def wait_for_decision(gate: Gate, ops: GateOps, form: Any, logger: Any) -> dict[str, Any]:
    """Wait until the ledger leaves DRAFT or the refusals run out; ``{"state", "approver"}`` or ``{"outcome":
    "REFUSED", "refused": [...]}``."""
    answered = _answered()
    refused = [dict(v, attempt=n) for n, v in sorted(answered.items()) if "refused" in v]
    for r in refused:
        r.setdefault("reason", short_reason(r["refused"], r["message"]))
    attempt = max(answered, default=0) + 1
    if not answered:
        publish_wait_artifact(gate, "waiting for approval", [])
    announce_wait(gate.draft_id, gate.version, gate.deadline)  # once per run: a restart does not say it again
    while len(refused) < gate.max_refused:
        current = ops.state()  # a decision recorded before this run paused found nothing to wake
        if current != "DRAFT":
            logger.info("draft %s v%s is %s in the ledger", gate.draft_id, gate.version, current)
            return {"state": current, "approver": None}
        raw, when = _wait(gate, form, attempt)
        current = ops.state()
        if current != "DRAFT":
            _remember(attempt, {"state": current})
            logger.info("draft %s v%s is %s in the ledger", gate.draft_id, gate.version, current)
            return {"state": current, "approver": None}
        verdict, decision = _judge(gate, ops, raw, when)
        if "refused" not in verdict:
            _remember(attempt, verdict)
            ops.audit(f"prefect.{decision['decision']}", verdict["approver"], {**_args(decision), "attempt": attempt},
                      "OK", None)
            return verdict
        # a decision after the ledger's deadline EXPIRED the version: that ends the wait
        judged = verdict.pop("by_ledger", False)  # the authority judged (and, a server, audited) it
        current = ops.state() if judged else "DRAFT"
        if current != "DRAFT":
            _remember(attempt, {"state": current})
            logger.info("draft %s v%s is %s in the ledger (%s)", gate.draft_id, gate.version, current,
                        verdict["message"])
            return {"state": current, "approver": None}
        verdict["reason"] = short_reason(verdict["refused"], verdict["message"])
        _remember(attempt, verdict)
        refused.append(dict(verdict, attempt=attempt))
        ops.audit(f"prefect.{(decision or {}).get('decision') or 'approve'}", verdict.get("approver") or "unknown",
                  {**_args(decision or {}), "attempt": attempt, "judged_by_authority": judged}, verdict["refused"],
                  verdict["message"])
        logger.warning("refused: %s (%s); waiting again, %d of %d refused inputs", verdict["reason"],
                       verdict["message"], len(refused), gate.max_refused)
        publish_wait_artifact(gate, f"waiting again — refused: {verdict['reason']}", refused)
        attempt += 1
    reasons = ", ".join(dict.fromkeys(r["reason"] for r in refused))
    message = (f"ended after {len(refused)} refused inputs ({reasons}); draft {gate.draft_id} v{gate.version} is "
               f"still DRAFT: approve it with `sortie approve`, then dispatch it or start a new dispatch-mission run")
    if not any(v.get("state") == "REFUSED" for v in answered.values()):  # a restart does not record it twice
        _remember(attempt, {"state": "REFUSED"})
        ops.audit("prefect.approval-wait", WAIT_ACTOR, {"refused_inputs": len(refused)}, "REFUSED", message)
        publish_wait_artifact(gate, f"REFUSED: {message}", refused)
    logger.warning("refused: %s", message)
    return {"outcome": "REFUSED", "state": "DRAFT", "refused": [r["reason"] for r in refused], "message": message}


def _args(decision: dict[str, Any]) -> dict[str, Any]:
    return {"plan_hash": decision.get("plan_hash"), "decision": decision.get("decision"), "via": "prefect-form",
            "comment": decision.get("comment")}
