"""Issue 41's classes, found again by variants written after the first fixes (session 2): each as a class.

- A relative day word is never dropped: 名天 (a homophone of 明天, as 明添 is) was dropped and the request read as
  today's; a slip of "yesterday" is asked like any other day word's slip, and day words
  typed without their space ("nextweek monday", "tomorrowmorning") are read as the two words ("nextweek monday" at
  07:30 on a Monday was read as that very Monday).
- "monday next week", "next week on monday" name next week's Monday (they were asked); 周1, 星期3, 下周1 name a
  weekday as 周一 does (they were asked as a number), and 每周3次 is no weekday.
- A spacing between survey lines (间距10米, "10 m spacing") is a length but no height: a parameter, answerable with
  "drop" (间距10米 was a height question quoting "距10米", and an altitude cannot be dropped).
- A focus ends where a day, a clock time, a height or the sensors begin: quoted with the focus, "evenly" answered to
  it removed "tomorrow 10:00" unread, and the request planned with no time.
- A clock time and the part of the day said with it must agree: 夜里2点, 今晚3点, "tonight at 1" were read as 14:00,
  15:00, 13:00 (the afternoon, from words that say the night), 上午15点 as 15:00; now one question quoting both.
- A sensor said with a hedge ("thermal optional", "if possible", 最好带, 可选) is asked, never read as required; "yes"
  requires the sensor alone ("with thermal", not "with thermal optional", which was asked again).
- A sensor refused in other words is refused: 没必要带热成像, 用不着热成像, "leave the thermal at home" required it.
- "10:00 region 1002": the region is quoted whole, the clock read (it was "00 region", and 10:02).
- A named part of the site is a restriction, asked as one whatever its name is made of: "zone 4", "building 7", 3号楼
  were asked as a number that "sets nothing", and B区, A栋 read as the whole selection where "zone B" was asked.
- A water tower, a substation, 水塔, 变电箱 are points to inspect as a mast or a transformer is ("inspect the water tower"
  was read, 检查水塔 asked what to do).
"""

from __future__ import annotations

from datetime import date, datetime

import pytest

from intents import extract_intent, read_offline
from intents.dialogue.turn import Read, Request, Unclear, understand
from intents.intent import MissionType

WEDNESDAY = datetime.fromisoformat("2026-12-02T07:30:00+02:00")
MONDAY = datetime.fromisoformat("2026-12-07T07:30:00+02:00")
TZ = "Europe/Helsinki"


def asked(text: str, now: datetime = WEDNESDAY) -> list[tuple[str, str]]:
    return [(q.kind.value, q.quote) for q in read_offline(text, now=now).questions]


@pytest.mark.parametrize("text", ["survey the yard yesterdy at 10:00", "survey the yard yestrday at 10:00"])
def test_a_slip_of_yesterday_is_asked_never_dropped(text: str) -> None:
    word = text.split()[3]
    assert asked(text) == [("day", word)]


@pytest.mark.parametrize(
    ("text", "day", "clock"),
    [
        ("patrol the fire lanes nextweek monday 9am", date(2026, 12, 14), "09:00"),
        ("patrol the fire lanes nextmonday 9am", date(2026, 12, 14), "09:00"),
        ("patrol the fire lanes monday next week 9am", date(2026, 12, 14), "09:00"),
        ("patrol the fire lanes next week on monday at 09:00", date(2026, 12, 14), "09:00"),
        ("patrol the fire lanes on monday of next week at 09:00", date(2026, 12, 14), "09:00"),
        ("patrol the fire lanes tomorrowmorning", date(2026, 12, 8), "09:00"),
        ("周3 9:00巡查消防通道", date(2026, 12, 9), "09:00"),
        ("星期5 9:00巡查消防通道", date(2026, 12, 11), "09:00"),
        ("下周1上午10点巡查消防通道", date(2026, 12, 14), "10:00"),
        ("下下周2上午10点巡查消防通道", date(2026, 12, 22), "10:00"),
    ],
)
def test_day_words_glued_reordered_or_in_digits_are_read(text: str, day: date, clock: str) -> None:
    e = extract_intent(text, now=MONDAY, timezone=TZ, extractor="offline")
    assert not e.needs_clarification, e.intent.clarification_questions
    assert (e.date, e.start_time) == (day, clock)


