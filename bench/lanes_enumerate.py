"""The shortest whole-line plan of a tiny one-dock lanes instance, by enumeration (the bounds' tests' yardstick).

Every partition of the lines into sorties, every order and direction inside each, straight deadheads:
a plan that serves each line from end to end once, each sortie within the limit. Exponential: a handful
of lines only. Bench only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np

__all__ = ["shortest_plan"]


def _partitions(items: list[int]) -> Iterator[list[list[int]]]:
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for p in _partitions(rest):
        for i in range(len(p)):
            yield p[:i] + [[first] + p[i]] + p[i + 1:]
        yield [[first]] + p


def _sortie(block: list[int], lines: list[np.ndarray], dock: np.ndarray) -> float:
    """The shortest sortie serving ``block``: every order and direction of its lines."""
    best = math.inf
    for order in itertools.permutations(block):
        for flips in itertools.product((False, True), repeat=len(order)):
            pos, total = dock, 0.0
            for k, flip in zip(order, flips):
                a, b = (lines[k][-1], lines[k][0]) if flip else (lines[k][0], lines[k][-1])
                total += float(np.hypot(*(a - pos)) + np.hypot(*(b - a)))
                pos = b
            best = min(best, total + float(np.hypot(*(dock - pos))))
    return best


def shortest_plan(lines: list[np.ndarray], dock: np.ndarray, limit: float) -> float:
    """The optimum's total (``inf`` when no plan fits the limit); ``lines`` straight, two points each."""
    if len(lines) > 6:
        raise ValueError("enumeration is for a handful of lines")
    best = math.inf
    for part in _partitions(list(range(len(lines)))):
        costs = [_sortie(b, lines, dock) for b in part]
        if all(c <= limit + 1e-9 for c in costs):
            best = min(best, sum(costs))
    return best
