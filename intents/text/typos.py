"""Common misspellings of the reader's English vocabulary, read as the word meant.

A typo that the reader does not know is left open, and an open span that looks like
a parameter is asked about ("teh east block w/" matched "block w" as a named part of
the area). So before any pattern runs, ``repairs`` finds the misspellings and the
scan reads the word meant in their place (``intents.text.scan``), while every quote
still shows what the operator wrote.

Two sources, both deterministic: a table of shorthands and typos operators type
("teh", "w/", "w/o", "b4", "tmrw", "arvo"), and one edit (a letter added, dropped,
changed, or two swapped) away from a long keyword of the vocabulary ("patrl",
"tomorow", "thremal", "afternon"). Real words one edit from a keyword ("patron",
"insect", "petrol", "attitude") are never changed, and nothing shorter than six letters
is guessed at — except a five-letter slip of a mission verb ("survy", "suvey", "patol"),
since a request without its mission can only ask what to do, and of a short sensor word
("zooom", "lidr", "camer"), since a sensor in a list ("laser range finder + zooom") must
never be dropped. A letter held down ("zooooom", "thermmmal") is read with the run
shortened. No keyword is a restriction or a time bound, so a repair never turns a word
into one.
"""

from __future__ import annotations

import re

__all__ = ["KEYWORDS", "MISSION_WORDS", "SHORT_SENSOR_WORDS", "SHORTHANDS", "repairs"]

SHORTHANDS: dict[str, str] = {
    "teh": "the", "hte": "the", "adn": "and", "nad": "and", "wiht": "with", "wtih": "with", "whit": "with",
    "w/": "with", "w/o": "without", "b4": "before", "2day": "today", "2nite": "tonight", "2night": "tonight",
    "nite": "night", "thru": "through", "abt": "about", "pls": "please", "plz": "please", "thx": "thanks",
    "arvo": "afternoon", "tmrw": "tomorrow", "tmr": "tomorrow", "tmro": "tomorrow", "2mrw": "tomorrow",
    "hydrnat": "hydrant", "hydrnats": "hydrants", "hyrdant": "hydrant", "hyrdants": "hydrants",
    "camra": "camera", "camrea": "camera", "cmaera": "camera", "thermel": "thermal", "ptrol": "patrol",
    "srvey": "survey", "insp": "inspect", "fie": "fire", "frie": "fire", "lnae": "lane", "lnaes": "lanes",
}
"""Whole words (lower case) read as another word."""

KEYWORDS = (
    "patrol", "survey", "inspect", "inspection", "surveying", "patrolling", "inspecting", "thermal", "tomorrow", "hydrant", "hydrants", "morning",
    "afternoon", "evening", "tonight", "infrared", "camera", "altitude", "metres", "meters", "minutes",
    "rooftop", "rooftops", "mapping", "emergency", "monday", "tuesday", "wednesday",
    "thursday", "friday", "saturday", "sunday", "december", "november", "january", "february",
    "rangefinder", "spotlight", "searchlight", "speaker", "megaphone", "telephoto", "visible",
)
"""Long words of the vocabulary that a one-letter slip should still reach."""

MISSION_WORDS = ("survey", "patrol", "inspect")
"""The mission verbs: without one a request asks what to do, so a five-letter slip ("survy", "suvey") still reaches them."""

SHORT_SENSOR_WORDS = ("zoom", "lidar", "camera")
"""Sensor words too short for the six-letter rule: a five-letter slip ("zooom", "lidr" is too short) still reaches them."""

_REAL_WORDS = frozenset({
    "patron", "patrons", "insect", "insects", "attitude", "emergence", "meter", "metre", "lane", "lanes",
    "cameo", "hydrate", "surveys", "camber", "mornings", "evenings", "thermals", "petrol", "parol", "purvey", "surrey",
    "surveil", "patrols", "inspects", "sneaker", "sneakers", "speakers", "visibly", "risible",
})

_WORD = re.compile(r"(?<![a-z0-9/])(?:w/o(?![a-z0-9])|w/|[a-z0-9]+(?![a-z0-9]))", re.ASCII)


def _one_edit(word: str, target: str) -> bool:
    """True when ``word`` is one insertion, deletion, substitution or adjacent swap from ``target``."""
    if word == target or abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        diff = [i for i, (a, b) in enumerate(zip(word, target)) if a != b]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and word[diff[0]] == target[diff[1]] and word[diff[1]] == target[diff[0]]
    short, long_ = (word, target) if len(word) < len(target) else (target, word)
    i = next((k for k, (a, b) in enumerate(zip(short, long_)) if a != b), len(short))
    return short[i:] == long_[i + 1 :]


_HELD = re.compile(r"([a-z])\1{2,}")  # a letter held down: three or more in a row (no English word has them)
_ALL_WORDS = frozenset(KEYWORDS) | frozenset(MISSION_WORDS) | frozenset(SHORT_SENSOR_WORDS)


def _meant(word: str) -> str | None:
    if word in SHORTHANDS:
        return SHORTHANDS[word]
    if word in _REAL_WORDS or word in KEYWORDS or not word.isalpha() or len(word) < 5:
        return None
    if _HELD.search(word):
        for run in (r"\1\1", r"\1"):  # "zooooom" → "zoom", "thermmmal" → "thermal"
            held = _HELD.sub(run, word)
            if held in _ALL_WORDS:
                return held
        word = _HELD.sub(r"\1\1", word)
    keywords = KEYWORDS if len(word) >= 6 else MISSION_WORDS + SHORT_SENSOR_WORDS
    hits = {k for k in keywords if not word.startswith(k) and _one_edit(word, k)}
    return hits.pop() if len(hits) == 1 else None  # two keywords as near: not a typo we can read


def repairs(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, word meant)`` for each misspelling in ``text`` (lower case), left to right."""
    found: list[tuple[int, int, str]] = []
    for m in _WORD.finditer(text):
        meant = _meant(m.group(0))
        if meant == "with" and text[m.end() : m.end() + 1].isalnum():
            meant = "with "  # "w/LR", "w/thermal": a word of its own after "with", not "withthermal"
        if meant is not None:
            found.append((m.start(), m.end(), meant))
    return found
