"""Issue 41: every answer kind replaces exactly the span its question quoted, wherever that span sits.

``test_answer_edits`` checks each kind once; here each kind's quote is moved through the request — at its start, in
its middle, at its end, after a number ("region 1001"), after a comma, and inside CJK text with no spaces — and the
same answer must (1) be asked about with exactly that quote, (2) leave the rest of the request as written (the text
read after it is the request with the quote replaced, nothing else removed, nothing glued), and (3) read the request
in one turn with the field the answer set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import pytest

from intents.dialogue.turn import Read, Request, Unclear, understand
from intents.questions import QuestionKind

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")  # Wednesday, Helsinki
TZ = "Europe/Helsinki"


@dataclass(frozen=True)
class Kind:
    """One answer kind: its quote, the answer, the words that replace the quote ("" removes it), the request's other
    words (clear on their own; the quote goes before, between or after them) and the fields the answer sets. A focus
    or an instruction at the start of a request with no comma after it runs on to the mission (a second mission, or
    the instruction's whole clause, quoted as such), and "is this sensor wanted?" is only asked after a negation."""

    kind: str
    quote: str
    answer: str
    words: str
    parts: tuple[str, ...]
    fields: dict[str, Any]
    zh: bool = False
    places: str = "SMEC"  # Start, Middle, End, after a Comma; a kind whose words only make sense in some places says so


KINDS = [
    Kind("part_of_day", "at 9", "pm", "at 9 pm", ("survey region 1001", "tomorrow"), {"clock": "21:00"}),
    Kind("part_of_day", "at 9", "10:30", "10:30", ("survey region 1001", "tomorrow"), {"clock": "10:30"}),
    Kind("time", "tonight at 1", "1 am tomorrow", "1 am tomorrow", ("patrol the fire lanes in region 1001", "with thermal"),
         {"clock": "01:00"}),
    Kind("time", "between 2 and 4pm", "2pm", "2pm", ("patrol the fire lanes in region 1001", "today"), {"clock": "14:00"}),
    Kind("day", "12/5", "5 December", "5 December", ("survey region 1001", "at 10:00"), {"date": "2026-12-05"}),
    Kind("altitude", "at 300 m", "60", "altitude 60 m", ("survey region 1001", "tomorrow 10:00"), {"altitude_m": 60}),
    Kind("altitude", "at 300 m", "60 m above ground", "altitude 60 m", ("survey region 1001", "tomorrow 10:00"),
         {"altitude_m": 60}),
    Kind("height_reference", "120 m AMSL", "60 m above ground", "altitude 60 m", ("survey region 1001", "tomorrow 9am"),
         {"altitude_m": 60}),
    Kind("focus", "especially the north gate", "evenly", "", ("patrol the fire lanes", "tomorrow 10:00"),
         {"mission": "FIRE_LANE_PATROL", "clock": "10:00"}, places="MEC"),
    Kind("scope", "except the north section", "drop", "", ("patrol the fire lanes", "tomorrow 10:00"), {"clock": "10:00"}),
    Kind("region", "region 1002", "drop", "", ("survey", "tomorrow 10:00"), {"clock": "10:00"}),
    Kind("parameter", "at 8 m/s", "drop", "", ("survey region 1001", "tomorrow 10:00"), {"clock": "10:00"}),
    Kind("parameter", "for 20 minutes", "drop", "", ("survey region 1001", "tomorrow 10:00"), {"clock": "10:00"}),
    Kind("parameter", "10 m spacing", "drop", "", ("survey region 1001 at 60 m", "tomorrow 10:00"), {"altitude_m": 60}),
    Kind("scope", "zone 4", "drop", "", ("survey", "tomorrow 10:00 at 60 m"), {"clock": "10:00", "altitude_m": 60}),
    Kind("number", "overlap 70%", "drop", "", ("survey region 1001 at 60 m", "tomorrow 10:00"), {"altitude_m": 60}),
    Kind("sensor", "zoom", "yes", "with zoom", ("patrol the fire lanes tomorrow 10:00,", "no thermal,"),
         {"sensors": ["ZOOM_CAMERA"]}, places="E"),
    Kind("sensor", "thermal optional", "yes", "with thermal", ("patrol the fire lanes", "tomorrow 10:00"),
         {"sensors": ["THERMAL_CAMERA"], "clock": "10:00"}),
    Kind("sensor", "thermal optional", "drop", "", ("patrol the fire lanes", "tomorrow 10:00"), {"sensors": [], "clock": "10:00"}),
    Kind("instruction", "approval already granted", "drop", "", ("patrol the fire lanes tomorrow 10:00", "with thermal"),
         {"clock": "10:00", "sensors": ["THERMAL_CAMERA"]}, places="EC"),
    Kind("part_of_day", "9点", "上午", "上午9点", ("明天1001区", "巡查消防通道"), {"clock": "09:00"}, zh=True),
    Kind("time", "上午9点到11点", "上午9点开始", "上午9点开始", ("明天1001区", "巡查消防通道"), {"clock": "09:00"}, zh=True),
    Kind("time", "今晚3点", "明天凌晨3点", "明天凌晨3点", ("1001区", "巡查消防通道"), {"clock": "03:00"}, zh=True),
    Kind("day", "12/5", "12月5日", "12月5日", ("巡查1001区消防通道", "上午10点"), {"date": "2026-12-05"}, zh=True),
    Kind("altitude", "高度300米", "60米", "高度60米", ("1001区明天上午十点航测", "用热成像"), {"altitude_m": 60}, zh=True),
    Kind("height_reference", "海拔100米", "离地60米", "高度60米", ("1001区明天上午九点航测", "用热成像"), {"altitude_m": 60},
         zh=True),
    Kind("focus", "重点看3号消防栓", "均匀", "", ("1001区明天上午十点巡查消防通道", "用热成像"),
         {"clock": "10:00", "sensors": ["THERMAL_CAMERA"]}, zh=True, places="MEC"),
    Kind("parameter", "速度每秒6米", "去掉", "", ("1001区明天上午十点航测", "用热成像"), {"clock": "10:00"}, zh=True),
    Kind("parameter", "间距10米", "去掉", "", ("1001区明天上午十点航测", "用热成像"), {"clock": "10:00"}, zh=True),
    Kind("sensor", "最好带热成像", "是", "用热成像", ("1001区明天上午十点巡查消防通道", "高度60米"),
         {"sensors": ["THERMAL_CAMERA"], "altitude_m": 60}, zh=True, places="MEC"),
    Kind("scope", "B区", "去掉", "", ("明天上午十点航测", "用热成像"), {"clock": "10:00", "sensors": ["THERMAL_CAMERA"]}, zh=True),
    Kind("instruction", "审批已通过", "去掉", "", ("1001区明天上午十点巡查消防通道", "用热成像"),
         {"clock": "10:00", "sensors": ["THERMAL_CAMERA"]}, zh=True, places="EC"),
    Kind("coverage", "覆盖率40%", "99.5%", "覆盖率不低于99.5%", ("1001区明天上午十点航测", "用热成像"), {"coverage": 0.995},
         zh=True),
]


def _placed(kind: Kind) -> list[str]:
    """The request with the quote at its start, between the other words, at its end, and after a comma."""
    a, b, q = *kind.parts, kind.quote
    if kind.zh:
        placed = {"S": f"{q}{a}{b}", "M": f"{a}{q}{b}", "E": f"{a}{b}{q}", "C": f"{a}，{q}，{b}"}
    else:
        placed = {"S": f"{q} {a} {b}", "M": f"{a} {q} {b}", "E": f"{a} {b} {q}", "C": f"{a}, {q}, {b}"}
    return [placed[p] for p in kind.places]


def _expected(text: str, kind: Kind) -> str:
    """The request with the quote replaced, as written: CJK joined, words between spaces (a removed quote leaves its
    punctuation, never glues the words on either side)."""
    return " ".join(text.replace(kind.quote, kind.words if kind.words else " " if not kind.zh else "", 1).split())


def _tight(text: str) -> str:
    """Spaces before a comma do not count ("10:00, , with" and "10:00,, with" are the same request)."""
    return re.sub(r"\s+(?=[,，])", "", text)


CASES = [pytest.param(kind, text, id=f"{kind.kind}-{i}-{kind.answer}") for kind in KINDS for i, text in enumerate(_placed(kind))]


@pytest.mark.parametrize(("kind", "text"), CASES)
def test_an_answer_replaces_exactly_its_quote_wherever_it_sits(kind: Kind, text: str) -> None:
    request = Request(text, NOW, TZ, region="region-1001")
    first = understand(request)
    assert isinstance(first, Unclear), text
    assert [(q.kind.value, q.quote) for q in first.questions] == [(kind.kind, kind.quote)], text
    done = understand(request, {first.questions[0].id: kind.answer})
    assert isinstance(done, Read), (text, [(q.id, q.quote, q.text) for q in done.questions])
    assert _tight(done.text_read) == _tight(_expected(text, kind))
    intent = done.intent
    got = {"clock": intent.when.clock, "date": intent.when.date.isoformat() if intent.when.date else None,
           "altitude_m": intent.altitude_m, "mission": intent.mission_type.value if intent.mission_type else None,
           "sensors": [s.value for s in intent.sensors], "coverage": intent.coverage_target}
    assert {k: got[k] for k in kind.fields} == kind.fields


@pytest.mark.parametrize(("text", "answer", "read"), [
    ("下午两点巡一下", "巡查消防通道", "下午两点巡一下；巡查消防通道"),
    ("patrol at 15:30 in region 1001", "the fire lanes", "patrol at 15:30 in region 1001; the fire lanes"),
])
def test_a_mission_answered_is_added_whole_and_the_request_reads(text: str, answer: str, read: str) -> None:
    request = Request(text, NOW, TZ, region="region-1001")
    first = understand(request)
    assert isinstance(first, Unclear) and [q.kind for q in first.questions] == [QuestionKind.MISSION]
    done = understand(request, {first.questions[0].id: answer})
    assert isinstance(done, Read) and done.text_read == read
