"""Where a plan's decision runs: in this process, or in another process the caller provides.

Why: the decision of a plan (``drafting.draft_versions``: the planner and the
rules over every candidate fleet) spends most of its time inside OR-Tools'
routing search, which holds Python's GIL for the whole call — 1.5 to 2 s on
the demo world on this machine kind. In the CLI that is nobody's business; in
``sortie server`` every other thread of the process stood still meanwhile,
a recall included (issue 27: measured, a thread that sleeps 1 ms woke after
2.0 s). So the server decides plans in a process of its own
(``flows.server.plan_pool``) and records them in its own, where the ledger is.

``deciding_with(runner)`` sets, for the calls inside the block (this
thread's context), who decides; ``draft_versions`` asks ``runner()`` and
hands over its arguments. The other process's side is
``flows.server.plan_pool.decide_here`` (kept there: this module imports
nothing of the use cases, so ``drafting`` can import it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["deciding_with", "runner"]

Runner = Callable[..., Any]
_RUNNER: ContextVar[Runner | None] = ContextVar("sortie_decision_runner", default=None)


@contextmanager
def deciding_with(run: Runner | None) -> Iterator[None]:
    """Inside the block, a plan's decision is ``run(req, extraction, area, world, rules, now, first_version, budget)``
    (``budget``: the caller's ``planner.routing.budget.Budget`` or None; the deadline, seed and work cap the
    operator set hold wherever the plan is decided)."""
    token = _RUNNER.set(run)
    try:
        yield
    finally:
        _RUNNER.reset(token)


def runner() -> Runner | None:
    return _RUNNER.get()
