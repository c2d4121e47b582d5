"""Open requests: a request that needs clarification is kept, answered later, and planned as the same request.

Why: ``sortie plan`` used to refuse such a request and forget it, so the operator
retyped everything and the record kept neither the question nor the answer. Now:

    ask      ``plan_draft`` found questions: the request is recorded OPEN (its id,
             the words, region/area, requester, the world, rules and time it was
             read against, the questions with their ids, kinds and quotes, when it
             expires) and ``NEEDS_CLARIFICATION`` names it (``details.request_id``)
    answer   one answer per open question, in order, or ``QUESTION_ID=TEXT``;
             the request is read again at the time it was made (``understand``:
             "tomorrow" stays the day it meant) with every answer so far; new
             questions keep it OPEN (a follow-up turn); a clear reading is planned
             now, on the current world and rules, as a new draft whose intent keeps
             each question with its answer, who gave it and when, and the request id
    expire   an OPEN request past its deadline (``REQUEST_TTL`` after it was asked,
             on the authority's clock) is EXPIRED: by the sweeper, or when someone
             answers too late (``REQUEST_EXPIRED``)

Refusals, each typed: answering a request already planned, or a question already
answered, is ``CONFLICT`` (two operators answering at once: the ledger takes
one, ``flows.ledger.requests``); an expired one ``REQUEST_EXPIRED``; a question
that was not asked, or a language model's objection (not answerable: restate the
request), ``INVALID_ARGUMENT``; another tenant's request ``NOT_FOUND`` behind the
server (``FORBIDDEN`` locally, like drafts). Answering needs the planner role for
the request's tenant and region: an answer decides what is planned.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from flows.errors import Conflict, Forbidden, RequestExpired
from flows.ledger import Ledger, RequestTurn
from flows.usecases import drafting
from flows.usecases.actor import Actor
from flows.usecases.commitments import with_commitments
from flows.usecases.common import planning_budget
from flows.usecases.draftfiles import files_of
from flows.usecases.grounds import Grounds
from flows.usecases.views import DraftSummary, summarize
from planner.errors import InvalidArgument, NotFound
from planner.world.model import World

__all__ = ["REQUEST_TTL", "ask", "answer", "show", "expire_due", "expire", "request_id_for", "clarification_error",
           "split_answers"]

#: How long an open request waits for its answers: long enough for a shift to come back to it, short enough that
#: a request is not planned from words read against a morning that has passed. On the authority's clock.
REQUEST_TTL = timedelta(hours=4)
MAX_ANSWERS = 20
_NAMED = re.compile(r"^(?P<id>[a-z_]+(?:-\d+)?(?:\.\d+)*)\s*=\s*(?P<text>.+)$", re.DOTALL)


def request_id_for(key: str) -> str:
    """The id of the open request made for a plan request key (``drafting.request_key``)."""
    return "r-" + key[:12]


def _answer_hint(request_id: str) -> str:
    return (f"sortie plan --continue {request_id} --answer TEXT (one per question, in order; or --answer "
            "QUESTION_ID=TEXT)")


def clarification_error(turn: RequestTurn, *, missing: Sequence[str] | None = None,
                        instructions: Sequence[str] | None = None) -> Any:
    """``NEEDS_CLARIFICATION`` for an OPEN request: the questions with their ids, the request id, how to answer."""
    from intents.errors import NeedsClarification
    from intents.grammar.asking import missing_items
    from intents.questions import Question

    asked = [Question.model_validate(q) for q in turn.questions]
    if missing is None:
        missing = missing_items(asked)
    if instructions is None:
        instructions = [q.quote for q in asked if q.kind.value == "instruction"]
    lines = "\n".join(f"  - [{q.id}] {q.text}" for q in asked) or f"  - missing: {', '.join(missing)}"
    message = (f"the request needs clarification; nothing was planned. It is kept as request {turn.request_id} "
               f"until {turn.expires_time}:\n{lines}\nanswer with: {_answer_hint(turn.request_id)}")
    return NeedsClarification(message, details={
        "request_id": turn.request_id, "turn": turn.turn, "expires_time": turn.expires_time, "tenant": turn.tenant,
        "questions": [q.text for q in asked], "asked": turn.questions, "missing": list(missing),
        "instructions": list(instructions), "answers": turn.answers, "answer_with": _answer_hint(turn.request_id)})


# --------------------------------------------------------------------------- ask


def ask(*, key: str, actor: Actor, text: str, region_id: str | None, area: Any, tenant: str, world: World,
        world_dir: Path, rules_sha256: str, coverage_target: float | None, extraction: Any, now: datetime,
        ledger: Ledger) -> RequestTurn:
    """Record the request OPEN and raise ``NEEDS_CLARIFICATION`` naming it; the same request again (same words,
    time, world and rules) names the same request. Returns only for a request already answered and planned (its
    PLANNED turn: the caller shows that draft)."""
    request_id = request_id_for(key)
    turns = ledger.request_turns(request_id)
    if not turns:
        questions = [q.model_dump(mode="json") for q in extraction.questions]
        turn = RequestTurn(
            request_id=request_id, turn=1, state="OPEN", tenant=tenant, region_id=region_id, requested_by=actor.id,
            request_text=text, request={
                "read_at": now.isoformat(), "timezone": world.timezone, "area": drafting.area_dict(area),
                "world_name": world.name, "world_dir": str(world_dir), "world_hash": world.snapshot_hash,
                "rules_sha256": rules_sha256, "coverage_target": coverage_target, "extractor": extraction.extractor,
                "intent": extraction.intent.model_dump(mode="json")},
            questions=questions, answers=[], actor=actor.id, reason="the request needs clarification",
            created_time=now.isoformat(), expires_time=(now + REQUEST_TTL).isoformat(), turn_time=now.isoformat())
        try:
            ledger.open_request(turn)
        except Conflict:
            turns = ledger.request_turns(request_id)  # the same request recorded by a concurrent call: that one
        else:
            raise clarification_error(turn, missing=extraction.intent.missing,
                                      instructions=extraction.intent.instructions)
    latest = turns[-1]
    if latest.state == "PLANNED":
        return latest
    if latest.state == "EXPIRED":
        raise RequestExpired(f"request {request_id} for these words at this time expired at {latest.expires_time}; "
                             "plan the request again", details={"request_id": request_id, "state": latest.state})
    raise clarification_error(latest)


# --------------------------------------------------------------------------- reading and answering


def _seen(world: World, who: Actor, turn: RequestTurn) -> Any:
    """The user, if they see the request's tenant (``reading.seen_by``, the one visibility rule)."""
    from flows.usecases.reading import seen_by

    return seen_by(world, who, turn.tenant, "request", turn.request_id)


