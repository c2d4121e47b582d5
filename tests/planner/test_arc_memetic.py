"""planner.patrol.arc_memetic: the split is exact, path scanning serves everything, a capped search repeats."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from planner.patrol.arc_memetic import CarpData, path_scanning, plan_cost, split_tour


def _random_data(units: int, seed: int, capacity: int) -> CarpData:
    """Units on random points of a plane (asymmetric ends), integer deadheads, demands 1-4."""
    rng = np.random.default_rng(seed)
    pts = rng.integers(0, 50, size=(2 * units + 1, 2))
    D = np.abs(pts[:, None, :] - pts[None, :, :]).sum(axis=2).astype(np.int64)
    return CarpData(D, rng.integers(1, 5, size=units).astype(np.int64), capacity)


def _brute_split(data: CarpData, tour: list[int]) -> int:
    """Every way to cut the tour under the load limit, every direction of every unit."""
    n, best = len(tour), None
    for cuts in itertools.product((False, True), repeat=n - 1):
        pieces, cur = [], [tour[0]]
        for u, cut in zip(tour[1:], cuts):
            if cut:
                pieces.append(cur)
                cur = []
            cur.append(u)
        pieces.append(cur)
        if any(sum(int(data.demand[u]) for u in p) > data.capacity for p in pieces):
            continue
        total = 0
        for p in pieces:
            total += min(plan_cost(data, [list(zip(p, dirs))]) for dirs in itertools.product((False, True), repeat=len(p)))
        best = total if best is None else min(best, total)
    assert best is not None
    return best


@pytest.mark.parametrize("seed", range(6))
def test_the_split_is_the_best_cut_and_direction_for_the_tour_order(seed: int) -> None:
    data = _random_data(6, seed, capacity=7)
    tour = [int(u) for u in np.random.default_rng(seed + 100).permutation(6)]
    cost, sorties = split_tour(data, tour)
    assert cost == _brute_split(data, tour)
    assert cost == plan_cost(data, sorties)
    assert [u for s in sorties for u, _ in s] == tour  # the order is kept
    assert all(sum(int(data.demand[u]) for u, _ in s) <= data.capacity for s in sorties)


@pytest.mark.parametrize("rule", range(5))
def test_path_scanning_serves_every_unit_once_within_the_load(rule: int) -> None:
    data = _random_data(30, 7, capacity=12)
    sorties = path_scanning(data, rule, np.random.default_rng(rule))
    assert sorted(u for s in sorties for u, _ in s) == list(range(30))
    assert all(sum(int(data.demand[u]) for u, _ in s) <= data.capacity for s in sorties)
    again = split_tour(data, [u for s in sorties for u, _ in s])[0]
    assert again <= plan_cost(data, sorties)  # the split of its own order is never worse
