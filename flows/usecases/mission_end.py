"""How a mission ended, from every sortie's flight, the sorties never flown, and the work measured on the tracks.

Pure: the plan, the followed flights (one per sortie flown, ``DroneFlight``) and
the sorties that were not flown (with why) in; ``MissionEnd`` out. In order:

- a vehicle silent past its endurance (LOST) or ABORTED → **ABORTED**, the
  outcome naming a failsafe when one ended a flight (FAILSAFE_BATTERY, …) or
  LOST;
- a flight still LINK_LOST (the watch ended, the vehicle may still be flying) →
  not ended: the ledger stays LINK_LOST;
- a flight that has not ended (in the air when the watch ended, never taken off),
  or a sortie still to fly when the watch ended → not ended;
- every flight SUCCEEDED or RECALLED with at least one RECALLED → **RECALLED**
  (what was not flown is named);
- otherwise the work: SUCCEEDED only when every sortie was flown and at least
  ``WORK_SHARE`` of every kind of planned work was flown within
  ``REACH_TOLERANCE_M`` of the plan (``flows.usecases.flown_work``); else
  **INCOMPLETE**, saying what was not flown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flows.usecases.flown_work import unflown, work_complete, work_flown
from flows.vehicle.flight_record import DroneFlight
from planner.plan import Plan

__all__ = ["MissionEnd", "mission_end", "ENDED_STATES"]

#: Ledger states a mission ends in.
ENDED_STATES = frozenset({"SUCCEEDED", "ABORTED", "RECALLED", "INCOMPLETE"})


@dataclass(frozen=True)
class MissionEnd:
    """``state``: the ledger state to record (None: not ended); ``outcome``: the state or what names it better."""

    state: str | None
    outcome: str
    reason: str
    work: dict[str, Any] = field(default_factory=dict)


def _per(flights: list[DroneFlight]) -> str:
    return "; ".join(f"{f.drone_id} sortie {f.sortie_index}: {f.reason}" for f in flights)


def mission_end(plan: Plan | None, flights: list[DroneFlight], not_flown: Mapping[int, str],
                pending: Mapping[int, str] | None = None, *, recalled: bool = False) -> MissionEnd:
    """The mission's end (see the module docstring); ``pending``: sorties still to fly when the watch ended (the
    mission has not ended: following it again flies them); ``recalled``: a recall is recorded — one made on the
    ground between two sorties leaves every flight SUCCEEDED and the rest not flown, and the mission RECALLED."""
    tracks = {f.sortie_index: [(p[0], p[1], p[2]) for p in f.track] for f in flights}
    work = work_flown(plan, tracks) if plan is not None else {}
    skipped = "; ".join(f"sortie {i} not flown: {why}" for i, why in sorted(not_flown.items()))
    bad = [f for f in flights if f.status in ("ABORTED", "LOST")]
    if bad:
        named = next((f.failsafe for f in bad if f.failsafe), None) or ("LOST" if any(f.status == "LOST" for f in bad)
                                                                        else "ABORTED")
        return MissionEnd("ABORTED", named, _per(bad) + (f"; {skipped}" if skipped else ""), work)
    lost = [f for f in flights if f.status == "LINK_LOST"]
    if lost:
        return MissionEnd(None, "LINK_LOST", "; ".join(
            f"{f.drone_id} sortie {f.sortie_index}: telemetry lost since t={f.gaps[-1]['from_t_s']:g} s (it may still "
            f"be flying)" for f in lost), work)
    open_ = [f for f in flights if f.status not in ("SUCCEEDED", "RECALLED")]
    if open_ or not flights:
        named = "NOT_STARTED" if flights and all(f.status in ("NOT_STARTED", "NO_CONTACT") for f in flights) else "OPEN"
        return MissionEnd(None, named, "; ".join(f"{f.drone_id}: {f.status} (sortie {f.sortie_index}: {f.reason})"
                                                 for f in open_) or "nothing was followed", work)
    if pending:
        return MissionEnd(None, "OPEN", "; ".join(f"sortie {i} still to fly: {why}" for i, why in sorted(pending.items())),
                          work)
    if any(f.status == "RECALLED" for f in flights) or (recalled and not_flown):
        return MissionEnd("RECALLED", "RECALLED", _per(flights) + (f"; {skipped}" if skipped else ""), work)
    if plan is None:
        return MissionEnd("SUCCEEDED", "SUCCEEDED", _per(flights), work)
    left = unflown(work)
    if not not_flown and work_complete(work):
        return MissionEnd("SUCCEEDED", "SUCCEEDED", _per(flights) + _done(work), work)
    what = "; ".join(x for x in (skipped, left and f"work not flown: {left}") if x)
    return MissionEnd("INCOMPLETE", "INCOMPLETE", f"{what}; flown: {_per(flights)}", work)


def _done(work: Mapping[str, Any]) -> str:
    """"; work flown: 4 of 4 lanes …" — what was measured on the track, for the SUCCEEDED reason."""
    parts = []
    lanes, sweeps, points = work.get("lanes", {}), work.get("sweeps", {}), work.get("points", {})
    if lanes.get("planned_m"):
        parts.append(f"lanes {lanes['reached_m']:.0f} of {lanes['planned_m']:.0f} m")
    if sweeps.get("planned_m"):
        parts.append(f"sweeps {sweeps['reached_m']:.0f} of {sweeps['planned_m']:.0f} m")
    if points.get("planned"):
        parts.append(f"points {points['reached']} of {points['planned']}")
    return f"; work flown within {work.get('tolerance_m', 5):g} m of the plan: {', '.join(parts)}" if parts else ""
