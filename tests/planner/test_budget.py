"""planner.routing.budget: a deadline counted from the start of planning, or a fixed amount of work."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from planner.routing.budget import STOPPED_BY_DEADLINE, STOPPED_BY_ITERATIONS, Budget
from planner.routing.vrp import RoutingProblem, RoutingVehicle, euclidean_matrix, solve_routing


class StepClock:
    """A clock the test moves by hand: the budget reads whatever clock the shell gives it."""

    def __init__(self, t: float = 100.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_a_work_budget_reads_no_clock_and_counts_iterations() -> None:
    b = Budget.work(3.0, iterations=5)
    assert not b.timed and b.remaining_s() == math.inf and b.elapsed_s() == 0.0
    stop = b.stop(b.iterations)
    assert [stop(0) for _ in range(6)] == [False] * 5 + [True]
    assert stop.stopped_by == STOPPED_BY_ITERATIONS and stop.calls == 5


def test_a_deadline_counts_from_the_start_of_planning() -> None:
    clock = StepClock()
    b = Budget.deadline(10.0, clock)
    clock.t += 4.0  # start-up: matrices, models
    assert b.elapsed_s() == pytest.approx(4.0) and b.remaining_s() == pytest.approx(6.0)
    stop = b.stop(None)
    assert stop(0) is False
    clock.t += 6.5
    assert stop(0) is True and stop.stopped_by == STOPPED_BY_DEADLINE
    assert b.expired() and b.remaining_s() == 0.0


def test_a_phase_share_ends_before_the_whole_and_a_lane_rebases_on_its_own_clock() -> None:
    clock = StepClock()
    b = Budget.deadline(10.0, clock)
    clock.t += 2.0
    phase = b.share(0.5)  # half of the 8 s left
    assert phase.remaining_s() == pytest.approx(4.0) and b.remaining_s() == pytest.approx(8.0)
    other = StepClock(5.0)  # a forked lane's CPU clock starts near zero
    lane = Budget.deadline(10.0, other, started_at=0.0, wall_clock=False)
    assert lane.resumed(3.0).remaining_s() == pytest.approx(7.0)
    wall = Budget.deadline(10.0, other, started_at=0.0)  # a wall clock is every process's: a queued job keeps its deadline
    assert wall.resumed(3.0).remaining_s() == pytest.approx(5.0)
    assert Budget.work(2.0).share(0.25).seconds == pytest.approx(0.5)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_a_budget_needs_positive_finite_seconds(bad: float) -> None:
    with pytest.raises(ValueError):
        Budget.work(bad)
    with pytest.raises(ValueError):
        Budget.work(1.0, iterations=0)


def _problem(n_sites: int, seed: int) -> RoutingProblem:
    rng = np.random.default_rng(seed)
    depots = rng.uniform(2000, 8000, size=(4, 2))
    xy = np.vstack([depots, rng.uniform(0, 10000, size=(n_sites, 2))])
    vehicles = tuple(RoutingVehicle(k % 4, 30000) for k in range(16))
    return RoutingProblem((euclidean_matrix(xy),), vehicles, tuple(range(4, 4 + n_sites)), coords=xy, droppable=False)


def test_routing_stops_at_the_deadline_with_its_best_routes() -> None:
    """A 250-site problem that a minute would still improve, given three seconds of wall clock."""
    problem = _problem(250, seed=3)
    t0 = time.monotonic()
    budget = Budget.deadline(3.0, time.monotonic)
    sol = solve_routing(problem, budget=budget)
    took = time.monotonic() - t0
    assert sol.stopped_by == STOPPED_BY_DEADLINE and sol.iterations > 0
    assert not sol.unserved and sorted(n for r in sol.routes for n in r) == list(range(4, 254))
    # slack for what cannot be cut short on a loaded machine: PyVRP's first solution, the last iteration
    assert took < 3.0 + 1.0, f"the deadline was overrun: {took:.2f} s"
    assert 2.9 <= sol.elapsed_s <= took


def test_a_seed_and_a_cap_repeat_exactly_under_a_deadline() -> None:
    problem = _problem(150, seed=4)
    runs = [solve_routing(problem, budget=Budget.deadline(60.0, time.monotonic, seed=3, iterations=300)) for _ in range(2)]
    assert all(r.stopped_by == STOPPED_BY_ITERATIONS for r in runs)
    assert runs[0].routes == runs[1].routes and runs[0].cost == runs[1].cost
    other = solve_routing(problem, budget=Budget.deadline(60.0, time.monotonic, seed=4, iterations=300))
    assert other.stopped_by == STOPPED_BY_ITERATIONS  # another seed: another search, maybe other routes
