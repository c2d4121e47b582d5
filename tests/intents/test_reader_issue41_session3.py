"""Issue 41, session 3: the classes left after session 2, each fixed as a class.

- A residual question quotes the words it asks about, not the mission's object before them ("survey the yard
  yesterday at 10" quoted "the yard yesterday", and an answer put in its place took "the yard" away).
- A clock whose own words fix its half of the day (2am, 21:00, 凌晨2点, 夜里2点) with a part of the day that agrees is
  read; in the small hours with "tonight" (or the night of today, or none named) it is the next day's ("tonight at
  2am" was asked), midnight with tonight is the midnight ending today; the night of another day, and a clock the
  part made p.m. outside that part ("tomorrow afternoon at 11:00" was 23:00, unasked), are asked.
- "All sensors except X" (除了热成像都带上, 热成像以外的都带上, "every sensor but lidar") is one sensor question, X never
  required; "no sensors except X" (除了热成像都不带) is X alone.
- A time answered without a day keeps the day its question quoted ("tomorrow afternoon at 11:00" answered "11am"
  was today's 11:00, read without a question); the night of another day answered with a day alone is that day's
  small hours, the clock kept.
"""

from __future__ import annotations

from datetime import date, datetime

import pytest

from intents import extract_intent, read_offline
from intents.dialogue.turn import Read, Request, Unclear, understand
from intents.intent import RelativeDay, Sensor
from intents.time.resolve import resolve_relative

WEDNESDAY = datetime.fromisoformat("2026-12-02T07:30:00+02:00")
SMALL_HOURS = datetime.fromisoformat("2026-12-02T01:10:00+02:00")
TZ = "Europe/Helsinki"


def asked(text: str, now: datetime = WEDNESDAY) -> list[tuple[str, str]]:
    return [(q.kind.value, q.quote) for q in read_offline(text, now=now).questions]


# ---------------------------------------------------------------------------------------------- quotes


@pytest.mark.parametrize(("text", "quote"), [
    ("survey the yard yesterday at 10:00", "yesterday"),
    ("survey the site sometime next week", "sometime next week"),
    ("Survey the golf course 9ish tomorrow", "9ish"),
    ("survey the yard with 2 drones tomorrow 10:00", "with 2 drones"),
    ("survey the site at 2cm/px tomorrow 10:00", "at 2cm/px"),
    ("we'd like an orthophoto of the north plot by end of week", "by end of week"),
    ("survey the yard using the M30T tomorrow 10:00", "using the M30T"),
    ("inspect the hydrants on christmas", "on christmas"),
])
def test_a_residual_question_quotes_its_words_not_the_missions_object(text: str, quote: str) -> None:
    assert quote in [q for _, q in asked(text)]


@pytest.mark.parametrize(("text", "quote"), [
    ("patrol the fire lanes. P.S. the drone in dock 2 has a weak battery", "P.S. the drone in dock 2 has a weak battery"),
    ("send the M30 to check the roof", "send the M30 to"),  # no mission verb before it: nothing is its object
    ("Survey: parking lot C, tomorrow 13:00", "parking lot C"),  # a named part is the scope itself, kept whole
])
def test_words_that_are_no_missions_object_stay_in_the_quote(text: str, quote: str) -> None:
    assert quote in [q for _, q in asked(text)]


def test_an_answer_to_a_narrow_quote_keeps_the_missions_object() -> None:
    request = Request("survey the yard yesterday at 10:00", WEDNESDAY, TZ, region="region-1001")
    first = understand(request)
    assert isinstance(first, Unclear) and [q.quote for q in first.questions] == ["yesterday"]
    done = understand(request, {first.questions[0].id: "tomorrow"})
    assert isinstance(done, Read), [(q.quote, q.text) for q in done.questions]
    assert done.text_read == "survey the yard tomorrow at 10:00"
    assert done.intent.when.clock == "10:00"


# ---------------------------------------------------------------------------------------------- a clock and its part


