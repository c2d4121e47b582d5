"""The clarification form of a waiting run: the open request's questions, one answer field each.

A ``plan-mission`` or ``daily-patrol`` run whose request needs clarification
waits with ``wait_for_input=`` this form (``flows.orchestration.clarify``): the
Prefect UI renders one text field per open question — titled by the question's
id, described by the question itself, which quotes the words it is about — plus
the answerer's user id (and, with a sortie server, their one-time code).

The schema Prefect checks keeps the request id, the answerer and — with a
sortie server — the one-time code required (a required field is shown as one:
no "(Optional)", no None toggle); the answers themselves stay lenient there: a
run is also resumed by the authority to wake it (an answer given elsewhere,
the deadline) with ``{"request_id", "answerer": "sortie:…", "code": NO_CODE}``
and no answers, and Prefect's ``with_initial_data`` drops field constraints
anyway (FACTS). Every real input is validated again here with every constraint
(:func:`validate_answers`): each answer present and bounded, the code required
with a server, the request the run waits for; a refusal names the question by
its id and words, never the form's internal field name. The answers go to the
authority by question id (``QUESTION_ID=TEXT``), so an answer can never land on
another question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prefect.input import RunInput
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from planner.errors import InvalidArgument

__all__ = ["ClarificationInput", "RelayedClarificationInput", "Answers", "WAKE_PREFIX", "clarification_form", "validate_answers", "is_wake"]

CODE_PATTERN = r"^[0-9]{6}$"
REQUEST_PATTERN = r"^r-[0-9a-f]{6,64}$"
#: The answerer a wake carries (the authority resuming the run after an answer given elsewhere, or its deadline).
WAKE_PREFIX = "sortie:"
MAX_QUESTIONS = 20


class ClarificationInput(RunInput):
    """What every clarification form has: the request it answers, who answers, their one-time code."""

    model_config = ConfigDict(extra="forbid")

    request_id: str = Field(pattern=REQUEST_PATTERN, description="The open request these answers are for.")
    answerer: str = Field(min_length=1, max_length=64,
                          description="Your user id (the planner role for this request's tenant and region).")
    code: str | None = Field(default=None, description="Your one-time code (6 digits from your authenticator app); "
                                                       "required when sortie runs with a server, which verifies it.")


class RelayedClarificationInput(ClarificationInput):
    """The form with a sortie server: the one-time code is required (the server proves the answerer by it)."""

    code: str = Field(pattern=CODE_PATTERN,  # type: ignore[assignment]
                      description="Required: your one-time code (6 digits from your authenticator app), judged at the "
                                  "moment you press Submit.")


@dataclass(frozen=True)
class Answers:
    """A validated input: who answers (and their code), and each question id with its answer."""

    request_id: str
    answerer: str
    code: str | None
    by_question: dict[str, str]

    def as_named(self) -> list[str]:
        """The answers as the authority takes them, each bound to its question (``QUESTION_ID=TEXT``)."""
        return [f"{qid}={text}" for qid, text in self.by_question.items()]


def _field(i: int) -> str:
    return f"answer_{i}"


def _questions(questions: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The questions a person can answer (a language model's objection cannot be: restate the request)."""
    return [q for q in questions if q.get("kind") != "model"][:MAX_QUESTIONS]


def _model(questions: Sequence[Mapping[str, Any]], *, strict: bool, relayed: bool) -> type[BaseModel]:
    """The form for these questions: lenient (what Prefect checks) or strict (what the run accepts)."""
    fields: dict[str, Any] = {}
    for i, q in enumerate(_questions(questions), start=1):
        said = {"title": str(q["id"]), "description": str(q.get("text") or "")}
        spec = Field(min_length=1, max_length=500, **said) if strict else Field(default="", max_length=500, **said)
        fields[_field(i)] = (str, spec)
    if not relayed and strict:
        fields["code"] = (str | None, Field(default=None, pattern=CODE_PATTERN))
    base = RelayedClarificationInput if relayed else ClarificationInput
    return create_model("ClarificationAnswers", __base__=base, **fields)


