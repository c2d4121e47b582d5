"""The baseline's own plan, exact: the rural postman tour over single lines, split at its best rotation.

The lane model routes chains (lines merged through junctions of degree 2), and a
tour over chains can only be cut at chain ends; its circuit also differs from the
one the bench's baseline (``bench/rpp_baseline.py``) takes over single lines, and on
hel_paths_fresh no split of sixteen chain circuits came within 60 m of the baseline's
split. So the planner also builds the baseline's tour — the same multigraph over the
same line ends, numbered the same way, its Euler circuit from the same node — and
splits it exactly (``planner.patrol.tour_split``: the model's integer arithmetic, every
rotation). The answer is never longer than that split: it is what the search must
beat, and the search's start where the chains let it be expressed as chain routes.

Differences from the baseline, each measured: the matching is over each odd node's
10 nearest (exact wherever the sparse graph holds the exact one's pairs, as on every
bench instance so far); the limit is the model's (0.25 m inside, arcs rounded up
to the millimetre), so a baseline sortie within 0.25 m + 1 mm an arc of its limit is
refused here.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from planner.patrol.arc_search import arc_cost_matrix
from planner.patrol.rpp_start import tour_orders
from planner.patrol.tour_split import split_closed_tour

__all__ = ["line_tour_split", "MM", "SPLIT_MAX_WORK"]

MM = 1000.0  # the routing model counts millimetres
# (rotation, sortie) pairs the split may weigh: every rotation of the window on every bench network
# (the most, hel_footway_mid: 0.8 CPU s of splitting on the loaded 2-core machine); evenly spaced ones
# beyond, so a network many times larger keeps its seconds for the search
SPLIT_MAX_WORK = 1_000_000_000


def line_tour_split(D: np.ndarray, points: np.ndarray, line_len: np.ndarray, capacities_mm: Sequence[int]
                    ) -> list[tuple[int, list[tuple[int, bool]]]] | None:
    """Sorties ``[(depot, [(line, reversed?)])]`` of the baseline's tour split exactly; None if some line fits none.

    ``D``/``points``: deadheads and positions over the lines' ends then the depots (as
    ``bench/rpp_baseline.py`` builds them); ``capacities_mm``: each depot's model limit.
    """
    nd, L = len(capacities_mm), len(line_len)
    if L == 0:
        return []
    tour = tour_orders(D, points, L)[0]
    cost = arc_cost_matrix(D, line_len, nd, MM)
    split = split_closed_tour([nd + 2 * k + int(r) for k, r in tour], cost, list(capacities_mm), SPLIT_MAX_WORK)
    if split is None:
        return None
    return [(d, [divmod(q - nd, 2) for q in run]) for d, run in split.sorties]