@pytest.mark.parametrize(("text", "day", "clock"), [
    ("patrol the fire lanes tonight at 2am", date(2026, 12, 3), "02:00"),
    ("patrol the fire lanes at 1:30 am tonight", date(2026, 12, 3), "01:30"),
    ("patrol the fire lanes tonight at 02:00", date(2026, 12, 3), "02:00"),
    ("patrol the fire lanes tonight at 12am", date(2026, 12, 3), "00:00"),
    ("patrol the fire lanes overnight at 3 a.m.", date(2026, 12, 3), "03:00"),
    ("今晚凌晨2点巡查消防通道", date(2026, 12, 3), "02:00"),
    ("今天夜里2点巡查消防通道", date(2026, 12, 3), "02:00"),
    ("夜里2点巡查消防通道", date(2026, 12, 3), "02:00"),
    ("半夜3点巡查消防通道", date(2026, 12, 3), "03:00"),
    ("深夜一点半巡查消防通道", date(2026, 12, 3), "01:30"),
    ("明天凌晨2点巡查消防通道", date(2026, 12, 3), "02:00"),
    # the small hours said in words: "tonight at 1 in the morning" was 13:00 (the hour read alone, then "passed")
    ("patrol the fire lanes tonight at 1 in the morning", date(2026, 12, 3), "01:00"),
    ("patrol the fire lanes tomorrow at 2 in the morning", date(2026, 12, 3), "02:00"),
    ("patrol the fire lanes tomorrow at 9 in the evening", date(2026, 12, 3), "21:00"),
    ("下午9点巡查消防通道", date(2026, 12, 2), "21:00"),
    # midnight with tonight: the midnight ending today (alone, or with another day, it is asked)
    ("patrol the fire lanes tonight at midnight", date(2026, 12, 3), "00:00"),
    ("patrol the fire lanes at midnight tonight", date(2026, 12, 3), "00:00"),
    ("今晚12点巡查消防通道", date(2026, 12, 3), "00:00"),
    ("今天夜里12点巡查消防通道", date(2026, 12, 3), "00:00"),
    # an explicit clock with a part of the same half of the day, said loosely
    ("patrol the fire lanes this evening at 4pm", date(2026, 12, 2), "16:00"),
    ("patrol the fire lanes this evening at 16:00", date(2026, 12, 2), "16:00"),
    ("patrol the fire lanes this afternoon at 7pm", date(2026, 12, 2), "19:00"),
    ("patrol the fire lanes at nine thirty pm", date(2026, 12, 2), "21:30"),
    ("下午15点巡查消防通道", date(2026, 12, 2), "15:00"),
    ("晚上20点巡查消防通道", date(2026, 12, 2), "20:00"),
    ("patrol the fire lanes tonight at 10:30", date(2026, 12, 2), "22:30"),
    ("下午8点巡查消防通道", date(2026, 12, 2), "20:00"),
])
def test_a_clock_that_agrees_with_its_part_of_the_day_is_read(text: str, day: date, clock: str) -> None:
    e = extract_intent(text, now=WEDNESDAY, timezone=TZ, extractor="offline")
    assert not e.needs_clarification, e.intent.clarification_questions
    assert (e.date, e.start_time) == (day, clock)
    assert e.intent.when.day is not RelativeDay.TODAY or day == date(2026, 12, 2)  # "tonight" is not left saying TODAY


def test_the_small_hours_said_in_the_small_hours_are_this_nights() -> None:
    e = extract_intent("patrol the fire lanes tonight at 2am", now=SMALL_HOURS, timezone=TZ, extractor="offline")
    assert not e.needs_clarification and (e.date, e.start_time) == (date(2026, 12, 2), "02:00")


@pytest.mark.parametrize(("text", "quote"), [
    ("patrol the fire lanes tomorrow night at 2am", "tomorrow night at 2am"),  # the 3rd or the 4th?
    ("明天夜里2点巡查消防通道", "明天夜里2点"),  # the day with it: a day answered replaces both
    ("patrol the fire lanes tomorrow afternoon at 11:00", "tomorrow afternoon at 11:00"),  # was 23:00, unasked
    ("patrol the fire lanes tomorrow afternoon at 11", "tomorrow afternoon at 11"),
    ("明天下午11点巡查消防通道", "下午11点"),
    ("patrol the fire lanes this morning at 9pm", "this morning at 9pm"),
    ("patrol the fire lanes this afternoon at 11am", "this afternoon at 11am"),
    ("patrol the fire lanes tomorrow morning at 14:00", "tomorrow morning at 14:00"),
    ("patrol the fire lanes tonight at 1", "tonight at 1"),  # no am/pm: 13:00 is not tonight, 01:00 is not said
    ("晚上2点巡查消防通道", "晚上2点"),
    ("patrol the fire lanes at midnight", "at midnight"),  # which day's midnight?
    ("明晚12点巡查消防通道", "明晚12点"),
])
def test_a_clock_and_a_part_of_the_day_that_disagree_are_asked(text: str, quote: str) -> None:
    assert asked(text) == [("time", quote)]


