"""Dispatch: put an approved plan's missions on the vehicles, and say honestly what happened.

``upload_plan`` is what ``flows.usecases.dispatching.dispatch`` calls once the approval and
the idempotency claim are settled. Per drone it builds the fence, mission and
rally items (``planner.output.mission_items``), opens the drone's link (or the
``link`` override), and uploads fence first, then the mission, then the rally
points, each a separate transfer of the MAVLink mission protocol.

Outcomes, per transfer:

- ACCEPTED: the vehicle's final ack was seen.
- REJECTED: a NACK → ``DispatchFailed`` naming the MAV_MISSION_RESULT; nothing
  after it is uploaded.
- UNCERTAIN (every item went out but the answer was silence or anything
  other than ACCEPTED — ArduPilot's ERROR to a re-sent last item, a DENIED or
  CANCELLED for a finished transfer) or NO_ANSWER: the mission is read back
  and compared with the plan (±1 degE7, float32, seq 0 of ArduPilot is its
  home, unused params as 0). Equal → counted as accepted, "verified by
  download"; different after a NACK → ``DispatchFailed``; different after
  silence, or unreadable → ``DispatchUncertain``. Never a blind re-upload:
  ArduPilot writes items as they arrive, so a second upload could leave a mix
  behind and still look like success.

Partial uploads leave nothing behind: when an upload fails after an earlier
one of the same vehicle was accepted (or after ArduPilot wrote some items),
every mission type this dispatch touched is cleared (MISSION_CLEAR_ALL with
its mission_type), then fence, mission and rally are read back and the
result records exactly what the vehicle now holds (``holds``; None where it
could not be read). When the clearing is confirmed, an unknown outcome
becomes a known one: FAILED, the vehicle holds nothing of this dispatch.

Vehicles are bound (``VehicleBinding``): the fleet entry's MAVLink system id,
component id and autopilot must be the heartbeat's (``DeviceMismatch``
otherwise, nothing sent), and a drone with a signing key reference gets
every message signed with the key from the key store (``flows.vehicle.keys``).

After the fence, its altitude ceiling is set as autopilot parameters
(``FENCE_ALT_MAX`` / ``GF_MAX_VER_DIST``) and confirmed by the vehicle's echo;
an unconfirmed ceiling is ``DispatchUncertain``.

Every transfer is reported to ``on_attempt`` as it ends (so the ledger can
write it under the dispatch's idempotency key even when this raises) and
kept in the returned ``DispatchOutcome``; an error carries the outcome as
``details``. All loops are bounded by count and by the per-link ``timeout_s``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from flows.vehicle.binding import AUTOPILOT_DIALECT, DIALECT_AUTOPILOT, VehicleBinding, binding_for
from flows.vehicle.leftovers import leave_nothing_behind
from flows.vehicle.link import UPLOAD_STREAMS, VehicleLink, open_link
from flows.vehicle.vehicles import PER_CALL, Vehicles
from flows.vehicle.linkspec import check_links
from flows.vehicle.mission_client import MissionClient
from flows.vehicle.read_back import (  # read_back / verify_plan are re-exported: callers import them from here
    UPLOAD_ORDER,
    AttemptCallback,
    VerifyResult,
    first_sorties,
    link_for,
    read_back,
    verify_plan,
)
from flows.vehicle.transfer import Transfer
from flows.errors import DeviceMismatch, DeviceUnavailable, DispatchFailed, DispatchUncertain
from planner.errors import InvalidArgument
from planner.output.mission_items import (
    FENCE,
    MISSION_TYPE_NAMES,
    EndAction,
    MissionSet,
    mission_set,
)
from planner.output.mission_wire import compare_items
from planner.plan import Plan
from planner.world.model import World

__all__ = [
    "VehicleBinding",
    "binding_for",
    "UploadResult",
    "DispatchOutcome",
    "VerifyResult",
    "upload_plan",
    "upload_mission_set",
    "verify_plan",
    "read_back",
    "open_links",
    "UPLOAD_ORDER",
]


@dataclass
class UploadResult:
    """What happened on one vehicle: status, every attempt, and how it was settled."""

    drone_id: str
    sortie_index: int
    link: str
    dialect: str
    status: Literal["ACCEPTED", "FAILED", "UNCERTAIN", "UNREACHABLE"] = "UNCERTAIN"
    verified_by_download: tuple[str, ...] = ()
    counts: dict[str, int] = field(default_factory=dict)
    params_set: dict[str, float] = field(default_factory=dict)
    attempts: list[dict[str, Any]] = field(default_factory=list)
    detail: str = ""
    binding: dict[str, Any] = field(default_factory=dict)
    cleared: tuple[str, ...] = ()
    holds: dict[str, Any] | None = None
    left_nothing: bool = False  # a failed upload whose vehicle holds nothing of it (never reached, or cleared and read back)

    def to_dict(self) -> dict[str, Any]:
        return {
            "drone_id": self.drone_id,
            "sortie_index": self.sortie_index,
            "link": self.link,
            "dialect": self.dialect,
            "status": self.status,
            "verified_by_download": list(self.verified_by_download),
            "counts": dict(self.counts),
            "params_set": dict(self.params_set),
            "attempts": list(self.attempts),
            "detail": self.detail,
            "binding": dict(self.binding),
            "cleared": list(self.cleared),
            "holds": self.holds,
            "left_nothing": self.left_nothing,
        }


@dataclass
class DispatchOutcome:
    """The whole dispatch: ACCEPTED only when every vehicle's upload is."""

    status: Literal["ACCEPTED", "FAILED", "UNCERTAIN", "UNREACHABLE"]
    uploads: list[UploadResult]
    not_uploaded: list[dict[str, Any]] = field(default_factory=list)

    @property
    def attempts(self) -> list[dict[str, Any]]:
        return [a for u in self.uploads for a in u.attempts]

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            # True when no vehicle of this dispatch holds any part of it (ledger: the drones are free again)
            "vehicle_cleared": self.status != "ACCEPTED" and all(u.left_nothing for u in self.uploads),
            "uploads": [u.to_dict() for u in self.uploads],
            "not_uploaded": list(self.not_uploaded),
        }


