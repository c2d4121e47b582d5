"""The one way a use case reaches a vehicle: a ``Vehicles`` port, given with the authority's grounds.

Why a port and not a function: a real ArduPilot serves one client per TCP port
(a second client connects and then hears nothing, FACTS.md), and over UDP a
vehicle answers the last address it heard from, so two ground-station sockets
to one vehicle steal each other's replies. Where a long-lived owner holds one
link per vehicle (the vehicle hub of ``sortie server`` and of ``sortie demo``:
``flows.fleet.hub``), every part that speaks to a vehicle — the upload, the
launch, the flight commands, the follower, the read-back — must speak through
that link, so the drone's binding and signing apply to every message whoever
sends it. Which it is is the authority's to say, once, in its grounds
(``flows.usecases.grounds.Grounds.vehicles``), never a process-wide register:

- ``OpenPerCall`` (the embedded mode, a Prefect worker): each call opens its
  own link with ``flows.vehicle.link.open_link`` and closes it;
- ``HeldLinks`` (a hub's): a held address is lent, any other is opened per call.

A lent link is the held ``VehicleLink`` itself with one more lease:
``close()`` returns the lease and the socket stays open for its owner (who
closes with ``close(force=True)``). While a lease is out the owner stops
reading (``VehicleLink.leases``): a part that waits for a reply reads every
message itself, and the owner's state is still kept from what the part reads.
A borrower's binding must agree with the held one wherever it says something
(system id, component id, autopilot, key): otherwise ``DeviceMismatch``,
nothing sent. Its streams are added to the link's (the highest rate wins) and
asked again at once; a link whose vehicle was not heard within ``FRESH_S``
connects again first (the vehicle's heartbeat, or ``DeviceUnavailable`` with
nothing sent).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from flows.errors import DeviceMismatch

if TYPE_CHECKING:
    from flows.vehicle.binding import VehicleBinding
    from flows.vehicle.link import VehicleLink

__all__ = ["Vehicles", "OpenPerCall", "HeldLinks", "PER_CALL", "FRESH_S"]

FRESH_S = 2.0  # a vehicle heard within this long is connected: no second wait for its heartbeat


class Vehicles(Protocol):
    """How a link to a vehicle is had: ``open`` takes ``flows.vehicle.link.open_link``'s arguments (a lent link keeps
    its owner's component id)."""

    def open(self, connection: str, binding: VehicleBinding | None = None, *, connect: bool = True,
             deadline: float | None = None, streams: Mapping[str, float] | None = None,
             heartbeat_timeout_s: float = 5.0, stream_ack_s: float = 1.0,
             component_id: int | None = None) -> VehicleLink: ...


class OpenPerCall:
    """Every call opens its own link (and its caller closes it): nothing is held between calls."""

    def open(self, connection: str, binding: VehicleBinding | None = None, *, connect: bool = True,
             deadline: float | None = None, streams: Mapping[str, float] | None = None,
             heartbeat_timeout_s: float = 5.0, stream_ack_s: float = 1.0,
             component_id: int | None = None) -> VehicleLink:
        from flows.vehicle.link import GCS_COMPONENT_ID, open_link  # pymavlink: only when a vehicle is reached

        return open_link(connection, binding, connect=connect, deadline=deadline, streams=streams,
                         heartbeat_timeout_s=heartbeat_timeout_s, stream_ack_s=stream_ack_s,
                         component_id=GCS_COMPONENT_ID if component_id is None else component_id)


#: The embedded mode's port (it holds nothing, so one value serves every caller).
PER_CALL = OpenPerCall()


class HeldLinks:
    """The links an owner holds, lent to every call that opens one of their addresses (see the module doc)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, Any] = {}

    def hold(self, link: VehicleLink) -> None:
        """Lend ``link`` to every call that opens its address from now on (until ``release``)."""
        with self._lock:
            self._held[link.connection] = link

    def release(self, link: VehicleLink) -> None:
        with self._lock:
            if self._held.get(link.connection) is link:
                del self._held[link.connection]

    def held(self, connection: str) -> VehicleLink | None:
        with self._lock:
            return self._held.get(connection)

    def open(self, connection: str, binding: VehicleBinding | None = None, *, connect: bool = True,
             deadline: float | None = None, streams: Mapping[str, float] | None = None,
             heartbeat_timeout_s: float = 5.0, stream_ack_s: float = 1.0,
             component_id: int | None = None) -> VehicleLink:
        """The held link of ``connection`` with one more lease (connected when ``connect``); an address this owner
        does not hold is opened per call."""
        link = self.held(connection)
        if link is None:
            return PER_CALL.open(connection, binding, connect=connect, deadline=deadline, streams=streams,
                                 heartbeat_timeout_s=heartbeat_timeout_s, stream_ack_s=stream_ack_s,
                                 component_id=component_id)
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


def _check_binding(link: VehicleLink, wanted: VehicleBinding | None) -> None:
    if wanted is None:
        return
    have = link.binding
    for name in ("system_id", "component_id", "autopilot", "signing_key"):
        mine, theirs = getattr(have, name), getattr(wanted, name)
        if theirs is not None and mine != theirs:
            what = "signing key" if name == "signing_key" else name.replace("_", " ")
            raise DeviceMismatch(f"the authority holds the link {link.connection!r} bound with another {what} "
                                 "than this request's; nothing sent")
