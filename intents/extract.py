"""One entry point: request text (+ the caller's area) → a resolved ``Extraction``.

Chooses the extractor (the LLM when ``SORTIE_LLM_BASE_URL`` or explicit settings
say so, else the offline grammar), attaches the caller's area (the model never
supplies geometry; a caller's region id or map selection always wins), and
resolves the time against ``now`` in the user's timezone, pinning the resolved
date into ``Intent.when.date`` so that a replan on a later day flies the day
that was asked. The result says which extractor made it, so a plan can always
be traced back to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from intents.dialogue.turn import Answered, Read, Request, understand
from intents.grammar.reader import EXTRACTOR_NAME, read_offline
from intents.intent import AreaRef, Intent
from intents.stated_limits import Limits
from intents.llm import LlmSettings, extract_with_llm
from intents.questions import Question, QuestionKind
from intents.time.resolve import day_start, local_zone, pinned, resolve_clock, resolve_date, resolve_start
from intents.verify import check_against_text
from planner.errors import InvalidArgument

__all__ = ["Extraction", "extract_intent"]

MAX_TEXT_CHARS = 2000


@dataclass(frozen=True)
class Extraction:
    """An Intent plus where it came from and what its time resolves to.

    ``date`` is the local date the request names (today when none), ``start_time``
    the local "HH:MM" (a clock time, or a part of the day's default; ``None`` for
    now / asap / no time), ``start_at`` the aware start (``now`` for asap or no
    time today; ``None`` for a later day without a time).
    """

    intent: Intent
    extractor: str
    start_at: datetime | None
    date: date
    start_time: str | None
    timezone: str | None = None
    questions: tuple[Question, ...] = ()  # each with its id, kind and quote; answered through ``answers``
    answered: tuple[Answered, ...] = ()
    notes: tuple[str, ...] = ()  # which rule decided a reading (a.m./p.m. by the window, a time zone converted)
    set_aside: tuple[str, ...] = ()  # missions the operator set aside for a request of their own
    missions: tuple[str, ...] = ()  # two or more: the request holds that many missions (never one Intent)
    proposed: Intent | None = None  # the language model's own answer, before it was checked against the text

    @property
    def needs_clarification(self) -> bool:
        return self.intent.needs_clarification

    @property
    def planned_start(self) -> datetime:
        """The start a plan uses (``timeresolve.planned_start``: a later day without a time starts at its default)."""
        if self.start_at is not None:
            return self.start_at
        if self.timezone is None:
            raise InvalidArgument("this extraction has no timezone; resolve it with Extraction.resolve")
        return day_start(self.date, self.timezone)

    @classmethod
    def resolve(cls, intent: Intent, extractor: str, *, now: datetime, timezone: str, **context: Any) -> Extraction:
        """Resolve ``intent``'s time against ``now`` in ``timezone`` (the one place it is done), pinning the date;
        ``context``: the questions, answers and notes of the reading (the dataclass fields of the same names)."""
        when = pinned(intent.when, now, timezone)
        intent = intent.model_copy(update={"when": when})
        return cls(
            intent=intent,
            extractor=extractor,
            start_at=resolve_start(when, now, timezone),
            date=resolve_date(when, now, timezone),
            start_time=resolve_clock(when),
            timezone=timezone,
            **context,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form for the CLI and the ledger."""
        return {
            "extractor": self.extractor,
            "intent": self.intent.model_dump(mode="json"),
            "date": self.date.isoformat(),
            "start_time": self.start_time,
            "start_at": self.start_at.isoformat() if self.start_at else None,
            "needs_clarification": self.needs_clarification,
            "questions": [q.model_dump(mode="json") for q in self.questions],
            "clarifications_answered": [a.to_dict() for a in self.answered],
            "notes": list(self.notes),
            "set_aside": list(self.set_aside),
        }


def extract_intent(
    text: str,
    *,
    area: AreaRef | None = None,
    region_id: str | None = None,
    now: datetime,
    timezone: str,
    settings: LlmSettings | None = None,
    extractor: Literal["auto", "offline", "llm"] = "auto",
    limits: Limits | None = None,
    places: Mapping[str, str] | None = None,
    answers: Mapping[str, str] | None = None,
) -> Extraction:
    """Extract and resolve the Intent of ``text``, with the operator's ``answers`` (question id → words) applied.

    ``extractor="auto"`` uses ``settings`` or, failing that, ``LlmSettings.from_env()``
    and falls back to the offline grammar when neither names a server;
    ``"offline"`` and ``"llm"`` force one (``"llm"`` without settings is an
    ``INVALID_ARGUMENT``). LLM failures propagate as ``LLM_UNAVAILABLE`` /
    ``INTENT_INVALID``: silently switching extractors would hide them.
    """
    if not text or not text.strip():
        raise InvalidArgument("the request text is empty")
    if len(text) > MAX_TEXT_CHARS:
        raise InvalidArgument(f"the request text is {len(text)} characters; at most {MAX_TEXT_CHARS} are accepted")
    if area is not None and region_id is not None:
        raise InvalidArgument("give either an area or a region id, not both")
    if now.tzinfo is None:
        raise InvalidArgument("now needs a timezone offset")
    if region_id is not None:
        try:
            area = AreaRef(kind="region", region_id=region_id)
        except ValueError:
            raise InvalidArgument(f"region id {region_id!r} is not a valid id (letters, digits, . _ -)") from None

    if extractor != "offline" and settings is None:
        settings = LlmSettings.from_env()
    if extractor == "llm" and settings is None:
        raise InvalidArgument("the LLM extractor needs SORTIE_LLM_BASE_URL and SORTIE_LLM_MODEL")
    local_now = now.astimezone(local_zone(timezone))
    request = Request(text, now, timezone, region=region_id, limits=limits or Limits(), places=places)
    turn = understand(request, answers)
    questions = turn.questions if not isinstance(turn, Read) else ()
    context: dict[str, Any] = dict(answered=turn.answered, notes=turn.notes, set_aside=turn.set_aside,
                                   missions=() if isinstance(turn, Read) else turn.missions)
    offline = turn.intent if isinstance(turn, Read) else turn.draft
    if extractor != "offline" and settings is not None:
        # The model reads the request with the answers in place; its answer is held to the offline reading of it.
        proposed = extract_with_llm(turn.text_read, settings, now=now, timezone=timezone)
        reading = read_offline(turn.text_read, now=local_now, limits=limits, places=places, region=region_id)
        intent = check_against_text(proposed, reading, limits=limits or Limits(), today=local_now.date())
        extra = [t for t in intent.clarification_questions if t not in offline.clarification_questions]
        questions = (*questions, *(Question(id=f"{QuestionKind.MODEL.value}-{i}", kind=QuestionKind.MODEL, text=t)
                                   for i, t in enumerate(extra, start=1)))
        name = settings.extractor_name
        context["proposed"] = proposed
    else:
        intent = offline
        name = EXTRACTOR_NAME

    if area is not None:
        intent = intent.model_copy(update={"area": area})
    return Extraction.resolve(intent, name, now=now, timezone=timezone, questions=tuple(questions), **context)