def show(request_id: str, *, viewer: Actor | None, now: datetime, grounds: Grounds) -> dict[str, Any]:
    """The request, its open questions (or the draft it planned), every answer and every turn."""
    turns = grounds.ledger.request_turns(request_id)
    if not turns:
        raise NotFound(f"request {request_id!r} is not in the ledger")
    latest = turns[-1]
    if viewer is not None and viewer.id:
        _seen(grounds.world(latest.request.get("world_dir")), viewer, latest)
    out = {k: v for k, v in latest.to_dict().items() if k not in ("request", "actor", "reason", "turn_time")}
    due = latest.state == "OPEN" and now >= datetime.fromisoformat(latest.expires_time)
    out.update(state="EXPIRED" if due else latest.state, read_at=latest.request.get("read_at"),
               world_name=latest.request.get("world_name"), extractor=latest.request.get("extractor"),
               turns=[{"turn": t.turn, "state": t.state, "actor": t.actor, "reason": t.reason, "time": t.turn_time}
                      for t in turns])
    if latest.state == "OPEN" and not due:
        out["answer_with"] = _answer_hint(request_id)
    return out


def split_answers(turn: RequestTurn, answers: Sequence[str]) -> dict[str, str]:
    """This turn's answers by question id: ``QUESTION_ID=TEXT`` names one, the others fill the open questions in
    order. A question answered before is a ``Conflict``; more answers than open questions, an empty one, or a
    question a language model raised (it cannot be answered: restate the request) is ``INVALID_ARGUMENT``."""
    if not answers:
        raise InvalidArgument(f"no answer given: {_answer_hint(turn.request_id)}")
    if len(answers) > MAX_ANSWERS:
        raise InvalidArgument(f"at most {MAX_ANSWERS} answers at once")
    kinds = {q["id"]: q["kind"] for q in turn.questions}
    done = {a["id"]: a for a in turn.answers}
    named: dict[str, str] = {}
    plain: list[str] = []
    for raw in answers:
        m = _NAMED.match(raw.strip())
        if m and (m.group("id") in kinds or m.group("id") in done or "-" in m.group("id") or "." in m.group("id")):
            named[m.group("id")] = m.group("text").strip()
        else:
            plain.append(raw)
    for qid in named:
        if qid in done:
            a = done[qid]
            raise Conflict(f"question {qid} of request {turn.request_id} was answered already ({a.get('answer')!r} by "
                           f"{a.get('answered_by')} at {a.get('answered_time')}); answering twice is refused",
                           details={"question": qid, "answered_by": a.get("answered_by")})
    if any(kinds.get(qid) == "model" for qid in named):
        raise InvalidArgument("a language model's objection cannot be answered: restate the request and plan it again")
    free = [qid for qid, kind in kinds.items() if qid not in named and kind != "model"]
    if len(plain) > len(free):
        raise InvalidArgument(f"{len(plain)} answers for {len(free)} open question(s) ({', '.join(free) or 'none'}) "
                              f"of request {turn.request_id}")
    given = {**named, **dict(zip(free, plain))}
    for qid, text in given.items():
        if not text.strip():
            raise InvalidArgument(f"the answer to {qid} is empty")
    return given


