"""bench.lanes_sp_bound: the set-covering bound over whole sorties stays below the enumerated optimum."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.lanes_enumerate import shortest_plan
from bench.lanes_sp_bound import sp_bound

DOCK = np.asarray([0.0, 0.0])


def _random_lines(rng: np.random.Generator) -> list[np.ndarray]:
    lines = []
    for _ in range(int(rng.integers(2, 5))):
        c, ang, half = rng.uniform(-1200, 1200, 2), rng.uniform(0, np.pi), rng.uniform(50, 300)
        d = np.asarray([np.cos(ang), np.sin(ang)]) * half
        lines.append(np.asarray([c - d, c + d]))
    return lines


def test_below_the_optimum_and_its_cover_no_shorter_on_random_small_networks() -> None:
    """Limits just above the farthest out-and-back: the bound holds, and its cover is a plan no shorter."""
    rng = np.random.default_rng(11)
    checked = 0
    for _ in range(12):
        lines = _random_lines(rng)
        far = max(float(np.hypot(*l.T).max()) for l in lines)
        limit = float(rng.uniform(2 * far + 100, 2 * far + 900))
        opt = shortest_plan(lines, DOCK, limit)
        if not math.isfinite(opt):
            continue
        got = sp_bound(lines, DOCK[None], limit, seconds=60.0, ip_seconds=10.0)
        assert got["converged"]
        assert got["sp_bound_m"] <= opt + 0.1 <= got["integer_plan_m"] + 0.2
        checked += 1
    assert checked >= 6


def test_refuses_a_line_no_sortie_reaches() -> None:
    with pytest.raises(ValueError):
        sp_bound([np.asarray([[5000.0, 0.0], [5100.0, 0.0]])], DOCK[None], 6000.0)


def test_exact_on_three_far_parallel_lines() -> None:
    """No 2 800 m sortie serves all three; the pooled-deadhead LP without capacity cuts says 7 310.3 m."""
    fan = [np.asarray([[x, -300.0], [x, 300.0]]) for x in (800.0, 900.0, 1000.0)]
    got = sp_bound(fan, DOCK[None], 2800.0, ip_seconds=5.0)
    assert got["converged"]
    assert got["sp_bound_m"] == pytest.approx(shortest_plan(fan, DOCK, 2800.0), abs=0.1)
    assert got["integer_plan_m"] == pytest.approx(got["sp_bound_m"], abs=0.1)
