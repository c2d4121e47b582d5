"""intents: request text + the caller's area → a typed, validated ``Intent``.

The only place a language model is used, and it only proposes. ``extract_intent``
picks the extractor (LLM via instructor, or the offline grammar), attaches the
caller's area and resolves the time (``intents.time.resolve`` is the one definition
of *when*). Imports nothing of sortie but ``planner.errors``.
"""

from intents.extract import Extraction, extract_intent
from intents.intent import (
    AreaRef,
    Intent,
    MissionType,
    PartOfDay,
    Priority,
    RelativeDay,
    Sensor,
    Target,
    TimeSpec,
)
from intents.stated_limits import Limits
from intents.llm import LlmSettings, extract_with_llm
from intents.grammar.reader import parse_offline, read_offline
from intents.time.resolve import PART_OF_DAY_CLOCK, planned_start, resolve_clock, resolve_date, resolve_start

__all__ = [
    "AreaRef",
    "Extraction",
    "Intent",
    "Limits",
    "LlmSettings",
    "MissionType",
    "PART_OF_DAY_CLOCK",
    "PartOfDay",
    "Priority",
    "RelativeDay",
    "Sensor",
    "Target",
    "TimeSpec",
    "extract_intent",
    "extract_with_llm",
    "parse_offline",
    "planned_start",
    "read_offline",
    "resolve_clock",
    "resolve_date",
    "resolve_start",
]
