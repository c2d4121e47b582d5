"""The authority's own rounds: expire what is overdue (drafts, open requests), and withdraw what was cancelled in the
Prefect UI.

Why the authority does it: a deadline is the authority's (its clock, its
policy), so nothing may depend on a worker's timer having run — a draft nobody
decided used to stay DRAFT forever ("overdue 67 h" in ``sortie pending``)
when no ``expire-draft`` run existed or its worker was down. And cancelling a
run in the Prefect UI only changes Prefect's state: a suspended run has no
process to run an ``on_cancellation`` hook (Prefect moves a Suspended run
straight to Cancelled: ``BypassCancellingFlowRunsWithNoInfra`` in
``prefect/server/orchestration/core_policy.py``), so the authority watches the
runs that wait on a version (tag ``sortie-approval``) and withdraws a version
whose run was cancelled there (Prefect's own state name "Cancelled" or
"Cancelling"; a run's named ends — REJECTED, EXPIRED, CANCELLED … — are
sortie's and never count).

:class:`Sweeper` runs :func:`sweep` every ``period_s`` on a thread of a
long-lived authority process: ``sortie server`` (its clock, policy and ledger)
or ``sortie serve`` in the embedded mode. Each expiry wakes the waiting run
(``LocalAuthority.expire``) and retires its ``expire-draft`` run. Withdrawing a
cancelled run's version acts for nobody in particular: Prefect OSS records no
user, so the event's actor names the run (``prefect:run <id>``) and says it was
cancelled in Prefect — the safe direction (nothing flies), which docs/server.md
weighs.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from flows.authority.prefect_api import prefect_api_url
from flows.authority.waking import APPROVAL_TAG
from flows.ledger.approvals import decide_by
from planner.errors import SortieError

__all__ = ["Sweeper", "SweepReport", "sweep", "cancelled_runs", "version_of_tags", "embedded_sweeper",
           "SWEEPER_ACTOR", "PREFECT_CANCEL_NAMES"]

log = logging.getLogger(__name__)

SWEEPER_ACTOR = "authority:sweeper"
#: The names Prefect gives a run cancelled from its UI or API (sortie's own ends are upper case).
PREFECT_CANCEL_NAMES = ("Cancelled", "Cancelling")
_WAITING = ("DRAFT", "WAITING_RESOURCE")


@dataclass
class SweepReport:
    """What one round did: versions expired, versions withdrawn after their run was cancelled in Prefect, open
    requests expired."""

    expired: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    requests_expired: list[str] = field(default_factory=list)


def version_of_tags(tags: list[str]) -> tuple[str, int] | None:
    """The draft version a run's tags name (``draft:<id>:v<n>``, ``flows.authority.waking.draft_tags``), or None."""
    for t in tags:
        if t.startswith("draft:") and ":v" in t[6:]:
            draft_id, _, v = t[6:].rpartition(":v")
            if v.isdigit():
                return draft_id, int(v)
    return None


def cancelled_runs(limit: int = 50) -> list[tuple[str, int, str]]:
    """(draft id, version, run id) of the newest runs waiting on a version that Prefect cancelled; [] without an API."""
    if prefect_api_url() is None:
        return []
    from prefect import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateName,
        FlowRunFilterTags,
    )
    from prefect.client.schemas.sorting import FlowRunSort

    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
            tags=FlowRunFilterTags(all_=[APPROVAL_TAG]),
            state=FlowRunFilterState(name=FlowRunFilterStateName(any_=list(PREFECT_CANCEL_NAMES))),
        ), sort=FlowRunSort.EXPECTED_START_TIME_DESC, limit=limit)
    out = []
    for run in runs:
        found = version_of_tags(list(run.tags or []))
        if found is not None:
            out.append((found[0], found[1], str(run.id)))
    return out


