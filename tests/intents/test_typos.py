"""intents.text.typos: a slip of a mission word is read as the word meant; a real word, or a restriction, never.

Issue 30, part 2, class 8: "survy teh block" asked what the drone should do.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from intents.grammar.reader import read_offline
from intents.intent import MissionType
from intents.text.typos import repairs

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")


@pytest.mark.parametrize(
    ("text", "mission"),
    [
        ("survy teh block tomorrow at 10:00", MissionType.AREA_SURVEY),
        ("suvey the lot", MissionType.AREA_SURVEY),
        ("surey the yard this afternoon", MissionType.AREA_SURVEY),
        ("survying the car park", MissionType.AREA_SURVEY),
        ("patol the fire lanes tonight", MissionType.FIRE_LANE_PATROL),
        ("inspcet the gate", MissionType.POINT_INSPECTION),
        ("航侧这片区域", MissionType.AREA_SURVEY),
        ("寻查一下这片的消防通道", MissionType.FIRE_LANE_PATROL),
        ("捡查大门", MissionType.POINT_INSPECTION),
    ],
)
def test_a_slip_of_a_mission_word_is_read_as_the_word_meant(text: str, mission: MissionType) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.intent.mission_type is mission and not reading.intent.needs_clarification, reading.questions


@pytest.mark.parametrize("word", ["petrol", "parol", "purvey", "surrey", "insect", "patron", "surveil"])
def test_a_real_word_near_a_mission_word_is_left_alone(word: str) -> None:
    assert repairs(f"the {word} by the gate") == []


def test_a_repair_quotes_what_was_written_and_never_becomes_a_restriction() -> None:
    reading = read_offline("survy only the north block", now=NOW)
    assert reading.intent.mission_type is MissionType.AREA_SURVEY
    assert [q.quote for q in reading.questions] == ["only the north block"]
    assert [meant for _, _, meant in repairs("survy onyl teh block")] == ["survey", "the"]  # "onyl" is no "only"
