"""planner.patrol.carp_moves: moves priced with the best directions of the whole routes they touch (HGS-CARP)."""

from __future__ import annotations

import numpy as np
import pytest

from planner.patrol.carp_moves import HARD, improve_oriented
from planner.patrol.carp_split import CarpData, Sortie, orient, plan_cost, split_tour


def _data(points: list[list[int]], demand: list[int], capacity: int) -> CarpData:
    """Unit ends (2u start, 2u+1 end) and the depot (last) on a grid, Manhattan deadheads."""
    pts = np.asarray(points)
    return CarpData(np.abs(pts[:, None, :] - pts[None, :, :]).sum(axis=2).astype(np.int64),
                    np.asarray(demand, dtype=np.int64), capacity)


def _fits(data: CarpData, sorties: list[Sortie]) -> bool:
    return all(sum(int(data.demand[u]) for u, _ in s) <= data.capacity for s in sorties)


def _fixed_direction_move_improves(data: CarpData, sorties: list[Sortie]) -> bool:
    """Any improving relocate, swap or 2-opt* when every service but the moved ones keeps its direction (PyVRP's pricing)."""
    base = plan_cost(data, sorties)
    R = len(sorties)
    candidates: list[list[Sortie]] = []
    for i in range(R):
        for j in range(R):
            if i == j:
                continue
            for p, (u, _) in enumerate(sorties[i]):
                for q in range(len(sorties[j]) + 1):
                    for r in (False, True):  # relocate u, either direction
                        new = [list(s) for s in sorties]
                        new[i].pop(p)
                        new[j].insert(q, (u, r))
                        candidates.append(new)
                for q, (v, _) in enumerate(sorties[j]):
                    for ru in (False, True):  # swap u and v, each either direction
                        for rv in (False, True):
                            new = [list(s) for s in sorties]
                            new[i][p], new[j][q] = (v, rv), (u, ru)
                            candidates.append(new)
            for p in range(len(sorties[i]) + 1):  # 2-opt*: heads and tails exchanged, directions kept
                for q in range(len(sorties[j]) + 1):
                    new = [list(s) for s in sorties]
                    new[i], new[j] = sorties[i][:p] + sorties[j][q:], sorties[j][:q] + sorties[i][p:]
                    candidates.append(new)
    return any(_fits(data, c) and plan_cost(data, c) < base for c in candidates)


def test_a_swap_found_only_by_turning_the_routes_services() -> None:
    """Two sorties of two units: no relocate, swap or 2-opt* improves them while the other services keep their
    directions (so PyVRP's moves stop here), but swapping units 1 and 0 with both new sorties' directions chosen
    again saves 8."""
    data = _data([[11, 6], [10, 2], [9, 11], [0, 2], [1, 3], [3, 0], [10, 3], [11, 9], [2, 8]], [1, 1, 1, 1], 2)
    start = [orient(data, [1, 3]), orient(data, [2, 0])]  # each sortie at its best directions for its order
    assert plan_cost(data, start) == 51
    assert not _fixed_direction_move_improves(data, start)
    found = improve_oriented(data, start)
    assert plan_cost(data, found) == 43
    assert sorted([u for u, _ in s] for s in found) == [[0, 3], [2, 1]]
    assert _fits(data, found)


@pytest.mark.parametrize("seed", range(8))
def test_the_moves_keep_every_unit_and_the_limit_and_never_cost_more(seed: int) -> None:
    rng = np.random.default_rng(seed)
    units = 14
    data = _data(rng.integers(0, 50, size=(2 * units + 1, 2)).tolist(), rng.integers(1, 5, size=units).tolist(), 9)
    _, start = split_tour(data, [int(u) for u in rng.permutation(units)])
    found = improve_oriented(data, start)
    assert sorted(u for s in found for u, _ in s) == list(range(units))
    assert _fits(data, found)
    assert plan_cost(data, found) <= plan_cost(data, start)
    assert all(s == orient(data, [u for u, _ in s]) for s in found)  # each sortie at its best directions
    assert not _fixed_direction_move_improves(data, found)  # a local optimum of PyVRP's moves too (these include them)


def test_over_the_limit_the_moves_trade_cost_for_load_at_the_penalty() -> None:
    """A penalised search (HGS's infeasible phase) may end over the limit when that is cheaper at its penalty."""
    rng = np.random.default_rng(3)
    units = 12
    data = _data(rng.integers(0, 50, size=(2 * units + 1, 2)).tolist(), rng.integers(1, 5, size=units).tolist(), 8)
    _, start = split_tour(data, [int(u) for u in rng.permutation(units)], penalty=0.5)

    def penalised(sorties: list[Sortie], penalty: float) -> float:
        over = sum(max(0, sum(int(data.demand[u]) for u, _ in s) - data.capacity) for s in sorties)
        return plan_cost(data, sorties) + penalty * over

    cheap = improve_oriented(data, start, 0.5)
    assert penalised(cheap, 0.5) <= penalised(start, 0.5)
    hard = improve_oriented(data, cheap, HARD)  # a plan over the limit is brought within it where a move can
    assert penalised(hard, HARD) <= penalised(cheap, HARD)