def sweep(authority: Any, *, now: datetime, window: Any, seen: set[str] | None = None,
          publish: Callable[[str, dict[str, Any]], None] | None = None) -> SweepReport:
    """One round on ``authority`` (a ``LocalAuthority`` over the ledger, acting as the sweeper) at ``now``.

    ``window`` is the policy's approval window; ``seen`` the run ids already handled (a round skips them);
    ``publish(type, result)`` tells the authority's event feed.
    """
    report = SweepReport()
    for closed in authority.expire_overdue_requests():  # open requests nobody answered in time
        report.requests_expired.append(closed["request_id"])
        if publish is not None:
            publish("request.expired", closed)
    ledger = authority.grounds.ledger
    for rec in ledger.list_drafts(limit=100_000):
        if rec.state in _WAITING and now >= decide_by(rec, window):
            out = authority.expire(rec.draft_id, rec.version)
            if out.get("status") == "EXPIRED":
                report.expired.append(f"{rec.draft_id} v{rec.version}")
                if publish is not None:
                    publish("draft.expired", out)
    try:
        runs = cancelled_runs()
    except Exception as exc:  # noqa: BLE001 - Prefect down: the next round looks again
        log.warning("could not read cancelled runs from Prefect: %s", exc)
        runs = []
    for draft_id, version, run_id in runs:
        if seen is not None and run_id in seen:
            continue
        try:
            out = authority.run_cancelled(draft_id, version, run_id=run_id)
        except SortieError as exc:  # a draft of another ledger, or gone: nothing of ours to withdraw
            if exc.code == "LEDGER_UNAVAILABLE":
                continue  # a busy ledger: the next round tries again
            log.info("cancelled run %s of %s v%s: %s", run_id, draft_id, version, exc)
            out = {"changed": False}
        if seen is not None:
            seen.add(run_id)
        if out.get("changed"):
            report.cancelled.append(f"{draft_id} v{version}")
            if publish is not None:
                publish("draft.cancelled", out)
    return report


class Sweeper:
    """``sweep`` every ``period_s`` on a daemon thread; ``make()`` gives (authority, now, window) for each round."""

    def __init__(self, make: Callable[[], tuple[Any, datetime, Any]], *, period_s: float = 10.0,
                 publish: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        self.make, self.period_s, self.publish = make, float(period_s), publish
        self.seen: set[str] = set()
        self.rounds = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> Sweeper:
        if self.period_s > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="sortie-sweeper", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)

    def round(self) -> SweepReport:
        authority, now, window = self.make()
        report = sweep(authority, now=now, window=window, seen=self.seen, publish=self.publish)
        self.rounds += 1
        if report.expired or report.cancelled or report.requests_expired:
            log.info("sweep: expired %s; withdrawn after a cancel in Prefect %s; open requests expired %s",
                     report.expired, report.cancelled, report.requests_expired)
        return report

    def _loop(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.round()
            except Exception as exc:  # noqa: BLE001 - one bad round (a locked ledger) must not end the rounds
                log.warning("sweep failed: %s", exc)


def embedded_sweeper(period_s: float = 10.0) -> Sweeper | None:
    """The embedded mode's rounds for a long-lived process (``sortie serve``) on ``SORTIE_HOME``'s ledger, this
    machine's clock and the local policy, started; None with ``SORTIE_SERVER`` (the server keeps its own)."""
    from datetime import timezone

    from flows.authority.local import LocalAuthority
    from flows.authority.overrides import server_url
    from flows.authority.session import Session, local_policy
    from flows.authority.waking import Waker
    from flows.ledger import open_ledger
    from flows.actor import Actor
    from flows.usecases.grounds import Grounds

    if server_url() is not None or period_s <= 0:
        return None
    grounds, waker = Grounds(ledger=open_ledger().ensure()), Waker(report_wait_s=0.0)

    def make() -> tuple[Any, datetime, Any]:
        now, policy = datetime.now(timezone.utc), local_policy()
        return LocalAuthority(grounds, Session(actor=Actor(SWEEPER_ACTOR), now_given=now, policy=policy,
                                               waker=waker, audit_by="use case")), now, policy.approval_ttl

    return Sweeper(make, period_s=period_s).start()
