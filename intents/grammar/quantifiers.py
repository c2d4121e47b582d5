"""Quantifiers before a target ("every hydrant", "each of the roofs", "every single one of the masts"): no time.

"Every" is also a recurrence word ("every morning"), and the reader's last step asks
about an "every" nobody read, as a time. Before a target it is neither a time nor a
selection: it says all of them, which is what an inspection or a patrol of the
selected area does anyway, so the request is as exact as "check all hydrants" and
asking about it only teaches the operator to click questions away. This step claims
the quantifier's own words ("every", "single", "one of the") when what follows is a
target or a structure the targets stand on, read on the text itself because the
target is claimed by then (``intents.grammar.missions``). It runs after the time
reader, so an "every" that governs a time ("every day", ``intents.time.recurrence``)
is taken first; anything else after "every" ("every other hydrant", a subset the
plan cannot select; "every bit") is left open and asked about. Chinese needs no
step: 每个消防栓 and 各个消防栓 leave no word a question is asked about.
"""

from __future__ import annotations

import intents.grammar.vocabulary as V
from intents.text.scan import Scan
from intents.time.words import rx

__all__ = ["QUANTIFIER", "claim_quantifiers"]

# Nouns that are no Target but are what the targets are on or part of ("every building", "every block").
_STRUCTURES = r"\b(?:buildings?|blocks?|structures?|houses?|warehouses?|sheds?|hangars?|poles?|chimneys?|lanes?|roads?|sites?)\b"
# "every hydrant inspection", "every fire lane patrol": each time the mission is flown, a recurrence — left to be asked.
_NOT_AN_EVENT = (
    r"(?!\s*(?:visits?|inspections?|patrols?|rounds?|runs?|checks?|tours?|flights?|sorties?|surveys?|missions?|passes?"
    r"|days?|times?|shifts?)\b)"
)
_NOUN = "|".join(f"(?:{pattern})" for _, pattern in V.TARGET_PATTERNS) + "|" + _STRUCTURES
QUANTIFIER = rx(
    r"\b(?P<word>every|each)(?:\s+(?:single|last))?(?:\s+(?:one|1)\s+of)?(?:\s+of)?"
    r"(?:\s+(?:the|our|these|those|its|their|your|my|this\s+region'?s|the\s+region'?s))?"
    rf"(?:\s+(?:fire|water))?\s+(?=(?:{_NOUN}){_NOT_AN_EVENT})"
)


def claim_quantifiers(scan: Scan) -> None:
    """Claim the open words of each quantifier that governs a target; the target itself is read elsewhere."""
    for m in QUANTIFIER.finditer(scan.text):
        if scan.is_open(m.start("word"), m.end("word")):  # its "every"/"each": not a recurrence's or a length's
            scan.claim(m.start(), m.end())
