"""intents.grammar.heights: a height is read only against the ground, and a length only when it is the height.

The classes a lead's independent batch found read silently wrong (issue 30, part 2): a height
said against the top of something (比塔顶高15米), a length read as a clock time ("@ 0.06km"),
and a bare length at the end of a clause asked although it is plainly the height. Several
phrasings of each, zh and en; ``now`` is Wednesday 2026-12-02 07:30 in Helsinki.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from intents.dialogue.turn import Read, Request, Unclear, understand
from intents.grammar.reader import read_offline
from intents.questions import QuestionKind

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")
TZ = "Europe/Helsinki"


def kinds(text: str) -> list[QuestionKind]:
    return [q.kind for q in read_offline(text, now=NOW).questions]


def quotes(text: str) -> list[str]:
    return [q.quote for q in read_offline(text, now=NOW).questions]


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("检查通信塔，比塔顶高15米，下午四点", "比塔顶高15米"),
        ("检查铁塔，高出塔顶10米", "高出塔顶10米"),
        ("航测，比最高的楼还要高20米", "比最高的楼还要高20米"),
        ("检查屋顶，比屋顶高出5米", "比屋顶高出5米"),
        ("航测果园，树梢以上20米", "树梢以上20米"),
        ("检查铁塔顶上方15米", "铁塔顶上方15米"),
        ("巡查消防通道，在塔顶上方30米处", "塔顶上方30米"),
        ("航测，离塔顶15米", "离塔顶15米"),
        ("相对于起飞点40米航测", "相对于起飞点40米"),
        ("inspect the mast at 15 m above its top", "15 m above its top"),
        ("inspect the tower, 15 m above the top of the mast", "15 m above the top of the mast"),
        ("survey the orchard at 20 m over the treetops", "20 m over the treetops"),
        ("survey at 30m above the crane tomorrow at 10:00", "30m above the crane"),
        ("inspect the mast 15 m higher than the tower top", "15 m higher than the tower top"),
        ("patrol the fire lanes 25 m above the dock", "25 m above the dock"),
        ("stay 10 m above the canopy, survey the orchard", "10 m above the canopy"),
        ("survey at altitude 120 m AMSL", "at altitude 120 m AMSL"),  # the words saying "height" go with it
        ("高度海拔120米航测", "高度海拔120米"),
    ],
)
def test_a_height_against_anything_but_the_ground_is_asked_quoting_the_reference(text: str, quote: str) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.altitude_m is None and reading.intent.needs_clarification
    asked = [q for q in reading.questions if q.kind is QuestionKind.HEIGHT_REFERENCE]
    assert [q.quote for q in asked] == [quote]
    assert reading.intent.mission_type is not None  # the mission words are no part of the reference


@pytest.mark.parametrize(
    ("text", "altitude_m"),
    [
        ("patrol the fire lanes at 40 m above ground level", 40),
        ("fly 30 m up from the ground and survey", 30),
        ("survey the yard at 45 m over the yard", 45),
        ("航测，地面以上40米", 40),
        ("距离地面40米航测", 40),
        ("相对地面35米航测", 35),
        ("离地高度50米巡查消防通道", 50),
    ],
)
def test_a_height_above_the_ground_in_any_words_is_read(text: str, altitude_m: float) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.altitude_m == altitude_m and not reading.intent.needs_clarification


def test_the_answer_above_ground_keeps_the_number_of_a_height_said_against_a_tower_top() -> None:
    text = "检查通信塔，比塔顶高15米，下午四点"
    first = understand(Request(text, NOW, TZ))
    assert isinstance(first, Unclear) and [q.kind for q in first.questions] == [QuestionKind.HEIGHT_REFERENCE]
    done = understand(Request(text, NOW, TZ), {first.questions[0].id: "离地"})
    assert isinstance(done, Read) and done.intent.altitude_m == 15 and done.intent.when.clock == "16:00"


@pytest.mark.parametrize(
    "text",
    [
        "survey the yard at 15 m from the fence",
        "检查30米高的铁塔",
        "inspect the 40 m high tower",
        "inspect hydrants within 50 m",
        "航测，半径 50m",
        "survey the first 40 m",
        "巡查消防通道100米",  # the lane's length as often as a height
        "inspect the gate 30 m",
        "patrol the lanes at 40 m, 20 m away from the houses",
        "巡查50米铁塔",  # before a target: the target's size
        "检查楼高30米的那栋楼",
        "patrol in 30m",
    ],
)
def test_a_distance_a_radius_or_the_size_of_a_thing_is_never_the_height(text: str) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.needs_clarification
    assert reading.intent.altitude_m is None or "away" in text


@pytest.mark.parametrize(
    ("text", "altitude_m"),
    [
        ("survey the yard with thermal, 40 m.", 40),
        ("航测这块地，热成象 50m", 50),
        ("航测，热成像50米，谢谢", 50),
        ("patrol the fire lanes tomorrow 9:00, 35m", 35),
        ("survey, thermal, 60 metres please", 60),
        ("inspect the hydrants, 100 ft", 30.48),
        ("巡查消防通道，明早，0.05公里", 50),
        ("survey the car park with zoom 45 m", 45),
        ("survey the yard, 40 m tomorrow 9:00", 40),  # followed only by words another step read
        ("航测这块地，热成像 50米 明天上午九点", 50),
    ],
)
def test_a_length_alone_at_the_end_of_a_clause_is_the_height(text: str, altitude_m: float) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.altitude_m == altitude_m and not reading.intent.needs_clarification, reading.questions


@pytest.mark.parametrize(
    "text",
    ["航测 高度40米，热成像 50m", "survey at 40 m with thermal, 60 m.", "巡查消防通道，高度30米，拍照 45米"],
)
def test_a_bare_length_beside_another_height_is_asked(text: str) -> None:
    assert QuestionKind.ALTITUDE in kinds(text)
    assert read_offline(text, now=NOW).intent.altitude_m is None


@pytest.mark.parametrize(
    ("text", "altitude_m"),
    [
        ("survey region-1001 asap @ 0.06km", 60),
        ("survey the lot @60m", 60),
        ("patrol the fire lanes @ 200ft tomorrow", 60.96),
        ("survey tmrw @ 0.1 km", 100),
        ("巡查消防通道 @50米", 50),
    ],
)
def test_a_number_with_a_length_unit_is_never_a_clock_time(text: str, altitude_m: float) -> None:
    reading = read_offline(text, now=NOW, region="region-1001")
    assert reading.intent.altitude_m == altitude_m and reading.intent.when.clock is None
    assert not reading.intent.needs_clarification, reading.questions


def test_a_length_is_never_a_clock_even_when_the_height_is_out_of_range() -> None:
    reading = read_offline("survey at 1500m tomorrow", now=NOW)
    assert reading.intent.when.clock is None and quotes("survey at 1500m tomorrow") == ["at 1500m"]


def test_a_length_that_may_be_a_distance_is_answered_with_the_height_to_fly() -> None:
    text = "survey the yard at 15 m from the fence"
    first = understand(Request(text, NOW, TZ))
    assert isinstance(first, Unclear) and [q.kind for q in first.questions] == [QuestionKind.ALTITUDE]
    done = understand(Request(text, NOW, TZ), {first.questions[0].id: "40"})
    assert isinstance(done, Read) and done.intent.altitude_m == 40
