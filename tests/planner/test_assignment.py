"""planner.routing.assignment: survey sweeps split into battery-feasible sorties over drones, soonest finish."""

from __future__ import annotations

import math

import pytest

from planner.routing.assignment import (
    SurveyDrone,
    assign_survey,
    connections_from_path,
    split_long_sweeps,
)


def _lawnmower(n: int = 20, length: float = 400.0, spacing: float = 40.0):
    sweeps, path = [], []
    for k in range(n):
        y = k * spacing
        a, b = ((0.0, y), (length, y)) if k % 2 == 0 else ((length, y), (0.0, y))
        sweeps.append((a, b))
        path += [a, b]
    return sweeps, path


def _drone(x: float, y: float, usable_wh: float = 30.0, swap_s: float = 300.0) -> SurveyDrone:
    # 10 m/s, 400 W: 0.0111 Wh and 0.1 s per metre; 1 Wh and 30 s per sortie for take-off and landing
    return SurveyDrone((x, y), usable_wh, 400 / 3600 / 10, 400 / 3600 / 10, 0.1, 0.1, 1.0, 30.0, swap_s)


def _straight(a, b) -> float:
    return math.dist(a, b)


def _check(pieces, drones, res):
    covered = sorted(i for s in res.sorties for i in range(s.first, s.last + 1))
    assert covered == sorted(set(covered)), "a piece is flown twice"
    assert set(covered) | set(res.unserved) == set(range(len(pieces)))
    for s in res.sorties:
        assert s.energy_wh <= drones[s.drone].usable_wh + 1e-9
    # a drone's sorties do not overlap in time and keep the swap time between them
    for d in range(len(drones)):
        mine = sorted((s for s in res.sorties if s.drone == d), key=lambda s: s.start_offset_s)
        for a, b in zip(mine, mine[1:]):
            assert b.start_offset_s >= a.start_offset_s + a.duration_s + drones[d].swap_s - 1e-6
        if mine:
            assert mine[-1].start_offset_s + mine[-1].duration_s <= res.makespan_s + 1e-6


def test_connections_follow_the_path() -> None:
    sweeps, path = _lawnmower(3)
    conns = connections_from_path(sweeps, path)
    assert conns == [[(400.0, 0.0), (400.0, 40.0)], [(0.0, 40.0), (0.0, 80.0)]]


def test_one_drone_needs_several_sorties() -> None:
    sweeps, path = _lawnmower()
    pieces = split_long_sweeps(sweeps, connections_from_path(sweeps, path), 1000.0)
    drones = [_drone(-50, 0)]
    res = assign_survey(pieces, drones, _straight)
    _check(pieces, drones, res)
    assert not res.unserved
    assert len(res.sorties) >= 2  # ~8.8 km of flight with 30 Wh ≈ 2.7 km per sortie


def test_more_drones_finish_sooner() -> None:
    sweeps, path = _lawnmower()
    pieces = split_long_sweeps(sweeps, connections_from_path(sweeps, path), 1000.0)
    one = assign_survey(pieces, [_drone(-50, 0)], _straight)
    drones = [_drone(-50, 0), _drone(450, 800)]
    two = assign_survey(pieces, drones, _straight)
    _check(pieces, drones, two)
    assert {s.drone for s in two.sorties} == {0, 1}
    assert two.makespan_s < 0.7 * one.makespan_s


def test_long_sweeps_are_cut_and_far_pieces_unserved() -> None:
    sweeps = [((0.0, 0.0), (3000.0, 0.0)), ((0.0, 50_000.0), (10.0, 50_000.0))]
    pieces = split_long_sweeps(sweeps, [[(3000.0, 0.0), (0.0, 50_000.0)]], 800.0)
    assert len(pieces) == 5  # 3 km in four 750 m pieces, plus the short one
    drones = [_drone(0, -10, usable_wh=80.0)]
    res = assign_survey(pieces, drones, _straight)
    _check(pieces, drones, res)
    assert res.unserved == (4,)


def test_deterministic() -> None:
    sweeps, path = _lawnmower(15)
    pieces = split_long_sweeps(sweeps, connections_from_path(sweeps, path), 1000.0)
    drones = [_drone(-50, 0), _drone(450, 600), _drone(200, -100)]
    assert assign_survey(pieces, drones, _straight) == assign_survey(pieces, drones, _straight)


@pytest.mark.parametrize("n_drones", [0])
def test_no_drones_leaves_everything_unserved(n_drones: int) -> None:
    sweeps, path = _lawnmower(2)
    pieces = split_long_sweeps(sweeps, connections_from_path(sweeps, path), 1000.0)
    res = assign_survey(pieces, [], _straight)
    assert res.unserved == tuple(range(len(pieces))) and not res.sorties


def test_a_passed_deadline_keeps_the_first_drone_order_complete_and_says_it_was_cut() -> None:
    """Under a deadline the split is anytime: past it, the first drone order's bisection still runs to its end
    (cut after a few steps its makespan doubled) and the other orders are not tried; without one, every order."""
    sweeps, path = _lawnmower(30)
    pieces = split_long_sweeps(sweeps, connections_from_path(sweeps, path), 1000.0)
    drones = [_drone(-50, 0), _drone(450, 800), _drone(200, -100), _drone(-80, 1200)]
    full = assign_survey(pieces, drones, _straight)
    calls = []
    late = assign_survey(pieces, drones, _straight, lambda: calls.append(1) or True)
    _check(pieces, drones, late)
    assert late.cut and not full.cut and calls  # the deadline was asked, and stopped the search
    assert not late.unserved and sorted(i for s in late.sorties for i in range(s.first, s.last + 1)) == list(range(len(pieces)))
    assert full.makespan_s <= late.makespan_s <= 1.5 * full.makespan_s
    # never reached: the same split as without a deadline
    assert assign_survey(pieces, drones, _straight, lambda: False) == full


def test_the_pieces_no_drone_flies_alone_are_found_as_before() -> None:
    """The vectorised there-and-back check agrees with one sortie per piece, piece by piece (old code's loop)."""
    sweeps = [((0.0, 0.0), (3000.0, 0.0)), ((0.0, 9000.0), (10.0, 9000.0)), ((0.0, 50_000.0), (10.0, 50_000.0))]
    conns = [[(3000.0, 0.0), (0.0, 9000.0)], [(10.0, 9000.0), (0.0, 50_000.0)]]
    pieces = split_long_sweeps(sweeps, conns, 800.0)
    drones = [_drone(0, -10, usable_wh=80.0), _drone(0, 9500, usable_wh=40.0)]
    res = assign_survey(pieces, drones, _straight)
    _check(pieces, drones, res)
    from planner.routing.assignment import _Costs

    costs = _Costs(pieces, drones, _straight)
    alone = [any(costs.sortie(d, i)[0][0] <= dr.usable_wh for d, dr in enumerate(drones)) for i in range(len(pieces))]
    assert res.unserved == tuple(i for i, ok in enumerate(alone) if not ok) and res.unserved
