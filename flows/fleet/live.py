"""What the authority knows of one vehicle right now: ``LiveDrone``, built from its own messages.

The hub (``flows.fleet.hub``) keeps a ``VehicleView`` per drone (every message
the vehicle sent on the held link) and the monotonic time of its last
HEARTBEAT; ``live_drone`` turns that into a value stamped on the SERVER's clock
(``now`` is passed in: this module reads no clock). Status, in order:

- a fault with no heartbeat within ``silent_after_s`` (the link cannot open,
  another system or autopilot answers, a signing mismatch, the vehicle went
  silent) → ``OFFLINE`` with the fault named;
- a heartbeat within ``silent_after_s`` and the vehicle armed → ``IN_FLIGHT``
  (armed is what ArduPilot and PX4 report from the moment they may spin the
  motors: a drone armed on the pad is no more free than one in the air);
- a heartbeat within ``silent_after_s`` → ``ONLINE``;
- otherwise ``OFFLINE`` (never heard: ``last_seen`` is None).

Fault codes (``FAULTS``) are stable: they are shown by ``sortie fleet`` and
carried by the ``fleet.offline`` event.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from flows.vehicle.view import VehicleView

__all__ = ["FAULTS", "Fault", "LiveDrone", "live_drone"]

#: Named fault states of a drone's link (code → what it means).
FAULTS = {
    "LINK_UNAVAILABLE": "the link cannot be opened, or no vehicle heartbeat comes on it",
    "DEVICE_MISMATCH": "another system id, component or autopilot answers on the drone's link",
    "SIGNING_MISMATCH": "the vehicle answers but not signed with the drone's key, or ignores this link's "
                        "unsigned requests",
    "KEY_UNAVAILABLE": "the drone's signing key cannot be read from the server's key store",
    "SILENT": "the vehicle was heard, then stopped talking",
    "SILENT_IN_FLIGHT": "the vehicle stopped talking while armed (in flight)",
}


@dataclass(frozen=True)
class Fault:
    """Why a drone's link is not live: a stable ``code`` (``FAULTS``) and the sentence that explains it."""

    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class LiveDrone:
    """One vehicle as its own messages describe it, at ``last_seen`` on the server's clock."""

    drone_id: str
    link: str
    status: str
    last_seen: datetime | None
    view: VehicleView
    fault: Fault | None = None

    @property
    def battery_pct(self) -> float | None:
        return self.view.battery_pct

    def position(self) -> dict[str, float | None] | None:
        v = self.view
        if not v.position_known:
            return None
        return {"lat": v.lat, "lon": v.lon, "alt_m": None if v.alt_m is None else round(v.alt_m, 1)}

    def to_dict(self) -> dict[str, Any]:
        v = self.view
        return {
            "status": self.status, "battery_pct": self.battery_pct, "position": self.position(),
            "mode": v.mode or None, "armed": v.armed if v.mode else None,
            "last_seen": None if self.last_seen is None else self.last_seen.isoformat(),
            "source": "live", "fault": None if self.fault is None else self.fault.to_dict(),
            "system_status": v.system_status, "gps_fix_type": v.gps_fix_type,
            "home": None if v.home_lat is None else {"lat": v.home_lat, "lon": v.home_lon, "alt_m": v.home_alt_m},
            "mission_seq": v.seq, "link": self.link,
        }


def live_drone(drone_id: str, link: str, view: VehicleView, heard_s_ago: float | None, now: datetime, *,
               silent_after_s: float, fault: Fault | None = None) -> LiveDrone:
    """The drone's live value at ``now`` (server clock): its last heartbeat ``heard_s_ago`` seconds ago (None:
    never), the view its messages built, and the link's fault if any."""
    last_seen = None if heard_s_ago is None else (now - timedelta(seconds=heard_s_ago)).replace(microsecond=0)
    talking = heard_s_ago is not None and heard_s_ago <= silent_after_s
    if not talking:
        if fault is None and heard_s_ago is not None:
            code = "SILENT_IN_FLIGHT" if view.armed else "SILENT"
            fault = Fault(code, f"no heartbeat for {heard_s_ago:.0f} s (limit {silent_after_s:g} s)"
                          + (", last seen armed in mode " + view.mode if view.armed else ""))
        return LiveDrone(drone_id, link, "OFFLINE", last_seen, view, fault)
    return LiveDrone(drone_id, link, "IN_FLIGHT" if view.armed else "ONLINE", last_seen, view, None)
