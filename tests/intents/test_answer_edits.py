"""Issue 41: an answer replaces exactly the span it answers and nothing else, and a full answer reads in one turn.

For every kind of question a person can answer, a request whose quote sits at its start, in its middle, at its end,
beside a number, or inside CJK text with no spaces: the text read after the answer is exactly the request with the
quote replaced (``Read.text_read``), the request is clear after that one answer (no follow-up), and the field the
answer set is read. Removing words never joins the letters or digits on either side of them ("region 1001 between
2 and 4pm" was "region 10014pm"); a time, day, height or mission is never dropped by "drop" (a follow-up, not a
request planned without its time).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from intents.dialogue.turn import Read, Request, Unclear, understand
from intents.questions import QuestionKind

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")  # Wednesday, Helsinki
TZ = "Europe/Helsinki"


def _answered(text: str, kind: str, answer: str) -> Read | Unclear:
    request = Request(text, NOW, TZ, region="region-1001")
    first = understand(request)
    assert isinstance(first, Unclear), text
    asked = [q for q in first.questions if q.kind is QuestionKind(kind)]
    assert len(asked) == 1 and len(first.questions) == 1, [(q.kind.value, q.quote) for q in first.questions]
    return understand(request, {asked[0].id: answer})


@pytest.mark.parametrize(
    ("text", "kind", "answer", "read", "fields"),
    [
        # part of the day: at the start, the end, in CJK, beside a region number, a whole time in its place
        ("at 9 survey the yard tomorrow", "part_of_day", "pm", "at 9 pm survey the yard tomorrow", {"clock": "21:00"}),
        ("survey the yard tomorrow at 9", "part_of_day", "am", "survey the yard tomorrow at 9 am", {"clock": "09:00"}),
        ("明天9点巡查消防通道", "part_of_day", "上午", "明天上午9点巡查消防通道", {"clock": "09:00"}),
        ("survey region 1001 tomorrow at 9", "part_of_day", "21:00", "survey region 1001 tomorrow 21:00", {"clock": "21:00"}),
        ("inspect the roofs at quarter to five", "part_of_day", "am", "inspect the roofs at quarter to five am tomorrow",
         {"clock": "04:45", "day": "TOMORROW"}),
        # a window, quoted whole: the answer takes both ends' place
        ("patrol the fire lanes in region 1001 between 2 and 4pm today", "time", "2pm",
         "patrol the fire lanes in region 1001 2pm today", {"clock": "14:00"}),
        ("明天上午9点到11点巡查消防通道", "time", "上午9点开始", "明天上午9点开始巡查消防通道", {"clock": "09:00"}),
        ("survey the yard tomorrow from 10 to 12", "time", "10:30", "survey the yard tomorrow 10:30", {"clock": "10:30"}),
        # heights: a number, a height in words, against the ground, at the start, beside a region number, in CJK
        ("survey the yard tomorrow 10:00 at 300 m", "altitude", "60", "survey the yard tomorrow 10:00 altitude 60 m",
         {"altitude_m": 60}),
        ("明天上午十点航测，高度300米", "altitude", "60米", "明天上午十点航测，高度60米", {"altitude_m": 60}),
        ("survey region 1001 at 500 m tomorrow 10:00", "altitude", "60 m above ground",
         "survey region 1001 altitude 60 m tomorrow 10:00", {"altitude_m": 60}),
        ("survey the yard tomorrow 9am at altitude 120 m AMSL", "height_reference", "60 m above ground",
         "survey the yard tomorrow 9am altitude 60 m", {"altitude_m": 60}),
        ("航测，海拔100米，明天上午9点", "height_reference", "离地60米", "航测，高度60米，明天上午9点", {"altitude_m": 60}),
        ("40 m above the roofs, survey the yard tomorrow 10:00", "height_reference", "above ground",
         "altitude 40 m, survey the yard tomorrow 10:00", {"altitude_m": 40}),
        # words answered away: at the end, at the start, in CJK, beside a number
        ("巡查消防通道，重点看3号消防栓", "focus", "均匀", "巡查消防通道，", {"mission": "FIRE_LANE_PATROL"}),
        ("especially the north gate, patrol the fire lanes tomorrow 10:00", "focus", "evenly",
         ", patrol the fire lanes tomorrow 10:00", {"clock": "10:00"}),
        ("patrol the fire lanes now except the north section", "scope", "drop", "patrol the fire lanes now", {}),
        ("survey region 1002 tomorrow at 10am", "region", "drop", "survey tomorrow at 10am", {"clock": "10:00"}),
        ("survey block 4 of the depot at 10:00 tomorrow", "scope", "drop", "survey 10:00 tomorrow", {"clock": "10:00"}),
        ("survey the yard at 60 m, overlap 70%, tomorrow 10:00", "number", "drop", "survey the yard at 60 m,, tomorrow 10:00",
         {"altitude_m": 60, "clock": "10:00"}),
        ("明天上午测绘厂区，速度每秒6米", "parameter", "去掉", "明天上午测绘厂区，", {"mission": "AREA_SURVEY"}),
        ("1001区明天10:00航测，速度5米每秒", "parameter", "去掉", "1001区明天10:00航测，", {"clock": "10:00"}),
        ("survey the yard at 40 m, speed 8 m/s, tomorrow 10:00", "parameter", "drop",
         "survey the yard at 40 m, , tomorrow 10:00", {"altitude_m": 40, "clock": "10:00"}),
        ("审批已通过，巡查消防通道", "instruction", "去掉", "，巡查消防通道", {"mission": "FIRE_LANE_PATROL"}),
        # a sensor wanted or not, a coverage, a day, a zone, a slip of a day word, a mission
        ("patrol the fire lanes, no thermal, zoom", "sensor", "yes", "patrol the fire lanes, no thermal, with zoom",
         {"sensors": ["ZOOM_CAMERA"]}),
        ("巡查消防通道，不要热成像，变焦", "sensor", "是", "巡查消防通道，不要热成像，用变焦", {"sensors": ["ZOOM_CAMERA"]}),
        ("明天上午测绘厂区，覆盖率40%", "coverage", "99.5%", "明天上午测绘厂区，覆盖率不低于99.5%", {"coverage": 0.995}),
        ("survey the yard on 12/5 at 10:00", "day", "5 December", "survey the yard on 5 December at 10:00",
         {"date": "2026-12-05"}),
        ("12/5巡查消防通道", "day", "12月5日", "12月5日巡查消防通道", {"date": "2026-12-05"}),
        ("patrol the fire lanes at 9:00 CST tomorrow", "time_zone", "北京时间", "patrol the fire lanes at 9:00 北京时间 tomorrow",
         {"clock": "03:00"}),
        ("pls survy the yard nxet monday 8am", "day", "yes", "pls survy the yard next monday 8am", {"day": "NEXT_MONDAY"}),
        ("can you do a thermal survey of the roofs tomorrow at 13:00", "mission", "inspection",
         "can you do a thermal inspection of the roofs tomorrow at 13:00", {"mission": "POINT_INSPECTION"}),
        ("明天早上六点半把仓库屋顶用热成像扫一遍", "mission", "测绘", "明天早上六点半把仓库用热成像区域测绘",
         {"mission": "AREA_SURVEY", "sensors": ["THERMAL_CAMERA"]}),
        ("下午两点巡一下", "mission", "巡查消防通道", "下午两点巡一下；巡查消防通道", {"mission": "FIRE_LANE_PATROL"}),
    ],
)
def test_an_answer_replaces_exactly_its_span_and_the_request_reads_in_one_turn(
    text: str, kind: str, answer: str, read: str, fields: dict[str, Any]
) -> None:
    done = _answered(text, kind, answer)
    assert isinstance(done, Read), [(q.id, q.quote, q.text) for q in done.questions]
    assert done.text_read == read
    intent = done.intent
    got = {"clock": intent.when.clock, "day": intent.when.day.value if intent.when.day else None,
           "date": intent.when.date.isoformat() if intent.when.date else None, "altitude_m": intent.altitude_m,
           "mission": intent.mission_type.value if intent.mission_type else None,
           "sensors": [s.value for s in intent.sensors], "coverage": intent.coverage_target}
    assert {k: got[k] for k in fields} == fields


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("patrol the fire lanes in region 1001 between 2 and 4pm today", "time"),
        ("survey the yard tomorrow at 9", "part_of_day"),
        ("survey the yard tomorrow 10:00 at 300 m", "altitude"),
        ("明天上午九点航测，海拔100米", "height_reference"),
    ],
)
def test_a_time_or_a_height_answered_drop_is_asked_again_and_the_text_is_left_whole(text: str, kind: str) -> None:
    again = _answered(text, kind, "drop")
    assert isinstance(again, Unclear)
    assert " ".join(text.split()) == again.text_read  # nothing removed, nothing glued ("region 10014pm")
    assert [q.kind.value for q in again.questions] == [kind] and again.questions[0].id.endswith(".1")
    assert "never dropped" in again.answered[0].read_as


def test_follow_ups_only_for_what_is_still_unread() -> None:
    text = "survey the yard tomorrow at 9, 40 m above the roofs, especially the north gate"
    request = Request(text, NOW, TZ)
    first = understand(request)
    assert isinstance(first, Unclear)
    kinds = {q.kind.value: q.id for q in first.questions}
    assert set(kinds) == {"part_of_day", "height_reference", "focus"}
    one = understand(request, {kinds["part_of_day"]: "am"})
    assert isinstance(one, Unclear) and {q.id for q in one.questions} == {kinds["height_reference"], kinds["focus"]}
    every = understand(request, {kinds["part_of_day"]: "am", kinds["height_reference"]: "above ground",
                                 kinds["focus"]: "evenly"})
    assert isinstance(every, Read) and (every.intent.when.clock, every.intent.altitude_m) == ("09:00", 40)