# ---------------------------------------------------------------------------------------------- all sensors but …


@pytest.mark.parametrize(("text", "quote"), [
    ("除了热成像都带上，明天上午10点航测北区", "除了热成像都带上"),
    ("明天上午10点航测北区，除了热成像其他都带上", "除了热成像其他都带上"),
    ("明天上午10点航测北区，除热成像外全部带上", "除热成像外全部带上"),
    ("明天上午10点航测北区，热成像以外的传感器都带上", "热成像以外的传感器都带上"),
    ("明天上午10点航测北区，除了熱成像都帶上", "除了熱成像都帶上"),  # traditional characters
    ("survey the north area tomorrow 10:00 with all sensors except thermal", "with all sensors except thermal"),
    ("survey the north area tomorrow 10:00 with every sensor but lidar", "with every sensor but lidar"),
    ("survey the north area tomorrow 10:00, all sensors but thermal", "all sensors but thermal"),
    ("survey the north area tomorrow 10:00, everything except thermal", "everything except thermal"),
    ("survey the north area tomorrow 10:00, all cameras except the zoom", "all cameras except the zoom"),
    ("survey the north area tomorrow 10:00, full payload apart from the lidar and zoom",
     "full payload apart from the lidar and zoom"),
])
def test_all_sensors_but_some_is_one_sensor_question_and_none_is_required(text: str, quote: str) -> None:
    reading = read_offline(text, now=WEDNESDAY)
    assert [(q.kind.value, q.quote) for q in reading.questions] == [("sensor", quote)]
    assert reading.intent.sensors == []


@pytest.mark.parametrize(("text", "sensors"), [
    ("明天上午10点航测北区，除了热成像都不带", [Sensor.THERMAL_CAMERA]),
    ("明天上午10点航测北区，除了热成像别的都不要", [Sensor.THERMAL_CAMERA]),
    ("明天上午10点航测北区，除了热成像和变焦其他都不用", [Sensor.THERMAL_CAMERA, Sensor.ZOOM_CAMERA]),
    ("明天上午10点航测北区，只带热成像", [Sensor.THERMAL_CAMERA]),
    ("survey the north area tomorrow 10:00, no sensors except thermal", [Sensor.THERMAL_CAMERA]),
    ("survey the north area tomorrow 10:00, nothing except thermal and lidar", [Sensor.LIDAR, Sensor.THERMAL_CAMERA]),
    ("survey the north area tomorrow 10:00, no cameras other than the zoom", [Sensor.ZOOM_CAMERA]),
])
def test_no_sensors_but_some_is_those_alone(text: str, sensors: list[Sensor]) -> None:
    reading = read_offline(text, now=WEDNESDAY)
    assert reading.questions == [] and reading.intent.sensors == sensors and reading.intent.excluded_sensors == []


@pytest.mark.parametrize(("text", "answer", "read", "sensors"), [
    ("除了热成像都带上，明天上午10点航测北区", "可见光和激光雷达", "可见光和激光雷达，明天上午10点航测北区",
     [Sensor.LIDAR, Sensor.RGB_CAMERA]),
    ("survey the north area tomorrow 10:00 with every sensor but lidar", "with rgb and zoom",
     "survey the north area tomorrow 10:00 with rgb and zoom", [Sensor.RGB_CAMERA, Sensor.ZOOM_CAMERA]),
    ("survey the north area tomorrow 10:00 with every sensor but lidar", "drop", "survey the north area tomorrow 10:00", []),
])
def test_all_sensors_but_some_answered_reads_in_one_turn(text: str, answer: str, read: str, sensors: list[Sensor]) -> None:
    request = Request(text, WEDNESDAY, TZ, region="region-1001")
    first = understand(request)
    assert isinstance(first, Unclear) and len(first.questions) == 1
    done = understand(request, {first.questions[0].id: answer})
    assert isinstance(done, Read), [(q.quote, q.text) for q in done.questions]
    assert done.text_read == read and done.intent.sensors == sensors


