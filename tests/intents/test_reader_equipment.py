"""intents.grammar.equipment and the thermal abbreviations: the two classes of the lead's independent batch f.

- a word in the place of equipment with no list around it ("w/ LR", "w/ the scanner", 用LR, 带上扫描仪) that is no
  known sensor, no non-equipment phrase (care, the drone, 2 drones, 无人机, 用心) and no certain slip of a sensor
  ("with lidr") is asked, never dropped; a slip is read; ordinary requests with "with"/用/带 do not ask;
- the thermal band's abbreviations (TIR, LWIR, 长波红外, thermographic) are the thermal camera; a mid-wave infrared
  camera (MWIR, 中波红外), which the fleet has none of, is asked.

Phrasings other than the batch's own where possible; ``now`` is Wednesday 2026-12-02 07:30 in Helsinki.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from intents.grammar.equipment import equipment_items
from intents.grammar.reader import read_offline
from intents.intent import Sensor
from intents.questions import QuestionKind

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")
T, Z, R, G, S = Sensor.THERMAL_CAMERA, Sensor.ZOOM_CAMERA, Sensor.RGB_CAMERA, Sensor.LIDAR, Sensor.SPOTLIGHT


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("patrol the fire lanes now w/ LR", "LR"),
        ("survey the quay asap w/ the scanner, 40 m", "scanner"),
        ("patrol the lanes tonight at 9 with the NVG", "NVG"),
        ("inspect the roofs asap using a gopro", "gopro"),
        ("survey the pier tomorrow 9am, bring the mapper", "mapper"),
        ("inspect hydrants tomorrow 10:00 w/EMI probe", "EMI probe"),
        ("明天上午9点用LR巡查消防通道", "LR"),
        ("带上扫描仪，明天航测码头", "扫描仪"),
        ("今晚巡查消防通道，配个夜视仪", "夜视仪"),
        ("使用声呐测绘码头", "声呐"),
    ],
)
def test_an_unknown_word_in_the_place_of_equipment_is_asked(text: str, quote: str) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.sensors == []
    sensor_questions = [q for q in reading.questions if q.kind is QuestionKind.SENSOR]
    assert [q.quote for q in sensor_questions] == [quote], reading.questions
    assert reading.intent.mission_type is not None


@pytest.mark.parametrize(
    ("text", "sensors"),
    [
        ("survey the lot tomorrow at 9am w/ lidr", {G}),
        ("patrol the fire lanes using thrml", {T}),
        ("patrol the lanes tonight with the spotlght", {S}),
        ("survey the lot with hd zoom", {Z}),  # a word before a sensor says which of it: no item of its own
        ("survey the lot with EO", {R}),
        ("patrol the lanes w/thermal", {T}),  # "w/" with no space was normalised to "withthermal" and the sensor lost
        ("巡查消防通道，带上热成像", {T}),
        ("配热成像巡查消防通道", {T}),
        ("带着喊话器巡逻消防通道", {Sensor.SPEAKER}),
    ],
)
def test_a_sensor_or_a_certain_slip_of_one_in_the_place_of_equipment_is_read(text: str, sensors: set[Sensor]) -> None:
    reading = read_offline(text, now=NOW)
    assert set(reading.intent.sensors) == sensors
    assert reading.questions == []


@pytest.mark.parametrize(
    "text",
    [
        "patrol the fire lanes w/ care",
        "inspect the hydrants with extra care tomorrow 10:00",
        "survey the depot with the drone at 40 m",
        "patrol the fire lanes asap with the usual drone",
        "patrol the fire lanes, go with caution",
        "patrol the fire lanes with me watching",
        "use your judgement and patrol the fire lanes",
        "patrol the fire lanes, take your time",
        "survey the quay with photos",
        "survey the yard with a 50 m altitude",
        "survey the parcel with 80% coverage",
        "明天用无人机测绘厂区",
        "用心巡查一下消防通道",
        "测绘仓库装卸区",
        "检查北门一带的消防栓",
        "不用热成像，巡查消防通道",
        "带回照片，测绘厂区",
    ],
)
def test_ordinary_requests_with_with_or_yong_do_not_ask(text: str) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.questions == [], reading.questions
    assert reading.intent.mission_type is not None


@pytest.mark.parametrize(
    ("text", "asked_by"),
    [
        ("patrol the fire lanes with 2 drones", QuestionKind.NUMBER),  # the residual step asks, with its own question
        ("patrol the fire lanes with priority", QuestionKind.FOCUS),
    ],
)
def test_what_another_step_asks_about_is_asked_once_by_it(text: str, asked_by: QuestionKind) -> None:
    reading = read_offline(text, now=NOW)
    assert [q.kind for q in reading.questions] == [asked_by]


@pytest.mark.parametrize(
    ("view", "items"),
    [
        ("patrol w/ lr", ["lr"]),
        ("patrol w/o lr", []),
        ("survey with the new scanner, 40 m", ["scanner"]),
        ("survey with care", []),
        ("without scanner", []),
        ("用lr\x00\x00", ["lr"]),
        ("不用lr", []),
    ],
)
def test_equipment_items_bounds(view: str, items: list[str]) -> None:
    assert [view[i.start : i.end] for i in equipment_items(view)] == items


@pytest.mark.parametrize(
    ("text", "sensors"),
    [
        ("fire lane patrol asap, TIR only", {T}),
        ("fire lanes tomorrow 8am, LWIR only", {T}),
        ("survey the yard with tir + rgb, 60 m", {T, R}),
        ("inspect the roofs with the thermographic camera", {T}),
        ("inspect the roofs with long-wave infrared", {T}),
        ("明天上午10点检查屋顶，带上长波红外", {T}),
        ("inspect hydrants asap w/ EO/IR", {R, T}),
        ("patrol the fire lanes w/ the rgb cam", {R}),
        ("航测厂区，用可见光", {R}),
    ],
)
def test_established_sensor_abbreviations_are_read(text: str, sensors: set[Sensor]) -> None:
    reading = read_offline(text, now=NOW)
    assert set(reading.intent.sensors) == sensors
    assert reading.questions == []


@pytest.mark.parametrize("text", ["patrol the fire lanes asap w/ mwir", "survey the lot with mid-wave IR", "航测厂区，用中波红外"])
def test_mid_wave_infrared_which_the_fleet_has_none_of_is_asked(text: str) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.sensors == []
    assert [q.kind for q in reading.questions] == [QuestionKind.SENSOR]
