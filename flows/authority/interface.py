"""``Authority``: every user action a client can ask of sortie, one method each.

Why one interface: the CLI, every Prefect task and the demo ask the same
questions whether sortie runs embedded (``flows.authority.local``: the ledger
and the use cases in this process, identity *asserted*) or behind ``sortie
server`` (``flows.authority.remote``: its HTTP API, identity proven by the
token). Both implementations return the same JSON-able dicts and raise the
same coded ``SortieError``s, so a caller cannot tell which it has except by
``mode`` ("local" | "server"). Which one is chosen in one place:
``flows.authority.choice.authority``.

Some callers relay for someone else (a Prefect worker runs a form or a flow for
an operator). The rule is the same in both modes: ``on_behalf_of`` names the
person; the embedded authority acts as them (asserted, like every local
identity); a server records a plan as requested by them (a service token's
privilege, audited), needs their one-time code for a decision and for a
pause, resume or recall (``Relay``: judged at the moment they submitted it),
and acts as the token's own user for everything else (dispatch, expiry,
cancel), which must then hold the role.

A request that needs clarification is kept open (``plan`` refuses with
``NEEDS_CLARIFICATION`` naming it); ``answer`` answers its questions as the
acting user — or, relayed from a shared screen (the Prefect clarification
form), as the person a ``Relay`` names (a server proves them by their one-time
code) — and plans it, and ``expire_request`` closes one whose wait is over
(the caller's own deadline honoured only where the caller is the authority).

Where the two modes differ by nature, the difference is the authority's to
state, never the caller's to find out: ``dispatch_refusal`` says whether a
dispatch after an approval could fly (the embedded authority dispatches as a
named user and checks their role; a server dispatches as its token's user and
checks that itself), ``run_cancelled`` withdraws a version whose waiting Prefect
run was cancelled in the UI (the embedded authority records the run as the
actor; a server cancels as the worker's token, role-checked),
``wall_deadline`` gives a version's decision deadline only
where the authority stamps with this machine's clock, ``expire`` honours a caller's own deadline only where the
caller is the authority, ``record_attempt`` keeps what a client refused
before asking (a server is sent it for its audit; it audits everything that
reaches it anyway), and a server
reaches each vehicle at its own record of the link address (a ``link`` for
``monitor``, ``reconcile`` or ``launch`` is refused; one for ``dispatch``,
``pause``, ``resume`` or ``recall`` must match the record).

``fleet`` is the fleet as the authority knows it: a server's vehicle hub holds
one link per drone and reports each vehicle's own state (``source: live``); the
embedded authority holds no links and reports the world file (``source: file``).

A launch is its own step (nothing flies until a ground station launches it):
``launch`` checks each vehicle and runs its arm-and-start sequence, as
``sortie launch`` and ``POST /v1/drafts/{id}/launch``; a server launches as
its token's user, who must hold the dispatcher role, like a dispatch.
``monitor(launch_as=…)`` is the step the Prefect ``monitor-mission`` run and
the demo take at the planned start: the embedded authority launches through
the very links its follower watches (``flows.usecases.flying``: a real
autopilot serves one client per TCP port); a server launches, then follows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from flows.actor import Actor, Policy
from flows.vehicle.linkspec import parse_links

if TYPE_CHECKING:  # the answers' shapes (flows.authority.results: pydantic's at the server, names here)
    from flows.authority.results import (BackupView, ControlView, DiffView, DispatchView, DraftList, DraftView,
                                         ExportView, ExpiryView, FleetView, HeldCleared, LogView, MonitorView,
                                         PendingView, ReconcileView, ReportView, RequestExpiry, RequestView,
                                         VehicleHolds, WhoAmI)

__all__ = ["Authority", "Relay", "MonitorRequest", "Links", "Actor", "Policy", "parse_links"]

#: A drone's MAVLink connection string, or one per drone id (``parse_links`` reads ``--link`` values). Who acts
#: (``Actor``: id, mode, how it was proven) and the approval ``Policy`` are the authority's terms, re-exported here
#: for its callers (the server, the CLI), which reach nothing of the use cases themselves.
Links = str | Mapping[str, str] | None
#: Published ledger anchors a backup must still hold: (where it came from, the signed checkpoint's JSON).
Anchors = Sequence[tuple[str, Mapping[str, Any]]]


@dataclass(frozen=True)
class Relay:
    """An action relayed from a shared screen (the Prefect approval form, a deployment started from the UI): who
    acts, their one-time code, and when they submitted it there (Prefect's own record of the submission).

    The embedded authority takes ``user`` as asserted; a server verifies ``code`` at ``submitted_at`` (bounded by
    its own clock) and refuses without one."""

    user: str
    code: str | None = None
    submitted_at: datetime | None = None


@dataclass(frozen=True)
class MonitorRequest:
    """How to follow a flight: bounds of the watch and of a silent link, the battery alert margin."""

    timeout_s: float = 600.0
    link_lost_s: float = 5.0
    battery_margin_pct: float = 10.0


@runtime_checkable
class Authority(Protocol):
    """One method per user action. Every result is a JSON-able dict stamped ``mode`` and ``identity``, of the type
    its method names (``flows.authority.results``)."""

    mode: str

    # -- who, what waits
    def whoami(self) -> WhoAmI: ...
    def pending(self) -> PendingView: ...
    def fleet(self) -> FleetView: ...

    # -- planning and reading
    def plan(self, text: str, *, region_id: str | None = None, area: Any = None,
             coverage_target: float | None = None, on_behalf_of: str | None = None) -> DraftView: ...
    def replan(self, draft_id: str) -> DraftView: ...
    def drafts(self, limit: int = 50) -> DraftList: ...
    def show(self, draft_id: str, version: int | None = None) -> DraftView: ...
    def diff(self, draft_id: str, v1: int, v2: int) -> DiffView: ...
    def log(self, draft_id: str) -> LogView: ...
    def export(self, draft_id: str, fmt: str, *, version: int | None = None, out: Path | None = None,
               sortie: int = 0) -> ExportView: ...
    def report(self, draft_id: str, version: int | None = None, *, out: Path | None = None) -> ReportView: ...

    # -- open requests: a request that needs clarification, answered later (flows.usecases.requests)
    def request(self, request_id: str) -> RequestView: ...
    def answer(self, request_id: str, answers: Sequence[str], *, relay: Relay | None = None) -> DraftView: ...
    def expire_request(self, request_id: str, *, deadline: datetime | None = None,
                       on_behalf_of: str | None = None) -> RequestExpiry: ...

    # -- deciding (each wakes the Prefect run waiting on the version)
    def approve(self, draft_id: str, version: int, *, plan_hash: str | None = None, comment: str = "",
                relay: Relay | None = None) -> DraftView: ...
    def reject(self, draft_id: str, version: int, *, reason: str, relay: Relay | None = None) -> DraftView: ...
    def expire(self, draft_id: str, version: int, *, deadline: datetime | None = None,
               on_behalf_of: str | None = None) -> ExpiryView: ...
    def cancel(self, draft_id: str, *, reason: str, version: int | None = None) -> ControlView: ...
    def run_cancelled(self, draft_id: str, version: int, *, run_id: str) -> ControlView: ...
    def record_attempt(self, draft_id: str, version: int, *, command: str, actor: str, args: Mapping[str, Any],
                       code: str, message: str | None) -> None: ...
    def wall_deadline(self, draft_id: str, version: int) -> datetime | None: ...

    # -- sending and flying
    def dispatch_refusal(self, draft_id: str, version: int, user: str | None, *,
                         approving: bool = False) -> str | None: ...
    def dispatch(self, draft_id: str, version: int | None = None, *, link: Links = None, dry_run: bool = False,
                 on_behalf_of: str | None = None) -> DispatchView: ...
    def reconcile(self, draft_id: str, *, link: Links = None, timeout_s: float = 30.0) -> ReconcileView: ...
    def read_vehicle(self, drone_id: str | None = None, *, link: str | None = None,
                     timeout_s: float = 30.0) -> VehicleHolds: ...
    def clear_held(self, drone_id: str, *, reason: str) -> HeldCleared: ...
    def launch(self, draft_id: str, version: int | None = None, *, link: Links = None, prearm_wait_s: float = 90.0,
               on_behalf_of: str | None = None) -> ControlView: ...
    def monitor(self, draft_id: str, version: int | None = None, *, request: MonitorRequest = MonitorRequest(),
                link: Links = None, on_behalf_of: str | None = None,
                on_update: Callable[[Any, str, dict[str, Any]], None] | None = None,
                launch_as: str | None = None,
                on_launched: Callable[[dict[str, Any]], None] | None = None) -> MonitorView: ...
    def pause(self, draft_id: str, version: int | None = None, *, reason: str = "",
              link: Links = None, relay: Relay | None = None, force: bool = False) -> ControlView: ...
    def resume(self, draft_id: str, version: int | None = None, *, reason: str = "",
               link: Links = None, relay: Relay | None = None) -> ControlView: ...
    def recall(self, draft_id: str, version: int | None = None, *, land_here: bool = False, reason: str = "",
               link: Links = None, wait_s: float = 0.0, relay: Relay | None = None) -> ControlView: ...

    # -- the record itself, and what happens
    def ledger_backup(self, dest: Path, against: Anchors = ()) -> BackupView: ...
    def events(self, *, max_events: int | None = None, timeout_s: float | None = None) -> Iterator[dict[str, Any]]: ...