def test_map_everything_except_a_place_is_still_a_scope() -> None:
    assert ("scope", "except the river") in asked("survey everything except the river tomorrow 10:00")


# ---------------------------------------------------------------------------------------------- answers keep the day


def _one_answer(text: str, answer: str) -> Read | Unclear:
    request = Request(text, WEDNESDAY, TZ, region="region-1001")
    first = understand(request)
    assert isinstance(first, Unclear) and len(first.questions) == 1, text
    return understand(request, {first.questions[0].id: answer})


D3, D4, D11 = date(2026, 12, 3), date(2026, 12, 4), date(2026, 12, 11)


@pytest.mark.parametrize(("text", "answer", "read", "day", "clock"), [
    # the day was in the quote and the answer replaced it: "11am" alone was today's 11:00, read without a question
    ("patrol the lanes tomorrow afternoon at 11:00", "11am", "patrol the lanes tomorrow 11am", D3, "11:00"),
    ("patrol the lanes next friday afternoon at 11:00", "11am", "patrol the lanes next friday 11am", D11, "11:00"),
    ("patrol the fire lanes tonight at 1", "1am", "patrol the fire lanes tonight 1am", D3, "01:00"),
    ("patrol the fire lanes this evening at 9am", "9pm", "patrol the fire lanes today 9pm", date(2026, 12, 2), "21:00"),
    ("patrol the lanes at 10:00 tomorrow and again at 15:00", "10:00", "patrol the lanes at tomorrow 10:00", D3, "10:00"),
    ("明晚3点巡查消防通道", "晚上9点", "明天晚上9点巡查消防通道", D3, "21:00"),
    ("今晚3点巡查消防通道", "凌晨3点", "今晚凌晨3点巡查消防通道", D3, "03:00"),
    ("patrol the fire lanes tonight at 1", "1 in the morning", "patrol the fire lanes tonight 1 in the morning", D3, "01:00"),
    ("明天9点巡查消防通道", "晚上", "明天下午9点巡查消防通道", D3, "21:00"),  # the pm answer's words are read as said
    # an answer with its own day replaces the quote's
    ("patrol the lanes tomorrow afternoon at 11:00", "friday 11am", "patrol the lanes friday 11am", D4, "11:00"),
    # the night of another day, answered with a day alone: that day's small hours, not the day alone at 09:00
    ("patrol the fire lanes tomorrow night at 2am", "on the 4th", "patrol the fire lanes 2026-12-04 02:00", D4, "02:00"),
    ("明天夜里2点巡查消防通道", "4号", "2026-12-04 02:00巡查消防通道", D4, "02:00"),
    ("明天夜里2点巡查消防通道", "明天凌晨3点", "明天凌晨3点巡查消防通道", D3, "03:00"),
])
def test_a_time_answered_without_a_day_keeps_the_day_its_question_quoted(
    text: str, answer: str, read: str, day: date, clock: str
) -> None:
    done = _one_answer(text, answer)
    assert isinstance(done, Read), [(q.quote, q.text) for q in done.questions]
    assert done.text_read == read
    when = done.intent.when
    assert (when.date or resolve_relative(when.day or RelativeDay.TODAY, WEDNESDAY.date()), when.clock) == (day, clock)


@pytest.mark.parametrize("answer", ["yes", "all of them", "全部", "都要", "everything"])
def test_all_to_which_sensors_is_asked_again_never_read_as_drop(answer: str) -> None:
    """全部 was read as "drop" (no sensor planned) and "all of them" put in as words that name no sensor (no sensor
    planned, no question): to "which sensors?", all of them names none the plan can require."""
    for text in ("除了热成像都带上，明天上午10点航测北区", "survey the north area tomorrow 10:00, everything except thermal"):
        again = _one_answer(text, answer)
        assert isinstance(again, Unclear) and [q.kind.value for q in again.questions] == ["sensor"]
        assert again.text_read == text
