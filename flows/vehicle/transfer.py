"""One transfer of the mission protocol as it went: the record the ledger keeps per attempt.

Kept apart from ``flows.vehicle.link`` so readers of the ledger's attempts need
no link; ``result_name`` spells a MAV_MISSION_RESULT the way the vehicle's
MAVLink definitions do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from flows.mavlink import mavutil  # noqa: E402

from planner.output.mission_items import MISSION_TYPE_NAMES, MissionItem  # noqa: E402

__all__ = ["Transfer", "TransferOutcome", "result_name"]

_M = mavutil.mavlink

TransferOutcome = Literal[
    "ACCEPTED", "REJECTED", "NO_ANSWER", "UNCERTAIN", "DOWNLOADED", "DOWNLOAD_FAILED", "CONFIRMED", "UNCONFIRMED",
    "CLEARED", "NOT_CLEARED",
]


def result_name(code: int) -> str:
    """``MAV_MISSION_NO_SPACE`` for 4."""
    entry = _M.enums["MAV_MISSION_RESULT"].get(int(code))
    return entry.name if entry is not None else f"MAV_MISSION_RESULT_{code}"


@dataclass
class Transfer:
    """One protocol transfer (an attempt in the ledger's words), as it went.

    ``outcome``: ACCEPTED (final ack seen), REJECTED (a NACK: ``result`` names it),
    NO_ANSWER (the vehicle never asked for an item: nothing was transferred),
    UNCERTAIN (items went out but no final ack came), DOWNLOADED / DOWNLOAD_FAILED,
    and for parameters CONFIRMED (every value echoed back) / UNCONFIRMED.
    """

    direction: Literal["upload", "download", "params", "clear"]
    mission_type: int
    count: int
    outcome: TransferOutcome = "NO_ANSWER"
    result: str | None = None
    items_sent: int = 0
    requests_seen: int = 0
    resends: int = 0
    duplicates_acked: int = 0
    busy_nacks: int = 0
    boot_retries: int = 0
    duration_s: float = 0.0
    detail: str = ""
    items: tuple[MissionItem, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "mission_type": MISSION_TYPE_NAMES.get(self.mission_type, str(self.mission_type)),
            "count": self.count,
            "outcome": self.outcome,
            "result": self.result,
            "items_sent": self.items_sent,
            "requests_seen": self.requests_seen,
            "resends": self.resends,
            "duplicates_acked": self.duplicates_acked,
            "busy_nacks": self.busy_nacks,
            "boot_retries": self.boot_retries,
            "duration_s": round(self.duration_s, 3),
            "detail": self.detail,
        }
