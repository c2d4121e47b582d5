"""planner.patrol.arc_memetic and carp_split: the split is exact (free or with a limited fleet), path scanning serves everything."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from planner.patrol.arc_memetic import path_scanning
from planner.patrol.carp_split import CarpData, plan_cost, split_tour


def _random_data(units: int, seed: int, capacity: int) -> CarpData:
    """Units on random points of a plane (asymmetric ends), integer deadheads, demands 1-4."""
    rng = np.random.default_rng(seed)
    pts = rng.integers(0, 50, size=(2 * units + 1, 2))
    D = np.abs(pts[:, None, :] - pts[None, :, :]).sum(axis=2).astype(np.int64)
    return CarpData(D, rng.integers(1, 5, size=units).astype(np.int64), capacity)


def _brute_split(data: CarpData, tour: list[int], fleet: int | None = None) -> int | None:
    """Every way to cut the tour under the load limit (into at most ``fleet`` sorties), every direction of every unit."""
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
        if fleet is not None and len(pieces) > fleet:
            continue
        total = 0
        for p in pieces:
            total += min(plan_cost(data, [list(zip(p, dirs))]) for dirs in itertools.product((False, True), repeat=len(p)))
        best = total if best is None else min(best, total)
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


@pytest.mark.parametrize("seed", range(6))
def test_the_split_with_a_limited_fleet_is_the_best_cut_into_at_most_that_many_sorties(seed: int) -> None:
    """HGS-CARP's ``splitLF``: fewer sorties than the free split wants, at their cost; none possible, the free split."""
    near = _random_data(7, seed, capacity=6)
    D = near.deadhead.copy()
    D[near.depot, :] = D[:, near.depot] = 1  # a depot next to everything: the free split flies many short sorties
    D[near.depot, near.depot] = 0
    data = CarpData(D, near.demand, near.capacity)
    tour = [int(u) for u in np.random.default_rng(seed + 200).permutation(7)]
    free = split_tour(data, tour)[1]
    checked = 0
    for fleet in range(1, len(free)):
        cost, sorties = split_tour(data, tour, fleet=fleet)
        want = _brute_split(data, tour, fleet)
        if want is None:  # no cut of this order fits: the free split, for the caller to refuse
            assert len(sorties) == len(free)
            continue
        checked += 1
        assert len(sorties) <= fleet and cost == want == plan_cost(data, sorties)
        assert [u for s in sorties for u, _ in s] == tour
        assert all(sum(int(data.demand[u]) for u, _ in s) <= data.capacity for s in sorties)
    soft, over = split_tour(data, tour, penalty=3.0, fleet=1)  # one sortie: all over the load, at the penalty
    excess = sum(int(d) for d in data.demand) - data.capacity
    assert len(over) == 1 and soft == plan_cost(data, over) + 3 * excess
    assert checked >= 2  # fleets below the free split's count that a cut does fit


@pytest.mark.parametrize("rule", range(5))
def test_path_scanning_serves_every_unit_once_within_the_load(rule: int) -> None:
    data = _random_data(30, 7, capacity=12)
    sorties = path_scanning(data, rule, np.random.default_rng(rule))
    assert sorted(u for s in sorties for u, _ in s) == list(range(30))
    assert all(sum(int(data.demand[u]) for u, _ in s) <= data.capacity for s in sorties)
    again = split_tour(data, [u for s in sorties for u, _ in s])[0]
    assert again <= plan_cost(data, sorties)  # the split of its own order is never worse


def test_the_population_keeps_broken_pairs_distances_and_drops_clones_first() -> None:
    """HGS's survivor selection on plans of random tours: distances row by row, the size bounded, no clone kept."""
    from planner.patrol.arc_memetic import POP_LAMBDA, POP_MIN, _Plan, _Population, _successors

    data = _random_data(12, 3, capacity=9)
    rng = np.random.default_rng(5)
    pop = _Population()
    plans = []
    for k in range(POP_MIN + POP_LAMBDA - 1):
        tour = [int(u) for u in rng.permutation(12)] if k % 3 else [int(u) for u in range(12)]  # a clone every third
        cost, sorties = split_tour(data, tour)
        plans.append(_Plan(cost, sorties, _successors(12, sorties)))
        pop.add(plans[-1])
        n = len(pop.plans)
        want = np.array([[np.mean(a.succ != b.succ) for b in pop.plans] for a in pop.plans])
        assert np.array_equal(pop.dist, want) and pop.succs.shape == (n, 12)
        assert n == k + 1  # not full yet: nothing dropped
    pop.add(plans[1])  # full: survivors down to POP_MIN, every clone of the identity tour but one gone first
    assert len(pop.plans) == POP_MIN
    signatures = [(p.cost, p.succ.tobytes()) for p in pop.plans]
    assert len(set(signatures)) == len(signatures)
    assert np.array_equal(pop.dist, np.array([[np.mean(a.succ != b.succ) for b in pop.plans] for a in pop.plans]))
