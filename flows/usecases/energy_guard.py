"""The authority's energy guard: a vehicle projected to land under its reserve is recalled by the authority itself.

Why the authority and not an operator: the projection
(``flows.vehicle.energy_projection``: the battery at landing from the consumption
so far and the rest of the route) breaks the plan's promise — the reserve the
battery rule approved — and waiting for an operator, or for the vehicle's
battery failsafe, spends the margin the rule kept. A real patrol used 11 %
where the plan expected 1 % and flew on to 43 % (issue 43). So the monitor,
once a flight's projection falls under its reserve with evidence, asks this
module, which recalls the mission (RTL home) exactly as an operator's recall
does (``flows.usecases.recalling``: RECALLING recorded first, the command
confirmed by the vehicle) — recorded as the authority's act
("authority (energy guard)") with the projection as its reason, in the event
and the audit. The draft then ends RECALLED with that reason, never SUCCEEDED
below its reserve.

The recall goes through the monitor's own links (a real ArduPilot serves one
client per TCP port): they are lent for the call (``flows.vehicle.vehicles.HeldLinks``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from flows.usecases.grounds import Grounds

__all__ = ["recall_for_energy"]


def recall_for_energy(grounds: Grounds, draft_id: str, version: int, *, drone_id: str, reason: str, now: datetime,
                      links: Mapping[str, Any], actor: str) -> dict[str, Any]:
    """Recall the mission home as the authority (``actor``) for ``reason`` (the projection), through ``links``;
    the recall's result."""
    from flows.usecases.recalling import recall_by_authority
    from flows.vehicle.vehicles import HeldLinks

    held = HeldLinks()
    for link in links.values():
        held.hold(link)
    return recall_by_authority(replace(grounds, vehicles=held), draft_id, version, who=actor, reason=reason,
                               now=now).to_dict() | {"drone_id": drone_id}
