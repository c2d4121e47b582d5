"""Survey coverage on real parcels: buildings as holes, a bent corridor, notches, a star.

The parcels (``tests/planner/parcels``, © OpenStreetMap contributors, ODbL) are the
class of area issue 19 is about. Each plan must be valid, image at least what
Fields2Cover reaches on such parcels (0.963 industrial block with buildings,
0.982 farmland, 0.988 residential with a small hole, 0.962 80 m corridor with
five bends; the star has no reference and must image 0.975), and its coverage
and path are pinned in ``tests/golden/survey_parcels/``.

The ``*_b`` parcels are a second parcel of each class (made by the same script,
away from the first), so the figures are not tuned to five shapes. Every parcel is
also held against a careful ground-station survey (``bench.coverage_baseline``: one
direction, with a headland pass or as a plain grid; ``python -m bench coverage
PARCEL --baseline``): sortie images at least as much as either, and flies less than
it, or less at the baseline's own coverage where the baseline images less.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from shapely.geometry import LineString, Polygon

from planner.survey.coverage import DEFAULT_COVERAGE_TARGET, coverage_fraction, plan_coverage

PARCELS = Path(__file__).parent / "parcels"
# coverage at least what Fields2Cover reaches on parcels of the kind (issue 19)
FLOOR = {
    "industrial_block": 0.963,
    "field_group": 0.982,
    "residential_small_hole": 0.988,
    "corridor_bends": 0.962,
    "star7": 0.975,
    # no Fields2Cover figure: the careful baselines' coverage is the floor (BASELINES)
    "industrial_block_b": 0.0,
    "field_group_b": 0.0,
    "residential_small_hole_b": 0.0,
    "corridor_bends_b": 0.0,
    "star7_b": 0.0,
}
# (coverage, path m) of bench.coverage_baseline's survey with a headland pass, and as a plain grid
BASELINES = {
    "corridor_bends": ((0.9786, 7186.0), (0.9285, 4245.8)),
    "corridor_bends_b": ((0.9734, 6790.3), (0.9455, 4785.0)),
    "field_group": ((0.9730, 10176.7), (0.9726, 8031.4)),
    "field_group_b": ((0.9109, 7905.0), (0.9340, 8268.1)),
    "industrial_block": ((0.8723, 10678.3), (0.9771, 6729.0)),
    "industrial_block_b": ((0.8351, 10334.1), (0.9538, 7215.2)),
    "residential_small_hole": ((0.9155, 806.5), (0.9266, 634.2)),
    "residential_small_hole_b": ((0.7583, 541.4), (0.9006, 381.8)),
    "star7": ((0.9458, 6461.2), (0.9356, 5885.3)),
    "star7_b": ((0.9129, 7271.7), (0.9258, 7910.3)),
}


def _load(name: str) -> tuple[Polygon, float]:
    inst = json.loads((PARCELS / f"{name}.json").read_text(encoding="utf-8"))
    assert "OpenStreetMap" in inst["attribution"] or name.startswith("star7")
    free = Polygon(inst["polygon"], inst["holes"])
    assert free.is_valid
    return free, float(inst["swath_width_m"])


def assert_valid(free: Polygon, res) -> None:
    """The benchmark's validity rules, tighter: the whole path inside, sweeps on it, ends match."""
    path = LineString(res.path)
    assert free.buffer(1e-5).covers(path), "path leaves the free area"
    near = path.buffer(1e-6)
    for a, b in res.sweeps:
        assert near.covers(LineString([a, b]))
    assert math.dist(res.path[0], res.sweeps[0][0]) < 1e-6
    assert math.dist(res.path[-1], res.sweeps[-1][1]) < 1e-6
    assert res.path_length_m == pytest.approx(path.length, abs=1e-6)