def test_a_count_after_a_week_is_no_weekday() -> None:
    e = extract_intent("每周3次巡查消防通道", now=MONDAY, timezone=TZ, extractor="offline")
    assert e.needs_clarification and e.intent.when.day is not None and "THIS_WEDNESDAY" not in e.intent.when.day.value


@pytest.mark.parametrize(
    ("text", "quote", "altitude"),
    [
        ("航测厂区，间距10米", "间距10米", None),
        ("航测厂区，航线间距10米，高度60米", "航线间距10米", 60),
        ("航测厂区，高度60米，间隔10米", "间隔10米", 60),
        ("survey the yard at 60 m, 10 m spacing", "10 m spacing", 60),
        ("survey the yard at 60 m, lines 10 m apart", "10 m apart", 60),
        ("survey the yard at 60 m with line spacing of 12 m", "line spacing of 12 m", 60),
    ],
)
def test_a_spacing_is_a_parameter_never_a_height(text: str, quote: str, altitude: float | None) -> None:
    reading = read_offline(text, now=WEDNESDAY)
    assert [(q.kind.value, q.quote) for q in reading.questions] == [("parameter", quote)]
    assert reading.intent.altitude_m == altitude


@pytest.mark.parametrize(
    ("text", "quote", "answer", "clock", "sensors"),
    [
        ("patrol the fire lanes especially the north gate tomorrow 10:00", "especially the north gate", "evenly",
         "10:00", []),
        ("patrol the fire lanes, especially the north gate at 10:00 tomorrow with thermal", "especially the north gate",
         "evenly", "10:00", ["THERMAL_CAMERA"]),
        ("1001区明天上午十点巡查消防通道重点看3号消防栓用热成像", "重点看3号消防栓", "均匀", "10:00", ["THERMAL_CAMERA"]),
    ],
)
def test_a_focus_answered_away_keeps_the_time_and_sensors_after_it(
    text: str, quote: str, answer: str, clock: str, sensors: list[str]
) -> None:
    request = Request(text, WEDNESDAY, TZ, region="region-1001")
    first = understand(request)
    assert isinstance(first, Unclear) and [(q.kind.value, q.quote) for q in first.questions] == [("focus", quote)]
    done = understand(request, {first.questions[0].id: answer})
    assert isinstance(done, Read)
    assert (done.intent.when.clock, [s.value for s in done.intent.sensors]) == (clock, sensors)


def test_a_region_after_a_clock_is_quoted_whole_and_the_clock_read() -> None:
    reading = read_offline("survey tomorrow 10:00 region 1002", now=WEDNESDAY, region="region-1001")
    assert [(q.kind.value, q.quote) for q in reading.questions] == [("region", "region 1002")]
    assert reading.intent.when.clock == "10:00"


@pytest.mark.parametrize("text", ["明天上午十点检查水塔", "明天上午十点对水塔进行检查", "明天上午十点对变电箱进行巡检",
                                  "明天上午十点巡检配电房", "inspect the substation tomorrow 10:00",
                                  "inspect the water tower tomorrow 10:00"])
def test_a_tower_or_a_substation_is_a_point_to_inspect(text: str) -> None:
    reading = read_offline(text, now=WEDNESDAY)
    assert reading.questions == [] and reading.intent.mission_type is MissionType.POINT_INSPECTION


def test_a_check_with_no_object_still_asks_what_to_do() -> None:
    assert [k for k, _ in asked("明天上午十点检查一下")] == ["mission"]


@pytest.mark.parametrize(("text", "quote"), [
    ("survey zone 4 tomorrow 10:00", "zone 4"), ("survey sector 3 tomorrow 10:00", "sector 3"),
    ("survey lot B tomorrow 10:00", "lot B"), ("明天上午十点航测B区", "B区"), ("明天上午十点航测3区", "3区"),
    ("明天上午十点检查A栋屋顶", "A栋"), ("明天上午十点检查1号楼屋顶", "1号楼"),
])
def test_a_named_part_of_the_site_is_asked_as_a_scope(text: str, quote: str) -> None:
    assert asked(text) == [("scope", quote)]


@pytest.mark.parametrize("text", ["明天上午十点航测北区", "survey the north zone tomorrow 10:00", "明天上午十点航测厂区",
                                  "inspect the rooftop units tomorrow 10:00 with thermal"])
def test_a_part_named_by_its_side_or_kind_is_the_selection(text: str) -> None:
    assert asked(text) == []


