"""The vehicle simulator's injected faults and its counters.

Kept apart from ``flows.sim.vehicle`` (the vehicle itself) because the CLI and
tests parse these values before any vehicle runs: ``result_code`` names a
MAV_MISSION_RESULT to answer uploads with, ``parse_loss`` reads a loss point
(``count:fence``, ``item:mission:3``, ``request:rally:0``, ``ack:mission``,
``*`` for every type), ``SimStats`` counts what arrived, was dropped and sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

from planner.errors import InvalidArgument
from planner.output.mission_items import FENCE, MISSION, RALLY  # noqa: E402

__all__ = ["SimStats", "parse_loss", "result_code"]


def result_code(name: str) -> int:
    """The MAV_MISSION_RESULT value for ``MAV_MISSION_NO_SPACE`` or ``NO_SPACE``."""
    key = name.upper()
    if not key.startswith("MAV_MISSION_"):
        key = "MAV_MISSION_" + key
    value = getattr(_M, key, None)
    if value is None or key == "MAV_MISSION_RESULT_ENUM_END":
        known = [e.name for k, e in _M.enums["MAV_MISSION_RESULT"].items() if e.name != "MAV_MISSION_RESULT_ENUM_END"]
        raise InvalidArgument(f"{name!r} is not a MAV_MISSION_RESULT; one of {', '.join(known)}")
    return int(value)


@dataclass
class SimStats:
    """Counters for tests and the CLI: what arrived, what was dropped, what was sent."""

    received: int = 0
    dropped_in: int = 0
    sent: int = 0
    dropped_out: int = 0
    uploads_completed: int = 0
    uploads_rejected: int = 0
    downloads_served: int = 0
    final_acks_lost: int = 0
    lost_on_purpose: int = 0
    refused_unsigned: int = 0
    booting_refusals: int = 0


_LOSS_KINDS = ("count", "item", "request", "ack")
_TYPE_BY_NAME = {"mission": MISSION, "fence": FENCE, "rally": RALLY}


def parse_loss(spec: str) -> tuple[str, int | None, int | None]:
    """``item:mission:3`` → ("item", MISSION, 3); ``ack:*`` → ("ack", None, None) (any type, any seq)."""
    parts = spec.strip().split(":")
    kind = parts[0]
    if kind not in _LOSS_KINDS or len(parts) > 3:
        raise InvalidArgument(f"loss point {spec!r}: expected KIND[:TYPE[:SEQ]], KIND one of {', '.join(_LOSS_KINDS)}")
    mtype: int | None = None
    if len(parts) > 1 and parts[1] not in ("*", ""):
        if parts[1] not in _TYPE_BY_NAME:
            raise InvalidArgument(f"loss point {spec!r}: type must be mission, fence, rally or *")
        mtype = _TYPE_BY_NAME[parts[1]]
    try:
        seq = int(parts[2]) if len(parts) > 2 else None
    except ValueError:
        raise InvalidArgument(f"loss point {spec!r}: SEQ must be a number") from None
    return kind, mtype, seq