@pytest.mark.parametrize("name", sorted(FLOOR))
def test_parcel_is_imaged_at_least_as_well_as_fields2cover(name: str, golden) -> None:
    free, swath = _load(name)
    res = plan_coverage(free, swath)
    assert_valid(free, res)
    assert res.engine == "ortools-gls"
    assert res.coverage_target == DEFAULT_COVERAGE_TARGET
    assert res.coverage_fraction == pytest.approx(coverage_fraction(free, res.sweeps, swath), abs=1e-9)
    assert res.coverage_fraction >= FLOOR[name]
    assert res.stopped_by == "iterations"  # no deadline: nothing cut (main skipped the second repaired candidate here)
    assert res.target_met  # 0.99 (passes down to TARGET_RATE while short of it); main reached 0.966-0.985 on seven
    for cov, path in BASELINES[name]:  # a careful ground-station survey of the same parcel
        assert res.coverage_fraction >= cov
        if res.path_length_m > path:  # it flies less only by imaging less: at its coverage, sortie is shorter
            assert plan_coverage(free, swath, coverage_target=cov).path_length_m <= path
    # the unimaged layer is exactly what the coverage figure leaves out
    assert res.unimaged_local is not None
    assert res.unimaged_local.area == pytest.approx((1 - res.coverage_fraction) * free.area, rel=1e-6, abs=1e-3)
    doc = {
        "parcel": name,
        "swath_m": swath,
        "coverage": round(res.coverage_fraction, 4),
        "path_m": round(res.path_length_m, 1),
        "path_over_lb": round(res.ratio_to_lower_bound, 3),
        "sweeps": len(res.sweeps),
        "direction_cells": res.direction_cells,
        "extra_passes": res.extra_passes,
    }
    golden.check("survey_parcels", f"{name}.json", json.dumps(doc, sort_keys=True, indent=1) + "\n")


def test_extra_passes_image_what_the_sweeps_leave_dark() -> None:
    """On the bent corridor, passes along its slanted sides raise the coverage the sweeps alone reach."""
    free, swath = _load("corridor_bends")
    bare = plan_coverage(free, swath, repair=False)
    full = plan_coverage(free, swath)
    assert full.extra_passes > 0
    assert full.coverage_fraction > bare.coverage_fraction + 0.005


def test_a_lower_target_flies_no_extra_passes() -> None:
    free, swath = _load("star7")
    low = plan_coverage(free, swath, coverage_target=0.9)
    assert low.extra_passes == 0 and low.target_met


def test_parcel_plans_are_deterministic() -> None:
    free, swath = _load("industrial_block")
    a = plan_coverage(free, swath)
    b = plan_coverage(free, swath)
    assert json.dumps([a.path, a.sweeps]) == json.dumps([b.path, b.sweeps])


def test_survey_plan_carries_the_unimaged_layer() -> None:
    """A survey of the demo world: the plan, its JSON and its GeoJSON say where the area stays dark."""
    from datetime import datetime, timezone

    from flows.context import DEMO_WORLD_DIR
    from flows.world_folder import load_world
    from planner.job import Job
    from planner.planning_limits import PlanningLimits
    from planner.mission import plan_mission
    from planner.plan import plan_from_dict, plan_hash, plan_to_dict, plan_to_geojson

    if not DEMO_WORLD_DIR.exists():
        pytest.skip("demo world not present")
    world = load_world(DEMO_WORLD_DIR)
    job = Job("AREA_SURVEY", world.region("region-1001").area, datetime(2026, 12, 1, 9, tzinfo=timezone.utc),
              altitude_m=50.0, sensors=frozenset({"THERMAL_CAMERA"}))
    plan = plan_mission(world, job, [world.drone("M3TD-01"), world.drone("M4TD-01")], limits=PlanningLimits())
    assert plan.unimaged_wgs84 is not None and plan.coverage_fraction is not None
    dark_m2 = job.frame.to_local(plan.unimaged_wgs84).area if not plan.unimaged_wgs84.is_empty else 0.0
    free_m2 = job.area_local.area  # the dark share of the area, at most what the coverage leaves out
    assert dark_m2 <= (1 - plan.coverage_fraction) * free_m2 + 1.0
    # inside the area, up to the 0.5 m the layer is simplified by (1e-5 degrees is about a metre)
    assert plan.unimaged_wgs84.is_empty or job.area_wgs84.buffer(1e-5).covers(plan.unimaged_wgs84)
    again = plan_from_dict(plan_to_dict(plan))
    assert plan_hash(again) == plan_hash(plan)
    roles = [f["properties"]["role"] for f in plan_to_geojson(plan)["features"]]
    assert ("unimaged" in roles) == (not plan.unimaged_wgs84.is_empty)
