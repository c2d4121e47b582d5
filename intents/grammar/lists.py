"""The items listed with a sensor: what stands at a list joint next to a sensor the reader read.

"laser range finder + hd kam", "lidr and rgb cam", 热成橡跟变焦, "thermal, multispec, zoom": the word
at the joint is an item of the same list, so it is a sensor. The reader reads it as the sensor it
certainly means (``intents.grammar.sensor_slips``) or asks about it; it never drops it.

The joints: after a sensor any of +, &, /, 、, and, plus, 和, 及, 跟, 与 …; before a sensor a symbol,
or a word joined by "and"/和/跟/及 that opens its clause (", lidr and rgb", "，夜视仪和热成像") or
follows "with"/用/带. A comma is a joint as often as it is not ("thermal, quickly"): an item between
a sensor and a comma is ``sure`` only when another sensor follows it ("thermal, multispec, zoom");
otherwise it is read when it is a slip of a sensor and left to the residual step when it is not.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import intents.grammar.vocabulary as V

__all__ = ["ListItem", "list_items", "short_items"]

_STOPS = "，,。;；!！?？\n\x00"
_JOINT = re.compile(r"\s*(?:\+|&|/|、|\band\b|和|跟|及|与|[,，])\s*", re.ASCII)


@dataclass(frozen=True)
class ListItem:
    """``[start, end)`` of the view; ``sure``: a list item for certain (asked when no sensor), else only read if a slip."""

    start: int
    end: int
    sure: bool


def _trimmed(view: str, s: int, e: int) -> tuple[int, int] | None:
    """The item without a leading article, cut at the first word that ends the list ("then", "please", 也 …)."""
    words = list(re.finditer(r"[^\s]+", view[s:e]))
    while words and V.LIST_ARTICLE.match(words[0].group(0)):
        words.pop(0)
    if not words or V.LIST_STOP.match(words[0].group(0).strip(".!?")):
        return None  # "thermal and then come back": a new clause, not an item of the list
    last = next((i for i, w in enumerate(words) if V.LIST_STOP.match(w.group(0).strip(".!?"))), len(words))
    return s + words[0].start(), s + words[last - 1].end()


def list_items(view: str, spans: list[tuple[int, int]]) -> list[ListItem]:
    """The items at a joint before or after each sensor span ``(start, end)`` (its suffix included) in ``view``."""
    starts = {start for start, _ in spans}
    found: list[ListItem] = []
    for start, end in spans:
        after = V.LIST_AFTER.match(view[end:]) or V.LIST_COMMA.match(view[end:])
        if after:
            pos = stop = end + after.end()
            while stop < len(view) and view[stop] not in _STOPS:
                stop += 1
            piece = _JOINT.split(view[pos:stop], maxsplit=1)[0]
            next_joint = _JOINT.match(view, pos + len(piece))
            followed = next_joint is not None and next_joint.end() in starts
            sure = after.re is V.LIST_AFTER.compiled or followed
            trimmed = _trimmed(view, pos, pos + len(piece))
            if trimmed:
                found.append(ListItem(*trimmed, sure=sure))
        base = max(0, start - 40)
        before = V.LIST_BEFORE.search(view[base:start])
        if before:
            group = next(g for g in ("item", "item2", "item3", "item4", "item5") if before.group(g))
            trimmed = _trimmed(view, base + before.start(group), base + before.end(group))
            if trimmed:
                found.append(ListItem(*trimmed, sure=group != "item4"))
    return found


def short_items(
    text: str, spans: list[tuple[int, int]], taken: list[tuple[int, int]], written: Callable[[int, int], str],
) -> list[tuple[int, int]]:
    """The short tokens listed after each sensor span in ``text`` (the whole text, claimed or not: "tmr" is taken
    as a day by then) that are no sensor in ``taken`` and no plain short word: "rgb, zm and tmr" → zm, tmr.
    ``written(start, end)``: the token as the user wrote it (the text reads "tmr" as "tomorrow")."""
    found: list[tuple[int, int]] = []
    for _, end in spans:
        pos = end
        for _ in range(6):  # a list is short; bounded all the same
            m = V.SHORT_ITEM.match(text, pos)
            if m is None:
                break
            s, e = m.span("tok")
            if not any(s < te and ts < e for ts, te in taken):
                tok = written(s, e).strip().lower()
                if tok in V.SHORT_WORDS or not tok.isalpha() or (len(tok) > 3 and tok not in V.SHORT_DAYS):
                    break  # "thermal, ok", "thermal, fast": the list is over (a longer word is the residual step's)
                found.append((s, e))
            pos = m.end()
    return sorted(set(found))
