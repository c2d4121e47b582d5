"""planner.survey.bands: a large field planned band by band — valid, imaged, and never refused for its size."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
import shapely
from shapely.geometry import LineString, Polygon, box

from bench.make_instances import field
from planner.errors import InvalidArgument
from planner.survey.bands import BAND_PIECES, _bands
from planner.survey.coverage import plan_coverage
from planner.survey.direction import direction_pieces


def _field(km2: float, holes: int, seed: int) -> Polygon:
    doc = field(argparse.Namespace(name="f", km2=km2, holes=holes, seed=seed, swath_m=40.0))
    return Polygon(doc["polygon"], doc["holes"])


def test_bands_cut_between_lines_and_hold_at_most_their_share_of_pieces() -> None:
    free = _field(12.0, 8, seed=3)
    c = free.centroid
    free_c = shapely.transform(free, lambda a: a - np.array([c.x, c.y]))
    pieces, _ = direction_pieces(free_c, 30.0, 40.0)
    bands, offset = _bands(pieces, 30.0)
    assert len(bands) > 1 and sorted(np.concatenate(bands).tolist()) == list(range(len(pieces)))
    assert all(len(b) <= BAND_PIECES or len(np.unique(offset[b])) == 1 for b in bands)
    lines = [set(np.unique(offset[b]).tolist()) for b in bands]
    assert all(not (a & b) for i, a in enumerate(lines) for b in lines[i + 1:])  # no line in two bands


def test_a_large_field_is_planned_inside_its_free_area_and_imaged() -> None:
    free = _field(12.0, 8, seed=3)
    res = plan_coverage(free, 40.0)
    path = LineString(res.path)
    outside = path.difference(free.buffer(0.5))
    assert outside.length < 1e-6, f"{outside.length:.2f} m of the path outside the free area"
    assert res.coverage_fraction >= 0.99 and res.ratio_to_lower_bound < 1.1
    assert abs(res.path_length_m - path.length) < 1.0


def test_only_an_absurd_width_is_refused_and_with_a_reason() -> None:
    with pytest.raises(InvalidArgument, match="split the area"):
        plan_coverage(box(0, 0, 900_000, 1000), 40.0)  # 900 km across: 22 500 sweeps side by side


def test_a_shortfall_says_where_the_dark_area_lies() -> None:
    from planner.survey.repair import shortfall, unimaged_area

    star = Polygon([(np.cos(a) * r, np.sin(a) * r) for k in range(14)
                    for a, r in [(k * np.pi / 7, 400.0 if k % 2 == 0 else 120.0)]])
    res = plan_coverage(star, 40.0, coverage_target=0.999)
    assert not res.target_met
    why = shortfall(star, res.unimaged_local, 40.0, 0.999)
    assert why is not None and why["at_edges_m2"] > 0 and "corners" in why["reason"]
    assert abs(why["at_edges_m2"] + why["inside_m2"] - unimaged_area(star, res.sweeps, 40.0).area) < 1.0
    assert shortfall(star, res.unimaged_local, 40.0, 0.5) is None