@pytest.mark.parametrize(("text", "quote"), [
    ("明天夜里2点巡查消防通道", "明天夜里2点"), ("晚上2点巡查消防通道", "晚上2点"), ("今晚3点巡查消防通道", "今晚3点"),
    ("晚上1点巡查消防通道", "晚上1点"), ("上午15点巡查消防通道", "上午15点"), ("patrol the fire lanes tonight at 1", "tonight at 1"),
])
def test_a_clock_outside_the_part_of_the_day_said_with_it_is_asked(text: str, quote: str) -> None:
    questions = asked(text)
    assert questions == [("time", quote)]


@pytest.mark.parametrize(("text", "clock"), [
    ("晚上11点巡查消防通道", "23:00"), ("下午8点巡查消防通道", "20:00"), ("中午1点巡查消防通道", "13:00"),
    ("patrol the fire lanes at 1:30 in the morning", "01:30"), ("patrol the fire lanes at nine thirty pm", "21:30"),
    ("patrol the fire lanes tonight at 9", "21:00"), ("凌晨2点巡查消防通道", "02:00"),
])
def test_a_clock_inside_its_part_of_the_day_is_read(text: str, clock: str) -> None:
    reading = read_offline(text, now=WEDNESDAY)
    assert reading.questions == [] and reading.intent.when.clock == clock


@pytest.mark.parametrize(("text", "quote"), [
    ("patrol the fire lanes at 10:00 thermal optional", "thermal optional"),
    ("patrol the fire lanes at 10:00, thermal if possible", "thermal if possible"),
    ("patrol the fire lanes at 10:00, preferably with thermal", "preferably with thermal"),
    ("巡查消防通道，10:00，热成像可选", "热成像可选"), ("巡查消防通道，10:00，最好带热成像", "最好带热成像"),
])
def test_a_sensor_said_with_a_hedge_is_asked(text: str, quote: str) -> None:
    reading = read_offline(text, now=WEDNESDAY)
    assert [(q.kind.value, q.quote) for q in reading.questions] == [("sensor", quote)] and reading.intent.sensors == []


@pytest.mark.parametrize("text", ["patrol the fire lanes at 10:00 with thermal", "巡查消防通道，10:00，带热成像"])
def test_a_sensor_said_plainly_is_required(text: str) -> None:
    reading = read_offline(text, now=WEDNESDAY)
    assert reading.questions == [] and [s.value for s in reading.intent.sensors] == ["THERMAL_CAMERA"]


def test_a_homophone_of_tomorrow_is_read_as_tomorrow() -> None:
    e = extract_intent("名天上午10点巡查消防通道", now=WEDNESDAY, timezone=TZ, extractor="offline")
    assert not e.needs_clarification and (e.date, e.start_time) == (date(2026, 12, 3), "10:00")


@pytest.mark.parametrize(("text", "sensors", "excluded"), [
    ("明天上午10点巡查消防通道，別用熱成像", [], ["THERMAL_CAMERA"]),  # 別 is 别: a negation, not a thermal camera wanted
    ("明天上午10點巡查消防通道，帶喊話器", ["SPEAKER"], []),
])
def test_traditional_characters_read_as_the_simplified(text: str, sensors: list[str], excluded: list[str]) -> None:
    reading = read_offline(text, now=WEDNESDAY)
    assert reading.questions == []
    assert ([s.value for s in reading.intent.sensors], [s.value for s in reading.intent.excluded_sensors]) == (sensors, excluded)


@pytest.mark.parametrize(("text", "excluded"), [
    ("巡查消防通道，上午10点，没必要带热成像", True), ("巡查消防通道，上午10点，用不着热成像", True),
    ("patrol the fire lanes at 10:00, leave the thermal at home", True), ("patrol the fire lanes at 10:00, leave thermal behind", True),
    ("patrol the fire lanes at 10:00, leave the thermal on", False), ("巡查消防通道，上午10点，免费热成像", False),
])
def test_a_sensor_refused_in_other_words_is_refused(text: str, excluded: bool) -> None:
    intent = read_offline(text, now=WEDNESDAY).intent
    assert ([s.value for s in intent.excluded_sensors], [s.value for s in intent.sensors]) == (
        (["THERMAL_CAMERA"], []) if excluded else ([], ["THERMAL_CAMERA"]))
