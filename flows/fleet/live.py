"""What the authority knows of one vehicle right now: ``LiveDrone``, built from its own messages.

The hub (``flows.fleet.hub``) keeps a ``VehicleView`` per drone (every message
the vehicle sent on the held link) and the monotonic time of its last
HEARTBEAT; ``live_drone`` turns that into a value stamped on the SERVER's clock
(``now`` is passed in: this module reads no clock). Status, in order:

- a fault with no heartbeat within ``silent_after_s`` (the link cannot open,
  another system or autopilot answers, a signing mismatch, the vehicle went
  silent) → ``OFFLINE`` with the fault named;
- a heartbeat within ``silent_after_s`` and the drone held after foreign control (``flows.fleet.custody``)
  → ``HELD`` with the fault ``INTRUSION``, until an operator clears it;
- a heartbeat within ``silent_after_s`` and the vehicle armed → ``IN_FLIGHT``
  (armed is what ArduPilot and PX4 report from the moment they may spin the
  motors: a drone armed on the pad is no more free than one in the air);
- a heartbeat within ``silent_after_s`` → ``ONLINE``;
- otherwise ``OFFLINE`` (never heard: ``last_seen`` is None).

A value older than its freshness limit (``Freshness``: battery, position) is not
read: the view holds None for it and ``stale`` names it (an unreported battery
is 0 % to the rules, ``flows.fleet.overlay``).

Fault codes (``FAULTS``) are stable: they are shown by ``sortie fleet`` and
carried by the ``fleet.offline`` event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from flows.vehicle.view import VehicleView

__all__ = ["FAULTS", "Fault", "Freshness", "LiveDrone", "live_drone", "fresh_view", "SOURCES"]

#: Named fault states of a drone's link (code → what it means).
FAULTS = {
    "LINK_UNAVAILABLE": "the link cannot be opened, or no vehicle heartbeat comes on it",
    "DEVICE_MISMATCH": "another system id, component or autopilot answers on the drone's link",
    "SIGNING_MISMATCH": "the vehicle answers but not signed with the drone's key, or ignores this link's "
                        "unsigned requests",
    "KEY_UNAVAILABLE": "the drone's signing key cannot be read from the server's key store",
    "LINK_HELD": "another drone, or another sortie process on this host, holds the drone's link address",
    "SILENT": "the vehicle was heard, then stopped talking",
    "SILENT_IN_FLIGHT": "the vehicle stopped talking while armed (in flight)",
    "FLEET_ENTRY_REFUSED": "the drone's fleet.json entry did not load (its problems are named); the rest of the "
                           "world did",
    "INTRUSION": "the vehicle armed, changed mode, changed its mission or moved while no dispatch of this "
                 "authority was active on it; held until an operator clears it with a reason",
}


@dataclass(frozen=True)
class Fault:
    """Why a drone's link is not live: a stable ``code`` (``FAULTS``) and the sentence that explains it."""

    code: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Freshness:
    """How old a value of the vehicle may be and still be read as its state now (seconds).

    Why per value: a vehicle can keep sending heartbeats while its battery or position stopped coming (a
    stream not asked again after a reboot, a sensor gone); rules and the dispatch re-check must then read
    "unknown", never the last value (issue 42: after a reboot planning passed on 73 % where the vehicle said
    12 %)."""

    heartbeat_s: float = 10.0
    battery_s: float = 10.0
    position_s: float = 10.0


#: The messages that report each value, by what they report.
SOURCES = {"battery": ("SYS_STATUS", "BATTERY_STATUS"), "position": ("GLOBAL_POSITION_INT",)}


@dataclass(frozen=True)
class LiveDrone:
    """One vehicle as its own messages describe it, at ``last_seen`` on the server's clock.

    ``view`` holds only what is fresh (a stale battery or position is None: ``stale`` names it); ``held`` is the
    hub's hold after foreign control (``flows.fleet.custody``) until an operator clears it; ``foreign`` what the
    link refused as not from the vehicle; ``signed`` whether the drone's link signs (None: not known)."""

    drone_id: str
    link: str
    status: str
    last_seen: datetime | None
    view: VehicleView
    fault: Fault | None = None
    stale: tuple[str, ...] = ()
    held: Mapping[str, Any] | None = None
    foreign: Mapping[str, Any] = field(default_factory=dict)
    signed: bool | None = None

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
            "mission_seq": v.seq, "link": self.link, "stale": list(self.stale), "session": v.session,
            "prearm": list(v.prearm), "params": dict(sorted(v.params.items())), "signed": self.signed,
            "intrusion": {"held": None if self.held is None else dict(self.held),
                          **{k: self.foreign.get(k, 0) for k in ("other_source", "other_system", "unsigned")}},
        }


def fresh_view(view: VehicleView, ages: Mapping[str, float], freshness: Freshness) -> tuple[VehicleView, tuple[str, ...]]:
    """``view`` without the values older than their limit, and the names of those dropped."""
    stale: list[str] = []
    limits = {"battery": freshness.battery_s, "position": freshness.position_s}
    for what, kinds in SOURCES.items():
        age = min((ages[k] for k in kinds if k in ages), default=None)
        if age is None or age > limits[what]:
            stale.append(what)
    if "battery" in stale:
        view = replace(view, battery_pct=None, energy_wh=None)
    if "position" in stale:
        view = replace(view, lat=None, lon=None, alt_m=None, heading_deg=None, speed_mps=None)
    return view, tuple(stale)


def live_drone(drone_id: str, link: str, view: VehicleView, heard_s_ago: float | None, now: datetime, *,
               silent_after_s: float, fault: Fault | None = None, ages: Mapping[str, float] | None = None,
               freshness: Freshness | None = None, held: Mapping[str, Any] | None = None,
               foreign: Mapping[str, Any] | None = None, signed: bool | None = None) -> LiveDrone:
    """The drone's live value at ``now`` (server clock): its last heartbeat ``heard_s_ago`` seconds ago (None:
    never), the view its messages built (``ages``: seconds since each message type, for ``freshness``), the
    link's fault if any, the hub's hold (``held``: status HELD while the vehicle talks)."""
    last_seen = None if heard_s_ago is None else (now - timedelta(seconds=heard_s_ago)).replace(microsecond=0)
    talking = heard_s_ago is not None and heard_s_ago <= silent_after_s
    stale: tuple[str, ...] = ()
    if ages is not None:
        view, stale = fresh_view(view, ages, freshness or Freshness(heartbeat_s=silent_after_s))
    extra: dict[str, Any] = {"stale": stale, "held": held, "foreign": dict(foreign or {}), "signed": signed}
    if not talking:
        if fault is None and heard_s_ago is not None:
            code = "SILENT_IN_FLIGHT" if view.armed else "SILENT"
            fault = Fault(code, f"no heartbeat for {heard_s_ago:.0f} s (limit {silent_after_s:g} s)"
                          + (", last seen armed in mode " + view.mode if view.armed else ""))
        return LiveDrone(drone_id, link, "OFFLINE", last_seen, view, fault, **extra)
    if held is not None:
        return LiveDrone(drone_id, link, "HELD", last_seen, view, Fault("INTRUSION", str(held.get("message", ""))),
                         **extra)
    return LiveDrone(drone_id, link, "IN_FLIGHT" if view.armed else "ONLINE", last_seen, view, None, **extra)
