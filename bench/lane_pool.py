"""The bench's search lanes side by side: forked worker processes behind ``planner.routing.budget.LaneRunner``.

The planner runs its independent search lanes one after the other unless the shell
gives its ``Budget`` a runner (``Budget.runner``); the bench gives this one, so a
run uses both cores of the 2-core machine. Forked, so nothing is re-imported and
the jobs reach the workers by inheritance, never pickled (a 5 000-node matrix is
200 MB); only the results come back. A worker's budget is re-based on its own clock
(``Budget.resumed``), so a CPU-time clock counts each lane's own CPU. The results
never depend on the workers (work mode: the same routes with one process).

Only a single-threaded caller may use it (forking a threaded process is unsafe):
the bench's command line is one.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from typing import Any

from planner.routing.budget import Budget

__all__ = ["ForkPool"]

# The jobs of the map call in progress, read by its forked workers (inherited, not pickled).
# Set and cleared inside ForkPool.map; empty otherwise.
_HANDOFF: list[tuple[Callable, tuple, float]] = []


def _run_handoff(i: int):
    fn, job, elapsed = _HANDOFF[i]
    return fn(*(a.resumed(elapsed) if isinstance(a, Budget) else a for a in job))


def _elapsed(job: Sequence) -> float:
    return next((a.elapsed_s() for a in job if isinstance(a, Budget)), 0.0)


class ForkPool:
    """``workers`` forked processes per ``map`` call (a ``LaneRunner``)."""

    def __init__(self, workers: int) -> None:
        self.workers = max(1, int(workers))

    def map(self, fn: Callable[..., Any], jobs: Sequence[tuple]) -> list:
        if self.workers <= 1 or len(jobs) <= 1:
            return [fn(*job) for job in jobs]
        _HANDOFF[:] = [(fn, tuple(job), _elapsed(job)) for job in jobs]
        try:
            with multiprocessing.get_context("fork").Pool(min(self.workers, len(jobs))) as pool:
                return pool.map(_run_handoff, range(len(jobs)))
        finally:
            _HANDOFF.clear()
