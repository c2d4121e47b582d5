"""``NEEDS_CLARIFICATION``: the request cannot be planned as stated.

A leaf of the one error tree (``planner.errors.SortieError``), defined here
because intents/ owns what a readable request is; ``planner/errors.py`` is the
place to list it once the tree is next edited. ``details`` carries the
questions and what is missing, so every caller (CLI, Prefect, the server)
shows the operator the same questions, each quoting the span it is about.

    >>> err = NeedsClarification.for_intent_questions(["“高度5000米”：超出范围"], ["altitude"])
    >>> err.code, isinstance(err, ValueError)
    ('NEEDS_CLARIFICATION', True)
"""

from __future__ import annotations

from collections.abc import Sequence

from planner.errors import SortieError

__all__ = ["NeedsClarification"]


class NeedsClarification(SortieError, ValueError):
    """The request names no mission, says something that cannot be read exactly, or gives orders."""

    code = "NEEDS_CLARIFICATION"

    @classmethod
    def for_intent_questions(
        cls, questions: Sequence[str], missing: Sequence[str], instructions: Sequence[str] = ()
    ) -> NeedsClarification:
        asked = list(questions) or [f"missing: {', '.join(missing)}"]
        message = "the request needs clarification; nothing was planned:\n" + "\n".join(f"  - {q}" for q in asked)
        return cls(
            message,
            details={"questions": asked, "missing": list(missing), "instructions": list(instructions)},
        )
