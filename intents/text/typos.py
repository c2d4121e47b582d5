"""Common misspellings of the reader's English vocabulary, read as the word meant.

A typo that the reader does not know is left open, and an open span that looks like
a parameter is asked about ("teh east block w/" matched "block w" as a named part of
the area). So before any pattern runs, ``repairs`` finds the misspellings and the
scan reads the word meant in their place (``intents.text.scan``), while every quote
still shows what the operator wrote.

Two sources, both deterministic: a table of shorthands and typos operators type
("teh", "w/", "w/o", "b4", "tmrw", "arvo", an input method's 上五9点 for 上午9点), and one edit (a letter added, dropped,
changed, or two swapped) away from a long keyword of the vocabulary ("patrl",
"tomorow", "thremal", "afternon"), two from a keyword of eight letters or more ("tmorow").
Real words that near a keyword ("patron", "insect", "petrol", "attitude") are never
changed, and nothing shorter than six letters is guessed at — except a five-letter slip of a mission verb ("survy", "suvey", "patol"),
since a request without its mission can only ask what to do, and of a short sensor word
("zooom", "lidr", "camer"), since a sensor in a list ("laser range finder + zooom") must
never be dropped. A letter held down ("zooooom", "thermmmal") is read with the run
shortened. No keyword is a restriction or a time bound, so a repair never turns a word
into one. A slip the repair cannot be sure of is not dropped either: the reader asks about
it (``intents.grammar.slips``).
"""

from __future__ import annotations

import re

__all__ = ["KEYWORDS", "MISSION_WORDS", "SHORT_SENSOR_WORDS", "SHORTHANDS", "distance", "repairs"]

SHORTHANDS: dict[str, str] = {
    "teh": "the", "hte": "the", "adn": "and", "nad": "and", "wiht": "with", "wtih": "with", "whit": "with",
    "w/": "with", "w/o": "without", "b4": "before", "2day": "today", "2nite": "tonight", "2night": "tonight",
    "nite": "night", "thru": "through", "abt": "about", "pls": "please", "plz": "please", "thx": "thanks",
    "arvo": "afternoon", "nxt": "next", "tmw": "tomorrow", "tmrw": "tomorrow", "tmr": "tomorrow", "tmro": "tomorrow", "2mrw": "tomorrow",
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
    "remember", "inferred", "emergent", "telephone", "telephones", "spotlit", "sundry", "mourning", "latitude",
})

_WORD = re.compile(r"(?<![a-z0-9/])(?:w/o(?![a-z0-9])|w/|[a-z0-9]+(?![a-z0-9]))", re.ASCII)


def distance(a: str, b: str, bound: int) -> int:
    """Optimal string alignment distance (insert, delete, change, swap of neighbours), cut off above ``bound``."""
    if abs(len(a) - len(b)) > bound:
        return bound + 1
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], prev2[j - 2] + 1)
        prev2, prev = prev, row
    return prev[-1]


_HELD = re.compile(r"([a-z])\1{2,}")  # a letter held down: three or more in a row (no English word has them)
_ALL_WORDS = frozenset(KEYWORDS) | frozenset(MISSION_WORDS) | frozenset(SHORT_SENSOR_WORDS)


GLUED_FIRST = ("next", "this", "coming", "last", "tomorrow", "today", "every")
GLUED_SECOND = ("week", "weekend", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
                "morning", "afternoon", "evening", "night", "tonight")
"""Day words typed without the space between them ("nextweek monday", "tomorrowmorning"): read as the two words. Left
open, "nextweek" was no word of the reader's, and "nextweek monday" read as this week's Monday."""


def _unglued(word: str) -> str | None:
    for first in GLUED_FIRST:
        if word.startswith(first) and word[len(first):] in GLUED_SECOND:
            return f"{first} {word[len(first):]}"
    return None


def _meant(word: str) -> str | None:
    if word in SHORTHANDS:
        return SHORTHANDS[word]
    if (unglued := _unglued(word)) is not None:
        return unglued
    if word in _REAL_WORDS or word in KEYWORDS or not word.isalpha() or len(word) < 5:
        return None
    if _HELD.search(word):
        for run in (r"\1\1", r"\1"):  # "zooooom" → "zoom", "thermmmal" → "thermal"
            held = _HELD.sub(run, word)
            if held in _ALL_WORDS:
                return held
        word = _HELD.sub(r"\1\1", word)
    keywords = KEYWORDS if len(word) >= 6 else MISSION_WORDS + SHORT_SENSOR_WORDS
    near = {k: distance(word, k, _bound(word, k)) for k in keywords if not word.startswith(k)}
    near = {k: d for k, d in near.items() if d <= _bound(word, k)}
    if not near:
        return None
    best = min(near.values())
    hits = [k for k, d in near.items() if d == best]
    return hits[0] if len(hits) == 1 else None  # two keywords as near: not a typo we can read


def _bound(word: str, keyword: str) -> int:
    """Edits allowed: one; two from a keyword of eight letters or more ("tmorow", "wendsday", "aftrnon")."""
    return 2 if len(keyword) >= 8 and len(word) >= 6 else 1


_CLOCK_AHEAD = r"(?=\s*(?:\d|[一二两三四五六七八九十]{1,3}\s*[点时:：]))"
_CJK_SLIPS = [  # an input method's homophone of a day or a part of the day where a day or a time follows
    *((re.compile(said + _CLOCK_AHEAD), meant) for said, meant in (  # 上五9点 is 上午9点
        ("上五", "上午"), ("上无", "上午"), ("下五", "下午"), ("下无", "下午"), ("中五", "中午"), ("晚尚", "晚上"), ("早尚", "早上"))),
    *((re.compile(said + r"(?=\s*(?:[一二三四五六日天七]|[上下中早晚凌]|\d|[一二两三四五六七八九十]{1,3}\s*[点时]))"), meant)
      for said, meant in (("明添", "明天"), ("今添", "今天"), ("后添", "后天"), ("名天", "明天"), ("命天", "明天"))),  # 明添上午
    *((re.compile(said + r"(?=\s*[一二三四五六日天七])"), meant)
      for said, meant in (("夏周", "下周"), ("吓周", "下周"), ("夏个周", "下个周"), ("夏星期", "下星期"), ("夏个星期", "下个星期"))),
]


def repairs(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, word meant)`` for each misspelling in ``text`` (lower case), left to right."""
    found: list[tuple[int, int, str]] = [(m.start(), m.end(), meant) for rx, meant in _CJK_SLIPS for m in rx.finditer(text)]
    for m in _WORD.finditer(text):
        meant = _meant(m.group(0))
        if meant == "with" and text[m.end() : m.end() + 1].isalnum():
            meant = "with "  # "w/LR", "w/thermal": a word of its own after "with", not "withthermal"
        if meant is not None:
            found.append((m.start(), m.end(), meant))
    return sorted(found)
