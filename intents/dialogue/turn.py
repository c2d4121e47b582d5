"""One turn of the clarification dialogue: the request plus the operator's answers → an Intent, or questions.

``understand(request, answers)`` is pure (no clock, no I/O): it reads the request as
written, applies every answer whose question that reading asked (``intents.dialogue.answers``
turns each into an edit of the text), reads the edited request again, and repeats while
answers apply — so an answer to a question that an earlier answer raised is applied too.
What it returns says what can happen next:

* ``Read``: one Intent that needs nothing more; it can be planned.
* ``Unclear``: the questions still open, each with its stable id (the kind and the quote's
  offset in the request as written, ``time-23``; a question about an unclear answer is
  numbered under the question it answered, ``time-23.1``) and a ``draft`` Intent that is
  never to be planned. When the request holds two missions or more, ``missions`` lists
  them and each has its own ``mission_split`` question: **two questions, never one merged
  Intent, and never two Intents.** One request is one draft and one approval, bound to the
  words the requester wrote; two Intents cut from one sentence would put onto the approval
  a second mission whose share of the shared words ("tomorrow at 9", "at 30 m") the reader
  decided, which is the silent guess this reader exists to refuse. The operator keeps one
  ("yes"), and the others are ``set_aside``, quoted, for a request of their own.

Answering a question that was not asked (in this turn's chain of readings) is an
``INVALID_ARGUMENT``, as is an empty answer: nothing is applied then.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from intents.dialogue.answers import DISMISS, YES, Edit, edit_for
from intents.grammar.reader import Reading, read_offline
from intents.intent import Intent
from intents.stated_limits import Limits
from intents.questions import Question, QuestionKind
from intents.time.resolve import local_zone
from planner.errors import InvalidArgument

__all__ = ["Answered", "Read", "Request", "Unclear", "understand"]

MAX_ANSWER_CHARS = 500


@dataclass(frozen=True)
class Request:
    """The request as the operator sent it: text, when and where (the world's zone), what was selected."""

    text: str
    now: datetime
    timezone: str
    region: str | None = None
    limits: Limits = field(default_factory=Limits)
    places: Mapping[str, str] | None = None


@dataclass(frozen=True)
class Answered:
    """A question, the operator's answer as given, and what the reader made of it."""

    question: Question
    answer: str
    read_as: str

    def to_dict(self) -> dict[str, str]:
        return {"id": self.question.id, "kind": self.question.kind.value, "quote": self.question.quote,
                "question": self.question.text, "answer": self.answer, "read_as": self.read_as}


@dataclass(frozen=True)
class Read:
    """The request is clear: exactly one Intent, to be planned."""

    intent: Intent
    text_read: str
    answered: tuple[Answered, ...] = ()
    set_aside: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Unclear:
    """Questions to answer first; ``draft`` is what could be read so far and is never planned."""

    questions: tuple[Question, ...]
    draft: Intent
    text_read: str
    answered: tuple[Answered, ...] = ()
    set_aside: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    missions: tuple[str, ...] = ()  # two or more: the request holds that many missions, one question each


@dataclass(frozen=True)
class _Piece:
    text: str
    origin: int | None  # offset in the request as written, or None for words an answer put in
    answer_to: str | None = None


def _renamed(questions: list[Question], pieces: list[_Piece], answered: set[str]) -> list[Question]:
    """Ids by the request as written: an offset in an original piece keeps its id; one in an answer's words is
    numbered under the question that answer was for; a question asked again after its answer likewise."""
    bounds, pos = [], 0
    for piece in pieces:
        bounds.append((pos, pos + len(piece.text), piece))
        pos += len(piece.text)
    counts: dict[str, int] = {}
    out: list[Question] = []
    for q in questions:
        base, start, end, follow = q.kind.value, None, None, False
        hit = None if q.start is None else next(((s, p) for s, e, p in bounds if s <= q.start < e), None)
        q_end = max(q.end or 0, (q.start or 0) + 1)
        touched = None if q.start is None else next(
            (p for s, e, p in bounds if p.answer_to is not None and s < q_end and q.start < e), None)
        if touched is not None:  # the question is (also) about an answer's words
            base, follow = str(touched.answer_to), True
        elif hit is not None and hit[1].origin is not None:
            start = hit[1].origin + (q.start or 0) - hit[0]
            end = start + (q.end or 0) - (q.start or 0)
            base = f"{q.kind.value}-{start}"
        if follow or base in answered:
            counts[base] = counts.get(base, 0) + 1
            base = f"{base}.{counts[base]}"
        out.append(q.model_copy(update={"id": base, "start": start, "end": end}))
    return out


def _word(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _spaced(text: str, edit: Edit) -> Edit:
    """The edit with a space wherever its words would otherwise run into a letter or digit beside them, and only
    there: "region 1001 between 2 and 4pm" without "between 2 and" is "region 1001 4pm", never "region 10014pm";
    明天上午9点到11点巡查 answered 上午9点开始 is 明天上午9点开始巡查, with no space in it."""
    before, after = text[edit.start - 1 : edit.start], text[edit.end : edit.end + 1]
    words = (edit.words or "").strip()
    if not words:
        return Edit(edit.start, edit.end, " " if _word(before) and _word(after) else None, edit.read_as)
    left = " " if _word(before) and _word(words[0]) else ""
    right = " " if _word(after) and _word(words[-1]) else ""
    return Edit(edit.start, edit.end, left + words + right, edit.read_as)


def _apply(pieces: list[_Piece], edit: Edit, answer_to: str) -> list[_Piece]:
    """``pieces`` with ``[edit.start, edit.end)`` of their joined text replaced by the edit's words."""
    edit = _spaced("".join(p.text for p in pieces), edit)
    out: list[_Piece] = []
    pos = 0
    inserted = False
    for piece in pieces:
        s, e = pos, pos + len(piece.text)
        pos = e
        if e <= edit.start or s >= edit.end and not (s == edit.start == edit.end):
            if not inserted and s >= edit.end and s >= edit.start:
                out.append(_Piece(edit.words or "", None, answer_to))
                inserted = True
            out.append(piece)
            continue
        cut_s, cut_e = max(s, edit.start) - s, min(e, edit.end) - s
        if cut_s > 0:
            out.append(_Piece(piece.text[:cut_s], piece.origin, piece.answer_to))
        if not inserted:
            out.append(_Piece(edit.words or "", None, answer_to))
            inserted = True
        if cut_e < len(piece.text):
            rest_origin = None if piece.origin is None else piece.origin + cut_e
            out.append(_Piece(piece.text[cut_e:], rest_origin, piece.answer_to))
    if not inserted:
        out.append(_Piece(edit.words or "", None, answer_to))
    return [p for p in out if p.text]


def _split_edits(here: list[Question], local: Mapping[str, str]) -> tuple[list[tuple[Edit, Question]], list[str]] | None:
    """The edits the answers to ``mission_split`` questions make, and the missions set aside (``None``: two kept)."""
    every = [q for q in here if q.kind is QuestionKind.MISSION_SPLIT]
    if not any(q.id in local for q in every):
        return [], []
    kept = [q for q in every if YES.match(local.get(q.id, "").strip().lower())]
    if len(kept) > 1:
        return None
    edits: list[tuple[Edit, Question]] = []
    aside: list[str] = []
    for q in every:
        assert q.start is not None and q.end is not None
        answer = local.get(q.id, "").strip()
        if (kept and q not in kept) or (answer and DISMISS.match(answer.lower())):
            edits.append((Edit(q.start, q.end, None, "set aside"), q))
            aside.append(q.quote)
        elif answer and q not in kept:
            edits.append((Edit(q.start, q.end, f" {answer} ", answer), q))
    return edits, aside


def _read(request: Request, text: str) -> Reading:
    local_now = request.now.astimezone(local_zone(request.timezone))
    return read_offline(text, now=local_now, limits=request.limits, places=request.places, region=request.region)


def understand(request: Request, answers: Mapping[str, str] | None = None) -> Read | Unclear:
    """Read ``request`` with ``answers`` (question id → the operator's words) applied; see the module docstring."""
    answers = dict(answers or {})
    for qid, answer in answers.items():
        if not answer or not answer.strip() or len(answer) > MAX_ANSWER_CHARS:
            raise InvalidArgument(f"the answer to {qid} is empty or longer than {MAX_ANSWER_CHARS} characters")
    if request.now.tzinfo is None:
        raise InvalidArgument("now needs a timezone offset")
    pieces = [_Piece(request.text, 0)]
    asked: dict[str, Question] = {}
    done: dict[str, Answered] = {}
    aside: list[str] = []
    read_text, reading = None, None  # the last text read and its reading: the same text is not read twice
    for _ in range(len(answers) + 1):
        text = "".join(p.text for p in pieces)
        read_text, reading = text, _read(request, text)
        here = reading.questions
        questions = _renamed(here, pieces, set(done))
        asked.update({q.id: q for q in questions})
        pending = [(q, h) for q, h in zip(questions, here) if q.id in answers and q.id not in done]
        if not pending:
            break
        local = {h.id: answers[q.id] for q, h in pending}
        renamed = {h.id: q.id for q, h in zip(questions, here)}
        split = _split_edits(here, local)
        edits = [] if split is None else list(split[0])
        aside.extend([] if split is None else split[1])
        for q, h in pending:
            if h.kind is QuestionKind.MISSION_SPLIT:
                kept = YES.match(answers[q.id].strip().lower()) is not None
                done[q.id] = Answered(q, answers[q.id], "kept" if kept else "set aside" if DISMISS.match(
                    answers[q.id].strip().lower()) else answers[q.id].strip())
                continue
            edit = edit_for(h, answers[q.id], text, request.now.astimezone(local_zone(request.timezone)))
            edits.append((edit, h))
            done[q.id] = Answered(q, answers[q.id], edit.read_as)
        for edit, h in sorted(edits, key=lambda x: -x[0].start):  # from the end, so earlier offsets stay put
            pieces = _apply(pieces, edit, renamed[h.id])
        if split is None:
            break  # two missions both kept: asked again, numbered under the first answers
    unknown = sorted(set(answers) - set(done))
    if unknown:
        raise InvalidArgument(
            f"no question {', '.join(unknown)} was asked about this request (asked: {', '.join(sorted(asked)) or 'none'})",
            details={"unknown": unknown, "asked": sorted(asked)},
        )
    text = "".join(p.text for p in pieces)
    if text != read_text or reading is None:  # no answer applied (every plain request): the loop's reading stands
        reading = _read(request, text)
    questions = _renamed(reading.questions, pieces, set(done))
    common = dict(text_read=" ".join(text.split()), answered=tuple(done.values()), set_aside=tuple(aside),
                  notes=tuple(reading.notes))
    if questions or reading.intent.needs_clarification:
        missions = tuple(q.quote for q in questions if q.kind is QuestionKind.MISSION_SPLIT)
        return Unclear(questions=tuple(questions), draft=reading.intent, missions=missions, **common)
    return Read(intent=reading.intent, **common)
