"""A scheduled plan that needs an answer: the run waits on a form with the questions, takes the answers, plans.

Why: a ``daily-patrol`` at 06:00 or a ``plan-mission`` run started from the UI
has no terminal to print a question on. When the authority keeps its request
open (``NEEDS_CLARIFICATION`` naming it, ``flows.usecases.requests``), the run
waits — suspended in a deployment, paused otherwise, like the approval gate —
on a typed form (``clarify_input``): one field per open question, the
answerer's user id and, with a sortie server, their one-time code (the server
proves the answerer by it, judged at the moment they pressed Submit). The
answers go to the authority (``Authority.answer``, relayed for the answerer),
which reads the request again and plans it; the run then goes on with that
draft (its artifact, and for a patrol the approval gate).

- **Every input is answered in the run.** A refused one (junk, a question not
  asked, a user without the planner role, a wrong code) is a log line and a row
  of the request's artifact ``request-<id>``, and the run waits again with a
  fresh form; follow-up questions (an answer raised new ones) are a new form
  and count as no refusal. After ``max_refused`` refusals the run ends REFUSED;
  the request stays open for ``sortie plan --continue`` until its deadline.
- **Answered elsewhere, or expired:** the authority wakes the run
  (``flows.authority.waking.wake_request_runs``); before and after every wait
  the run reads the request again: PLANNED → it goes on with that draft;
  EXPIRED → it ends EXPIRED.
- **Bounded.** The run's window (``clarification_window_s`` from its first wait,
  kept across restarts) and, where the authority stamps with this machine's
  clock, the request's own deadline. A paused run holds a timer that wakes it at
  the deadline; a suspended one is woken when the authority expires the request
  (its sweeper, on the request's deadline); Prefect's own timeout is a safety
  net past both. At the end the run asks the authority to close the request
  (the embedded authority honours the run's deadline; a server its own) and ends
  EXPIRED, with no traceback (``named_end``).
- **Restarts replay nothing**: the verdict of each wait is kept as a keyed run
  input (``sortie-clarify-<n>``), and waits have fixed keys (``clarify-<n>``).
"""

from __future__ import annotations

import contextvars
import threading
from datetime import datetime, timedelta, timezone
from typing import Any

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext

from flows.orchestration.clarify_input import clarification_form, is_wake, validate_answers
from flows.orchestration.mission_tasks import authority_for, refusal
from planner.errors import SortieError

__all__ = ["clarify", "DEFAULT_CLARIFICATION_WINDOW_S", "MAX_REFUSED_ANSWERS", "request_artifact_key"]

#: How long a run waits for answers (wall-clock seconds from its first wait) unless its flow parameter says otherwise.
DEFAULT_CLARIFICATION_WINDOW_S = 1800
MAX_REFUSED_ANSWERS = 5
SAFETY_MARGIN_S = 600
_VERDICT_PREFIX = "sortie-clarify-"
DEADLINE_ACTOR = "prefect:clarification-deadline"


def request_artifact_key(request_id: str) -> str:
    """``request-<id>``: the request's page in the Prefect UI (ids are lowercase hex: a valid key)."""
    return f"request-{request_id.lower()}"


# --------------------------------------------------------------------------- tasks: one authority action each


def _per_run_key(context: Any, parameters: dict[str, Any]) -> str:
    return f"sortie-{context.task.name}-{context.task_run.flow_run_id}"


@task(name="clarification-deadline", cache_key_fn=_per_run_key, persist_result=True)
def clarification_deadline_task(window_s: int) -> str:
    """The run's wall-clock deadline for answers, fixed at its first wait (cached: a restart does not extend it)."""
    return (datetime.now(timezone.utc) + timedelta(seconds=int(window_s))).isoformat()


@task(name="read-request", cache_policy=NO_CACHE)
def read_request_task(request_id: str, now: str | None = None) -> dict[str, Any]:
    """The request as the authority holds it now (never cached: answers arrive from anywhere), on the run's clock
    (a run with a fixed ``now`` reads its request as of then, as the authority that opened it did)."""
    return authority_for("read-request", now=now).request(request_id)


@task(name="answer-request", cache_policy=NO_CACHE)
def answer_task(request_id: str, answers: list[str], answerer: str, code: str | None, submitted_at: str | None,
                world: str | None, now: str | None) -> dict[str, Any]:
    """The answers through the authority, relayed for the answerer: the planned draft's summary, or the refusal as
    an answer (``{"refused": code, "message", "details"}``; follow-up questions are NEEDS_CLARIFICATION)."""
    from flows.authority import Relay

    relay = Relay(answerer, code, datetime.fromisoformat(submitted_at) if submitted_at else None)
    try:
        return authority_for("answer (clarification form)", world=world, now=now).answer(request_id, answers,
                                                                                         relay=relay)
    except SortieError as exc:
        return refusal(exc)


