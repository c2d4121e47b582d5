"""planner.patrol.arc_search: one arc-routing model, sorties limited by length, by load, or both."""

from __future__ import annotations

import numpy as np
import pytest

from planner.patrol.arc_search import ArcProblem, SortieLimit, solve_arcs
from planner.routing.budget import Budget


def _square(limit: SortieLimit) -> ArcProblem:
    """A square of four 10-long streets around the depot at corner 0: street k runs from corner k to k + 1."""
    corners = [c for k in range(4) for c in (k, (k + 1) % 4)] + [0]  # unit ends, then the depot
    ring = lambda a, b: 10 * min(abs(a - b), 4 - abs(a - b))  # noqa: E731
    D = np.asarray([[ring(a, b) for b in corners] for a in corners], dtype=np.int64)
    return ArcProblem(D, np.full(4, 10, dtype=np.int64), (limit,), demand=np.ones(4, dtype=np.int64))


def _served(plan) -> list[int]:
    return sorted(t for _, seq in plan.sorties for t, _ in seq)


@pytest.mark.parametrize("limit, cost", [
    (SortieLimit(load=4), 40),  # one loop
    (SortieLimit(load=3), 60),  # three streets and home, one street out and back
    (SortieLimit(load=2), 80),  # at most two streets a sortie
    (SortieLimit(length=40.0), 40),  # the loop is 40 long: within the battery
    (SortieLimit(length=40.0, load=2), 80),  # both limits: each holds, the load binds
])
def test_the_limit_decides_the_plan(limit: SortieLimit, cost: int) -> None:
    problem = _square(limit)
    plan = solve_arcs(problem, Budget.work(0.1))
    assert _served(plan) == [0, 1, 2, 3]
    assert plan.cost == cost
    for _, seq in plan.sorties:
        assert limit.load is None or len(seq) <= limit.load  # every street demands 1
        ends = [(2 * t + 1, 2 * t) if r else (2 * t, 2 * t + 1) for t, r in seq]
        walk = [8] + [p for e in ends for p in e] + [8]  # depot, each street's entry and exit, depot
        length = sum(problem.deadhead[a, b] for a, b in zip(walk[0::2], walk[1::2])) + 10 * len(seq)
        assert limit.length is None or length <= limit.length
