"""bench.lanes_cap_bound: capacity cuts stay below the optimum (found by enumeration) and can be tighter than the LP."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.lanes_cap_bound import Region, cap_bound
from bench.lanes_enumerate import shortest_plan

DOCK = np.asarray([0.0, 0.0])
# three parallel 600 m lines 800-1 000 m east of the dock; a 2 800 m sortie serves at most two of them
FAN = [np.asarray(l, float) for l in ([[800, -300], [800, 300]], [[900, -300], [900, 300]],
                                      [[1000, -300], [1000, 300]])]


def _optimum(lines: list[np.ndarray], limit: float) -> float:
    return shortest_plan(lines, DOCK, limit)


def test_tighter_than_the_lp_and_equal_to_the_optimum_on_a_fan() -> None:
    opt = _optimum(FAN, 2800.0)
    assert opt == pytest.approx(7494.2, abs=0.1)  # no sortie serves all three; the LP without cuts lets one walk do it
    plain = cap_bound(FAN, DOCK[None], 2800.0, capacity=False)
    got = cap_bound(FAN, DOCK[None], 2800.0)
    assert plain["converged"] and got["converged"]
    assert plain["cap_bound_m"] == pytest.approx(7310.3, abs=0.1)
    assert got["capacity_cuts"] > 0
    assert plain["cap_bound_m"] + 100.0 < got["cap_bound_m"] <= opt + 0.1


def test_below_the_optimum_on_random_small_networks() -> None:
    """Two to four random lines, limits just above the farthest out-and-back: the cuts bite, the bound holds."""
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(25):
        lines = []
        for _ in range(int(rng.integers(2, 5))):
            c, ang, half = rng.uniform(-1200, 1200, 2), rng.uniform(0, np.pi), rng.uniform(50, 300)
            d = np.asarray([np.cos(ang), np.sin(ang)]) * half
            lines.append(np.asarray([c - d, c + d]))
        far = max(float(np.hypot(*l.T).max()) for l in lines)
        limit = float(rng.uniform(2 * far + 100, 2 * far + 900))
        opt = _optimum(lines, limit)
        if not math.isfinite(opt):
            continue
        got = cap_bound(lines, DOCK[None], limit)
        assert got["converged"] and got["cap_bound_m"] <= opt + 0.1
        checked += 1
    assert checked >= 15


@pytest.mark.parametrize("a,b,want", [
    ((-2.0, 0.0), (-1.0, 0.0), 0),  # both inside the disk: a chord stays in it
    ((-2.0, 0.0), (5.0, 0.0), 1),  # inside to outside
    ((-5.0, 1.0), (5.0, 1.0), 2),  # both outside, through the disk
    ((-5.0, 4.0), (5.0, 4.0), 0),  # both outside, passing it by
])
def test_a_straight_flight_crosses_a_disk_as_geometry_says(a, b, want) -> None:
    got = Region("outside", r=3.0).crossings(np.asarray([a], float), np.asarray([b], float), DOCK)
    assert int(got[0]) == want


def test_a_straight_flight_crosses_a_quadrant_as_geometry_says() -> None:
    quad = Region("convex", halves=((1.0, 0.0, 10.0), (0.0, 1.0, 10.0)))  # x ≥ 10 and y ≥ 10
    a = np.asarray([[0.0, 0.0], [0.0, 30.0], [0.0, 15.0], [12.0, 12.0]])
    b = np.asarray([[30.0, 0.0], [30.0, 0.0], [30.0, 15.0], [20.0, 20.0]])
    assert quad.crossings(a, b, DOCK).tolist() == [0, 2, 1, 0]
