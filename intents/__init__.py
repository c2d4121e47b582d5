"""intents: request text + the caller's area → a typed, validated ``Intent``.

The only place a language model is used, and it only proposes. ``extract_intent``
picks the extractor (LLM via instructor, or the offline grammar), attaches the
caller's area and resolves the time. Imports nothing of sortie but ``planner.errors``.
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
from intents.llm import LlmSettings, extract_with_llm
from intents.offline import parse_offline
from intents.timeresolve import PART_OF_DAY_CLOCK, resolve_clock, resolve_date, resolve_start

__all__ = [
    "AreaRef",
    "Extraction",
    "Intent",
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
    "resolve_clock",
    "resolve_date",
    "resolve_start",
]
