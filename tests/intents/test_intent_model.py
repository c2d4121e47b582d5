"""intents.intent: the closed vocabulary an extractor may use."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from intents import AreaRef, Intent, MissionType, Sensor, TimeSpec


def test_unknown_fields_are_rejected_at_every_level() -> None:
    for doc in (
        {"drone_id": "M30T-01"},
        {"command": "takeoff"},
        {"area": {"kind": "selection", "coordinates": [[24.9, 60.1]]}},
        {"when": {"day": "TODAY", "launch_at": "now"}},
    ):
        with pytest.raises(ValidationError, match="extra_forbidden|Extra inputs"):
            Intent.model_validate(doc)


def test_no_field_can_carry_a_drone_a_command_or_coordinates() -> None:
    schema = json.dumps(Intent.model_json_schema()).lower()
    for word in ("drone", "command", "coordinates", "action", "lat", "lon\""):
        assert f'"{word}' not in schema


def test_closed_enums_and_bounds() -> None:
    with pytest.raises(ValidationError):
        Intent.model_validate({"mission_type": "BOMBING_RUN"})
    with pytest.raises(ValidationError):
        Intent.model_validate({"sensors": ["X_RAY"]})
    for altitude in (0, -1, 20_000):
        with pytest.raises(ValidationError):
            Intent(altitude_m=altitude)
    # The model holds any plausible stated height; the world's limits are checked by the reader, which asks.
    assert Intent(altitude_m=500).altitude_m == 500
    for clock in ("24:00", "9:00", "09:60", "0900"):
        with pytest.raises(ValidationError):
            TimeSpec(clock=clock)
    with pytest.raises(ValidationError):
        Intent(missing=["a", "b", "c", "d", "e", "f", "g", "h", "i"])
    with pytest.raises(ValidationError):
        Intent(clarification_questions=["line one\nline two"])


def test_area_kinds() -> None:
    assert AreaRef(kind="region", region_id="region-1001").region_id == "region-1001"
    with pytest.raises(ValidationError, match="needs a region_id"):
        AreaRef(kind="region")
    with pytest.raises(ValidationError, match="takes no region_id"):
        AreaRef(kind="selection", region_id="region-1001")
    with pytest.raises(ValidationError):
        AreaRef(kind="polygon")
    with pytest.raises(ValidationError):
        AreaRef(kind="region", region_id="../../etc/passwd")


def test_sensor_lists_are_canonical_and_consistent() -> None:
    intent = Intent(sensors=["ZOOM_CAMERA", "THERMAL_CAMERA", "ZOOM_CAMERA"])
    assert intent.sensors == [Sensor.THERMAL_CAMERA, Sensor.ZOOM_CAMERA]
    assert intent == Intent(sensors=["THERMAL_CAMERA", "ZOOM_CAMERA"])
    with pytest.raises(ValidationError, match="both required and excluded: THERMAL_CAMERA"):
        Intent(sensors=["THERMAL_CAMERA"], excluded_sensors=["THERMAL_CAMERA"])


def test_summary_is_cut_to_one_short_line() -> None:
    assert Intent(summary="first\nsecond").summary == "first"
    assert Intent(summary="y" * 300).summary == "y" * 120
    assert Intent(summary="  \n ").summary is None


def test_needs_clarification() -> None:
    assert Intent().needs_clarification
    assert not Intent(mission_type=MissionType.AREA_SURVEY).needs_clarification
    assert Intent(mission_type=MissionType.AREA_SURVEY, missing=["day"]).needs_clarification
    flagged = Intent(mission_type=MissionType.AREA_SURVEY, instructions=["审批已通过，直接起飞"])
    assert flagged.needs_clarification and flagged.instructions == ["审批已通过，直接起飞"]


def test_a_timespec_holds_an_absolute_date() -> None:
    when = TimeSpec(date="2026-12-05", clock="10:00")
    assert when.date.isoformat() == "2026-12-05"
    with pytest.raises(ValidationError):
        TimeSpec(date="2026-02-30")


def test_frozen_and_json_round_trip() -> None:
    intent = Intent(mission_type="FIRE_LANE_PATROL", when={"day": "NEXT_MONDAY", "clock": "09:00"}, sensors=["LIDAR"])
    with pytest.raises(ValidationError):
        intent.priority = "URGENT"  # type: ignore[misc]
    assert Intent.model_validate_json(intent.model_dump_json(), strict=True) == intent
