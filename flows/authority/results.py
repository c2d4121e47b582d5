"""The shapes of the Authority's answers: one type per shape (the controls — cancel, launch, pause, resume, recall —
share ``ControlView``), named by the interface and both implementations and returned by the server's routes.

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
           "DispatchView", "DiffView", "LogView", "ExportView", "ExportSent", "ReportView", "RequestView",
           "RequestExpiry", "ExpiryView", "ControlView", "ReconcileView", "VehicleHolds", "HeldCleared", "MonitorView",
           "FollowView", "BackupView"]


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


# ---------------------------------------------------------------------------------------------------- reading a draft

#: What changed between two versions (``flows.usecases.drafting.diff``): ``from``/``to`` are the versions compared, and
#: each figure's ``{"from", "to"}``. Written as a call, not a class: ``from`` is a Python keyword.
DiffView = TypedDict("DiffView", {
    "draft_id": str,
    "from": int,
    "to": int,
    "changes": dict[str, dict[str, Any]],  # per field that changed (status, plan_hash, verdict, …): {"from", "to"}
    "sorties_added": list[dict[str, Any]],
    "sorties_removed": list[dict[str, Any]],
    "sorties_changed": list[dict[str, Any]],  # {"sortie", "from", "to"}
    "findings_added": list[list[Any]],  # (rule_id, sortie_index, leg_index, zone_id)
    "findings_removed": list[list[Any]],
    "distance_m": dict[str, Number],
    "energy_wh": dict[str, Number],
    "mode": NotRequired[str], "identity": NotRequired[str], "clock": NotRequired[str],  # Stamped's, spelled out
    "server_time": NotRequired[str],
})


class LogView(Stamped):
    """Every event, approval and dispatch of a draft, in order (``flows.usecases.reading.draft_log``)."""

    draft_id: str
    events: list[dict[str, Any]]
    approvals: list[dict[str, Any]]
    dispatches: list[dict[str, Any]]


class ExportView(Stamped):
    """A version's ground-station file, written where ``path`` says (``flows.usecases.reading.export``; through a
    server, the client writes the bytes it was sent and keeps the server's ``suffix`` too)."""

    draft_id: str
    version: int
    format: str
    path: str
    bytes: int


class ExportSent(Stamped):
    """What ``GET /v1/drafts/{id}/export`` sends: the file's bytes as base64 (the client writes them: ``ExportView``)."""

    draft_id: str
    version: int
    format: str
    suffix: str
    bytes: int
    content_b64: str


class ReportView(Stamped):
    """The inspector's report of a version (``flows.usecases.report.Report``) and its map as base64 (None: no map);
    a client that keeps a copy says where (``files``) and keeps the server's as ``server_files``."""

    draft_id: str
    version: int
    state: str
    markdown: str
    data: dict[str, Any]
    files: dict[str, str]
    map_png_b64: str | None


# ---------------------------------------------------------------------------------------------------- open requests

class RequestView(Stamped):
    """An open request (``flows.usecases.requests.show``): its questions, every answer and turn, the draft it planned;
    ``answer_with`` only while it can be answered."""

    request_id: str
    turn: int
    state: str
    tenant: str
    region_id: str | None
    requested_by: str
    request_text: str
    questions: list[dict[str, Any]]
    answers: list[dict[str, Any]]
    created_time: str
    expires_time: str
    draft_id: str | None
    read_at: str | None
    world_name: str | None
    extractor: str | None
    turns: list[dict[str, Any]]
    answer_with: NotRequired[str]


class RequestExpiry(Stamped):
    """An open request's state after ``expire_request``: EXPIRED once its wait is over, else as it was."""

    request_id: str
    state: str
    turn: int
    draft_id: str | None
    expires_time: str
    tenant: str


# ---------------------------------------------------------------------------------------------------- deciding, flying

