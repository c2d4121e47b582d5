"""``bench.intents_guard``: the LLM path's guard over real HTTP, with a stand-in model of a known behaviour.

No language model runs here: a model that answers the offline reading scores as the offline path, and a model that
gets one field wrong is asked about on every line whose fields are clear — never planned silently.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.intents_guard import BEHAVIOURS, guard

LINES = [
    {"text": "明天上午九点用热成像巡查消防通道", "now": "2026-12-02T07:30:00+02:00", "timezone": "Europe/Helsinki",
     "expect": {"mission_type": "FIRE_LANE_PATROL", "date": "2026-12-03", "start_time": "09:00",
                "sensors": ["THERMAL_CAMERA"], "altitude_m": None, "needs_clarification": False}},
    {"text": "survey the north area tomorrow 10:00 at 60 m with lidar", "now": "2026-12-02T07:30:00+02:00",
     "timezone": "Europe/Helsinki",
     "expect": {"mission_type": "AREA_SURVEY", "date": "2026-12-03", "start_time": "10:00", "sensors": ["LIDAR"],
                "altitude_m": 60, "needs_clarification": False}},
    {"text": "patrol the fire lanes tonight at 1", "now": "2026-12-02T07:30:00+02:00", "timezone": "Europe/Helsinki",
     "expect": {"needs_clarification": True}},
]


@pytest.fixture
def corpus(tmp_path: Path) -> str:
    path = tmp_path / "guard.jsonl"
    path.write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in LINES), encoding="utf-8")
    return str(path)


def test_a_model_that_answers_the_offline_reading_scores_as_the_offline_path(corpus: str) -> None:
    result = guard(corpus, "echo")
    assert (result["exact"], result["asked"], result["silent_wrong"], result["errors"]) == (1.0, 0, 0, 0)


@pytest.mark.parametrize("behaviour", [b for b in BEHAVIOURS if b != "echo"])
def test_a_model_wrong_on_one_field_is_asked_about_never_planned(corpus: str, behaviour: str) -> None:
    result = guard(corpus, behaviour)
    assert result["silent_wrong"] == 0 and result["errors"] == 0
    assert result["caught"] == result["clear_lines"] == 2


def test_a_model_clock_beside_asap_is_asked_about(tmp_path: Path) -> None:
    """The model kept "asap" and added a clock: the start resolves to the clock, so it is a clock the text does not
    give (it passed the check as "both asap" and planned 10:00 for "right now")."""
    path = tmp_path / "now.jsonl"
    path.write_text(json.dumps({"text": "survey the whole site right now with lidar at 90m", "now": "2026-12-02T07:30:00+02:00",
                                "timezone": "Europe/Helsinki",
                                "expect": {"mission_type": "AREA_SURVEY", "date": "2026-12-02", "start_time": None,
                                           "sensors": ["LIDAR"], "altitude_m": 90, "needs_clarification": False}}),
                    encoding="utf-8")
    assert guard(str(path), "echo")["exact"] == 1.0
    result = guard(str(path), "wrong-clock")
    assert (result["silent_wrong"], result["caught"]) == (0, 1)
