"""What an evaluation needs besides the plan and the world: time and the draft's facts.

``now`` is the plan time (``phase="plan"``), the dispatch time
(``phase="dispatch"``) or the launch time (``phase="launch"``: the vehicle's own
state, read on its link just before it flies); dispatch and launch re-evaluate
with a fresh world and a new now.
``authorisations`` maps a REQ_AUTHORISATION zone id to the reference the draft
carries for it (for example an ANSP permit number).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Literal

from planner.errors import InvalidArgument

__all__ = ["EvaluationContext", "Phase"]

Phase = Literal["plan", "dispatch", "launch"]


@dataclass(frozen=True)
class EvaluationContext:
    """The typed facts a rule may look at besides plan and world."""

    now: datetime
    required_sensors: frozenset[str] = frozenset()
    authorisations: Mapping[str, str] = field(default_factory=dict, hash=False)
    phase: Phase = "plan"

    def __post_init__(self) -> None:
        if self.now.tzinfo is None or self.now.utcoffset() is None:
            raise InvalidArgument(f"EvaluationContext.now {self.now.isoformat()!r} must be timezone-aware")
        if self.phase not in ("plan", "dispatch", "launch"):
            raise InvalidArgument(f"phase must be 'plan', 'dispatch' or 'launch', got {self.phase!r}")
        object.__setattr__(self, "required_sensors", frozenset(str(getattr(s, "value", s)) for s in self.required_sensors))
        object.__setattr__(self, "authorisations", MappingProxyType(dict(self.authorisations)))
