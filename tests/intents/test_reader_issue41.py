"""Issue 41's classes of misreading, each as a class: no silent misreading and no needless question.

- A word that is a slip of a word that matters is read when the slip is certain ("tmorow", "nxt", 上五9点) and
  asked, quoting it, when it is not ("nxet", "tdy", "wknd") — never dropped ("nxt monday 8am" was this Monday).
- A 12-hour time with no day and no part of the day is asked when both readings fall in the next 24 hours.
- A verb alone names no mission (下午两点巡一下); a survey of points is asked, never a silent point inspection.
- Speeds and durations are told apart from heights and times by their units and words, and asked whole.
- 下下周一 / "the Monday after next" is a date; ``when.day`` never says TODAY beside another date.
- A window is quoted whole, both its ends.
"""

from __future__ import annotations

from datetime import date, datetime

import pytest

from intents import extract_intent, read_offline
from intents.intent import MissionType, RelativeDay
from intents.questions import QuestionKind

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")  # Wednesday, Helsinki
SUNDAY = datetime.fromisoformat("2026-12-06T20:45:00+02:00")


def asked(text: str, now: datetime = NOW) -> list[tuple[str, str]]:
    return [(q.kind.value, q.quote) for q in read_offline(text, now=now).questions]


@pytest.mark.parametrize(
    ("text", "day", "clock"),
    [
        ("patrol the fire lanes tmorow at 10:00", date(2026, 12, 3), "10:00"),
        ("pls survy the car park nxt tuesday 9am", date(2026, 12, 8), "09:00"),
        ("inspect the hydrants thurday 14:00", date(2026, 12, 3), "14:00"),
        ("survey the depot on wendsday at 11:00", date(2026, 12, 2), "11:00"),
        ("巡查消防通道 明天上五9点", date(2026, 12, 3), "09:00"),  # an input method's 上五 for 上午
        ("survey the site tommorow aftrnoon", date(2026, 12, 3), "15:00"),
        ("夏周一上午9点巡查消防通道", date(2026, 12, 7), "09:00"),  # 夏 for 下 (xià)
        ("明添上午9点巡查消防通道", date(2026, 12, 3), "09:00"),
    ],
)
def test_a_certain_slip_of_a_day_or_time_word_is_read_as_the_word_meant(text: str, day: date, clock: str) -> None:
    e = extract_intent(text, now=NOW, timezone="Europe/Helsinki", extractor="offline")
    assert not e.needs_clarification, e.intent.clarification_questions
    assert (e.date, e.start_time) == (day, clock)


@pytest.mark.parametrize(
    ("text", "quote", "meant"),
    [
        ("pls do a quick survy of the yard nxet monday 8am", "nxet monday", "next"),
        ("patrol the fire lanes tdy at 14:00", "tdy", "today"),
        ("survey the yard wknd", "wknd", "weekend"),
        ("survey the yard tomorrow befor 10:00", "befor", "before"),
        ("patrol the fire lanes excpet the north lane", "excpet", "except"),
    ],
)
def test_an_uncertain_slip_of_a_word_that_matters_is_asked_never_dropped(text: str, quote: str, meant: str) -> None:
    reading = read_offline(text, now=NOW)
    slips = [q for q in reading.questions if q.quote == quote]
    assert slips and f'"{meant}"' in slips[0].text and slips[0].choices["yes"].startswith(meant)


@pytest.mark.parametrize(
    ("text", "quote", "choice"),
    [("survey the yard nest monday 9am", "nest monday", "next monday"), ("survey the yard thsi friday 10:00", "thsi friday", "this friday"),
     ("survey the yard last monday at 9am", "last monday", None), ("上周一巡查消防通道", "上周一", None),
     ("上个星期五巡查消防通道", "上个星期五", None)],
)
def test_a_word_that_makes_a_weekday_another_day_is_asked_never_read_as_this_week(text: str, quote: str,
                                                                                 choice: str | None) -> None:
    """"nest monday" was this Monday, 上周一 (last week's) too: the word before the weekday is never dropped."""
    reading = read_offline(text, now=NOW)
    [q] = [q for q in reading.questions if q.quote == quote]
    assert q.kind is QuestionKind.DAY and q.choices.get("yes") == choice
    assert reading.intent.when.day is RelativeDay.TODAY  # the draft says no day: the weekday was not read


