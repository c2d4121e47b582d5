"""How an operator's answer to one question changes the request: words put in place of the quote, or none.

An answer is free text read in the light of its question's kind, and turned into an
*edit* of the request as written, which the reader then reads again in full (so an
answer is held to the same rules as the request: an unclear answer is asked about, an
instruction in it is flagged):

* ``part_of_day``: "pm", "下午", "morning" … is joined to the quoted time ("at 3" → "at 3 pm",
  两点 → 下午两点); a whole time ("15:00") takes the quote's place;
* ``altitude``: the height to fly ("60", "60 m", "离地60米") is put in as "altitude 60 m";
* ``height_reference``: "above ground" / 离地 keeps the quoted number as a height above
  ground; a new height is read as for ``altitude``;
* ``mission_split``: "yes" keeps that mission (the others' words are removed and set
  aside for a request of their own), "no" removes it, anything else restates it;
* ``focus``, ``scope``, ``region``, ``instruction``, ``parameter``, ``number``, ``sensor``:
  "drop", "evenly", "不用" … removes the quoted words (``intents.questions.DISMISSABLE``);
  to "is this sensor wanted or not?", "yes" / 是 keeps it as wanted ("zoom" → "with zoom");
* ``mission`` (none named): the answer is added to the request as a clause of its own;
* anything else: the answer takes the quote's place, as a restatement of those words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from intents.questions import DISMISSABLE, Question, QuestionKind

__all__ = ["Edit", "YES", "DISMISS", "edit_for"]

YES = re.compile(r"^(?:yes|y|yeah|yep|ok|okay|sure|this one|keep(?: it)?|plan it|是|是的|好|好的|可以|对|行|就这个|这个)[.!。！]?$")
DISMISS = re.compile(
    r"^(?:no|nope|none|nothing|drop(?: it)?|skip(?: it)?|ignore(?: it)?|remove(?: it)?|never ?mind|forget it|plan without it"
    r"|without it|evenly|plan it evenly|whole area|all of it|the whole (?:area|selection)|not needed"
    r"|否|不|不用|不要|不需要|没有|算了|忽略|删掉|去掉|均匀|均匀覆盖|整个区域|全部|不管)[.!。！]?$"
)
_PM = re.compile(r"^(?:p\.?m\.?|afternoon|in the afternoon|evening|in the evening|night|at night|tonight|下午|午后|晚上|傍晚|夜里|夜间)$")
_AM = re.compile(r"^(?:a\.?m\.?|morning|in the morning|上午|早上|早晨|清晨|凌晨)$")
_NUMBER_ONLY = re.compile(r"^\d{1,5}(?:\.\d+)?$")
_NUMBER_UNIT = re.compile(r"\d{1,5}(?:\.\d+)?\s*(?:公里|千米|米|公尺|英尺|km|m|meters?|metres?|ft|feet)(?![a-z])", re.IGNORECASE)
_GROUND = re.compile(r"^(?:yes[, ]*)?(?:above (?:the )?ground(?: level)?|agl|ground|离地|对地|地面|相对地面|离地高度)[.!。！]?$")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True)
class Edit:
    """Put ``words`` in place of ``[start, end)`` of the request as it stands (``None``: remove them)."""

    start: int
    end: int
    words: str | None
    read_as: str


def _clean(answer: str) -> str:
    return " ".join(answer.split()).strip()


def edit_for(question: Question, answer: str, text: str) -> Edit:
    """The edit ``answer`` makes to ``text`` (the request as it stands) for ``question`` (not mission_split)."""
    said = _clean(answer)
    low = said.lower()
    zh = bool(_CJK.search(text))
    if question.kind is QuestionKind.MISSION or question.start is None or question.end is None:
        clause = ("；" if zh else "; ") + said
        return Edit(len(text), len(text), clause, f"added: {said}")
    start, end = question.start, question.end
    quote = text[start:end]
    if question.kind in DISMISSABLE and DISMISS.match(low):
        return Edit(start, end, None, "dropped")
    if question.kind is QuestionKind.SENSOR and YES.match(low):  # "is this sensor wanted or not?" — "yes": wanted
        words = f" 用{quote.strip()} " if _CJK.search(quote) else f" with {quote.strip()} "
        return Edit(start, end, words, words.strip())
    if question.kind is QuestionKind.PART_OF_DAY and (_PM.match(low) or _AM.match(low)):
        pm = bool(_PM.match(low))
        if _CJK.search(quote):
            words = ("下午" if pm else "上午") + quote.strip()
        else:
            words = quote.rstrip() + (" pm" if pm else " am")
        return Edit(start, end, words, words)
    if question.kind is QuestionKind.HEIGHT_REFERENCE and _GROUND.match(low):
        number = _NUMBER_UNIT.search(quote)
        if number is not None:
            words = f" altitude {number.group(0)} "
            return Edit(start, end, words, words.strip())
    if question.kind in (QuestionKind.ALTITUDE, QuestionKind.HEIGHT_REFERENCE):
        words = f" altitude {said} m " if _NUMBER_ONLY.match(said) else f" altitude {said} "
        return Edit(start, end, words, words.strip())
    return Edit(start, end, f" {said} ", said)
