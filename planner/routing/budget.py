"""How much search a plan may spend: a wall-clock deadline, or a fixed amount of work.

Every search in the planner (point routes, lane patrols, the survey's sweep order) is
told when to stop by one ``Budget``. Two modes, one value:

* **Deadline** (``Budget.deadline``; what the CLI, the flows and the bench give by
  default): ``seconds`` of wall-clock time counted from ``started_at``, the instant
  planning began — reading the input, matrices and start-up included. Every engine
  stops at that instant with the best solution it has (PyVRP through
  ``DeadlineStop``, its own stopping-criterion protocol; OR-Tools through its native
  ``time_limit`` set to what is left), and reports the work it did. An operator who
  asks for a plan in a minute gets it in a minute, and the whole minute is used.
* **Work** (``Budget.work``; no clock): the search stops after a number of
  iterations (PyVRP) or solutions (OR-Tools) — ``iterations`` when given, else the
  work that ``seconds`` buys at the rates measured on the reference machine (a pure
  function of the model's size and ``seconds``). Same input and budget, same plan, on
  any machine: this is the mode the golden files and the core's own tests use
  (STYLE.md 7; OR-Tools #1331: a time-limited search is not reproducible).

A deadline with an ``iterations`` cap stops at whichever comes first and says which
(``stopped_by``): a run that stopped on its cap is reproducible on the same machine.

Why an injected clock and not ``time.monotonic()`` here: ``planner/`` is pure
(STYLE.md 1 — no clock, no I/O; ``tests/test_import_contract.py`` walks it). The
shell owns time, as it owns "now" for the world: it builds the budget with its
clock (``time.monotonic``; the bench may give ``time.process_time`` to measure in
CPU seconds on a shared machine) and the instant it started. The core only asks the
budget what is left; with no clock there is no deadline and nothing is read.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

__all__ = ["Budget", "Clock", "DeadlineStop", "LaneRunner", "STOPPED_BY_DEADLINE", "STOPPED_BY_ITERATIONS"]

Clock = Callable[[], float]  # seconds on a monotonic scale (the shell's choice)


class LaneRunner(Protocol):
    """The shell's way to run independent search lanes side by side (e.g. forked processes).

    ``map(fn, jobs)`` is ``[fn(*job) for job in jobs]``, whatever runs them: the results
    never depend on the runner. ``workers``: how many run at once. The core owns no
    processes, as it owns no clock (STYLE.md 1); without a runner the lanes run one
    after the other in the planning process.
    """

    workers: int

    def map(self, fn: Callable[..., Any], jobs: Sequence[tuple]) -> list: ...

STOPPED_BY_DEADLINE = "deadline"
STOPPED_BY_ITERATIONS = "iterations"


@dataclass(frozen=True)
class Budget:
    """A search budget: ``seconds`` from ``started_at`` on ``clock``, a work cap, a seed.

    ``clock`` None: no deadline; the work is ``iterations`` or what ``seconds``
    buys at the measured rates (reproducible). ``seed`` diversifies every random
    choice of the engines (PyVRP's seed, OR-Tools' node renumbering).
    """

    seconds: float
    clock: Clock | None = field(default=None, compare=False, repr=False)
    started_at: float = 0.0
    seed: int = 0
    iterations: int | None = None
    # whether ``clock`` counts wall time: then an engine's own wall-clock limit (OR-Tools'
    # ``time_limit``) may enforce the deadline; with a CPU-time clock only this budget's checks can
    wall_clock: bool = True
    # the shell's phase recorder (``mark``): called with a phase's name when it ends, in the
    # planning process only (never in a forked lane); the bench times each phase's wall and CPU
    trace: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    # the shell's lane runner (``LaneRunner``): independent search lanes side by side; None: one after the other
    runner: LaneRunner | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not (isinstance(self.seconds, (int, float)) and math.isfinite(self.seconds) and self.seconds > 0):
            raise ValueError(f"a budget needs a positive, finite number of seconds, got {self.seconds!r}")
        if self.iterations is not None and int(self.iterations) < 1:
            raise ValueError(f"an iteration cap must be at least 1, got {self.iterations!r}")
        if int(self.seed) < 0:
            raise ValueError(f"a seed must be >= 0, got {self.seed!r}")

    @classmethod
    def deadline(cls, seconds: float, clock: Clock, *, started_at: float | None = None, seed: int = 0,
                 iterations: int | None = None, wall_clock: bool = True,
                 trace: Callable[[str], None] | None = None, runner: LaneRunner | None = None) -> Budget:
        """``seconds`` from ``started_at`` (default: now on ``clock``), the work cap optional."""
        start = float(clock() if started_at is None else started_at)
        return cls(float(seconds), clock, start, int(seed), iterations, wall_clock, trace, runner)

    @classmethod
    def work(cls, seconds: float, *, seed: int = 0, iterations: int | None = None,
             trace: Callable[[str], None] | None = None, runner: LaneRunner | None = None) -> Budget:
        """No deadline: the work ``seconds`` buys at the measured rates, or ``iterations``."""
        return cls(float(seconds), None, 0.0, int(seed), iterations, True, trace, runner)

    @property
    def workers(self) -> int:
        """Search lanes that run side by side (the runner's workers; 1 without one)."""
        return max(1, int(self.runner.workers)) if self.runner is not None else 1

    def map_lanes(self, fn: Callable[..., Any], jobs: Sequence[tuple]) -> list:
        """``[fn(*job) for job in jobs]``, side by side on the shell's runner when there is one.

        The results never depend on the runner (work mode: the same routes with or without it).
        """
        if self.runner is not None and self.runner.workers > 1 and len(jobs) > 1:
            return list(self.runner.map(fn, jobs))
        return [fn(*job) for job in jobs]

    @property
    def timed(self) -> bool:
        """Whether a clock ends the search (deadline mode)."""
        return self.clock is not None

    def remaining_s(self) -> float:
        """Seconds left before the deadline (``inf`` without a clock; never negative)."""
        if self.clock is None:
            return math.inf
        return max(0.0, self.started_at + self.seconds - self.clock())

    def elapsed_s(self) -> float:
        """Seconds since planning started (0 without a clock)."""
        return 0.0 if self.clock is None else max(0.0, self.clock() - self.started_at)

    def mark(self, phase: str) -> None:
        """Tell the shell's recorder that ``phase`` just ended (nothing without one): the core reads no clock for it."""
        if self.trace is not None:
            self.trace(phase)

    def expired(self) -> bool:
        return self.remaining_s() <= 0.0

    def engine_time_limit_s(self, net_s: float) -> float:
        """The wall-clock limit to hand an engine: what is left on a wall clock, else ``net_s`` (a net only)."""
        if self.clock is not None and self.wall_clock:
            return max(1e-3, self.remaining_s())
        return max(1e-3, float(net_s))

    def share(self, fraction: float) -> Budget:
        """A budget for one phase: ``fraction`` of what is left now (of ``seconds`` without a clock).

        The phase's deadline comes earlier than this budget's, never later; its work
        (without a clock) is that fraction of the nominal seconds.
        """
        fraction = min(1.0, max(0.0, float(fraction)))
        if self.clock is None:
            return replace(self, seconds=max(1e-3, self.seconds * fraction))
        now = self.clock()
        left = max(0.0, self.started_at + self.seconds - now)
        return replace(self, seconds=max(1e-3, left * fraction), started_at=now)

    def with_seed(self, seed: int) -> Budget:
        return replace(self, seed=int(seed))

    def resumed(self, elapsed_s: float) -> Budget:
        """This budget in another process, ``elapsed_s`` into it, re-based on that process's clock.

        A forked search lane calls it: with a CPU-time clock (``wall_clock`` False: each
        process counts its own) the lane's deadline is then its own CPU seconds; a wall
        clock is the same in every process, so nothing changes — re-basing it would move
        the deadline of a job that waited in a worker's queue by its wait (the city's
        regions, three after each other on each core, overran their rounds by ~50 % so).
        A lane records no phases (its marks would stay in its process).
        """
        if self.clock is None or self.wall_clock:
            return replace(self, trace=None, runner=None)
        return replace(self, started_at=self.clock() - float(elapsed_s), trace=None, runner=None)

    def stop(self, iterations: int | None) -> DeadlineStop:
        """A PyVRP stopping criterion for this budget and a cap of ``iterations`` (None: no cap)."""
        return DeadlineStop(self, iterations)


class DeadlineStop:
    """PyVRP's stopping-criterion protocol (``__call__(best_cost) -> bool``) for a ``Budget``.

    Stops when the budget's deadline has passed or after ``iterations`` calls
    (PyVRP calls it once per iteration, ``IteratedLocalSearch.run``). Unlike
    ``pyvrp.stop.MaxRuntime``, whose clock starts at its first call (after PyVRP
    has built its neighbourhoods and its first solution), the deadline here is the
    planning's own: start-up counts. ``stopped_by`` says what ended the search.
    """

    def __init__(self, budget: Budget, iterations: int | None) -> None:
        self.budget = budget
        self.cap = None if iterations is None else max(1, int(iterations))
        self.calls = 0
        self.stopped_by = ""

    def __call__(self, best_cost: float) -> bool:
        del best_cost  # the criterion ignores the cost (PyVRP passes it)
        if self.cap is not None and self.calls >= self.cap:
            self.stopped_by = STOPPED_BY_ITERATIONS
            return True
        if self.budget.clock is not None and self.budget.expired():
            self.stopped_by = STOPPED_BY_DEADLINE
            return True
        self.calls += 1
        return False