def upload_plan(
    plan: Plan,
    world: World,
    *,
    link: str | Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    on_attempt: AttemptCallback | None = None,
    retry_s: float = 1.0,
    max_retries: int = 8,
    heartbeat_timeout_s: float = 5.0,
    end: EndAction = "land",
    key_store: Path | None = None,
    links: Mapping[str, VehicleLink] | None = None,
) -> DispatchOutcome:
    """Upload the plan's next sortie of every drone; ACCEPTED or raise.

    ``links``: already connected links per drone (the dispatch opens them before
    it claims, so a vehicle that does not answer leaves the draft dispatchable);
    a drone without one gets its link opened here (``flows.vehicle.link.open_link``).

    ``link`` overrides the drone's link from the world (a connection string when
    the plan flies one drone, or a mapping drone id → string). ``timeout_s``
    bounds each link's whole exchange (hello, three uploads, any read-back).

    Vehicles are uploaded one after the other and the first failure stops the
    dispatch; vehicles before it keep their accepted missions (each upload's
    status is in the outcome).

    Raises ``DispatchFailed`` (a NACK: its MAV_MISSION_RESULT is in the message),
    ``DispatchUncertain`` (no final ack and the read-back did not match or could
    not be made), ``DeviceUnavailable`` (no heartbeat), ``DeviceMismatch``
    (another vehicle answers): each with the outcome as ``details``;
    ``on_attempt`` has seen every attempt by then. ``key_store`` is where the
    drones' signing keys are (default SORTIE_HOME/keys).
    """
    if timeout_s <= 0:
        raise InvalidArgument("timeout_s must be > 0")
    if not plan.sorties:
        raise InvalidArgument("the plan has no sorties to dispatch")
    check_links((s.drone_id for s in plan.sorties), link)
    sorties, later = first_sorties(plan)
    outcome = DispatchOutcome(status="ACCEPTED", uploads=[], not_uploaded=later)
    bindings = {s.drone_id: binding_for(world.drone(s.drone_id), key_store) for s in sorties}
    for s in sorties:
        conn = link_for(s.drone_id, world, link, len(sorties))
        ms = mission_set(plan, s, world, end=end)
        result = UploadResult(drone_id=s.drone_id, sortie_index=s.index, link=conn, dialect=ms.dialect)
        outcome.uploads.append(result)
        given = (links or {}).get(s.drone_id)
        try:
            upload_mission_set(
                ms,
                given if given is not None else conn,
                result,
                timeout_s=timeout_s,
                on_attempt=on_attempt,
                retry_s=retry_s,
                max_retries=max_retries,
                heartbeat_timeout_s=heartbeat_timeout_s,
                binding=bindings[s.drone_id],
            )
        except (DispatchFailed, DispatchUncertain, DeviceUnavailable) as exc:  # DeviceMismatch is a DeviceUnavailable
            outcome.status = result.status
            raise type(exc)(exc.message, details=outcome.to_dict()) from None
    return outcome


