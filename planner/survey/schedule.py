"""How one survey plan spends its deadline, phase by phase.

Why: a deadline that only stops the order searches lets everything after them run past
it — the extra passes, their connections, the coverage measurement. Under a 1 s deadline
parcel_blocks_fresh (29 building holes) took 1.44 CPU s that way. So the plan's phases run
the necessary and cheap ones first (directions ranked by the estimate, the best one built,
its coverage checked) and the phases that only buy quality (more directions built in full,
the order searches, a second repaired candidate) take what is left once a **reserve** is
kept for what must still follow: the extra passes when no plan reaches the coverage target,
and the final measurement. The reserve is measured on this run's own work (how long the
first direction's connections and coverage took), not guessed in seconds, so it scales with
the area and with the machine.

Without a deadline (no budget, or a budget of fixed work) nothing is skipped or cut: the plan
does the fixed work it always did, and is reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from planner.routing.budget import Budget

__all__ = ["PhaseClock", "POLL_EVERY"]

# the routing solver asks its limit at every decision (~10⁵ times a second); reading the clock
# each time cost about a third of a guided-local-search run: the solver's check reads it every POLL_EVERY
POLL_EVERY = 16


@dataclass
class PhaseClock:
    """Seconds left before the plan's deadline, less a reserve for the phases still to come."""

    remaining: Callable[[], float] | None = None  # seconds to the deadline; None: no deadline
    reserve_s: float = 0.0  # kept back for the phases that must follow the current one
    cut: bool = False  # some phase was skipped or stopped by the deadline (the plan says so)

    @classmethod
    def of(cls, budget: Budget | None) -> PhaseClock:
        """The clock of a plan's budget: a deadline when the budget has one, else no limit."""
        return cls(budget.remaining_s if budget is not None and budget.timed else None)

    @property
    def timed(self) -> bool:
        return self.remaining is not None

    def left_s(self) -> float:
        """Seconds the current phase may still use (``inf`` without a deadline)."""
        return math.inf if self.remaining is None else self.remaining() - self.reserve_s

    def expired(self) -> bool:
        """Whether the current phase must stop now (and remember that a phase was cut)."""
        if self.left_s() > 0.0:
            return False
        self.cut = True
        return True

    def affords(self, cost_s: float) -> bool:
        """Whether an optional step of about ``cost_s`` fits before the reserve (else it is skipped)."""
        if self.left_s() >= cost_s:
            return True
        self.cut = True
        return False

    def polled(self) -> Callable[[], bool]:
        """``expired`` for the routing solver's limit: the clock read every ``POLL_EVERY``-th call."""
        calls = [0, False]

        def check() -> bool:
            calls[0] += 1
            if calls[0] % POLL_EVERY == 1 or calls[1]:
                calls[1] = self.expired()
            return bool(calls[1])

        return check
