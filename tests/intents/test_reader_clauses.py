"""intents.grammar.reader: clauses the Intent cannot express are asked; clauses it can are read.

Issue 30, part 2: an order of priority inside the area (先看北门那个, "start with the ones near
the gate") is a focus and is asked; a negation covers only its own item ("no spotlight, thermal
yes" still requires the thermal camera); the selected region named in any common form (1002区,
"Region 2001:") is read, another one asked. Several phrasings of each, zh and en; ``now`` is
Wednesday 2026-12-02 07:30 in Helsinki.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from intents.dialogue.turn import Read, Request, understand
from intents.grammar.reader import read_offline
from intents.intent import MissionType, Priority, Sensor
from intents.questions import QuestionKind

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")
TZ = "Europe/Helsinki"


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("下午两点航测，优先拍东侧那几栋楼", "优先拍东侧那几栋楼"),
        ("马上检查消防栓，先看北门那个", "先看北门那个"),
        ("检查消防栓，北门的先看", "北门的先看"),
        ("巡查消防通道，首先查看南侧", "首先查看南侧"),
        ("检查屋顶，最重要的是东边那栋", "最重要的是东边那栋"),
        ("航测园区，以北区为主", "以北区为主"),
        ("检查消防栓，从北门开始", "从北门开始"),
        ("patrol fire lanes tonight, most important is the east lane", "most important is the east lane"),
        ("survey the yard, the priority is the loading dock", "the priority is the loading dock"),
        ("inspect the hydrants, start with the ones near the gate", "start with the ones near the gate"),
        ("survey the yard, begin with the car park", "begin with the car park"),
        ("survey the campus, mostly the new buildings", "mostly the new buildings"),
        ("inspect the roofs, esp. the north ones", "esp. the north ones"),
        ("survey the site, the main thing is the car park", "the main thing is the car park"),
        ("巡查消防通道，优先考虑东侧", "优先考虑东侧"),
        ("航测厂区，东侧多拍点", "东侧多拍点"),
    ],
)
def test_an_order_of_priority_is_a_focus_and_is_asked(text: str, quote: str) -> None:
    reading = read_offline(text, now=NOW)
    focus = [q for q in reading.questions if q.kind is QuestionKind.FOCUS]
    assert [q.quote for q in focus] == [quote]
    assert reading.intent.mission_type is not None


def test_a_mission_word_inside_a_focus_clause_is_still_read() -> None:
    reading = read_offline("first check the hydrant by the north gate, then the rest", now=NOW)
    assert reading.intent.mission_type is MissionType.POINT_INSPECTION
    assert {q.kind for q in reading.questions} == {QuestionKind.FOCUS}


@pytest.mark.parametrize(
    ("text", "priority"),
    [
        ("优先级高，巡查消防通道", Priority.HIGH),
        ("请优先安排，今晚巡查消防通道", Priority.HIGH),
        ("high priority: patrol the fire lanes tonight", Priority.HIGH),
        ("important: inspect the hydrants at 10:00", Priority.HIGH),
    ],
)
def test_the_priority_of_the_job_is_no_focus(text: str, priority: Priority) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.priority is priority and not reading.intent.needs_clarification, reading.questions


def test_a_focus_answered_evenly_is_planned() -> None:
    text = "马上检查消防栓，先看北门那个"
    first = understand(Request(text, NOW, TZ))
    done = understand(Request(text, NOW, TZ), {first.questions[0].id: "均匀"})  # type: ignore[union-attr]
    assert isinstance(done, Read) and done.intent.mission_type is MissionType.POINT_INSPECTION


@pytest.mark.parametrize(
    ("text", "sensors", "excluded"),
    [
        ("patrol fire lanes at half past six this evening, no spotlight, thermal yes", {Sensor.THERMAL_CAMERA}, {Sensor.SPOTLIGHT}),
        ("patrol the fire lanes, spotlight off, thermal on", {Sensor.THERMAL_CAMERA}, {Sensor.SPOTLIGHT}),
        ("patrol the fire lanes without thermal but with zoom", {Sensor.ZOOM_CAMERA}, {Sensor.THERMAL_CAMERA}),
        ("survey the lot, no lidar, rgb please", {Sensor.RGB_CAMERA}, {Sensor.LIDAR}),
        ("patrol the fire lanes, thermal yes, spotlight no", {Sensor.THERMAL_CAMERA}, {Sensor.SPOTLIGHT}),
        ("巡查消防通道，不要探照灯，热成像要", {Sensor.THERMAL_CAMERA}, {Sensor.SPOTLIGHT}),
        ("巡查消防通道，不开探照灯，开热成像", {Sensor.THERMAL_CAMERA}, {Sensor.SPOTLIGHT}),
        ("巡查消防通道，不要喊话器，探照灯开着", {Sensor.SPOTLIGHT}, {Sensor.SPEAKER}),
        ("巡查消防通道，不要热成像和变焦", set(), {Sensor.THERMAL_CAMERA, Sensor.ZOOM_CAMERA}),
        ("survey the yard without lidar or thermal", set(), {Sensor.LIDAR, Sensor.THERMAL_CAMERA}),
        ("patrol the fire lanes, thermal: yes; spotlight: no", {Sensor.THERMAL_CAMERA}, {Sensor.SPOTLIGHT}),
        ("patrol the fire lanes, neither thermal nor zoom", set(), {Sensor.THERMAL_CAMERA, Sensor.ZOOM_CAMERA}),
    ],
)
def test_a_negation_covers_its_own_item_and_the_items_listed_with_it(
    text: str, sensors: set[Sensor], excluded: set[Sensor]
) -> None:
    reading = read_offline(text, now=NOW)
    assert not reading.intent.needs_clarification, reading.questions
    assert set(reading.intent.sensors) == sensors and set(reading.intent.excluded_sensors) == excluded


@pytest.mark.parametrize(
    ("text", "quote"),
    [("patrol the fire lanes, no thermal, zoom", "zoom"), ("巡查消防通道，不要热成像，变焦", "变焦"),
     ("patrol the fire lanes, no spotlight and thermal", "thermal")],
)
def test_an_item_after_a_negated_one_and_a_bare_comma_is_asked(text: str, quote: str) -> None:
    reading = read_offline(text, now=NOW)
    assert [(q.kind, q.quote) for q in reading.questions] == [(QuestionKind.SENSOR, quote)]


@pytest.mark.parametrize(
    "text",
    [
        "巡查1002区的消防通道", "第1002区巡查消防通道", "1002 区 航测", "区域 1002，巡查消防通道", "1002片区明天上午航测",
        "Region 1002: survey tomorrow 9:00", "survey region_1002", "survey the 1002 area", "zone 1002 survey at 10:30",
        "survey site 1002", "1002地块航测",
    ],
)
def test_the_selected_region_named_in_any_common_form_is_read(text: str) -> None:
    reading = read_offline(text, now=NOW, region="region-1002")
    assert not reading.intent.needs_clarification, reading.questions
    assert reading.intent.mission_type is not None


@pytest.mark.parametrize(("text", "quote"), [("巡查1003区的消防通道", "1003区"), ("Region 1003: survey tomorrow 9:00", "Region 1003"),
                                             ("survey the 1003 area", "1003 area")])
def test_another_region_named_is_asked(text: str, quote: str) -> None:
    reading = read_offline(text, now=NOW, region="region-1002")
    assert [(q.kind, q.quote) for q in reading.questions] == [(QuestionKind.REGION, quote)]


def test_a_district_word_before_a_clock_time_is_no_region() -> None:
    reading = read_offline("巡查厂区消防通道 10:30", now=NOW, region="region-1002")
    assert not reading.intent.needs_clarification and reading.intent.when.clock == "10:30"
