"""Links held by a long-lived owner and lent to every part that asks for the same address.

Why: a real ArduPilot serves one client per TCP port (a second client connects
and then hears nothing, FACTS.md), and over UDP a vehicle answers the last
address it heard from, so two ground-station sockets to one vehicle steal each
other's replies. The authority's vehicle hub (``flows.fleet.hub``) therefore
holds ONE link per vehicle and registers it here (``hold``); from then on
``flows.vehicle.link.open_link`` — the one opener the upload, launch, the
control commands, the follower and the read-back all use — lends that link
(``borrow``) instead of opening a second connection, so the drone's binding and
signing apply to every message whichever part sends it. The register is
per process because the link is: the server is one process holding its
vehicles; embedded mode registers nothing and every part opens its own link
as before.

A borrowed link is the held ``VehicleLink`` itself with one more lease:
``close()`` returns the lease and the socket stays open for its owner (who
closes with ``close(force=True)``). While a lease is out the owner stops
reading (``VehicleLink.leases``): a part that waits for a reply reads every
message itself, and the owner's state is still kept from what the part reads
(``view``, ``seen``, the subscribers).

A borrower's binding must agree with the held one wherever it says something
(system id, component id, autopilot, key): otherwise ``DeviceMismatch``,
nothing sent. Its streams are added to the link's (the highest rate wins) and
asked again at once — rates are kept per port and a request confirms them; a
link whose vehicle was not heard within ``fresh_s`` connects again first (the
vehicle's heartbeat, or ``DeviceUnavailable`` with nothing sent).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from planner.errors import DeviceMismatch

if TYPE_CHECKING:
    from flows.vehicle.binding import VehicleBinding

#: ``flows.vehicle.link.VehicleLink`` (not imported: the link module imports this one)
VehicleLink = Any

__all__ = ["hold", "release", "held", "borrow", "FRESH_S"]

FRESH_S = 2.0  # a vehicle heard within this long is connected: no second wait for its heartbeat

_lock = threading.Lock()
_held: dict[str, VehicleLink] = {}


def hold(link: VehicleLink) -> None:
    """Lend ``link`` to every part that opens its address from now on (until ``release``)."""
    with _lock:
        _held[link.connection] = link


def release(link: VehicleLink) -> None:
    with _lock:
        if _held.get(link.connection) is link:
            del _held[link.connection]


def held(connection: str) -> VehicleLink | None:
    with _lock:
        return _held.get(connection)


def borrow(connection: str, binding: "VehicleBinding | None", *, connect: bool, deadline: float | None,
           streams: Mapping[str, float] | None) -> VehicleLink | None:
    """The held link of ``connection`` with one more lease (connected when ``connect``), or None if none is held."""
    link = held(connection)
    if link is None:
        return None
    _check_binding(link, binding)
    if streams:
        for name, hz in streams.items():
            link.streams[name] = max(hz, link.streams.get(name, 0.0))
    link.lend()
    try:
        heard = link.seen.get("HEARTBEAT")
        if link.target_system and heard is not None and time.monotonic() - heard <= FRESH_S:
            link.request_streams(wait=False)
        elif connect:
            link.connect(deadline)
    except BaseException:
        link.close()
        raise
    return link


def _check_binding(link: VehicleLink, wanted: "VehicleBinding | None") -> None:
    if wanted is None:
        return
    have = link.binding
    for name in ("system_id", "component_id", "autopilot", "signing_key"):
        mine, theirs = getattr(have, name), getattr(wanted, name)
        if theirs is not None and mine != theirs:
            what = "signing key" if name == "signing_key" else name.replace("_", " ")
            raise DeviceMismatch(f"the authority holds the link {link.connection!r} bound with another {what} "
                                 "than this request's; nothing sent")
