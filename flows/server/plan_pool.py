"""The server's planning process: where plans are decided, so a recall never waits for OR-Tools.

OR-Tools' routing search holds the GIL for its whole call (1.5-2 s on the
demo world, measured: every other thread of the process stood still), so a
plan decided inside the server stalled every request in flight, the reserved
lane's included. ``PlanPool`` keeps ``workers`` processes (started with
``spawn``: never a fork of a process that holds a DuckDB connection and
threads) and ``run`` hands a decision to one of them
(``decide_here``: it loads the rule file the parent used, the
same bytes checked by sha256, and returns a refusal as plain values, since a
``SortieError`` with ``details`` does not survive pickling as itself) while the request's thread waits on
the result without the GIL. Recording the draft (ledger, files, map picture)
stays in the server. The processes are started, and their imports paid,
on a thread after the server answers its first request (``warm``).

A process that dies (killed, or a crash inside a solver) breaks the pool: the
request gets ``INTERNAL`` and the next one gets a fresh pool.

**A planning process dies with its server** (issue 38: after SIGTERM or
SIGKILL of the server, the planning process and multiprocessing's resource
tracker lived on, ~380 MB each restart). Each process watches its parent
(``_die_with_parent``: its parent's pid, looked at every ``PARENT_POLL_S``)
and exits when the parent is gone, however it ended; the resource tracker
exits when the last process holding its pipe does. Why not
``PR_SET_PDEATHSIG``: it fires when the *thread* that started the process
ends, and these processes are started from a short-lived warm-up thread.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from planner.errors import InvalidArgument, SortieError

__all__ = ["PlanPool", "decide_here", "raise_refusal", "PARENT_POLL_S"]

_log = logging.getLogger("sortie.server")
#: How often a planning process looks whether its server is still its parent.
PARENT_POLL_S = 0.5


def _die_with_parent(parent: int) -> None:
    """In a planning process: exit as soon as ``parent`` (the server) is not its parent any more."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(0)  # the server is gone: nothing here may outlive it, nor be waited for

    threading.Thread(target=watch, name="sortie-plan-parent-watch", daemon=True).start()


@functools.lru_cache(maxsize=4)
def _rules(source: str, sha256: str) -> Any:
    from flows.rule_file import load_rules

    rules = load_rules(source)
    if rules.sha256 != sha256:
        raise InvalidArgument(f"the rule file {source} changed while a plan was being made: plan again")
    return rules


def decide_here(req: Any, extraction: Any, area: Any, world: Any, rules_source: str, rules_sha256: str, now: Any,
                first_version: int, budget: Any = None) -> tuple[Any, ...]:
    """The decision in this process: ``("ok", rows, reasons, plans)`` or ``("refused", module, class, message,
    details)``. ``budget``: the server's (its deadline on the shared monotonic clock, its seed and work cap)."""
    from flows.usecases.drafting import draft_versions

    try:
        rows, reasons, plans = draft_versions(req, extraction, area, world, _rules(rules_source, rules_sha256), now,
                                              first_version, budget)
    except SortieError as exc:
        return ("refused", type(exc).__module__, type(exc).__qualname__, exc.message, exc.details)
    return ("ok", rows, reasons, plans)


def raise_refusal(module: str, name: str, message: str, details: Any) -> None:
    """Raise the refusal ``decide_here`` returned, as its own class."""
    cls = getattr(importlib.import_module(module), name, None)
    if not (isinstance(cls, type) and issubclass(cls, SortieError)):
        cls = SortieError
    raise cls(message, details=details)


def _warm() -> bool:
    """Import what a decision needs (run once in each new process)."""
    import flows.usecases.drafting  # noqa: F401
    import planner.mission  # noqa: F401
    import rules.evaluate  # noqa: F401

    return True


class PlanPool:
    """``workers`` planning processes behind one ``run`` (thread-safe)."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, int(workers))
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self.decisions = 0

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                import multiprocessing

                self._pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_die_with_parent, initargs=(os.getpid(),))
            return self._pool

    def warm(self) -> None:
        """Start the processes and import the planner in them now, on a thread (the server answers meanwhile)."""
        def go() -> None:
            try:
                pool = self._executor()
                for f in [pool.submit(_warm) for _ in range(self.workers)]:
                    f.result(timeout=300)
            except Exception as exc:  # noqa: BLE001 - a failed warm-up only means the first plan starts them
                _log.warning("the planning processes did not start ahead: %s", exc)

        threading.Thread(target=go, name="sortie-plan-pool-warm", daemon=True).start()

    def run(self, req: Any, extraction: Any, area: Any, world: Any, rules: Any, now: Any,
            first_version: int, budget: Any = None) -> tuple[Any, Any, Any]:
        """``drafting.draft_versions`` decided in a planning process (its refusal raised here as itself).

        The budget crosses with its start: a wall-clock deadline counts from when the server started planning
        (``Budget.resumed``: the monotonic clock is the machine's), the seed and the work cap are the same. Without
        it the process planned every request at the nominal fixed work, whatever ``SORTIE_PLAN_BUDGET_S``,
        ``SORTIE_PLAN_SEED`` or ``SORTIE_PLAN_ITERATIONS`` said, and searched on where the embedded mode stops.
        """
        handed = None if budget is None else budget.resumed(budget.elapsed_s())
        pool = self._executor()
        try:
            out = pool.submit(decide_here, req, extraction, area, world, rules.source, rules.sha256, now,
                              first_version, handed).result()
        except BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        self.decisions += 1
        if out[0] == "refused":
            raise_refusal(*out[1:])
        return out[1], out[2], out[3]

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
