"""A word left unread that is a slip of a word that matters: asked about, never dropped.

``intents.text.typos`` reads a misspelling as the word meant when it is sure ("tmorow",
"thurday", "nxt"). What it is not sure of stays open, and the reader's last step asks only
about what *looks* like a parameter — so "nxet monday" used to read as this Monday, its
"nxet" dropped without a trace, the day a week early. This step looks at every word still
open at the end: one that is a slip of a word that changes the reading (a day word, a
part of the day, next / this / every, until / before, except / only, a negation) is asked
about, quoting it, with the word it most likely is ("yes" puts that word in its place,
``Question.choices``). A slip is one edit from a word of five letters or more (two from
one of eight or more), two neighbouring letters swapped ("nxet"), or the word's first
letter and some of its letters in order — how operators shorten ("wknd", "mrng", "tdy"). Real words that come that near ("light" to
"night", "unit" to "until") are no slips.
"""

from __future__ import annotations

import re

from intents.text.typos import distance

__all__ = ["SIGNIFICANT", "slip_of", "slips"]

SIGNIFICANT: dict[str, str] = {
    **dict.fromkeys(("today", "tonight", "tomorrow", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday",
                     "sunday", "next", "this", "coming", "week", "weekend", "fortnight", "yesterday", "last"), "day"),
    **dict.fromkeys(("morning", "afternoon", "evening", "night", "noon", "midnight", "hours", "minutes", "before",
                     "after", "until", "every"), "time"),
    **dict.fromkeys(("except", "only", "excluding"), "scope"),
    **dict.fromkeys(("not", "never", "without", "dont"), "parameter"),
}
"""Words whose loss changes the reading, each with the kind of question asked about a slip of it."""

_REAL = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "do", "for", "from", "go", "in", "is", "it", "me", "my", "no", "of",
    "ok", "on", "or", "our", "so", "the", "to", "up", "us", "we", "with", "you", "yes", "nor", "now", "new", "news",
    "net", "nets", "ton", "tons", "sun", "ever", "non", "wee", "tis", "thus", "mine", "mint", "unit", "units", "tot",
    "light", "lights", "might", "right", "sight", "fight", "tight", "eight", "alter", "rafter", "aster", "fever", "lever",
    "sever", "newer", "mourning", "sundry", "sundae", "yours", "tours", "pours", "tours", "excerpt", "toady", "coning",
    "homing", "combing", "weekly", "nightly", "hourly", "then", "than", "them", "these", "those", "there", "their",
    "mode", "mod", "tone", "tonne", "note", "notes", "wet", "evenly", "event", "events",
    "thin", "tin", "tie", "ties", "tiny", "tidy", "today's", "nigh", "oily", "only", "onto", "once", "one", "ones",
    "aft", "afar", "ate", "bore", "bone", "unto", "untie", "expect", "accept", "accent", "weak", "seek", "meek",
    "noise", "nine", "hose", "house", "horse", "hose", "mines", "mints", "minute", "minutes", "hour", "hours",
})
"""Real words near one of ``SIGNIFICANT``: never asked about as slips."""

_WORD = re.compile(r"(?<![a-z0-9'])[a-z]{3,12}(?![a-z0-9'])")


def _shortening(word: str, meant: str) -> bool:
    """"wknd" of "weekend", "tdy" of "today": its first letter, then letters of ``meant`` in order, as many as half."""
    if word[0] != meant[0] or len(word) >= len(meant) or 2 * len(word) < len(meant):
        return False
    rest = iter(meant[1:])
    return all(ch in rest for ch in word[1:])


def slip_of(word: str) -> tuple[str, str] | None:
    """The word ``word`` is most likely a slip of and the kind asked about, or ``None``."""
    if word in SIGNIFICANT or word in _REAL or not word.isalpha():
        return None
    hits: dict[str, int] = {}
    for meant in SIGNIFICANT:
        bound = 2 if len(meant) >= 8 and len(word) >= 6 else 1
        if len(word) >= 5 and len(meant) >= 5 and distance(word, meant, bound) <= bound:
            hits[meant] = distance(word, meant, bound)
        elif sorted(word) == sorted(meant) and distance(word, meant, 1) == 1:  # "nxet", "tihs": two letters swapped
            hits[meant] = 1
        elif len(word) <= 5 and _shortening(word, meant):
            hits[meant] = 3
    if not hits:
        return None
    best = min(hits.values())
    meant = sorted(m for m, d in hits.items() if d == best)[0]
    return meant, SIGNIFICANT[meant]


def slips(view: str) -> list[tuple[int, int, str, str]]:
    """``(start, end, word meant, kind)`` for each open word of ``view`` (claimed characters are NUL) that is a slip."""
    out = []
    for m in _WORD.finditer(view):
        found = slip_of(m.group(0))
        if found is not None:
            out.append((m.start(), m.end(), *found))
    return out