@task(name="close-request", cache_policy=NO_CACHE)
def close_request_task(request_id: str, deadline: str, now: str | None) -> dict[str, Any]:
    """At the run's deadline: ask the authority to close the request (the embedded one honours this deadline)."""
    return authority_for("close-request", now=now).expire_request(
        request_id, deadline=datetime.fromisoformat(deadline), on_behalf_of=DEADLINE_ACTOR)


# --------------------------------------------------------------------------- the wait


def _run() -> Any:
    ctx = FlowRunContext.get()
    return ctx.flow_run if ctx is not None else None


def _tag_run(request_id: str) -> None:
    """Tag the run ``request:<id>`` so the authority finds it to wake it."""
    from prefect import get_client

    from flows.authority.waking import request_tag

    run = _run()
    if run is None:
        return
    with get_client(sync_client=True) as client:
        client.update_flow_run(run.id, tags=sorted(set(run.tags or []) | {request_tag(request_id)}))


def _verdicts() -> dict[int, dict[str, Any]]:
    from prefect.input import filter_flow_run_input

    out: dict[int, dict[str, Any]] = {}
    for item in filter_flow_run_input(key_prefix=_VERDICT_PREFIX, limit=200):
        try:
            out[int(item.key[len(_VERDICT_PREFIX):])] = dict(item.decoded_value)
        except (ValueError, TypeError):
            continue
    return out


def _remember(attempt: int, verdict: dict[str, Any]) -> None:
    from prefect.input import create_flow_run_input

    create_flow_run_input(key=f"{_VERDICT_PREFIX}{attempt}", value=verdict)


def _publish(request: dict[str, Any], status: str, refused: list[dict[str, Any]]) -> None:
    """The request's artifact: the words, what is asked (or how it ended), every refused input."""
    from prefect.artifacts import create_markdown_artifact

    from flows.safe_text import answered_line, markdown_text

    rid = str(request["request_id"])
    lines = [f"# Request {markdown_text(rid)}", "", f"**{markdown_text(status)}**", "",
             f"- **Request (as written):** {markdown_text(str(request.get('request_text') or ''))}",
             f"- **Requested by:** {markdown_text(str(request.get('requested_by') or ''))}",
             f"- **Open until:** {markdown_text(str(request.get('expires_time') or ''))} (the authority's clock)", ""]
    if request.get("state") == "OPEN":
        lines += ["## Questions", ""] + [f"- **{markdown_text(str(q['id']))}**: {markdown_text(str(q['text']))}"
                                         for q in request.get("questions") or []] + [""]
    if request.get("answers"):
        lines += ["## Answered", ""] + [f"- {markdown_text(answered_line(a))}" for a in request["answers"]] + [""]
    if refused:
        lines += ["| # | Refused | Who | Why |", "|---|---|---|---|"]
        lines += [f"| {r['attempt']} | {markdown_text(r['refused'])} | {markdown_text(r.get('answerer') or '?')} | "
                  f"{markdown_text(r['message'])} |" for r in refused] + [""]
    lines.append(f"Answer in the run's form (Resume), or from a terminal: `sortie plan --continue {rid} --answer …`.")
    create_markdown_artifact(key=request_artifact_key(rid), markdown="\n".join(lines) + "\n",
                             description=f"Request {rid}: {status}")


def _wait(form: Any, attempt: int, *, suspend: bool, timeout_s: int, poll_interval_s: int) -> tuple[Any, str | None]:
    from prefect.flow_runs import pause_flow_run, suspend_flow_run

    from flows.orchestration.approval_wait import submitted_at

    key = f"clarify-{attempt}"
    if suspend:
        raw = suspend_flow_run(wait_for_input=form, timeout=timeout_s, key=key)
    else:
        raw = pause_flow_run(wait_for_input=form, timeout=timeout_s, poll_interval=poll_interval_s, key=key)
    return raw, submitted_at(f"{'suspended' if suspend else 'paused'}-{key}-response")


def _alarm(request_id: str, seconds: float) -> threading.Timer:
    """A paused run's timer: wake the run at its deadline (it then ends EXPIRED)."""
    from flows.authority.waking import wake_request_runs

    timer = threading.Timer(max(0.0, seconds), contextvars.copy_context().run,
                            args=(wake_request_runs, request_id, "deadline"))
    timer.daemon = True
    timer.start()
    return timer


def _deadline(window_s: int, request: dict[str, Any], now: str | None) -> datetime:
    """The run's window from its first wait, never past the request's own deadline when the authority stamps with
    this machine's clock (no fixed ``now``)."""
    mine = datetime.fromisoformat(clarification_deadline_task(window_s))
    if now is None and authority_for("read-request").mode == "local":
        mine = min(mine, datetime.fromisoformat(str(request["expires_time"])))
    return mine.astimezone(timezone.utc)


