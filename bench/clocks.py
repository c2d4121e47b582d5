"""Clocks and the planning budget of one bench run (the shell's side of ``planner.routing.budget``).

``--budget-s S`` is a deadline: the budget starts when planning starts (after the
instance is read) on the clock ``--clock`` names:

* ``wall`` (default): ``time.monotonic``, what an operator waits;
* ``cpu``: CPU seconds of this process plus, once they have finished, its search
  lanes' processes divided by the lanes that ran side by side — what an idle
  machine with a core per lane would take. On a shared machine (this one: load
  4-9 on 2 cores) a wall deadline buys a third of the search it buys idle; the CPU
  clock measures the planner, not the neighbours. Each forked lane counts its own
  CPU (``Budget.resumed``). OR-Tools' iterated local search (small models) can only
  be stopped by its own wall-clock limit, so under this clock it runs to its work
  cap instead (``planner.routing.engines``).

``--seed K`` diversifies the search; ``--iterations N`` caps the work of each
search lane (PyVRP iterations / OR-Tools solutions): with both, a run that ends on
its cap (``stopped_by: "iterations"``) repeats exactly on the same machine.
"""

from __future__ import annotations

import argparse
import resource
import time

from bench.lane_pool import ForkPool
from planner.routing.budget import Budget

__all__ = ["PhaseLog", "budget_from_args", "cpu_s", "max_rss_mb"]


def cpu_s() -> float:
    """CPU seconds of this process and of its finished child processes (the search lanes' workers)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def max_rss_mb() -> dict[str, float]:
    """Peak resident memory, MB: this process, and the largest of its finished child processes."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
    return {"self": round(own, 1), "largest_child": round(kids, 1)}


def _lane_cpu_clock(lanes: int):
    def clock() -> float:
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.process_time() + (kids.ru_utime + kids.ru_stime) / max(1, lanes)

    return clock


class PhaseLog:
    """The planner's phases as they end (``Budget.mark``): wall and CPU seconds of each, since the start.

    CPU is this process and its finished search lanes (``cpu_s``), so a phase whose lanes ran
    side by side shows their CPU in the phase that waited for them.
    """

    def __init__(self) -> None:
        self.wall0, self.cpu0 = time.monotonic(), cpu_s()
        self.last_wall, self.last_cpu = 0.0, 0.0
        self.phases: list[dict[str, float | str]] = []

    def __call__(self, phase: str) -> None:
        wall, cpu = time.monotonic() - self.wall0, cpu_s() - self.cpu0
        self.phases.append({"phase": phase, "wall_s": round(wall - self.last_wall, 3), "cpu_s": round(cpu - self.last_cpu, 3),
                            "ended_at_wall_s": round(wall, 3)})
        self.last_wall, self.last_cpu = wall, cpu


def budget_from_args(args: argparse.Namespace, default_s: float, lanes: int, trace: PhaseLog | None = None) -> Budget:
    """The run's budget, started now: a deadline of ``--budget-s`` on ``--clock``, ``--seed``, ``--iterations``.

    Its runner forks ``lanes`` processes (``bench.lane_pool``), one search lane each.
    """
    seconds = float(getattr(args, "budget_s", None) or default_s)
    cpu = getattr(args, "clock", "wall") == "cpu"
    clock = _lane_cpu_clock(lanes) if cpu else time.monotonic
    return Budget.deadline(seconds, clock, seed=int(getattr(args, "seed", 0) or 0),
                           iterations=getattr(args, "iterations", None), wall_clock=not cpu, trace=trace,
                           runner=ForkPool(lanes))
