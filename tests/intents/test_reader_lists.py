"""intents.grammar.reader: the last gaps of issue 30 part 2 (the lead's independent batch c), each as a class.

- a word in a list of sensors ("laser range finder + zooom") is read as the sensor meant when it is a
  slip of one (zooom, thrmal, camra, lidr, 变交, 热呈像) and asked about when it is none the reader
  knows — never dropped;
- a negated sensor followed by the one that is wanted ("不用热成像，变焦相机就行", "no thremal, RGB only")
  is read, not asked;
- an hour followed by its part of the day ("Sunday 9 in the morning") is read;
- the selected region in its short forms ("R1003", "R-1003", "reg. 1003") is read, another one asked;
- a compact clock with an h suffix or an h between ("930h", "9h30") is read.

Several phrasings of each, zh and en; ``now`` is Wednesday 2026-12-02 07:30 in Helsinki.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from intents.grammar.reader import read_offline
from intents.grammar.sensor_slips import sensor_meant
from intents.intent import Sensor
from intents.questions import QuestionKind
from intents.text.typos import repairs

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")
T, Z, R, L, G = Sensor.THERMAL_CAMERA, Sensor.ZOOM_CAMERA, Sensor.RGB_CAMERA, Sensor.LASER_RANGEFINDER, Sensor.LIDAR


@pytest.mark.parametrize(
    ("text", "sensors"),
    [
        ("hydrant inspection tmrw 1100, laser range finder + zooom", {L, Z}),
        ("survey the yard with thrmal and zoom", {T, Z}),
        ("patrol the fire lanes w/ zooooom + thermal", {Z, T}),
        ("survey the lot with lidr & rgb", {G, R}),  # too short for the text-wide repair, but in a list it is a lidar
        ("survey the block, lidra + rgb", {G, R}),
        ("巡查消防通道，热成像和变交", {T, Z}),
        ("检查消防栓，用热呈像和激光侧距", {T, L}),
        ("航测厂区，可见光、便焦", {R, Z}),
    ],
)
def test_a_slip_of_a_sensor_in_a_list_is_read_as_the_sensor_meant(text: str, sensors: set[Sensor]) -> None:
    reading = read_offline(text, now=NOW)
    assert set(reading.intent.sensors) == sensors
    assert reading.intent.mission_type is not None


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("hydrant check tmrw 1100, thermal + multispec", "multispec"),
        ("survey with flurb and thermal", "flurb"),
        ("survey the lot, thermal & rgb & hyperspec please", "hyperspec"),
        ("survey the lot with gopro & rgb", "gopro"),
        ("patrol the lanes, zoom / starlight", "starlight"),
        ("survey w/ thermal+flurb, 50m", "flurb"),
    ],
)
def test_an_unknown_word_in_a_list_of_sensors_is_asked_never_dropped(text: str, quote: str) -> None:
    reading = read_offline(text, now=NOW)
    assert [q.quote for q in reading.questions if q.kind is QuestionKind.SENSOR] == [quote]
    assert reading.intent.needs_clarification


@pytest.mark.parametrize(
    "text",
    ["patrol the lanes with thermal and then come back", "survey the yard and thermal", "thermal and zoom, survey the lot"],
)
def test_what_follows_a_list_but_is_no_item_of_it_is_not_asked(text: str) -> None:
    assert not read_offline(text, now=NOW).intent.needs_clarification


@pytest.mark.parametrize(
    ("text", "sensors", "excluded"),
    [
        ("不用热成像，变焦相机就行，巡查消防通道", {Z}, {T}),
        ("不要热成像，只要变焦，巡查消防通道", {Z}, {T}),
        ("巡查消防通道，不用变焦，可见光就够了", {R}, {Z}),
        ("no thremal, RGB only, survey the yard", {R}, {T}),
        ("survey, no zoom, thermal will do", {T}, {Z}),
        ("patrol the fire lanes, no thermal, zoom alone", {Z}, {T}),
    ],
)
def test_a_negated_sensor_then_the_one_wanted_is_read(text: str, sensors: set[Sensor], excluded: set[Sensor]) -> None:
    intent = read_offline(text, now=NOW).intent
    assert not intent.needs_clarification, intent.clarification_questions
    assert (set(intent.sensors), set(intent.excluded_sensors)) == (sensors, excluded)


def test_after_a_negated_sensor_a_bare_item_is_still_asked() -> None:
    reading = read_offline("survey the yard, no thermal, zoom", now=NOW)
    assert [q.quote for q in reading.questions if q.kind is QuestionKind.SENSOR] == ["zoom"]


@pytest.mark.parametrize(
    ("text", "date", "clock"),
    [
        ("Sunday 9 in the morning, survey the area", "2026-12-06", "09:00"),
        ("survey sunday 3 in the afternoon", "2026-12-06", "15:00"),
        ("patrol the fire lanes at 8 in the evening", "2026-12-02", "20:00"),
        ("patrol the fire lanes 11 at night", "2026-12-02", "23:00"),
        ("patrol the fire lanes 9.30 in the morning tomorrow", "2026-12-03", "09:30"),
        ("survey tomorrow, 10 o'clock in the morning", "2026-12-03", "10:00"),
        ("survey the yard 5 this afternoon", "2026-12-02", "17:00"),
    ],
)
def test_an_hour_followed_by_its_part_of_the_day_is_read(text: str, date: str, clock: str) -> None:
    reading = read_offline(text, now=NOW)
    assert not reading.intent.needs_clarification, reading.intent.clarification_questions
    assert (str(reading.time.date or ""), reading.time.clock) in ((date, clock), ("", clock))


def test_twelve_at_night_is_still_asked() -> None:
    assert read_offline("patrol the fire lanes 12 at night", now=NOW).intent.needs_clarification


@pytest.mark.parametrize(
    "text",
    ["thermal only, no zoom, patrol fire lanes R1003", "R-1003 survey", "巡查R1003消防通道", "survey reg. 1003 at 10am",
     "survey rgn 1003", "hydrant check tmrw 0930h R1003"],
)
def test_the_selected_region_in_its_short_form_is_read(text: str) -> None:
    reading = read_offline(text, now=NOW, region="region-1003")
    assert not reading.intent.needs_clarification, reading.intent.clarification_questions


def test_another_region_in_its_short_form_is_asked() -> None:
    reading = read_offline("inspect hydrants in R1001", now=NOW, region="region-1003")
    assert [(q.kind, q.quote) for q in reading.questions] == [(QuestionKind.REGION, "R1001")]


@pytest.mark.parametrize(
    ("text", "clock"),
    [
        ("patrol fire lanes tmrw 930h", "09:30"),
        ("survey tmrw 9h30", "09:30"),
        ("survey tmrw 930 hrs", "09:30"),
        ("survey 12h15 tomorrow", "12:15"),
        ("hydrant check tmrw 0930h", "09:30"),
        ("明天 9h30 巡查消防通道", "09:30"),
    ],
)
def test_a_compact_clock_with_an_h_is_read(text: str, clock: str) -> None:
    reading = read_offline(text, now=NOW)
    assert not reading.intent.needs_clarification, reading.intent.clarification_questions
    assert reading.time.clock == clock


def test_a_one_digit_compact_hour_early_in_the_morning_is_decided_by_the_window() -> None:
    reading = read_offline("survey today 330h", now=NOW)  # 03:30 has passed at 07:30: 15:30, and the note says so
    assert reading.time.clock == "15:30" and reading.notes


@pytest.mark.parametrize(
    ("word", "meant"),
    [("zooom", "zoom"), ("zooooom", "zoom"), ("thermmmal", "thermal"), ("thrmal", "thermal"), ("camer", "camera"),
     ("lidra", "lidar"), ("rangefiner", "rangefinder"), ("speeker", "speaker")],
)
def test_sensor_slips_are_read_as_the_word_meant(word: str, meant: str) -> None:
    assert repairs(word) == [(0, len(word), meant)]


@pytest.mark.parametrize("word", ["bloom", "rooms", "zoomed", "cameo", "sneaker", "lidr"])
def test_real_words_and_short_ones_are_not_sensor_slips(word: str) -> None:
    assert repairs(word) == []


# ----------------------------------------------------------------------------- the lead's independent batch d, class 1
# "R1002 survey tmrw 1100 hrs, lidr and rgb cam, 150 ft" dropped the lidr: an item at any list joint is read as the one
# sensor it certainly means, or asked about.

@pytest.mark.parametrize(
    ("text", "sensors"),
    [
        ("R1002 survey tmrw 1100 hrs, lidr and rgb cam, 150 ft", {G, R}),
        ("survey the lot tomorrow 9am, rbg and thermal", {R, T}),
        ("survey the lot tomorrow 9am, thrml + zoom", {T, Z}),
        ("survey the lot tomorrow 9am, therm & zoom", {T, Z}),
        ("survey the lot tomorrow 9am, lidr/rgb", {G, R}),
        ("survey the lot tomorrow 9am, thermal, lidr", {T, G}),
        ("survey the lot tomorrow 9am, zoom plus lidr", {Z, G}),
        ("明天上午9点航测厂区，激光雷哒和可见光", {G, R}),
        ("明天上午9点航测厂区，热成橡跟变焦", {T, Z}),
        ("明天上午9点航测厂区，可见光及热成橡", {R, T}),
        ("明天上午9点航测厂区，探照登、热成像", {Sensor.SPOTLIGHT, T}),
        ("明天上午9点航测厂区，用热成橡与变焦", {T, Z}),
        ("survey the lot tomorrow 9am, bring lidr, thermal", {G, T}),
        ("survey the lot tomorrow 9am, sensors: lidr, rgb", {G, R}),  # the label is read too
        ("明天上午9点航测，开热成像以及变焦", {T, Z}),  # so is the joint
        ("明天上午9点航测，传感器：热成像、变焦", {T, Z}),
    ],
)
def test_a_slip_at_any_list_joint_is_read_as_the_sensor_meant(text: str, sensors: set[Sensor]) -> None:
    reading = read_offline(text, now=NOW, region="region-1002")
    assert not reading.intent.needs_clarification, reading.intent.clarification_questions
    assert set(reading.intent.sensors) == sensors


@pytest.mark.parametrize(
    ("text", "excluded"),
    [("survey the lot tomorrow 9am, no thermal or lidr", {T, G}), ("明天上午9点航测厂区，不要热成橡和变焦", {T, Z})],
)
def test_a_slip_listed_with_a_refused_sensor_is_refused_too(text: str, excluded: set[Sensor]) -> None:
    intent = read_offline(text, now=NOW).intent
    assert not intent.needs_clarification and not intent.sensors and set(intent.excluded_sensors) == excluded


@pytest.mark.parametrize(
    "text",
    [
        "survey the lot tomorrow 9am, flurb and thermal",  # "X and <sensor>" opening a clause
        "survey the lot tomorrow 9am, thermal, multispec, zoom",  # a comma between two sensors
        "survey the lot tomorrow 9am, thermal or gopro",
        "survey the lot tomorrow 9am, bring flurb, thermal",
        "明天上午9点航测厂区，夜视仪和热成像",
        "明天上午9点航测厂区，热成像跟夜视仪",
        "明天上午9点航测厂区，可见光、多光谱",
        "明天上午9点航测厂区，热成像或夜视仪",
    ],
)
def test_an_unknown_item_at_any_list_joint_is_asked(text: str) -> None:
    reading = read_offline(text, now=NOW)
    assert [q.kind for q in reading.questions] == [QuestionKind.SENSOR], reading.intent.clarification_questions


@pytest.mark.parametrize("text", ["survey the lot tomorrow 9am, thermal, quickly", "survey the lot tomorrow 9am, thermal or similar"])
def test_a_word_after_a_comma_or_or_that_is_no_sensor_item_is_not_asked(text: str) -> None:
    assert not read_offline(text, now=NOW).intent.needs_clarification


@pytest.mark.parametrize(
    ("item", "meant"),
    [("lidr", (0, G)), ("rbg cam", (0, R)), ("thrml", (0, T)), ("therm", (0, T)), ("lrf", (0, L)), ("热成橡", (0, T)),
     ("不要热成橡", (2, T)), ("激光雷哒", (0, G)), ("变交相机", (0, Z))],
)
def test_a_list_item_is_read_as_the_one_sensor_it_certainly_means(item: str, meant: tuple[int, Sensor]) -> None:
    assert sensor_meant(item) == meant


@pytest.mark.parametrize("item", ["room", "liar", "zom", "flurb", "multispec", "夜视仪", "变焦x", "the lidar thing", "abc"])
def test_a_real_word_a_far_one_or_a_phrase_is_no_sensor(item: str) -> None:
    assert sensor_meant(item) is None


@pytest.mark.parametrize(
    ("text", "quote", "kept"),
    [
        ("survey the yard tomorrow 9am, rgb and lidar or thermal", "lidar or thermal", {R}),
        ("survey the yard tomorrow 9am, thermal or zoom", "thermal or zoom", set()),
        ("明天上午9点航测，热成像或者变焦", "热成像或者变焦", set()),
    ],
)
def test_a_choice_between_two_sensors_is_asked_and_neither_taken(text: str, quote: str, kept: set[Sensor]) -> None:
    reading = read_offline(text, now=NOW)
    assert [(q.kind, q.quote) for q in reading.questions] == [(QuestionKind.SENSOR, quote)]
    assert set(reading.intent.sensors) == kept