def _ended(request: dict[str, Any], outcome: str, message: str) -> dict[str, Any]:
    return {"request_id": request["request_id"], "draft_id": None, "version": None, "outcome": outcome,
            "state": request.get("state"), "message": message}


def clarify(asked: dict[str, Any], *, world: str | None, now: str | None, window_s: int, poll_interval_s: int,
            max_refused: int = MAX_REFUSED_ANSWERS) -> dict[str, Any]:
    """Wait for answers to the open request ``asked`` names (``NEEDS_CLARIFICATION``'s details); the planned
    draft's summary, or an outcome dict (EXPIRED, REFUSED) the flow ends with."""
    logger = get_run_logger()
    request_id = str(asked["request_id"])
    request = read_request_task(request_id, now)
    deadline = _deadline(window_s, request, now)
    _tag_run(request_id)
    verdicts = _verdicts()
    refused = [dict(v, attempt=n) for n, v in sorted(verdicts.items()) if "refused" in v]
    attempt = max(verdicts, default=0) + 1
    relayed = authority_for("read-request").mode == "server"
    suspend = bool(_run() is not None and _run().deployment_id)
    if not verdicts:
        _publish(request, "waiting for answers", [])
        logger.info("request %s needs clarification: %d question(s); waiting for answers until %s", request_id,
                    len(request.get("questions") or []), deadline.isoformat(timespec="seconds"))
    while True:
        request = read_request_task(request_id, now)
        if request["state"] == "PLANNED":
            logger.info("request %s was planned as %s", request_id, request["draft_id"])
            return authority_for("read-draft").show(str(request["draft_id"]))
        left_s = (deadline - datetime.now(timezone.utc)).total_seconds()
        if request["state"] == "EXPIRED" or left_s <= 0:
            closed = close_request_task(request_id, deadline.isoformat(), now)
            message = (f"request {request_id} was not answered in time; nothing was planned"
                       + ("" if closed["state"] == "EXPIRED" else
                          f" (the authority keeps it open until {closed['expires_time']}: sortie plan --continue)"))
            _publish(dict(request, state=closed["state"]), f"EXPIRED: {message}", refused)
            logger.warning("%s", message)
            return _ended(request, "EXPIRED", message)
        if len(refused) >= max(1, int(max_refused)):
            message = (f"ended after {len(refused)} refused inputs; request {request_id} stays open until "
                       f"{request['expires_time']}: answer it with sortie plan --continue {request_id}")
            _publish(request, f"REFUSED: {message}", refused)
            logger.warning("%s", message)
            return _ended(request, "REFUSED", message)
        form = clarification_form(request_id, request["questions"], request_text=str(request["request_text"]),
                                  relayed=relayed, turn=int(request["turn"]))
        timer = None if suspend else _alarm(request_id, left_s)
        try:
            raw, when = _wait(form, attempt, suspend=suspend, timeout_s=int(left_s) + SAFETY_MARGIN_S,
                              poll_interval_s=poll_interval_s)
        finally:
            if timer is not None:
                timer.cancel()
        if is_wake(raw):
            _remember(attempt, {"woken": True})
            attempt += 1
            continue  # answered elsewhere, expired, or the deadline: the top of the loop reads the request again
        verdict = _judge(raw, when, request, relayed=relayed, world=world, now=now)
        _remember(attempt, verdict)
        attempt += 1
        if "planned" in verdict:
            continue  # the top of the loop reads the request (PLANNED) and returns its draft
        if verdict.get("refused") == "NEEDS_CLARIFICATION":
            logger.info("the answers to request %s raised new questions; waiting again", request_id)
            _publish(read_request_task(request_id, now), "waiting for answers to the follow-up questions", refused)
            continue
        refused.append(dict(verdict, attempt=attempt - 1))
        logger.warning("refused: %s (%s); waiting again, %d of %d refused inputs", verdict["refused"],
                       verdict["message"], len(refused), max_refused)
        _publish(request, f"waiting again — refused: {verdict['refused']}", refused)


def _judge(raw: Any, when: str | None, request: dict[str, Any], *, relayed: bool, world: str | None,
           now: str | None) -> dict[str, Any]:
    """An input checked against the form and the questions it answers, then through the authority."""
    try:
        got = validate_answers(raw, str(request["request_id"]), request["questions"], relayed=relayed)
    except SortieError as exc:
        who = raw.get("answerer") if isinstance(raw, dict) else getattr(raw, "answerer", None)
        return {"refused": exc.code, "message": exc.message, "answerer": str(who or "")[:64] or None}
    out = answer_task(got.request_id, got.as_named(), got.answerer, got.code, when, world, now)
    if "refused" in out:
        return {"refused": out["refused"], "message": out["message"], "answerer": got.answerer}
    return {"planned": out.get("draft_id"), "answerer": got.answerer}