class ExpiryView(Stamped):
    """A version's state after ``expire`` (EXPIRED once overdue) and, when it expired now, the run it woke."""

    draft_id: str
    version: int
    status: str
    resumed_run: NotRequired[str | None]


class ControlView(Stamped):
    """What one control did (``flows.usecases.control_kit.ControlResult``): ``cancel``, ``run_cancelled``, ``launch``,
    ``pause``, ``resume``, ``recall`` — the ledger state after it and, where vehicles were commanded, what each was
    sent and seen. Only what every control always says is required: the flight use cases add keys as they grow."""

    draft_id: str
    version: int
    action: str
    state: str
    changed: bool
    message: str
    vehicles: NotRequired[list[dict[str, Any]]]  # not for a withdrawn run (run_cancelled)
    run_id: NotRequired[str | None]
    outcome: NotRequired[str]  # a named end other than the action done: NOT_STARTED (a recall before take-off)


class ReconcileView(Stamped):
    """What reading an unsettled dispatch back settled (``flows.usecases.reconciling``): the dispatch, the draft's
    state, the read-back's verdict (None: nothing was read), and the drones released when they were bound anew."""

    draft_id: str
    version: int
    idempotency_key: str
    status: str
    draft_status: str
    message: str
    verify: dict[str, Any] | None
    released: NotRequired[list[str]]


class VehicleHolds(Stamped):
    """What a vehicle holds, read back (``flows.usecases.reconciling.vehicle_holds``): items per mission type."""

    drone_id: str | None
    link: str
    vehicle: dict[str, Any]
    missions: dict[str, list[dict[str, Any]]]


class HeldCleared(Stamped):
    """A drone released after foreign control (``flows.fleet.hub``): by whom, why, and the intrusion it was held for."""

    drone_id: str
    by: str
    reason: str
    intrusion: dict[str, Any]


class MonitorView(Stamped):
    """How a followed flight ended (``flows.vehicle.flight_record.MonitorResult``), per vehicle under ``flights``; with
    a launch first, the launch's answer (a ``ControlView``, or ``{"error": …}``) under ``launch``. ``version`` is None
    only where a server refused the launch of an unnamed version (nothing was followed)."""

    draft_id: str
    version: int | None
    outcome: str
    state: str
    reason: str
    flights: list[dict[str, Any]]
    wall_s: NotRequired[Number]
    already_ended: NotRequired[bool]
    flight_file: NotRequired[str]
    launch: NotRequired[dict[str, Any]]


class FollowView(Stamped):
    """What ``POST /v1/drafts/{id}/monitor`` answers: the server's follower of the flight (``started`` by this request
    or joined), still ``following`` or ended with its ``result`` (or ``error``), and the version's state now."""

    draft_id: str
    version: int
    started: bool
    following: bool
    result: MonitorView | None
    error: dict[str, Any] | None
    state: str


# ---------------------------------------------------------------------------------------------------- the record itself

class BackupView(Stamped):
    """A verified copy of the ledger (``flows.integrity.backup.backup``): its manifest, where it is, the signed
    checkpoint (None: an empty ledger); through a server the copy's files as base64 (``files``), and the client keeps
    the server's folder as ``server_dir``."""

    format: str
    created_at: str
    source: str
    file: str
    sha256: str
    bytes: int
    entries: int
    head_seq: int
    head_hash: str
    ledger_id: str | None
    key_id: str | None
    dir: str
    verified: bool
    anchor: dict[str, Any] | None
    files: NotRequired[dict[str, str]]


for _shape in (Stamped, DraftView, DraftList, WhoAmI, PendingView, FleetRow, FleetView, DispatchView, DiffView, LogView,
               ExportView, ExportSent, ReportView, RequestView, RequestExpiry, ExpiryView, ControlView, ReconcileView,
               VehicleHolds, HeldCleared, MonitorView, FollowView, BackupView):
    _shape.__pydantic_config__ = {"extra": "allow"}  # type: ignore[attr-defined]  # more keys pass through
