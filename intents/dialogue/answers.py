"""How an operator's answer to one question changes the request: words put in place of the quote, or none.

An answer is free text read in the light of its question's kind, and turned into an
*edit* of the request as written, which the reader then reads again in full (so an
answer is held to the same rules as the request: an unclear answer is asked about, an
instruction in it is flagged):

* ``part_of_day``: "pm", "下午", "morning" … is joined to the quoted time ("at 3" → "at 3 pm",
  两点 → 下午两点), with "tomorrow" when the question said that reading is tomorrow's ("quarter to
  five" at 07:30: "am" → "quarter to five am tomorrow"); a whole time ("15:00") takes the quote's place;
* ``altitude``: the height to fly ("60", "60 m", "离地60米") is put in as "altitude 60 m";
* ``height_reference``: "above ground" / 离地 keeps the quoted number as a height above
  ground; a new height is read as for ``altitude``;
* ``mission_split``: "yes" keeps that mission (the others' words are removed and set
  aside for a request of their own), "no" removes it, anything else restates it;
* ``focus``, ``scope``, ``region``, ``instruction``, ``parameter``, ``number``, ``sensor``:
  "drop", "evenly", "不用" … removes the quoted words (``intents.questions.DISMISSABLE``);
  to "is this sensor wanted or not?", "yes" / 是 keeps it as wanted ("zoom" → "with zoom");
* ``mission`` (none named): the answer is added to the request as a clause of its own; (a survey of points)
  "inspection" or "survey" puts that mission's words in place of the quote;
* ``coverage``: a share ("99.5%", "99.5") is put in as "cover at least 99.5%" (覆盖率不低于99.5%);
* anything else: the answer takes the quote's place, as a restatement of those words.

A time, day, height or mission is never dropped: "drop" to such a question leaves the words in place, and the
reader asks about them again (a follow-up under the same question). Removing words never joins the words on
either side of them (``intents.dialogue.turn``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from intents.questions import DISMISSABLE, Question, QuestionKind
from intents.time.clocks import with_part

__all__ = ["Edit", "YES", "DISMISS", "edit_for"]

YES = re.compile(r"^(?:yes|y|yeah|yep|ok|okay|sure|this one|keep(?: it)?|plan it|是|是的|好|好的|可以|对|行|就这个|这个)[.!。！]?$")
DISMISS = re.compile(
    r"^(?:no|nope|none|nothing|drop(?: it)?|skip(?: it)?|ignore(?: it)?|remove(?: it)?|never ?mind|forget it|plan without it"
    r"|without it|evenly|plan it evenly|whole area|all of it|the whole (?:area|selection)|not needed"
    r"|否|不|不用|不要|不需要|没有|算了|忽略|删掉|去掉|均匀|均匀覆盖|整个区域|全部|不管)[.!。！]?$"
)
_PM = re.compile(r"^(?:p\.?m\.?|afternoon|in the afternoon|evening|in the evening|night|at night|tonight|下午|午后|晚上|傍晚|夜里|夜间)$")
_AM = re.compile(r"^(?:a\.?m\.?|morning|in the morning|上午|早上|早晨|清晨|凌晨)$")
_INSPECTION = re.compile(r"^(?:(?:a\s+|the\s+)?(?:point\s+)?inspect(?:ion)?s?(?:\s+(?:each(?:\s+one)?|them|the\s+\w+))?|(?:the\s+)?points?"
                         r"|each(?:\s+one)?|检查|点位检查|逐个检查|点位|巡检|检查点位)[.!。！]?$")
_SURVEY = re.compile(r"^(?:(?:an?\s+|the\s+)?(?:area\s+)?survey(?:\s+(?:it|the\s+(?:whole\s+)?(?:area|site|yard|selection)))?"
                     r"|mapping|map\s+it|(?:the\s+)?whole\s+area|测绘|区域测绘|航测|测绘整个区域|整个区域)[.!。！]?$")
_PERCENT = re.compile(r"^\d{1,3}(?:\.\d{1,3})?\s*[%％]?$")
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


def _height_words(said: str, zh: bool) -> str:
    """An answer that is one height above ground, in any wording ("60", "60 m above ground", 离地60米), as the words
    "altitude 60 m" (高度60米); anything else as "altitude <the answer>", which the reader reads or asks about again."""
    from intents.grammar.reader import read_offline  # the answer alone, read like a request

    lead = "高度" if zh else "altitude "
    if _NUMBER_ONLY.match(said):
        return f"{lead}{said}米" if zh else f"{lead}{said} m"
    reading = read_offline(said)
    heights = (QuestionKind.ALTITUDE, QuestionKind.HEIGHT_REFERENCE, QuestionKind.PARAMETER, QuestionKind.NUMBER)
    if reading.intent.altitude_m is not None and not any(q.kind in heights for q in reading.questions):
        value = f"{reading.intent.altitude_m:g}"
        return f"{lead}{value}米" if zh else f"{lead}{value} m"
    return f"{lead}{said}"


def edit_for(question: Question, answer: str, text: str) -> Edit:
    """The edit ``answer`` makes to ``text`` (the request as it stands) for ``question`` (not mission_split)."""
    said = _clean(answer)
    low = said.lower()
    zh = bool(_CJK.search(text))
    if question.start is None or question.end is None:  # no mission named: the answer is a clause of its own
        clause = ("；" if zh else "; ") + said
        return Edit(len(text), len(text), clause, f"added: {said}")
    start, end = question.start, question.end
    quote = text[start:end]
    if DISMISS.match(low):
        if question.kind in DISMISSABLE:
            return Edit(start, end, None, "dropped")
        return Edit(start, end, quote, f"not dropped: a {question.kind.value.replace('_', ' ')} is never dropped")
    if question.kind is QuestionKind.SENSOR and YES.match(low):  # "is this sensor wanted or not?" — "yes": wanted
        words = question.choices.get("yes") or (f"用{quote.strip()}" if _CJK.search(quote) else f"with {quote.strip()}")
        return Edit(start, end, words, words.strip())
    choice = ("pm" if _PM.match(low) else "am" if _AM.match(low) else "yes" if YES.match(low)
              else "inspection" if _INSPECTION.match(low) else "survey" if _SURVEY.match(low) else None)
    if choice is not None and choice in question.choices:  # the words the question said this answer means
        return Edit(start, end, question.choices[choice], question.choices[choice])
    if question.kind is QuestionKind.PART_OF_DAY and choice in ("am", "pm"):
        words = with_part(quote, pm=choice == "pm")
        return Edit(start, end, words, words)
    if question.kind is QuestionKind.HEIGHT_REFERENCE and _GROUND.match(low):
        number = _NUMBER_UNIT.search(quote)
        if number is not None:
            words = f"高度{number.group(0)}" if zh else f"altitude {number.group(0)}"
            return Edit(start, end, words, words.strip())
    if question.kind in (QuestionKind.ALTITUDE, QuestionKind.HEIGHT_REFERENCE):
        words = _height_words(said, zh)
        return Edit(start, end, words, words.strip())
    if question.kind is QuestionKind.COVERAGE and _PERCENT.match(said):  # "99.5%", "99.5": a share to reach
        share = said.rstrip("%％ ").strip()
        words = f"覆盖率不低于{share}%" if zh else f"cover at least {share}%"
        return Edit(start, end, words, words)
    return Edit(start, end, said, said)
