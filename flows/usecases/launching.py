"""The launch use case: a dispatched mission takes off, by a named dispatcher, at a time its approval covers.

gather: the version (DISPATCHED: uploaded and accepted), the dispatcher, an
approval of this exact plan hash that has not expired *now*, each dispatched
vehicle's link and binding, and what it must hold (the approved mission items)
and have (the battery the sortie needs, its dock as home); decide and apply:
``flows.vehicle.launch`` — every vehicle's pre-flight checks first (nothing is
sent to any vehicle while one of them fails a check: ``PREFLIGHT_FAILED`` names
the check), then each vehicle's launch sequence; the ledger records
DISPATCHED → LAUNCHED with the vehicles' answers (the event's reason, and
``launch.json`` in the draft's folder beside ``flight.json``).

A refusal during the sequence (the vehicle would not arm, would not start) is
also ``PREFLIGHT_FAILED``, naming the step, and the vehicle is disarmed again;
with several vehicles, those already launched fly on and the ledger says
LAUNCHED with the one that did not. A repeat of a launch sends nothing
(LAUNCHED, IN_FLIGHT: "already launched").
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from flows.context import draft_dir
from flows.errors import Conflict, PreflightFailed
from flows.ledger import DraftRecord, Ledger
from flows.ledger.approvals import covering_approval
from flows.usecases.actor import Actor
from flows.usecases.command_journal import LedgerJournal
from flows.usecases.control_kit import (
    FLIGHT_ROLES,
    ControlResult,
    audited,
    authorise,
    bindings,
    dispatched_links,
    transition,
    vehicle_lock,
    who,
)
from flows.usecases.grounds import Grounds

__all__ = ["launch", "launch_path", "LAUNCHED_STATES"]

LAUNCHED_STATES = ("LAUNCHED", "IN_FLIGHT", "RECALLING")


def launch_path(draft_id: str, version: int, home: Path) -> Path:
    """``drafts/<id>/v<n>/launch.json``: every vehicle's checks and answers of the recorded launch."""
    return draft_dir(draft_id, version, home) / "launch.json"


def _approval_covers(ledger: Ledger, rec: DraftRecord, now: datetime) -> str:
    """Who approved the flight until when, if an approval covers its take-off now (``covering_approval``)."""
    a = covering_approval(rec, ledger.approvals(rec.draft_id, rec.version), now, action="launch")
    return f"approved by {a.approver} until {a.expires_time}"


def _plans(grounds: Grounds, rec: DraftRecord, now: datetime) -> dict[str, Any]:
    """drone id → ``LaunchPlan`` of each accepted upload: the approved items, the battery need, the dock, the rule
    set's vehicle checks (``flows.usecases.launch_plan``)."""
    from flows.usecases.launch_plan import launch_plan
    from planner.plan import plan_from_dict

    dispatch = next((d for d in grounds.ledger.dispatches(rec.draft_id) if d.version == rec.version), None)
    uploads = [u for u in ((dispatch.result or {}) if dispatch else {}).get("uploads", []) if u.get("status") == "ACCEPTED"]
    plan = plan_from_dict(rec.plan or {})
    world = grounds.world(rec.world_dir)
    rules = grounds.rule_set()
    out: dict[str, Any] = {}
    for u in uploads:
        sortie = next(s for s in plan.sorties if s.index == u["sortie_index"])
        out[u["drone_id"]] = launch_plan(rules, plan, sortie, world, now, u["dialect"])
    return out


