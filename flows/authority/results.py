"""The shapes of the Authority's most used answers: one type each, shared by the interface, both implementations and
the server's routes.

Why TypedDicts: every caller — the CLI's renderers, the Prefect flows, the demo, the tests — reads an answer as the
JSON object the server sends (``out["draft_id"]``), and the server's JSON must not change; a TypedDict names that
object's keys and their types without changing what it is. At the boundary they are pydantic's: a route returns
``-> DraftView`` and FastAPI validates the answer against it before it goes out (a missing or mistyped key is a 500
there, not a surprise in a client), and the published OpenAPI schema says what each answer holds. Keys an answer
carries beyond these (a server's ``scopes`` on ``whoami``, ``resumed_run`` after a decision, what a later round
adds) pass through (``extra: allow``): the types say what is always there, never what may not be.

Only the server imports this module at run time (pydantic needs ``typing_extensions.TypedDict`` on Python 3.11,
whose import a client of the server does not pay); the interface and the clients name the types for the reader and
the type checker.
"""

# No ``from __future__ import annotations``: a TypedDict reads ``NotRequired`` from its evaluated annotations.

from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict

__all__ = ["Number", "Stamped", "SortieRow", "DraftView", "DraftList", "WhoAmI", "PendingView", "FleetRow", "FleetView",
           "DispatchView"]


#: a figure as the use case computed it: an int stays an int in the JSON (``float`` alone would write ``100.0``)
Number = int | float


class Stamped(TypedDict, total=False):
    """What every answer is stamped with (``flows.authority.session.Session.stamp``): who acted and how that was
    proven; a server adds its clock and the request's time."""

    mode: str  # local | server
    identity: str  # asserted | token | totp
    clock: str
    server_time: str


class SortieRow(TypedDict):
    """One sortie of a draft as the operator sees it (``flows.usecases.views.SortieSummary``)."""

    index: int
    drone: str
    dock: str
    start_at: str
    distance_m: Number
    duration_s: Number
    energy_wh: Number
    battery_fraction: Number


class DraftView(Stamped):
    """One draft version (``flows.usecases.views.DraftSummary``): what ``plan``, ``replan``, ``show``, ``answer``,
    ``approve`` and ``reject`` answer, and each row of ``drafts``."""

    draft_id: str
    version: int
    status: str
    state: str
    row_version: int
    plan_hash: str | None
    verdict: str
    findings: list[Any]
    sorties: list[SortieRow]
    missing: list[str]
    files: dict[str, str]
    tenant: str
    region_id: str | None
    requested_by: str
    request_text: str
    mission_type: str | None
    planned_for: str | None
    extractor: str | None
    world_name: str
    world_hash: str
    created_time: str
    versions: list[int]
    created: bool
    notes: dict[str, Any]
    coverage: dict[str, Any] | None
    clarifications: list[Any]
    request_id: str | None
    resumed_run: NotRequired[str | None]  # a decision: the waiting Prefect run it woke, if any


class DraftList(Stamped):
    """The drafts the caller sees, newest first (``drafts``)."""

    drafts: list[DraftView]


class WhoAmI(Stamped):
    """Who the caller is in the authority's world (``whoami``); through a server, also its token's scopes."""

    user: str
    roles: list[str]
    tenants: list[str]
    world: str
    policy: dict[str, Any]
    scopes: NotRequired[list[str]]
    token_id: NotRequired[str]
    expires: NotRequired[str | None]


class PendingView(Stamped):
    """What waits for a decision in the caller's tenants, soonest deadline first (``pending``)."""

    now: str
    count: int
    by_tenant: dict[str, Any]
    pending: list[dict[str, Any]]


class FleetRow(TypedDict, total=False):
    """One drone as the authority knows it (``flows.fleet.overlay.fleet_rows``): live from its vehicle, or the
    file's."""

    id: str
    tenant: str
    status: str
    battery_pct: Number | None
    position: Any
    mode: str | None
    armed: bool | None
    last_seen: str | None
    source: str
    fault: dict[str, Any] | None
    dock: str | None
    autopilot: str
    signed: bool | None


class FleetView(Stamped):
    """The fleet of the caller's tenants (``fleet``): ``live`` from a vehicle hub, else ``file``."""

    drones: list[FleetRow]
    source: Literal["live", "file"]
    world: str


class DispatchView(Stamped):
    """What a dispatch did (``flows.usecases.views.DispatchSummary``): a dry run, a new dispatch, or the first
    outcome of an earlier one."""

    draft_id: str
    version: int
    idempotency_key: str
    status: str
    first: bool
    dry_run: bool
    draft_status: str
    message: str
    checks: list[str]
    result: dict[str, Any] | None
    attempts: int
    files: dict[str, str]


for _shape in (Stamped, DraftView, DraftList, WhoAmI, PendingView, FleetRow, FleetView, DispatchView):
    _shape.__pydantic_config__ = {"extra": "allow"}  # type: ignore[attr-defined]  # more keys pass through
