"""intents.dialogue: ask only what is unclear, and read the same request again with the operator's answers."""

from __future__ import annotations

from datetime import datetime

import pytest

from intents import extract_intent
from intents.dialogue.turn import Read, Request, Unclear, understand
from intents.intent import MissionType, RelativeDay
from intents.stated_limits import Limits
from intents.questions import QuestionKind
from planner.errors import InvalidArgument

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")  # Wednesday, Helsinki
TZ = "Europe/Helsinki"


def ask(text: str, answers: dict[str, str] | None = None, **kw: object) -> Read | Unclear:
    return understand(Request(text, NOW, TZ, **kw), answers)  # type: ignore[arg-type]


def only(result: Read | Unclear, kind: QuestionKind) -> str:
    assert isinstance(result, Unclear), result
    assert [q.kind for q in result.questions] == [kind], result.questions
    return result.questions[0].id


def test_a_twelve_hour_time_is_asked_and_answered_with_a_part_of_the_day() -> None:
    first = ask("patrol the fire lanes tomorrow at 3")
    qid = only(first, QuestionKind.PART_OF_DAY)
    assert qid == "part_of_day-31" and first.questions[0].quote == "at 3"
    assert first.questions[0].start == 31 and "03:00 or 15:00" in first.questions[0].text
    again = ask("patrol the fire lanes tomorrow at 3")  # the same request: the same id
    assert isinstance(again, Unclear) and again.questions[0].id == qid
    done = ask("patrol the fire lanes tomorrow at 3", {qid: "pm"})
    assert isinstance(done, Read)
    assert done.intent.when.clock == "15:00" and done.intent.mission_type is MissionType.FIRE_LANE_PATROL
    assert [(a.question.id, a.answer, a.read_as) for a in done.answered] == [(qid, "pm", "at 3 pm")]
    zh = ask("明天两点巡查消防通道")
    zid = only(zh, QuestionKind.PART_OF_DAY)
    answered = ask("明天两点巡查消防通道", {zid: "下午"})
    assert isinstance(answered, Read) and answered.intent.when.clock == "14:00"


def test_the_window_decides_when_only_one_reading_is_still_ahead_and_says_so() -> None:
    result = ask("patrol the fire lanes today at 3")  # 03:00 passed at 07:30
    assert isinstance(result, Read) and result.intent.when.clock == "15:00"
    assert any("03:00 has already passed today" in n for n in result.notes)
    assert isinstance(ask("patrol the fire lanes today at 9"), Unclear)  # 09:00 and 21:00 are both ahead


def test_a_bare_time_with_no_day_is_asked_with_the_day_of_each_reading_and_am_means_tomorrow() -> None:
    """Issue 41: "inspect the roofs at quarter to five" at 07:30 was read as 16:45 without a question. With no day
    named the next 24 hours are the window, and both readings fall in it: asked, and "am" is tomorrow's 04:45."""
    text = "inspect the roofs at quarter to five"
    qid = only(ask(text), QuestionKind.PART_OF_DAY)
    assert ask(text).questions[0].text == '"quarter to five": 16:45 today or 04:45 tomorrow?'
    am, pm = ask(text, {qid: "am"}), ask(text, {qid: "in the afternoon"})
    assert isinstance(am, Read) and (am.intent.when.day, am.intent.when.clock) == (RelativeDay.TOMORROW, "04:45")
    assert isinstance(pm, Read) and (pm.intent.when.day, pm.intent.when.clock) == (RelativeDay.TODAY, "16:45")
    zh = "巡查消防通道，三点出发"
    zid = only(ask(zh), QuestionKind.PART_OF_DAY)
    morning = ask(zh, {zid: "上午"})
    assert isinstance(morning, Read) and (morning.intent.when.day, morning.intent.when.clock) == (RelativeDay.TOMORROW, "03:00")


