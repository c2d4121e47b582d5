"""Which drones could fly a draft and why the others could not, as an approver reads it (artifact and ``sortie show``).

Why here: the draft artifact (``flows.orchestration.artifacts``) and ``sortie show`` (``flows.cli.render``) print the
same rows and may not import each other. The rows are read off the version's notes (``drones``: what
``flows.usecases.drafting.drone_choice`` kept of the rules' eligibility when the request was planned), never judged
again here. A version recorded before the notes carried them has no rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DroneRow", "drone_rows"]


@dataclass(frozen=True)
class DroneRow:
    """One drone of the tenant: could it fly the request, does this version fly it, and why not (the rules' words)."""

    drone_id: str
    eligible: bool
    flies: bool
    why_not: tuple[str, ...]


def drone_rows(summary: Mapping[str, Any]) -> list[DroneRow]:
    """The tenant's drones, eligible ones first (sorted by id), each with why it could not fly the request."""
    notes = summary.get("notes") or {}
    choice = notes.get("drones")
    if not isinstance(choice, Mapping):
        return []
    flying = {str(s.get("drone") or s.get("drone_id")) for s in summary.get("sorties") or []}
    rows = [DroneRow(str(d), True, str(d) in flying, ()) for d in choice.get("eligible") or []]
    for entry in choice.get("not_eligible") or []:
        reasons = tuple(str(r.get("message_en") or r.get("code")) for r in entry.get("reasons") or [])
        rows.append(DroneRow(str(entry["drone_id"]), False, False, reasons))
    return rows
