"""Reading a vehicle's missions back without uploading anything, and comparing them with the plan.

Kept apart from ``flows.vehicle.upload`` (which uses it to settle an uncertain
upload) because reconcile, ``sortie vehicle read`` and the launch's pre-flight
check read back too. ``read_back`` downloads fence, mission and rally over a
link (``flows.vehicle.link``); ``verify_plan`` compares each drone's holdings
with its sortie in the vehicle's own dialect (``planner.output.mission_wire.compare_items``:
ArduPilot's seq 0 home, frame 0 on DO_ commands and NAV_LAND's param4 are how
it stores a mission, not differences). ``first_sorties`` and ``link_for`` say
which sortie a vehicle holds now and which link reaches it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.vehicle.binding import AUTOPILOT_DIALECT, VehicleBinding, binding_for
from flows.vehicle.leftovers import UPLOAD_ORDER
from flows.vehicle.link import VehicleLink
from flows.vehicle.vehicles import PER_CALL, Vehicles
from flows.vehicle.mission_client import MissionClient
from flows.errors import DispatchUncertain
from planner.errors import InvalidArgument
from planner.output.mission_items import MISSION_TYPE_NAMES, EndAction, mission_set
from planner.output.mission_wire import compare_items
from planner.plan import Plan, Sortie
from planner.world.model import World

__all__ = ["UPLOAD_ORDER", "VerifyResult", "first_sorties", "link_for", "read_back", "verify_plan"]

AttemptCallback = Callable[[dict[str, Any]], None]


def first_sorties(plan: Plan) -> tuple[list[Sortie], list[dict[str, Any]]]:
    """A vehicle holds one mission: the first sortie of each drone now, the rest after it lands."""
    chosen: dict[str, Sortie] = {}
    later: list[dict[str, Any]] = []
    for s in sorted(plan.sorties, key=lambda s: (s.start_at, s.index)):
        if s.drone_id in chosen:
            later.append({"sortie_index": s.index, "drone_id": s.drone_id, "reason": "the drone flies an earlier sortie first"})
        else:
            chosen[s.drone_id] = s
    return sorted(chosen.values(), key=lambda s: s.index), later


def link_for(drone_id: str, world: World, link: str | Mapping[str, str] | None, n_drones: int) -> str:
    if link is None:
        return world.drone(drone_id).link
    if isinstance(link, str):
        if n_drones > 1:
            raise InvalidArgument(
                f"--link names one vehicle but the plan flies {n_drones} drones; give --link DRONE=CONN per drone or none"
            )
        return link
    if drone_id not in link:
        return world.drone(drone_id).link
    return link[drone_id]


def read_back(
    conn: str | VehicleLink,
    *,
    timeout_s: float = 30.0,
    retry_s: float = 1.0,
    max_retries: int = 8,
    heartbeat_timeout_s: float = 5.0,
    on_attempt: AttemptCallback | None = None,
    binding: VehicleBinding | None = None,
    vehicles: Vehicles = PER_CALL,
) -> tuple[dict[int, tuple[Any, ...]], dict[str, Any]]:
    """Download fence, mission and rally from the vehicle on ``conn``; sends nothing else.

    ``conn``: a connection string (opened with ``binding`` through ``vehicles``) or a connected
    ``VehicleLink``. Returns the rows per mission type and the vehicle's ids.
    Raises ``DeviceUnavailable`` without a heartbeat, ``DeviceMismatch`` when
    another vehicle than ``binding`` answers, and ``DispatchUncertain`` when a
    download does not complete in time.
    """
    deadline = time.monotonic() + timeout_s
    held: dict[int, tuple[Any, ...]] = {}
    owned = not isinstance(conn, VehicleLink)
    link = vehicles.open(conn, binding, streams={}, deadline=deadline, heartbeat_timeout_s=heartbeat_timeout_s) \
        if not isinstance(conn, VehicleLink) else conn
    try:
        ml = MissionClient(link, retry_s=retry_s, max_retries=max_retries)
        vehicle = {"system": link.target_system, "component": link.target_component, "autopilot": link.autopilot,
                   "dialect": AUTOPILOT_DIALECT.get(link.autopilot or -1)}
        for mtype in UPLOAD_ORDER:
            dl = ml.download(mtype, deadline)
            if on_attempt is not None:
                on_attempt({"kind": "read", "link": link.connection, **dl.to_dict()})
            if dl.outcome != "DOWNLOADED":
                raise DispatchUncertain(
                    f"reading the {MISSION_TYPE_NAMES[mtype]} back from {link.connection} failed ({dl.detail})",
                    details={"vehicle": vehicle, "attempt": dl.to_dict()},
                )
            held[mtype] = dl.items
    finally:
        if owned:
            link.close()
    return held, vehicle


@dataclass
class VerifyResult:
    """Whether each drone's vehicle holds its sortie of the plan, by reading it back."""

    matches: bool
    vehicles: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"matches": self.matches, "vehicles": list(self.vehicles)}


def verify_plan(
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
    vehicles: Vehicles = PER_CALL,
) -> VerifyResult:
    """Read every drone's fence, mission and rally back and compare them with the plan.

    The way to settle an UNCERTAIN or interrupted dispatch (never a blind
    re-upload): ``matches`` is True only when every vehicle holds exactly its
    sortie. Uploads nothing. Raises ``DeviceUnavailable`` / ``DispatchUncertain``
    when a vehicle cannot be read.
    """
    sorties, _ = first_sorties(plan)
    read: list[dict[str, Any]] = []
    for s in sorties:
        conn = link_for(s.drone_id, world, link, len(sorties))
        ms = mission_set(plan, s, world, end=end)
        given = (links or {}).get(s.drone_id)
        held, vehicle = read_back(
            given if given is not None else conn, timeout_s=timeout_s, retry_s=retry_s, max_retries=max_retries,
            heartbeat_timeout_s=heartbeat_timeout_s, on_attempt=on_attempt,
            binding=binding_for(world.drone(s.drone_id), key_store), vehicles=vehicles,
        )
        diffs = {
            MISSION_TYPE_NAMES[t]: list(compare_items(ms.items_of(t), held[t], dialect=ms.dialect, mission_type=t))  # type: ignore[arg-type]
            for t in UPLOAD_ORDER
        }
        read.append({
            "drone_id": s.drone_id, "sortie_index": s.index, "link": conn, "dialect": ms.dialect, "vehicle": vehicle,
            "matches": not any(diffs.values()), "differences": {k: v[:10] for k, v in diffs.items() if v},
            "counts": {MISSION_TYPE_NAMES[t]: len(held[t]) for t in UPLOAD_ORDER},
            "planned_counts": {MISSION_TYPE_NAMES[t]: len(ms.items_of(t)) for t in UPLOAD_ORDER},
        })
    return VerifyResult(matches=all(v["matches"] for v in read), vehicles=read)
