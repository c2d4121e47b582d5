"""The vehicle hub's ledger side (``flows.fleet.hub.HubRecords``) over the server's ledger.

- ``busy``: a dispatch of this authority holds the drone (``Ledger.holding``: a
  claim in progress or unsettled, or a version dispatched, launched, in flight
  or recalling) — a change of its vehicle then is the authority's own;
- ``record``: a ``fleet.intrusion`` or ``fleet.cleared`` is an audit row of the
  ledger's hash chain (actor ``authority:hub`` for an intrusion, the operator
  for a clearance; the data as its arguments, the hold's message as its
  result message), so a hold and its release are evidence like a decision;
- ``holds``: the drones whose last foreign-control record was not followed by a
  clearance — a restarted server holds them still.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from flows.ledger import Ledger

__all__ = ["LedgerRecords", "HUB_ACTOR"]

HUB_ACTOR = "authority:hub"


class LedgerRecords:
    """``HubRecords`` over one ledger, stamped on the server's clock."""

    def __init__(self, ledger: Ledger, now: Callable[[], datetime]) -> None:
        self.ledger = ledger
        self.now = now

    def busy(self, drone_id: str) -> bool:
        return bool(self.ledger.holding([drone_id]))

    def record(self, kind: str, drone_id: str, tenant: str, data: Mapping[str, Any]) -> None:
        cleared = kind == "fleet.cleared"
        self.ledger.audit(
            actor=str(data.get("by")) if cleared else HUB_ACTOR, command=kind, args={**data, "tenant": tenant},
            result_code="OK" if cleared else "INTRUSION", duration_s=0.0, started=self.now(),
            message=str(data.get("reason") if cleared else data.get("message") or "") or None,
        )

    def holds(self) -> dict[str, dict[str, Any]]:
        held: dict[str, dict[str, Any]] = {}
        for row in self.ledger.audit_of(("fleet.intrusion", "fleet.cleared")):
            args = row.args_redacted
            drone = str(args.get("drone_id") or "")
            if row.command == "fleet.cleared":
                held.pop(drone, None)
            elif args.get("kind") == "foreign_control":
                held[drone] = dict(args)
        return held
