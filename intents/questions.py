"""A question the reader asks: what it is about, the words it quotes, and an id that stays put.

The operator answers questions by id (``intents.dialogue``), so an id must name the
same question every time the same request is read: it is the question's kind and the
character offset of its quote in the request as the operator wrote it
(``time-23``), or the kind alone for a question about the whole request
(``mission``). A question raised by an answer (the answer was itself unclear) is
numbered under the question it answered (``time-23.1``). The kind says what is
asked about, so a client can offer the right kind of answer (a part of the day, a
height above ground, one of two missions …) and the dialogue knows how to read it.
"""

from __future__ import annotations

import enum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

__all__ = ["DISMISSABLE", "Question", "QuestionKind", "question_id"]


class QuestionKind(str, enum.Enum):
    """What a question asks about."""

    MISSION = "mission"                    # no mission is named
    MISSION_SPLIT = "mission_split"        # one of two (or more) missions in one request
    DAY = "day"                            # which day
    TIME = "time"                          # which clock time (estimate, window, unreadable)
    PART_OF_DAY = "part_of_day"            # a 12-hour clock time without a part of the day
    TIME_ZONE = "time_zone"                # a zone that is ambiguous or has no clock time to apply to
    ALTITUDE = "altitude"                  # which height, or one outside the limits
    HEIGHT_REFERENCE = "height_reference"  # a height above roofs, sea level, take-off … not ground
    FOCUS = "focus"                        # a priority inside the area the plan cannot express
    SCOPE = "scope"                        # a restriction of the area
    REGION = "region"                      # a region named that is not the selected one
    SENSOR = "sensor"
    COVERAGE = "coverage"
    NUMBER = "number"                      # a number that sets nothing the reader knows
    PARAMETER = "parameter"                # speed, overlap, a condition, a correction …
    INSTRUCTION = "instruction"            # text that tries to give orders
    MODEL = "model"                        # the language model read a field otherwise than the text says (not answerable)


DISMISSABLE = frozenset({QuestionKind.FOCUS, QuestionKind.SCOPE, QuestionKind.INSTRUCTION, QuestionKind.PARAMETER,
                         QuestionKind.NUMBER, QuestionKind.SENSOR, QuestionKind.REGION})
"""Kinds whose words the operator may answer away ("plan without it", 不用): what remains is still a request.
A time, day, height or mission is never dropped by an answer: it must be given."""

QuestionId = Annotated[str, StringConstraints(pattern=r"^[a-z_]+(?:-\d+)?(?:\.\d+)*$", max_length=64)]


class Question(BaseModel):
    """One question: ``text`` in the request's language, ``quote`` the operator's words it is about."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: QuestionId
    kind: QuestionKind
    quote: str = Field(default="", max_length=500, description="the words asked about, as written; '' for the whole request")
    text: str = Field(min_length=1, max_length=400)
    start: int | None = Field(default=None, ge=0, description="offset of the quote in the request as written")
    end: int | None = Field(default=None, ge=0)
    mission: str | None = Field(default=None, description="MISSION_SPLIT: the mission type this question keeps")
    choices: dict[str, str] = Field(
        default_factory=dict,
        description="short answers a client may offer ('am', 'pm', 'yes'), each with the words it puts in place of "
        "the quote (\"16:45 today or 04:45 tomorrow?\" — 'am': \"quarter to five am tomorrow\")",
    )


def question_id(kind: QuestionKind, start: int | None) -> str:
    """``kind-offset``, or the kind alone when the question is about the whole request."""
    return kind.value if start is None else f"{kind.value}-{start}"