def open_links(
    plan: Plan,
    world: World,
    *,
    link: str | Mapping[str, str] | None = None,
    key_store: Path | None = None,
    heartbeat_timeout_s: float = 5.0,
    vehicles: Vehicles = PER_CALL,
) -> dict[str, VehicleLink]:
    """Open and connect the link of every drone the plan flies first (hello, heartbeat, binding checked), and
    send nothing else; all or none (the ones opened are closed again when one fails).

    The dispatch calls this *before* it claims: a vehicle that does not answer (a TCP port another client
    holds, a signing mismatch, a vehicle that is down) then leaves the draft APPROVED and dispatchable, with the
    error naming the likely causes (``flows.vehicle.link.VehicleLink.silence_causes``). ``vehicles``: the
    authority's port (a held link is lent, ``flows.vehicle.vehicles``).
    """
    sorties, _ = first_sorties(plan)
    opened: dict[str, VehicleLink] = {}
    try:
        for s in sorties:
            conn = link_for(s.drone_id, world, link, len(sorties))
            binding = binding_for(world.drone(s.drone_id), key_store)
            opened[s.drone_id] = vehicles.open(conn, binding, streams=UPLOAD_STREAMS,
                                               heartbeat_timeout_s=heartbeat_timeout_s)
    except BaseException:
        for vl in opened.values():
            vl.close()
        raise
    return opened


def _set_ceiling(ml: MissionClient, ms: MissionSet, result: UploadResult, record: Any, deadline: float) -> None:
    """The fence's altitude ceiling as autopilot parameters, confirmed by echo (MAVLink fences are 2-D)."""
    if not ms.params:
        return
    tr = ml.set_params(ms.params, deadline)
    record("params", tr)
    if tr.outcome == "CONFIRMED":
        result.params_set = dict(ms.params)
    if tr.outcome != "CONFIRMED":
        result.status = "UNCERTAIN"
        result.detail = (
            f"{ms.drone_id}: the fence is uploaded but its altitude ceiling "
            f"({', '.join(f'{k}={v:g}' for k, v in sorted(ms.params.items()))}) was not confirmed ({tr.detail}); "
            "nothing after it was uploaded"
        )
        raise DispatchUncertain(result.detail)


def upload_mission_set(
    ms: MissionSet,
    conn: str | VehicleLink,
    result: UploadResult,
    *,
    timeout_s: float,
    on_attempt: AttemptCallback | None = None,
    retry_s: float = 1.0,
    max_retries: int = 8,
    heartbeat_timeout_s: float = 5.0,
    binding: VehicleBinding | None = None,
) -> UploadResult:
    """Fence, mission, rally to one vehicle over ``conn``; fills ``result`` and raises on failure.

    ``conn`` is a connection string (opened here with the binding, and closed
    after) or a connected ``VehicleLink`` (used as it is, left open). After the
    hello, the uploads may use 70 % of the time left; the rest is kept for a
    read-back (and, after a failure, the clearing), so an upload that used up
    its time can still be settled.
    """
    deadline = time.monotonic() + timeout_s
    if isinstance(conn, VehicleLink):
        binding = conn.binding
    binding = binding or VehicleBinding(autopilot=DIALECT_AUTOPILOT.get(ms.dialect))
    result.counts = {MISSION_TYPE_NAMES[t]: len(ms.items_of(t)) for t in UPLOAD_ORDER}
    result.binding = binding.to_dict()
    address = conn.connection if isinstance(conn, VehicleLink) else conn

    def record(kind: str, tr: Transfer | None, **extra: Any) -> None:
        entry: dict[str, Any] = {
            "attempt": len(result.attempts) + 1,
            "at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
            "drone_id": ms.drone_id,
            "sortie_index": ms.sortie_index,
            "link": address,
            "dialect": ms.dialect,
            "kind": kind,
        }
        if tr is not None:
            entry.update(tr.to_dict())
        entry.update(extra)
        result.attempts.append(entry)
        if on_attempt is not None:
            on_attempt(dict(entry))

    if isinstance(conn, VehicleLink):
        link, owned = conn, False
    else:
        try:
            link, owned = open_link(conn, binding, streams=UPLOAD_STREAMS, deadline=deadline,
                                    heartbeat_timeout_s=heartbeat_timeout_s), True
        except DeviceMismatch as exc:
            result.status, result.detail, result.left_nothing = "FAILED", f"{ms.drone_id}: {exc.message}", True
            record("hello", None, outcome="MISMATCH", detail=exc.message)
            raise DeviceMismatch(result.detail) from None
        except DeviceUnavailable as exc:
            result.status, result.detail, result.left_nothing = "UNREACHABLE", exc.message, True
            record("hello", None, outcome="NO_ANSWER", detail=exc.message)
            raise
    try:
        _upload_over(link, ms, result, record, deadline, retry_s=retry_s, max_retries=max_retries)
    finally:
        if owned:
            link.close()
    return result