def launch(
    draft_id: str,
    version: int | None = None,
    *,
    actor: str | Actor,
    now: datetime,
    grounds: Grounds,
    link: str | Mapping[str, str] | None = None,
    options: Any | None = None,
    audit: bool = True,
    links: Mapping[str, Any] | None = None,
) -> ControlResult:
    """Launch a DISPATCHED version (see the module docstring); ``options``: ``flows.vehicle.launch.LaunchOptions``.

    ``links``: connected ``VehicleLink``s per drone, owned by the caller (a vehicle hub, or a follower watching
    the take-off through the same link); a drone without one gets its link from the grounds' ``Vehicles`` port
    (and closes it) here."""
    from flows.vehicle.launch import LaunchOptions, launch_vehicle, preflight
    from flows.vehicle.stream_rates import TELEMETRY

    opts = options or LaunchOptions()
    args = {"draft_id": draft_id, "version": version, "link": link}
    actor = who(actor)
    ledger = grounds.ledger
    with audited(ledger, actor, "launch", args, now, audit):
        rec = ledger.get_draft(draft_id, version)
        user = authorise(rec, actor, FLIGHT_ROLES, "launch", grounds)
        if rec.state in LAUNCHED_STATES:
            return ControlResult(draft_id, rec.version, "launch", rec.state, False,
                                 f"already launched ({rec.state}): nothing was sent")
        if rec.state != "DISPATCHED":
            raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state}; only a DISPATCHED version (uploaded and "
                           "accepted by its vehicles) can be launched")
        covers = _approval_covers(ledger, rec, now)
        addresses = dispatched_links(ledger, rec, link)
        plans = _plans(grounds, rec, now)
        bound = bindings(grounds, rec, list(addresses))
        outcomes: list[Any] = []
        opened: list[Any] = []
        try:
            with vehicle_lock(grounds.home, draft_id):
                rec = ledger.get_draft(draft_id, rec.version)
                if rec.state != "DISPATCHED":
                    raise Conflict(f"draft {draft_id} v{rec.version} became {rec.state} meanwhile; nothing was sent")
                checked = []
                for drone_id, conn in addresses.items():  # every vehicle's checks before any vehicle flies
                    vl = (links or {}).get(drone_id)
                    if vl is None:
                        vl = grounds.vehicles.open(conn, bound.get(drone_id), streams=TELEMETRY,
                                                   heartbeat_timeout_s=opts.control.connect_timeout_s)
                        opened.append(vl)
                    checked.append((drone_id, vl, preflight(vl, plans[drone_id], opts)))
                failing = [(d, c) for d, _, cs in checked for c in cs if not c.ok]
                if failing:
                    for drone_id, vl, cs in checked:
                        outcomes.append(launch_vehicle(vl, plans[drone_id], opts, checks=cs))
                    _record(ledger, rec, outcomes, covers)
                    d, c = failing[0]
                    raise PreflightFailed(f"{d}: pre-flight check {c.name} failed: {c.detail}; nothing was sent and "
                                          f"draft {draft_id} v{rec.version} stays DISPATCHED",
                                          details={"check": c.name, "drone_id": d,
                                                   "vehicles": [o.to_dict() for o in outcomes]})
                for drone_id, vl, cs in checked:  # each step journaled before it is sent (flows.usecases.settling)
                    out = launch_vehicle(vl, plans[drone_id], opts, checks=cs, journal=LedgerJournal(
                        ledger, drone_id, "launch", user, now, draft_id, rec.version))
                    outcomes.append(out)
                    if out.status != "LAUNCHED":
                        break
        finally:
            for vl in opened:
                vl.close()
        _record(ledger, rec, outcomes, covers)
        flying = [o for o in outcomes if o.status == "LAUNCHED"]
        failed = [o for o in outcomes if o.status != "LAUNCHED"]
        answers = "; ".join(o.detail for o in outcomes)
        if flying:
            rec = transition(ledger, rec, "LAUNCHED", actor=user, now=now,
                             reason=f"launched by {user} ({covers}): {answers}")
        if failed:
            f = failed[0]
            raise PreflightFailed(
                f"{f.detail}" + (f"; {', '.join(o.drone_id for o in flying)} launched and flying" if flying else
                                 f"; draft {draft_id} v{rec.version} stays {rec.state}"),
                details={"check": f.failed, "drone_id": f.drone_id, "state": rec.state,
                         "vehicles": [o.to_dict() for o in outcomes]})
        return ControlResult(draft_id, rec.version, "launch", rec.state, True,
                             f"launched by {user}: {answers}", [o.to_dict() for o in outcomes])


def _record(ledger: Ledger, rec: DraftRecord, outcomes: list[Any], covers: str) -> None:
    """``launch.json``: the checks and the vehicles' answers, written before the state moves."""
    path = launch_path(rec.draft_id, rec.version, ledger.path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"draft_id": rec.draft_id, "version": rec.version, "approval": covers,
               "vehicles": [o.to_dict() for o in outcomes]}
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, ensure_ascii=False, indent=1, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, path)