@pytest.mark.parametrize("text", ["survey the yard with a light tomorrow 10:00", "the unit by the gate: inspect the hydrants today 10:00",
                                  "inspect the hydrants tomorrow 10:00, thus the mast too"])
def test_a_real_word_near_a_word_that_matters_is_no_slip(text: str) -> None:
    assert not any(kind in ("day", "time") for kind, _ in asked(text))


@pytest.mark.parametrize(
    ("text", "now", "question"),
    [
        ("inspect the roofs at quarter to five", NOW, '"quarter to five": 16:45 today or 04:45 tomorrow?'),
        ("patrol the fire lanes at 9", NOW, '"at 9": 09:00 today or 21:00 today?'),
        ("巡查消防通道，三点出发", NOW, "“三点”：是今天15:00还是明天03:00？"),
        ("inspect the gate at ten to six", SUNDAY, '"ten to six": 05:50 tomorrow or 17:50 tomorrow?'),
        ("check the masts tomorrow at quarter past 2", NOW, '"quarter past 2": 02:15 or 14:15?'),
    ],
)
def test_a_twelve_hour_time_is_asked_when_both_readings_fall_in_the_window(text: str, now: datetime, question: str) -> None:
    reading = read_offline(text, now=now)
    assert [q.text for q in reading.questions] == [question]


@pytest.mark.parametrize(
    ("text", "clock"),
    [("survey the yard today at 5", "17:00"), ("今天五点巡查消防通道", "17:00"), ("check the hydrants tonight at 8", "20:00")],
)
def test_a_twelve_hour_time_with_its_day_or_part_named_is_read_by_the_window(text: str, clock: str) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.questions == [] and reading.intent.when.clock == clock


@pytest.mark.parametrize("text", ["下午两点巡一下", "patrol at 15:30 with thermal", "明早检查一下，带热成像", "巡查一下厂区，10:30",
                                  "do a patrol this evening", "patrol and map the east yard"])
def test_a_verb_alone_names_no_mission(text: str) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.mission_type is None
    assert any(q.kind is QuestionKind.MISSION and q.quote == "" for q in reading.questions)


@pytest.mark.parametrize(
    ("text", "mission"),
    [("patrol the lanes tonight", MissionType.FIRE_LANE_PATROL), ("检查一下东门和西门", MissionType.POINT_INSPECTION),
     ("航测 明天上午", MissionType.AREA_SURVEY), ("every fire access road, patrol it today 16:00", MissionType.FIRE_LANE_PATROL),
     ("survey the yard and check for parked cars", MissionType.AREA_SURVEY)],
)
def test_a_verb_with_its_object_or_a_survey_of_the_area_is_read(text: str, mission: MissionType) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.mission_type is mission and not reading.intent.needs_clarification, reading.questions


@pytest.mark.parametrize(
    ("text", "quote"),
    [("can you do a thermal survey of the roofs tomorrow at 13:00", "survey of the roofs"),
     ("明天早上六点半把仓库屋顶用热成像扫一遍", "屋顶用热成像扫一遍"), ("Hydrant survey for the whole estate", "Hydrant survey")],
)
def test_a_survey_of_points_is_asked_with_both_missions_as_answers(text: str, quote: str) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.mission_type is None
    [q] = [q for q in reading.questions if q.kind is QuestionKind.MISSION]
    assert q.quote == quote and set(q.choices) == {"inspection", "survey"}


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("明天上午测绘厂区，速度每秒6米", "速度每秒6米"),
        ("survey the yard at 40 m, speed 8 m/s, tomorrow 10:00", "speed 8 m/s"),
        ("航测东区，高度60米，飞行速度10米每秒，明天上午9点", "飞行速度10米每秒"),
        ("survey at 30 km/h tomorrow 9:00", "at 30 km/h"),
        ("patrol the fire lanes tomorrow 8am at 30 m, fly for about 20 minutes", "fly for about 20 minutes"),
        ("巡查消防通道，续航20分钟，明天10:00", "续航20分钟"),
        ("inspect each hydrant tomorrow 10:00, hover 10 seconds over each", "hover 10 seconds over each"),
    ],
)
def test_a_speed_or_a_duration_is_one_parameter_question_never_a_height_or_a_time(text: str, quote: str) -> None:
    assert [(kind, q) for kind, q in asked(text) if kind != "mission"] == [("parameter", quote)]


