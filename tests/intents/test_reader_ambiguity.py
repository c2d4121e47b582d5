"""intents.grammar.reader: three classes the lead's independent batch (issue 30) found read without a question.

- a sensor word that means two of the fleet's sensors (激光 / "laser": lidar or laser rangefinder) is asked; a word
  that certainly means one (激光雷达, 激光测距, "laser rangefinder", "laser scanner", "IR" — the fleet's one infrared
  sensor is the thermal camera) stays read, and an infrared word that is not the thermal camera (近红外, "NIR",
  "IR illuminator") is asked, never read as thermal;
- a short token in a list of sensors that is no established abbreviation of one ("zm", "tmr" — thermal or
  tomorrow?) is asked, never guessed or taken as a day;
- two missions joined by "+", "&", "plus", "；", 以及, 外加, 顺便 are two missions (asked), while a single mission
  with its sensors joined by "+" or "&" is read.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from intents.grammar.reader import read_offline
from intents.intent import Sensor
from intents.questions import QuestionKind

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")
T, Z, R, L, G = Sensor.THERMAL_CAMERA, Sensor.ZOOM_CAMERA, Sensor.RGB_CAMERA, Sensor.LASER_RANGEFINDER, Sensor.LIDAR


def _sensor_quotes(text: str) -> list[str]:
    reading = read_offline(text, now=NOW)
    assert reading.intent.needs_clarification, text
    return [q.quote for q in reading.questions if q.kind is QuestionKind.SENSOR]


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("明天上午10点消防通道巡查，用热成像和激光", "激光"),
        ("patrol the fire lanes tomorrow 10am with laser", "laser"),
        ("survey the yard with rgb & laser", "laser"),
        ("用激光扫一遍厂区，明天上午9点", "激光"),
        ("inspect the masts with the lasers at 14:00", "lasers"),
        ("明天9点检查消防栓，带上激光", "激光"),
    ],
)
def test_a_laser_word_that_could_be_lidar_or_rangefinder_is_asked(text: str, quote: str) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.needs_clarification
    assert quote in _sensor_quotes(text)
    assert G not in reading.intent.sensors and L not in reading.intent.sensors


@pytest.mark.parametrize(
    ("text", "sensors"),
    [
        ("明天上午9点航测厂区，用激光雷达", {G}),
        ("下午3点检查消防栓，用激光测距", {L}),
        ("inspect the masts at 14:00 with the laser rangefinder", {L}),
        ("survey the yard at 10:00 with a laser scanner", {G}),
        ("inspect the roofs at 14:00 with IR", {T}),
        ("明天上午十点用红外巡查消防通道", {T}),
        ("patrol the fire lanes at 22:00 using the infrared camera", {T}),
    ],
)
def test_a_word_that_certainly_means_one_sensor_stays_read(text: str, sensors: set[Sensor]) -> None:
    intent = read_offline(text, now=NOW).intent
    assert not intent.needs_clarification, intent.clarification_questions
    assert set(intent.sensors) == sensors


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("survey the yard tomorrow 9am with NIR", "NIR"),
        ("明天上午9点用近红外航测厂区", "近红外"),
        ("patrol the fire lanes at 22:00 with the IR illuminator", "IR illuminator"),
        ("patrol the fire lanes at 22:00, near-infrared camera", "near-infrared"),
        ("今晚10点巡查消防通道，开红外补光灯", "红外补光"),
    ],
)
def test_an_infrared_word_that_is_not_the_thermal_camera_is_asked(text: str, quote: str) -> None:
    reading = read_offline(text, now=NOW)
    assert T not in reading.intent.sensors
    assert quote in _sensor_quotes(text)


@pytest.mark.parametrize(
    ("text", "quotes", "read"),
    [
        ("hydrant check w/ rgb, zm and tmr", {"zm", "tmr"}, {R}),
        ("hydrant check at 10:00 w/ rgb, tmr", {"tmr"}, {R}),
        ("survey the lot at 9am, thermal + tmrw", {"tmrw"}, {T}),
        ("patrol the fire lanes at 9am with thermal, zm", {"zm"}, {T}),
        ("inspect the roofs at 14:00, rgb & th", {"th"}, {R}),
        ("survey the yard at 10:00 w/ lidar, rgb, hi", {"hi"}, {G, R}),
    ],
)
def test_a_short_token_in_a_sensor_list_is_asked_never_guessed(text: str, quotes: set[str], read: set[Sensor]) -> None:
    reading = read_offline(text, now=NOW)
    assert quotes <= set(_sensor_quotes(text))
    assert set(reading.intent.sensors) == read  # the plain ones read, nothing guessed for the short tokens


@pytest.mark.parametrize(
    ("text", "sensors"),
    [
        ("hydrant check at 10:00 w/ rgb, lrf and eo", {R, L}),
        ("patrol the fire lanes at 9am with thermal, ok", {T}),
        ("inspect the hydrants tomorrow with thermal, asap", {T}),
        ("patrol the fire lanes, thermal, tmr 9am", {T}),  # "tmr 9am": a day with its hour, not an item of the list
        ("survey the yard w/ rgb + lidar at 50 m tomorrow 9am", {R, G}),
    ],
)
def test_an_established_abbreviation_or_a_plain_word_after_a_list_is_read(text: str, sensors: set[Sensor]) -> None:
    intent = read_offline(text, now=NOW).intent
    assert not intent.needs_clarification, intent.clarification_questions
    assert set(intent.sensors) == sensors


@pytest.mark.parametrize(
    "text",
    [
        "hydrant check now + full area survey at 50 m this afternoon at 3pm",
        "hydrant check now & survey the area at 3pm",
        "survey the lot at 40m plus patrol the fire lanes at 5pm",
        "patrol the fire lanes tomorrow 9am & check the hydrants",
        "明天9点巡查消防通道；测绘整个区域",
        "明天9点巡查消防通道以及测绘厂区",
        "明天9点巡查消防通道外加测绘厂区",
        "明天9点巡查消防通道，顺便测绘一下厂区",
        "明天上午9点检查消防栓加测绘厂区",  # 加, 并 before a mission verb join two missions in one clause
        "明天上午9点检查消防栓并测绘厂区",
    ],
)
def test_two_missions_at_any_joiner_are_two_questions(text: str) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.needs_clarification
    assert len(reading.split) == 2, reading.split
    assert reading.intent.mission_type is None


@pytest.mark.parametrize(
    ("text", "sensors"),
    [
        ("inspect the hydrants at 10:00 with thermal + zoom", {T, Z}),
        ("check the roofs at 14:00 w/ thermal + zoom + rgb, 40 m", {T, Z, R}),
        ("survey & map the yard tomorrow 9am", set()),
        ("check hydrants & gates tomorrow 9am", set()),
        ("inspect the roofs at 14:00 with thermal plus zoom", {T, Z}),
        ("明天上午9点检查消防栓，热成像加上变焦", {T, Z}),
        ("明天上午9点加急检查消防栓，热成像加变焦", {T, Z}),
    ],
)
def test_one_mission_with_a_joined_list_is_read(text: str, sensors: set[Sensor]) -> None:
    intent = read_offline(text, now=NOW).intent
    assert not intent.needs_clarification, intent.clarification_questions
    assert intent.mission_type is not None and set(intent.sensors) == sensors
