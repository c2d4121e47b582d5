"""What a residual question quotes: the words it asks about, not the mission's object before them nor the lead-in
of a phrase read after them.

The residual step asks about an open word ("yesterday", "9ish", "2 drones") and quoted the whole open run around
it in its clause; after a mission verb that run starts with the verb's object, which is read (the selection is what
is surveyed): "survey the yard yesterday at 10:00" quoted "the yard yesterday at", and an answer put in its place
("tomorrow") took "the yard" and the clock's "at" with it. The quote now starts after that object — at the first
word that leads into the asked phrase (a preposition, "sometime", another word the residual step asks about) — and
ends before the lead-in words of the phrase read after it ("at" before a clock read). English only: a CJK run has
no spaces to tell its words apart, and zh quotes are clause-bounded already.
"""

from __future__ import annotations

import re

from intents.grammar import vocabulary as V

__all__ = ["MISSION_VERB", "TRIMMED", "quote_span"]

MISSION_VERB = re.compile("|".join(p.pattern for p in (V.MAPPING, V.SURVEY, V.INSPECT, V.PATROL)), re.ASCII)
TRIMMED = frozenset({"time", "number", "sensor", "parameter"})
"""Residual kinds whose quote leaves out the mission's object before it (a scope or a focus names a place itself)."""

_LEAD_WORD = re.compile(
    r"the|a|an|on|at|by|in|of|to|for|with|from|using|via|around|about|approx|roughly|some|sometime|any|all|no|not|and|or"
    r"|but|this|that|these|those|our|my|your|its|it|is|are|be|so",
    re.IGNORECASE,
)
"""Words that lead into the phrase after them: the quote starts at them, not at the place before."""
_OBJECT_START = re.compile(r"the|a|an|our|this|that|these|those|of", re.IGNORECASE)
_CLAUSE_STOPS = "，,。;；!！?？\n()（）"
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _leads(word: str) -> bool:
    return bool(_LEAD_WORD.fullmatch(word) or any(rx.search(word) for kind, rx, _, _ in V.RESIDUAL_RX
                                                  if kind != "instruction"))


def _start(text: str, run_start: int, start: int) -> int:
    """After the mission's object: an article or "of", then the words up to the first that leads into the phrase."""
    lead = text[run_start:start]
    before = text[max(0, run_start - 24) : run_start].rstrip()
    if _CJK.search(lead) or not any(m.end() == len(before) for m in MISSION_VERB.finditer(before)):
        return run_start
    words = [(run_start + w.start(), w.group(0)) for w in re.finditer(r"\S+", lead)]
    if words and words[-1][0] + len(words[-1][1]) == start:  # "M30T": the asked word is the whole token
        start = words.pop()[0]
    i = 0
    while i < len(words) and _OBJECT_START.fullmatch(words[i][1]):
        i += 1
    while i < len(words) and re.fullmatch(r"[a-z][a-z-]*", words[i][1]) and not _leads(words[i][1]):
        i += 1
    if i == 0:
        return run_start
    return words[i][0] if i < len(words) else start


def _end(text: str, end: int, run_end: int) -> int:
    """Before the lead-in words of a phrase read after it ("yesterday at 10:00": "at" goes with the clock); at the
    end of the clause the run is kept whole (what follows "after" or "with" is the phrase asked about)."""
    if run_end >= len(text) or text[run_end] in _CLAUSE_STOPS:
        return run_end
    words = list(re.finditer(r"\S+", text[end:run_end]))
    while words and _OBJECT_START.fullmatch(words[-1].group(0)) is None and _LEAD_WORD.fullmatch(words[-1].group(0)):
        words.pop()
    while words and _OBJECT_START.fullmatch(words[-1].group(0)):
        words.pop()
    return end + words[-1].end() if words else end


def quote_span(text: str, run: tuple[int, int], word: tuple[int, int]) -> tuple[int, int]:
    """The span a residual question about ``word`` quotes, within its open ``run`` of the normalised ``text``."""
    return _start(text, run[0], word[0]), _end(text, word[1], run[1])