def _upload_over(link: VehicleLink, ms: MissionSet, result: UploadResult, record: Any, deadline: float, *,
                 retry_s: float, max_retries: int) -> None:
    """Fence, mission, rally over a connected link (see ``upload_mission_set``)."""
    ml = MissionClient(link, retry_s=retry_s, max_retries=max_retries)
    seen = AUTOPILOT_DIALECT.get(link.autopilot or -1)
    record("hello", None, outcome="HEARTBEAT",
           detail=f"system {link.target_system} component {link.target_component} autopilot {link.autopilot}"
           + (" (signed)" if link.signed else ""))
    if seen is not None and seen != ms.dialect:
        result.status = "FAILED"
        result.detail = f"{ms.drone_id}: the vehicle reports a {seen} autopilot but the world says {ms.dialect}; nothing uploaded"
        result.left_nothing = True
        record("hello", None, outcome="MISMATCH", detail=result.detail)
        raise DeviceMismatch(result.detail)
    after_hello = time.monotonic()
    upload_deadline = after_hello + 0.7 * max(0.0, deadline - after_hello)
    verified: list[str] = []
    touched: list[int] = []  # mission types this dispatch may have changed on the vehicle
    try:
        for mtype in UPLOAD_ORDER:
            _upload_one(ml, ms, mtype, result, record, upload_deadline, deadline, verified, touched)
    except (DispatchFailed, DispatchUncertain) as exc:
        leave_nothing_behind(ml, ms, result, record, deadline, touched)
        if isinstance(exc, DispatchUncertain) and result.status == "FAILED":
            raise DispatchFailed(result.detail) from None
        raise type(exc)(result.detail) from None
    result.verified_by_download = tuple(verified)
    result.status = "ACCEPTED"
    result.detail = "accepted" + (f" ({', '.join(verified)} verified by read-back)" if verified else "")


def _upload_one(
    ml: MissionClient, ms: MissionSet, mtype: int, result: UploadResult, record: Any,
    upload_deadline: float, deadline: float, verified: list[str], touched: list[int],
) -> None:
    """One mission type: upload, and settle any outcome but ACCEPTED/REJECTED by reading back."""
    name = MISSION_TYPE_NAMES[mtype]
    items = ms.items_of(mtype)
    tr = ml.upload(items, mtype, upload_deadline)
    record("upload", tr)
    if tr.requests_seen or tr.outcome == "ACCEPTED":
        touched.append(mtype)
    if tr.outcome == "ACCEPTED":
        if mtype == FENCE:
            _set_ceiling(ml, ms, result, record, deadline)
        return
    if tr.outcome == "REJECTED":
        result.status = "FAILED"
        done = [MISSION_TYPE_NAMES[t] for t in UPLOAD_ORDER[: UPLOAD_ORDER.index(mtype)]]
        result.detail = (
            f"{ms.drone_id} rejected the {name} upload with {tr.result}"
            + (f" (already uploaded: {', '.join(done)})" if done else "")
            + (
                f"; ArduPilot writes items as they arrive, so its {name} may hold part of this upload"
                if ms.dialect == "ardupilot" and tr.requests_seen and mtype != FENCE
                else ""
            )
        )
        raise DispatchFailed(result.detail)
    # UNCERTAIN (every item out, no ACCEPTED) or NO_ANSWER: read back and compare, never re-send blind.
    dl = ml.download(mtype, deadline)
    if dl.outcome != "DOWNLOADED":
        record("verify", dl)
        result.status = "UNCERTAIN"
        if mtype not in touched:
            touched.append(mtype)
        result.detail = (
            f"{ms.drone_id}: the {name} upload ended without a final ack ({tr.detail}) "
            f"and reading it back failed ({dl.detail}); the vehicle's {name} is unknown"
        )
        raise DispatchUncertain(result.detail)
    diffs = compare_items(items, dl.items, dialect=ms.dialect, mission_type=mtype)  # type: ignore[arg-type]
    record("verify", dl, matches=not diffs, differences=list(diffs[:10]), answer=tr.result)
    if diffs:
        how = "was never asked for an item" if tr.outcome == "NO_ANSWER" else (
            f"ended with {tr.result}" if tr.result else "ended without a final ack")
        result.detail = (
            f"{ms.drone_id}: the {name} upload {how} ({tr.detail}) and the vehicle holds a different "
            f"{name} ({len(diffs)} differences, first: {diffs[0]})"
        )
        if tr.result:  # the vehicle answered, and what it holds is not the plan: a refusal, now known
            result.status = "FAILED"
            raise DispatchFailed(result.detail)
        result.status = "UNCERTAIN"
        raise DispatchUncertain(result.detail)
    if mtype not in touched:
        touched.append(mtype)
    verified.append(name)
    if mtype == FENCE:
        _set_ceiling(ml, ms, result, record, deadline)