def _stamped(answered: Sequence[Any], given: Mapping[str, str], before: Sequence[Mapping[str, Any]], who: str,
             now: datetime, request_id: str) -> list[dict[str, Any]]:
    """Every answer the reading applied, each with who gave it and when (this turn's: ``who`` at ``now``)."""
    earlier = {a["id"]: a for a in before}
    out = []
    for a in answered:
        row = a.to_dict()
        if row["id"] in given:
            row.update(answered_by=who, answered_time=now.isoformat())
        else:
            row.update({k: earlier.get(row["id"], {}).get(k) for k in ("answered_by", "answered_time")})
        out.append(row | {"request_id": request_id})
    return out


def _extract(turn: RequestTurn, world: World, rules_path: str | Path | None, llm_settings: Any | None,
             answers: Mapping[str, str]) -> Any:
    """The request read again as it was read when asked (its time, the world's zone), with ``answers`` applied."""
    from flows.usecases.intake import extract_request

    read_at = datetime.fromisoformat(str(turn.request["read_at"]))
    return extract_request(turn.request_text, region_id=turn.region_id, now=read_at, world=world,
                               llm_settings=llm_settings, rules_path=rules_path, answers=answers)


def _expire_turn(ledger: Ledger, turn: RequestTurn, *, actor: str, reason: str, now: datetime) -> RequestTurn:
    """OPEN → EXPIRED as a new turn (an answer that won the race stands: then its turn is returned)."""
    try:
        return ledger.add_turn(turn.next(state="EXPIRED", questions=turn.questions, actor=actor, reason=reason,
                                         turn_time=now.isoformat()))
    except Conflict:
        return ledger.latest_request(turn.request_id)


def _refuse_closed(turn: RequestTurn, who: str, now: datetime, ledger: Ledger) -> None:
    """A request already planned, expired, or past its deadline (recorded EXPIRED now) cannot be answered."""
    if turn.state == "PLANNED":
        raise Conflict(f"request {turn.request_id} was answered by {turn.actor} at {turn.turn_time} and planned as "
                       f"{turn.draft_id}; answering it twice is refused",
                       details={"request_id": turn.request_id, "state": turn.state, "draft_id": turn.draft_id})
    if turn.state == "OPEN" and now >= datetime.fromisoformat(turn.expires_time):
        turn = _expire_turn(ledger, turn, actor=who, reason=f"answered at {now.isoformat()}, after its deadline",
                            now=now)
        if turn.state != "EXPIRED":
            _refuse_closed(turn, who, now, ledger)
    if turn.state == "EXPIRED":
        raise RequestExpired(f"request {turn.request_id} expired at {turn.expires_time}; nothing was planned: plan the "
                             "request again", details={"request_id": turn.request_id, "state": "EXPIRED"})


