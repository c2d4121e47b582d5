"""The server's own answers, typed: what ``sortie server`` says that is not an ``Authority`` answer.

The Authority's answers are typed in ``flows.authority.results`` (one type per
shape, shared by the interface, both implementations and the routes). These are
the server's alone — its liveness (``/v1/health``), the record of a form input a
worker refused (``/v1/drafts/{id}/attempts``), one event of its feed
(``/v1/events``) and the control room's map and flights (``/v1/ops/map``,
``/v1/ops/flights``) — so they live with the server. TypedDicts for the same reasons
as the Authority's: a caller reads the JSON object the server sends, the JSON is
unchanged, and FastAPI validates a route's answer against its type and publishes
it in ``/openapi.json`` (the feed's events, sent as Server-Sent Events, are
checked by ``tests/server/test_typed_results.py``).
"""

# No ``from __future__ import annotations``: a TypedDict reads ``NotRequired`` from its evaluated annotations.

from typing import Any

from typing_extensions import NotRequired, TypedDict

__all__ = ["GateState", "SettlerState", "VehiclesServed", "HealthView", "AttemptRecorded", "FeedEvent", "OpsMap",
           "OpsFlight", "OpsFlights"]


class GateState(TypedDict):
    """The safety gate (``flows.server.gate``): whether reads pass now, how often it closed, how many waited."""

    open: bool
    closed: int
    held: int
    hold_max_s: int | float  # as configured: an int stays an int in the JSON


class SettlerState(TypedDict):
    """The settling of commands a crashed process left unanswered (``flows.server.rounds``): counts only."""

    rounds: int
    settled: int
    unsettled: int


class VehiclesServed(TypedDict):
    """Whether unsigned vehicles are allowed, and which drones are served unsigned now (None: the world is down)."""

    allow_unsigned: bool
    unsigned: list[str] | None


class HealthView(TypedDict):
    """``/v1/health``: liveness and counts, nobody's data (503 with the same body when the ledger is not the file)."""

    ok: bool
    integrity: str  # the full walk of the ledger: off | walking | ok | broken
    full_walk_s: int | float | None
    ledger: str  # "ok", or why the held ledger is not the file at its path
    event_streams: int
    safety_gate: GateState
    vehicles: VehiclesServed
    vehicle_commands: SettlerState | None


class AttemptRecorded(TypedDict):
    """``/v1/drafts/{id}/attempts``: a refused form input, recorded in the server's audit."""

    draft_id: str
    version: int
    recorded: bool
    mode: str
    identity: str
    server_time: str


class FeedEvent(TypedDict):
    """One event of ``/v1/events`` (the ``data`` of a Server-Sent Event): its type, the tenant it is for, and the
    fields of the result it is about that an event carries (``flows.server.kit.EVENT_FIELDS``, never a plan, a path
    or a token); a field the result did not have is absent."""

    type: str
    tenant: str | None
    draft_id: NotRequired[str]
    version: NotRequired[int]
    status: NotRequired[str]
    verdict: NotRequired[str]
    plan_hash: NotRequired[str]
    requested_by: NotRequired[str]
    draft_status: NotRequired[str]
    state: NotRequired[str]
    outcome: NotRequired[str]
    reason: NotRequired[str]
    changed: NotRequired[bool]
    first: NotRequired[bool]
    request_id: NotRequired[str]



class OpsMap(TypedDict):
    """``/v1/ops/map``: the map of the world for a person of some tenants (``flows.server.ops.map.ops_map``); its
    rows' geometry is the map's own (GeoJSON-like lists), typed loosely as the log's events are."""

    world: str
    attribution: str
    bounds: list[Any] | None  # [west, south, east, north]
    regions: list[dict[str, Any]]
    lanes: list[dict[str, Any]]
    zones: list[dict[str, Any]]
    docks: list[dict[str, Any]]


class OpsFlight(TypedDict):
    """One dispatched or flying draft on the control room's screen, with the track each of its drones flew."""

    draft_id: str
    version: int
    state: str | None
    tenant: str | None
    region_id: str | None
    mission_type: str | None
    requested_by: str | None
    request_text: str | None
    sorties: list[dict[str, Any]]
    drones: list[str]
    flown: dict[str, list[Any]]


class OpsFlights(TypedDict):
    """``/v1/ops/flights``: the caller's tenants' dispatched or flying drafts, newest first."""

    flights: list[OpsFlight]


for _shape in (GateState, SettlerState, VehiclesServed, HealthView, AttemptRecorded, FeedEvent, OpsMap, OpsFlight,
               OpsFlights):
    _shape.__pydantic_config__ = {"extra": "allow"}  # type: ignore[attr-defined]  # more keys pass through