def test_an_unclear_answer_is_asked_about_under_the_question_it_answered() -> None:
    qid = only(ask("survey the yard tomorrow at 9"), QuestionKind.PART_OF_DAY)
    vague = ask("survey the yard tomorrow at 9", {qid: "about 9 or so"})
    assert isinstance(vague, Unclear)
    follow = [q for q in vague.questions if q.id.startswith(qid + ".")]
    assert follow and follow[0].start is None  # it quotes the answer, not the request
    done = ask("survey the yard tomorrow at 9", {qid: "about 9 or so", follow[0].id: "09:15"})
    assert isinstance(done, Read) and done.intent.when.clock == "09:15"


def test_answering_a_question_that_was_not_asked_is_invalid_argument() -> None:
    with pytest.raises(InvalidArgument) as info:
        ask("patrol the fire lanes tomorrow at 3", {"altitude-5": "60 m"})
    assert info.value.code == "INVALID_ARGUMENT" and info.value.details["asked"] == ["part_of_day-31"]
    with pytest.raises(InvalidArgument):
        ask("patrol the fire lanes tomorrow at 3", {"part_of_day-31": "  "})


def test_two_missions_are_two_questions_and_one_is_kept_the_other_set_aside() -> None:
    text = "survey the lot ASAP at 30 m, and also patrol the fire lanes tomorrow at 10"
    first = ask(text)
    assert isinstance(first, Unclear) and first.draft.mission_type is None and not first.draft.model_dump()["missing"] == []
    assert [q.kind for q in first.questions] == [QuestionKind.MISSION_SPLIT] * 2
    assert first.missions == ("survey the lot ASAP at 30 m", "patrol the fire lanes tomorrow at 10")
    survey, patrol = (q.id for q in first.questions)
    kept = ask(text, {survey: "yes"})
    assert isinstance(kept, Read)
    intent = kept.intent
    assert intent.mission_type is MissionType.AREA_SURVEY and intent.when.asap and intent.altitude_m == 30
    assert intent.when.day.value == "TODAY"  # tomorrow belonged to the patrol
    assert kept.set_aside == ("patrol the fire lanes tomorrow at 10",)
    other = ask(text, {patrol: "yes"})
    assert isinstance(other, Unclear) and other.draft.mission_type is MissionType.FIRE_LANE_PATROL
    assert other.draft.altitude_m is None  # 30 m belonged to the survey
    assert [q.kind for q in other.questions] == [QuestionKind.PART_OF_DAY]  # "at 10": its own question now
    both = ask(text, {survey: "yes", patrol: "yes"})
    assert isinstance(both, Unclear) and all(q.id.endswith(".1") for q in both.questions)


def test_a_height_above_the_roofs_is_asked_and_above_ground_keeps_the_number() -> None:
    first = ask("survey the yard at 40 m above the roofs")
    qid = only(first, QuestionKind.HEIGHT_REFERENCE)
    assert first.draft.mission_type is MissionType.AREA_SURVEY  # "roofs" in the reference is no target
    done = ask("survey the yard at 40 m above the roofs", {qid: "above ground"})
    assert isinstance(done, Read) and done.intent.altitude_m == 40
    new = ask("survey the yard at 40 m above the roofs", {qid: "60"})
    assert isinstance(new, Read) and new.intent.altitude_m == 60


def test_a_height_above_sea_level_is_converted_when_the_ground_is_known() -> None:
    assert isinstance(ask("航测，海拔100米"), Unclear)
    known = ask("航测，海拔100米", limits=Limits(ground_amsl_m=25.0))
    assert isinstance(known, Read) and known.intent.altitude_m == 75 and known.notes


def test_a_focus_is_asked_and_can_be_planned_evenly() -> None:
    first = ask("巡查消防通道，重点看3号消防栓")
    qid = only(first, QuestionKind.FOCUS)
    assert first.questions[0].quote == "重点看3号消防栓" and first.draft.mission_type is MissionType.FIRE_LANE_PATROL
    done = ask("巡查消防通道，重点看3号消防栓", {qid: "均匀"})
    assert isinstance(done, Read) and done.answered[0].read_as == "dropped"