def clarification_form(request_id: str, questions: Sequence[Mapping[str, Any]], *, request_text: str,
                       relayed: bool, turn: int = 1) -> type[RunInput]:
    """The form a run shows while it waits: a field per open question, the request as written above them."""
    from flows.safe_text import markdown_text

    listed = "".join(f"\n- **{markdown_text(str(q['id']))}**: {markdown_text(str(q.get('text') or ''))}"
                     for q in _questions(questions))
    how = ("Your user id **and your one-time code are required** (6 digits; judged at the moment you press Submit)."
           if relayed else "Your user id is recorded with each answer.")
    model = _model(questions, strict=False, relayed=relayed)
    return model.with_initial_data(  # type: ignore[attr-defined,no-any-return]
        description=(f"The request “{markdown_text(request_text)}” needs clarification before it can be planned "
                     f"(request {request_id}, turn {turn}). Answer each question; the answers are recorded with the "
                     f"draft for its approver.{listed}\n\n{how} Or from a terminal: `sortie plan --continue "
                     f"{request_id} --answer …`."),
        request_id=request_id)


#: What the operator reads for a form field (the question fields are named by their question instead).
_FIELD_NAMES = {"request_id": "the request id", "answerer": "your user id", "code": "your one-time code"}


def _problem(err: Any, questions: Mapping[str, Mapping[str, Any]]) -> str:
    """One validation error as the operator reads it: the question by its id and words, or the field by its label
    (never the form's internal field name such as ``answer_1``)."""
    field = str(err["loc"][0]) if err.get("loc") else ""
    q = questions.get(field)
    if q is not None:
        said = str(q.get("text") or "")
        what = f"question {q['id']}" + (f" (“{said[:80]}”)" if said else "")
        return f"{what}: {'no answer given' if err.get('type') == 'string_too_short' else err['msg']}"
    if err.get("type") == "extra_forbidden":
        return f"{field}: not a field of this form"
    return f"{_FIELD_NAMES.get(field, field or '-')}: {err['msg']}"


def is_wake(raw: Any) -> bool:
    """An input the authority sent to wake the run (an answer given elsewhere, the deadline), not a person's."""
    who = raw.get("answerer") if isinstance(raw, Mapping) else getattr(raw, "answerer", None)
    return isinstance(who, str) and who.startswith(WAKE_PREFIX)


def validate_answers(raw: Any, request_id: str, questions: Sequence[Mapping[str, Any]], *,
                     relayed: bool) -> Answers:
    """An input re-validated with every constraint, for this request and these questions; ``INVALID_ARGUMENT``
    naming what is wrong."""
    if isinstance(raw, RunInput):
        data = raw.model_dump(exclude={"metadata"})
    elif isinstance(raw, Mapping):
        data = dict(raw)
    else:
        raise InvalidArgument(f"the answers must be a mapping, got {type(raw).__name__}")
    data.pop("metadata", None)
    try:
        got = _model(questions, strict=True, relayed=relayed).model_validate(data)
    except ValidationError as exc:
        named = {_field(i): q for i, q in enumerate(_questions(questions), start=1)}
        problems = "; ".join(_problem(err, named) for err in exc.errors())
        raise InvalidArgument(f"the answers are invalid: {problems}") from None
    values = got.model_dump()
    if values["request_id"] != request_id:
        raise InvalidArgument(f"the answers are for {values['request_id']}, this run waits for {request_id}")
    if str(values["answerer"]).startswith(WAKE_PREFIX):
        raise InvalidArgument(f"{values['answerer']!r} is not a user id")
    by_question = {str(q["id"]): str(values[_field(i)]).strip()
                   for i, q in enumerate(_questions(questions), start=1)}
    return Answers(request_id, str(values["answerer"]), values.get("code"), by_question)