def answer(request_id: str, answers: Sequence[str], *, answerer: Actor, now: datetime, grounds: Grounds,
           llm_settings: Any | None = None) -> DraftSummary:
    """Answer an open request and plan it as a new draft (see the module docstring); ``NEEDS_CLARIFICATION`` again
    (same request id, the follow-up questions) when an answer raised new questions."""
    from flows.usecases.intake import record_drafted, with_coverage_target
    from intents.extract import Extraction

    ledger = grounds.ledger
    latest = ledger.latest_request(request_id)
    wdir = grounds.world_folder(latest.request.get("world_dir"))
    world = grounds.world(latest.request.get("world_dir"))
    user = _seen(world, answerer, latest)
    if not user.may("planner", latest.tenant, latest.region_id):
        raise Forbidden(f"{user.id} may not plan for tenant {latest.tenant}"
                        + ("" if latest.region_id is None else f" in region {latest.region_id}")
                        + ": answering a request decides what is planned")
    _refuse_closed(latest, answerer.id, now, ledger)
    given = split_answers(latest, answers)
    every = {a["id"]: a["answer"] for a in latest.answers} | given
    extraction = _extract(latest, world, grounds.rules, llm_settings, every)
    stamped = _stamped(extraction.answered, given, latest.answers, answerer.id, now, request_id)
    if extraction.needs_clarification:
        follow = latest.next(state="OPEN", questions=[q.model_dump(mode="json") for q in extraction.questions],
                             answers=stamped, actor=answerer.id, reason="answered; the answers raised questions",
                             turn_time=now.isoformat())
        ledger.add_turn(follow)
        raise clarification_error(follow, missing=extraction.intent.missing, instructions=extraction.intent.instructions)
    # Read at the request's time (its days pinned), planned now: "asap" is now, "tomorrow" the day it meant.
    extraction = Extraction.resolve(extraction.intent, extraction.extractor, now=now, timezone=world.timezone,
                                    answered=extraction.answered, notes=extraction.notes, set_aside=extraction.set_aside)
    extraction = with_coverage_target(extraction, latest.request.get("coverage_target"))
    from shapely.geometry import shape

    area = shape(latest.request["area"])
    rules = grounds.rule_set()
    key = drafting.request_key("answered", request_id, sorted(every.items()), now.isoformat(), world.snapshot_hash,
                               rules.sha256)
    draft_id = "d-" + key[:12]
    doc = extraction.to_dict() | {"clarifications_answered": stamped, "request_id": request_id}
    req = drafting.Request(draft_id=draft_id, request_key=key, tenant=latest.tenant, region_id=latest.region_id,
                           requested_by=latest.requested_by, text=latest.request_text, intent_doc=doc,
                           area=drafting.area_dict(area), world_dir=str(wdir))
    rows, reasons, plans = drafting.draft_versions(req, extraction, area, with_commitments(world, ledger), rules, now, 1,
                                                   planning_budget(), decide=grounds.decide)
    planned = latest.next(state="PLANNED", questions=[], answers=stamped, actor=answerer.id, draft_id=draft_id,
                          reason=f"answered and planned as {draft_id}", turn_time=now.isoformat())
    try:
        recs = record_drafted(ledger, rows, reasons, plans, world, actor=answerer, now=now, supersede=None,
                              record=lambda: ledger.record_answered(planned, rows, actor=answerer.id, now=now,
                                                                    reasons=reasons[:-1]))
    except Conflict:
        _forget_files(ledger, draft_id)
        raise
    last = recs[-1]
    return summarize(last, files=files_of(last.draft_id, last.version, ledger.path.parent),
                     versions=[r.version for r in recs])


def _forget_files(ledger: Ledger, draft_id: str) -> None:
    """The files of a draft the ledger refused (another answer won): nobody will ever read them."""
    try:
        ledger.get_draft(draft_id)
    except NotFound:
        shutil.rmtree(ledger.path.parent / "drafts" / draft_id, ignore_errors=True)


# --------------------------------------------------------------------------- expiry


def expire_due(ledger: Ledger, *, now: datetime, actor: str) -> list[RequestTurn]:
    """Every OPEN request past its deadline at ``now``, EXPIRED (the sweeper's round); the turns written."""
    out = []
    for turn in ledger.open_requests():
        if now >= datetime.fromisoformat(turn.expires_time):
            done = _expire_turn(ledger, turn, actor=actor, reason="not answered before its deadline", now=now)
            if done.state == "EXPIRED" and done.turn == turn.turn + 1:
                out.append(done)
    return out


def expire(request_id: str, *, ledger: Ledger, actor: str, now: datetime, deadline: datetime | None = None,
           wall_now: datetime | None = None) -> RequestTurn:
    """EXPIRED once the request is overdue: past its own deadline at ``now``, or — the embedded mode, where the
    caller is the authority — past the caller's ``deadline`` on the wall clock (``wall_now``). Else unchanged."""
    latest = ledger.latest_request(request_id)
    if latest.state != "OPEN":
        return latest
    own = now >= datetime.fromisoformat(latest.expires_time)
    theirs = deadline is not None and wall_now is not None and wall_now >= deadline
    if not (own or theirs):
        return latest
    why = "not answered before its deadline" if own else f"not answered by {deadline.isoformat(timespec='seconds')}"  # type: ignore[union-attr]
    return _expire_turn(ledger, latest, actor=actor, reason=why, now=now)