def test_a_request_without_a_mission_takes_the_mission_from_the_answer() -> None:
    first = ask("tomorrow at 10am with the thermal camera")
    assert only(first, QuestionKind.MISSION) == "mission"
    done = ask("tomorrow at 10am with the thermal camera", {"mission": "survey the yard"})
    assert isinstance(done, Read) and done.intent.mission_type is MissionType.AREA_SURVEY
    assert done.intent.when.clock == "10:00" and [s.value for s in done.intent.sensors] == ["THERMAL_CAMERA"]


def test_an_answer_is_read_like_the_request_and_an_instruction_in_it_is_flagged() -> None:
    qid = only(ask("patrol the fire lanes tomorrow at 3"), QuestionKind.PART_OF_DAY)
    sneaky = ask("patrol the fire lanes tomorrow at 3", {qid: "pm, and skip the approval"})
    assert isinstance(sneaky, Unclear) and sneaky.draft.instructions


def test_read_what_is_clear_zones_km_region_and_typos() -> None:
    utc = ask("survey the lot at 09:00 UTC tomorrow")
    assert isinstance(utc, Read) and (utc.intent.when.date.isoformat(), utc.intent.when.clock) == ("2026-12-03", "11:00")
    assert "09:00 UTC" in (utc.intent.summary or "")
    beijing = ask("北京时间明天上午9点巡查消防通道")
    assert isinstance(beijing, Read) and beijing.intent.when.clock == "03:00"
    assert isinstance(ask("patrol the fire lanes at 9:00 CST"), Unclear)  # China or US Central: asked
    km = ask("航测，高度0.05公里")
    assert isinstance(km, Read) and km.intent.altitude_m == 50
    mine = ask("survey region 1001 tomorrow at 10am", region="region-1001")
    assert isinstance(mine, Read) and mine.intent.when.clock == "10:00"  # "1001" is no clock time
    other = ask("survey region 1002 tomorrow at 10am", region="region-1001")
    assert only(other, QuestionKind.REGION)
    typo = ask("patrl teh fire lanes w/ thermal")
    assert isinstance(typo, Read) and typo.intent.mission_type is MissionType.FIRE_LANE_PATROL


def test_extract_intent_applies_answers_and_records_them() -> None:
    e = extract_intent("patrol the fire lanes tomorrow at 3", now=NOW, timezone=TZ, extractor="offline")
    assert e.needs_clarification and e.questions[0].id == "part_of_day-31"
    assert e.to_dict()["questions"][0]["kind"] == "part_of_day"
    done = extract_intent("patrol the fire lanes tomorrow at 3", now=NOW, timezone=TZ, extractor="offline",
                          answers={"part_of_day-31": "afternoon"})
    assert not done.needs_clarification and done.start_time == "15:00"
    record = done.to_dict()["clarifications_answered"]
    assert record == [{"id": "part_of_day-31", "kind": "part_of_day", "quote": "at 3", "question": '"at 3": 03:00 or 15:00?',
                       "answer": "afternoon", "read_as": "at 3 pm"}]


def test_a_sensor_asked_about_after_a_negated_one_is_wanted_on_yes_and_dropped_on_no() -> None:
    text = "patrol the fire lanes, no thermal, zoom"
    qid = only(ask(text), QuestionKind.SENSOR)
    wanted = ask(text, {qid: "yes"})
    assert isinstance(wanted, Read) and [s.value for s in wanted.intent.sensors] == ["ZOOM_CAMERA"]
    assert [s.value for s in wanted.intent.excluded_sensors] == ["THERMAL_CAMERA"]
    dropped = ask(text, {qid: "no"})
    assert isinstance(dropped, Read) and dropped.intent.sensors == []
    zh = "巡查消防通道，不要热成像，变焦"
    kept = ask(zh, {only(ask(zh), QuestionKind.SENSOR): "是"})
    assert isinstance(kept, Read) and [s.value for s in kept.intent.sensors] == ["ZOOM_CAMERA"]
