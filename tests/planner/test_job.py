"""Job validation and the camera-footprint swath."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

import pytest
from shapely.geometry import LineString, Point, Polygon, box

from planner.errors import InvalidArgument
from planner.job import Job, survey_swath_m
from testkit import m30t

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc)
AREA = box(24.94, 60.17, 24.945, 60.172)  # ≈ 278 m × 222 m

DRONE = m30t(last_telemetry_at=T0)


def test_valid_job_and_area() -> None:
    job = Job("AREA_SURVEY", AREA, T0, altitude_m=60)
    assert 60_000 < job.area_m2 < 63_000
    assert job.frame.epsg == 32635
    assert job.area_local.geom_type == "Polygon"


def test_swath_from_camera() -> None:
    # 2·60·tan(42°) = 108.05 m footprint, 70 % overlap → 32.4 m
    assert survey_swath_m(DRONE, 60, 0.7) == pytest.approx(32.415, abs=1e-3)
    job = Job("AREA_SURVEY", AREA, T0, altitude_m=60)
    assert job.swath_for(DRONE) == pytest.approx(32.415, abs=1e-3)
    assert Job("AREA_SURVEY", AREA, T0, altitude_m=60, swath_m=40).swath_for(DRONE) == 40


def test_drone_without_camera_cannot_survey() -> None:
    blind = replace(DRONE, camera=None)
    with pytest.raises(InvalidArgument, match="no camera") as err:
        Job("AREA_SURVEY", AREA, T0).swath_for(blind)
    assert err.value.code == "INVALID_ARGUMENT"


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"swath_m": 0}, "swath_m"),
        ({"swath_m": -5}, "swath_m"),
        ({"altitude_m": 0}, "altitude_m"),
        ({"altitude_m": -1}, "altitude_m"),
        ({"altitude_m": float("nan")}, "altitude_m"),
        ({"area_wgs84": Polygon()}, "empty"),
        ({"area_wgs84": box(24.94, 60.17, 24.94, 60.18).buffer(0)}, "empty"),
        ({"area_wgs84": Polygon([(24.94, 60.17), (24.95, 60.17), (24.94, 60.17000000001)])}, "degenerate"),
        ({"area_wgs84": LineString([(24.94, 60.17), (24.95, 60.17)])}, "Polygon"),
        ({"area_wgs84": Polygon([(24.94, 60.17), (24.95, 60.18), (24.95, 60.17), (24.94, 60.18)])}, "invalid"),
        ({"area_wgs84": box(24.0, 60.0, 24.2, 60.2)}, "over the maximum"),
        ({"mission_type": "DANCE"}, "mission_type"),
        ({"start_at": datetime(2026, 12, 1, 9)}, "timezone"),
        ({"sensors": frozenset({"X_RAY"})}, "sensors"),
        ({"side_overlap": 1.0}, "side_overlap"),
        ({"coverage_target": 0}, "coverage target 0 is out of range"),
        ({"coverage_target": 0.4}, "between 0.5 and 1"),
        ({"coverage_target": 1.01}, "out of range"),
        ({"coverage_target": float("nan")}, "coverage_target"),
        ({"poi_kinds": frozenset({"tree"})}, "poi kinds"),
    ],
)
def test_bad_jobs(kwargs: dict, match: str) -> None:
    base = {"mission_type": "AREA_SURVEY", "area_wgs84": AREA, "start_at": T0}
    base.update(kwargs)
    with pytest.raises(InvalidArgument, match=match):
        Job(**base)


def test_max_area_is_configurable() -> None:
    big = box(24.0, 60.0, 24.05, 60.05)  # ≈ 15.5 km²
    with pytest.raises(InvalidArgument, match="over the maximum"):
        Job("AREA_SURVEY", big, T0)
    assert Job("AREA_SURVEY", big, T0, max_area_m2=20e6).area_m2 == pytest.approx(15.53e6, rel=1e-3)


def test_the_request_reader_and_the_planner_agree_on_the_coverage_range() -> None:
    """A target the offline reader accepts is one ``Job`` accepts, and the ends are the planner's."""
    from intents.stated_limits import Limits

    from planner.job import MAX_COVERAGE_TARGET, MIN_COVERAGE_TARGET, check_coverage_target

    assert (Limits().min_coverage, Limits().max_coverage) == (MIN_COVERAGE_TARGET, MAX_COVERAGE_TARGET)
    assert check_coverage_target(0.995) == 0.995
    for bad in (0.49, 1.001, True, "0.99"):
        with pytest.raises(InvalidArgument) as err:
            check_coverage_target(bad)
        assert err.value.code == "INVALID_ARGUMENT"
