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
from datetime import date, datetime

from intents.intent import RelativeDay
from intents.questions import DISMISSABLE, Question, QuestionKind
from intents.time.clocks import with_part
from intents.time.resolve import resolve_relative

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
_ALL_SENSORS = re.compile(r"^(?:all|all of (?:it|them)|everything|every (?:one|sensor)|all (?:the )?sensors|the lot"
                          r"|全部|都要|全都要|全带|都带|都带上|所有|所有的|所有传感器)[.!。！]?$")
"""To "which sensors?", "all of them" names none the plan can require (全部 was read as "drop": no sensor planned)."""


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


_WEEKDAY_ZH = {"MONDAY": "一", "TUESDAY": "二", "WEDNESDAY": "三", "THURSDAY": "四", "FRIDAY": "五", "SATURDAY": "六",
               "SUNDAY": "日"}
_NIGHT_WORDS = re.compile(r"\btonight\b|\btonite\b|\bovernight\b|今晚|夜里|夜间|半夜|深夜")


def _day_words(day: RelativeDay | None, on: date | None, night: bool, zh: bool) -> str:
    """A day as words the reader reads as that day alone (no part of it): "tomorrow", 下周五, "2026-12-05"; the
    night of today as "tonight" / 今晚, so a small-hours answer stays the night after today."""
    if on is not None:
        return f"{on.year}年{on.month}月{on.day}日" if zh else on.isoformat()
    if day is None:
        return ""
    if day is RelativeDay.TODAY:
        return ("今晚" if zh else "tonight") if night else ("今天" if zh else "today")
    fixed = {RelativeDay.TOMORROW: ("明天", "tomorrow"), RelativeDay.DAY_AFTER_TOMORROW: ("后天", "the day after tomorrow")}
    if day in fixed:
        return fixed[day][0 if zh else 1]
    which, _, name = day.value.partition("_")
    if zh:
        return ("下周" if which == "NEXT" else "周") + _WEEKDAY_ZH[name]
    return ("next " if which == "NEXT" else "") + name.lower()


def _answered_day(said: str, now: datetime | None) -> str | None:
    """The date an answer that names a day alone names, ISO ("the 4th", "Friday", 4号 → "2026-12-04"), or ``None``
    (an answer with a time of its own, 明天凌晨3点, is read as said)."""
    from intents.grammar.reader import read_offline

    if now is None:
        return None
    answered = read_offline(said, now=now).time
    if answered.clock is not None or answered.part is not None or answered.problems:
        return None
    if answered.date is not None:
        return answered.date.isoformat()
    return resolve_relative(answered.day, now.date()).isoformat() if answered.day is not None else None


def _keeping_the_day(quote: str, said: str, zh: bool, now: datetime | None) -> str:
    """A time answered without a day, to a question whose quote holds the day: the day stays ("tomorrow afternoon at
    11:00" answered "11am" was "11am" alone — today's 11:00, read without a question — now "tomorrow 11am")."""
    from intents.grammar.reader import read_offline  # the quote and the answer alone, read like requests

    answered = read_offline(said, now=now).time
    if answered.day is not None or answered.date is not None or any(p.kind == "day" for p in answered.problems):
        return said
    asked = read_offline(quote).time  # the days its words name (no "now": not a day the reader inferred, 夜里2点's)
    day = _day_words(asked.day, asked.date, bool(_NIGHT_WORDS.search(quote.lower())), zh)
    if not day:
        return said
    return f"{day}{said}" if zh and _CJK.search(said) else f"{day} {said}"


def edit_for(question: Question, answer: str, text: str, now: datetime | None = None) -> Edit:
    """The edit ``answer`` makes to ``text`` (the request as it stands) for ``question`` (not mission_split);
    ``now`` (local) reads the days said in the quote and in the answer."""
    said = _clean(answer)
    low = said.lower()
    zh = bool(_CJK.search(text))
    if question.start is None or question.end is None:  # no mission named: the answer is a clause of its own
        clause = ("；" if zh else "; ") + said
        return Edit(len(text), len(text), clause, f"added: {said}")
    start, end = question.start, question.end
    quote = text[start:end]
    if question.kind is QuestionKind.SENSOR and _ALL_SENSORS.match(low):  # "all of them", 全部: not a sensor to require
        return Edit(start, end, quote, "not read: a plan requires each sensor it names; which ones?")
    if DISMISS.match(low):
        if question.kind in DISMISSABLE:
            return Edit(start, end, None, "dropped")
        return Edit(start, end, quote, f"not dropped: a {question.kind.value.replace('_', ' ')} is never dropped")
    if question.kind is QuestionKind.SENSOR and YES.match(low):  # "is this sensor wanted or not?" — "yes": wanted
        bare = quote.strip()
        words = question.choices.get("yes") or (bare if re.match(r"(?:with|用|带)\b", bare)  # "with …" is said once
                                                else f"用{bare}" if _CJK.search(quote) else f"with {bare}")
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
    if question.kind is QuestionKind.TIME and question.choices:  # a day that picks one of the readings asked
        picked = question.choices.get(_answered_day(said, now) or said)
        if picked is not None:
            return Edit(start, end, picked, picked)
    if question.kind is QuestionKind.TIME:
        words = _keeping_the_day(quote, said, zh, now)
        return Edit(start, end, words, words)
    return Edit(start, end, said, said)