def test_a_height_keeps_its_reading_beside_a_speed_and_an_offset_stays_an_offset() -> None:
    reading = read_offline("survey the yard at 40 m, speed 8 m/s, tomorrow 10:00", now=NOW)
    assert reading.intent.altitude_m == 40
    offset = read_offline("survey the yard in 20 minutes", now=NOW)
    assert offset.questions == [] and offset.intent.when.clock == "07:50"


@pytest.mark.parametrize(
    ("text", "now", "day"),
    [
        ("下下周一上午9点巡查消防通道", NOW, date(2026, 12, 14)),
        ("下下周三下午三点航测", SUNDAY, date(2026, 12, 16)),
        ("the monday after next at 10:00, survey the yard", NOW, date(2026, 12, 14)),
        ("survey the yard tuesday of the week after next at 10:00", SUNDAY, date(2026, 12, 15)),
    ],
)
def test_the_week_after_next_with_its_day_is_a_date_and_no_question(text: str, now: datetime, day: date) -> None:
    reading = read_offline(text, now=now)
    assert reading.questions == [] and reading.intent.when.date == day and reading.intent.when.day is None


def test_the_week_after_next_without_a_day_is_asked() -> None:
    assert asked("下下周巡查消防通道") == [("day", "下下周")]


@pytest.mark.parametrize(
    "text", ["survey the yard on 2026-12-10 at 09:00", "12月10日上午9点航测", "survey the lot on 12 December at 11:00"]
)
def test_the_day_never_says_today_beside_another_date(text: str) -> None:
    e = extract_intent(text, now=NOW, timezone="Europe/Helsinki", extractor="offline")
    assert e.intent.when.day is None and e.intent.when.date is not None and e.intent.when.date > NOW.date()
    assert extract_intent("survey the yard tomorrow", now=NOW, timezone="Europe/Helsinki",
                          extractor="offline").intent.when.day is RelativeDay.TOMORROW


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("明天上午9点到11点巡查消防通道", "上午9点到11点"),
        ("patrol the fire lanes between 2 and 4pm today", "between 2 and 4pm"),
        ("survey the yard tomorrow from 10 to 12", "from 10 to 12"),
        ("检查消防栓，下午1点到3点之间", "下午1点到3点之间"),
        ("inspect hydrants 14:00-15:00", "14:00-15:00"),
        ("inspect hydrants 9-11am tomorrow", "9-11am"),
    ],
)
def test_a_window_is_one_question_quoting_both_ends(text: str, quote: str) -> None:
    assert asked(text) == [("time", quote)]


@pytest.mark.parametrize(
    ("text", "sensors"),
    [("Survey the yard tomorrow at 9am, this one is a priority for us", []),
     ("明天晚上7点巡查消防通道，首先确保热成像开着", ["THERMAL_CAMERA"])],
)
def test_the_jobs_own_priority_and_first_make_sure_are_no_focus(text: str, sensors: list[str]) -> None:
    """fresh_issue30d's two needless questions: "a priority for us" is the job's; 首先确保… says what to carry."""
    reading = read_offline(text, now=NOW)
    assert reading.questions == [] and [s.value for s in reading.intent.sensors] == sensors
    assert read_offline("the priority for us is the north gate, survey the yard", now=NOW).questions[0].kind is QuestionKind.FOCUS
