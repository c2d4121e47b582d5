"""The exact split of a closed lane tour (planner.patrol.tour_split) against brute force and the baseline."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from bench.rpp_baseline import rpp_split_total
from planner.patrol.arc_routing import ArcDepot, route_lanes
from planner.patrol.tour_split import split_closed_tour

ROOT = Path(__file__).resolve().parents[2]


def _brute_force(nodes: list[int], cost: np.ndarray, caps: list[int]) -> int | None:
    """Every rotation, every set of cuts, every sortie from its best depot: the cheapest total."""
    n, best = len(nodes), None
    for r in range(n):
        seq = nodes[r:] + nodes[:r]
        for k in range(n):
            for cuts in itertools.combinations(range(1, n), k):
                bounds = (0, *cuts, n)
                total = 0
                for a, b in zip(bounds[:-1], bounds[1:]):
                    run = seq[a:b]
                    fits = [
                        int(cost[d, run[0]] + sum(cost[x, y] for x, y in zip(run[:-1], run[1:])) + cost[run[-1], d])
                        for d in range(len(caps))
                    ]
                    ok = [c for c, cap in zip(fits, caps) if c <= cap]
                    if not ok:
                        total = None
                        break
                    total += min(ok)
                if total is not None and (best is None or total < best):
                    best = total
    return best


def _sortie_cost(cost: np.ndarray, d: int, run: tuple[int, ...]) -> int:
    walk = [d, *run, d]
    return int(sum(cost[a, b] for a, b in zip(walk[:-1], walk[1:])))


@pytest.mark.parametrize("seed", range(12))
def test_split_equals_the_brute_force_optimum_over_every_rotation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    nd, n = 2, 7
    xy = rng.uniform(0, 1000, size=(nd + n, 2))
    cost = np.ceil(np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1)) * 1000).astype(np.int64)
    cost = cost + rng.integers(0, 300_000, size=nd + n)[None, :] * (np.arange(nd + n) >= nd)[None, :]  # + lane length
    nodes = list(range(nd, nd + n))
    caps = [int(v) for v in rng.integers(1_500_000, 4_000_000, size=nd)]
    got = split_closed_tour(nodes, cost, caps)
    want = _brute_force(nodes, cost, caps)
    if want is None:
        assert got is None
        return
    assert got is not None and got.cost == want
    flown = [x for _, run in got.sorties for x in run]
    assert sorted(flown) == nodes  # every tour node once
    assert flown == (nodes * 2)[nodes.index(flown[0]) :][:n]  # in tour order, from some rotation
    for d, run in got.sorties:
        assert _sortie_cost(cost, d, run) <= caps[d]
    assert sum(_sortie_cost(cost, d, run) for d, run in got.sorties) == got.cost


def test_a_sortie_exactly_at_its_limit_is_kept() -> None:
    # depot 0 at x = 0, the tour 1, 2, 3 at x = 1000, 1800, 1500: one 3.6 km sortie at exactly its limit
    xy = np.asarray([[0.0, 0.0], [1000.0, 0.0], [1800.0, 0.0], [1500.0, 0.0]])
    cost = np.round(np.abs(xy[:, None, 0] - xy[None, :, 0]) * 1000).astype(np.int64)
    got = split_closed_tour([1, 2, 3], cost, [3_600_000])
    assert got is not None and got.cost == 3_600_000 and len(got.sorties) == 1
    # a millimetre less and node 2 (1.8 km out) fits no sortie at all
    assert split_closed_tour([1, 2, 3], cost, [3_599_999]) is None


def test_no_split_when_a_node_fits_no_sortie() -> None:
    xy = np.asarray([[0.0, 0.0], [1000.0, 0.0], [9000.0, 0.0]])
    cost = np.round(np.abs(xy[:, None, 0] - xy[None, :, 0]) * 1000).astype(np.int64)
    assert split_closed_tour([1, 2], cost, [10_000_000]) is None


def test_start_is_never_longer_than_the_baseline_where_the_old_split_needed_one_more_sortie() -> None:
    """hel_paths_fresh: the old start (a metre inside each limit, 16 rotations) needed 4 sorties, the baseline 3."""
    inst = json.loads((ROOT / "bench/instances/hel_paths_fresh.json").read_text(encoding="utf-8"))
    from bench.lanes import _nofly
    from planner.geo.transit import TransitGraph

    req = [f for f in inst["features"] if f["properties"].get("required")]
    lines = [[(float(x), float(y)) for x, y, *_ in f["geometry"]["coordinates"]] for f in req]
    cap = float(inst["max_sortie_m"])
    depots = [ArcDepot(float(d["x"]), float(d["y"]), cap) for d in inst["depots"]]
    transit = TransitGraph(_nofly(inst), 0.0)
    baseline = json.loads((ROOT / "bench/instances/reference.json").read_text(encoding="utf-8"))["lanes"]["hel_paths_fresh"]
    # the smallest work budget: the search is short, the plan is at worst the tour's split
    res = route_lanes(lines, depots, transit, budget=0.05)
    assert not res.unserved
    assert len(res.sorties) <= baseline["sorties"]
    assert res.total_length_m <= baseline["baseline_m"] + 0.05  # the reference is rounded to 0.1 m
    assert all(s.length_m <= cap + 0.5 for s in res.sorties)


def _split_grid(n: int = 4, block: float = 200.0) -> list[list[tuple[float, float]]]:
    """A grid whose blocks are cut in two: every road has junctions of degree 2 (chains form there)."""
    lines = []
    for i in range(n + 1):
        for j in range(n):
            for a, b in ((0.0, 0.5), (0.5, 1.0)):
                lines.append([((j + a) * block, i * block), ((j + b) * block, i * block)])
                lines.append([(i * block, (j + a) * block), (i * block, (j + b) * block)])
    return lines


@pytest.mark.parametrize("cap_m", [2500.0, 4000.0, 6000.0])  # chains of two lines and more (a tenth of the limit)
def test_plan_never_longer_than_the_baseline_and_its_start_reads_as_chains(cap_m: float) -> None:
    from planner.patrol import arc_routing as ar
    from planner.patrol.line_tour import line_tour_split
    from planner.geo.deadheads import Deadheads

    lines = _split_grid()
    depots = [ArcDepot(-30.0, 410.0, cap_m), ArcDepot(830.0, 390.0, cap_m)]
    xy = np.asarray([(d.x, d.y) for d in depots])
    baseline, _ = rpp_split_total([np.asarray(l) for l in lines], xy, cap_m, None)
    res = route_lanes(lines, depots, budget=0.05)
    assert not res.unserved and res.total_length_m <= baseline + 0.05
    # the start: the line tour's split re-read as (cut) chains, line for line
    arr = [np.asarray(l, float) for l in lines]
    length = np.asarray([float(np.hypot(*np.diff(a, axis=0).T).sum()) for a in arr])
    pts = np.vstack([np.asarray([[a[0], a[-1]] for a in arr]).reshape(-1, 2), xy])
    dh = Deadheads(pts, None)
    plan = line_tour_split(dh.D, dh.points, length, [int((cap_m - 0.25) * 1000)] * 2)
    plan = [(d, [(int(k), bool(r)) for k, r in seq]) for d, seq in plan]
    chains = ar._cut_chains(ar._merge_chains(arr, length, max(cap_m * 0.1, float(length.max()))), plan)
    read = ar._chain_sorties(plan, chains)
    assert read is not None and any(len(chains[t]) > 1 for _, seq in read for t, _ in seq)
    flat = [(d, [(k, rr != r) for t, r in seq for k, rr in (chains[t][::-1] if r else chains[t])]) for d, seq in read]
    assert flat == plan


def test_a_work_cap_splits_fewer_rotations_and_says_so() -> None:
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 1000, size=(1 + 40, 2))
    cost = np.ceil(np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1)) * 1000).astype(np.int64)
    nodes = list(range(1, 41))
    exact = split_closed_tour(nodes, cost, [6_000_000])
    capped = split_closed_tour(nodes, cost, [6_000_000], max_work=1)
    assert exact is not None and exact.every_rotation
    assert capped is not None and not capped.every_rotation and capped.cost >= exact.cost
    assert sorted(x for _, run in capped.sorties for x in run) == nodes
    assert all(_sortie_cost(cost, d, run) <= 6_000_000 for d, run in capped.sorties)
