"""MAVLink sockets that hear their vehicle's peer only: a link is bound to an address, not to whoever sends.

Why (issue 38): pymavlink's ``udpout:`` socket is bound by the kernel to
0.0.0.0 on its first send and ``recvfrom`` takes a datagram from any sender;
12 s of forged heartbeats, position and battery from another port made a drone
IN_FLIGHT at 5 % in the authority's fleet. So each kind of link here takes
bytes from its configured peer alone, and counts what it refused
(``ForeignTraffic``) so the hub can raise ``fleet.intrusion``:

- ``udpout:HOST:PORT`` (``PeerUdpOut``): bound to the local address the kernel
  routes to HOST (127.0.0.1 for a vehicle on loopback, never 0.0.0.0), and a
  datagram is read only if it comes from (HOST, PORT); any other is dropped
  before the parser sees a byte (pymavlink's parser keeps bytes across
  datagrams, so a forged fragment could corrupt the next real message);
- ``udpin:HOST:PORT`` (``PeerUdpIn``): the vehicle's address is not known
  before it speaks, so the link *latches* to the source of the first heartbeat
  its binding accepts (``latch``: signed with the drone's key when it has one)
  and from then on reads that source alone;
- both UDP kinds ask a deep receive queue (``UDP_RECEIVE_BUFFER``): every position the vehicle sends is
  kept through a stall of the reader, not dropped by the kernel;
- ``tcp:HOST:PORT`` (``PeerTcp``): a stream has one peer by construction. It
  opens with one connection attempt (pymavlink's ``mavtcp`` tries 7 times with
  1 s sleeps, printing each), and after the peer closes it reconnects no
  sooner than a backoff of 1, 2, 4, 8, 15 s (the last repeats; reset once the
  peer sends bytes). pymavlink's ``autoreconnect`` reconnected inside every
  read: a peer that accepts and closes drove ~8,000 reconnections a second and
  290 k log lines in 35 s (issue 42). It also records whether anything listened
  (``refused``): "the port may be held by another client" is said only when
  something accepted the connection.
"""

from __future__ import annotations

import errno
import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from flows.mavlink import mavutil  # noqa: E402

from flows.vehicle.udp_exclusive import ExclusiveUdpIn  # noqa: E402

__all__ = ["ForeignTraffic", "PeerUdpOut", "PeerUdpIn", "PeerTcp", "open_peer", "open_hint", "busy_hint",
           "nothing_listens", "TCP_BACKOFF_S", "TCP_CONNECT_TIMEOUT_S"]

#: Seconds between reconnections to a TCP peer that closed (the last repeats; reset when it sends bytes).
TCP_BACKOFF_S = (1.0, 2.0, 4.0, 8.0, 15.0)
#: One connection attempt waits at most this long (a blocking connect to a silent host waits minutes).
TCP_CONNECT_TIMEOUT_S = 3.0
_UDP_MAX = 65535
#: A UDP link's receive queue (bytes). Linux's default (212,992) holds ~200 small datagrams: a follower descheduled
#: for 0.1 s on a loaded machine, reading a vehicle at 100× (12 messages a vehicle second), lost 14 s of its track
#: (186 datagrams counted in /proc/net/snmp RcvbufErrors). 4 MiB rides over seconds of stall.
UDP_RECEIVE_BUFFER = 4 * 1024 * 1024


@dataclass
class ForeignTraffic:
    """Datagrams refused because they did not come from the link's peer: how many, from where."""

    datagrams: int = 0
    sources: Counter[str] = field(default_factory=Counter)

    def refuse(self, addr: Any) -> None:
        self.datagrams += 1
        if len(self.sources) < 64 or _addr(addr) in self.sources:  # bounded: a flood from many ports stays small
            self.sources[_addr(addr)] += 1


def _addr(addr: Any) -> str:
    return f"{addr[0]}:{addr[1]}" if isinstance(addr, tuple) and len(addr) >= 2 else str(addr)


def _resolve(host: str, port: int) -> tuple[str, int]:
    return socket.gethostbyname(host), int(port)


def _route_source(peer: tuple[str, int]) -> str:
    """The local address the kernel uses to reach ``peer`` (a connected probe socket's own address)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(peer)
        return str(probe.getsockname()[0])
    finally:
        probe.close()


class PeerUdpOut(mavutil.mavudp):
    """``udpout:HOST:PORT`` bound to the route's local address, reading datagrams from (HOST, PORT) alone."""

    def __init__(self, address: str, *, source_system: int = 255, source_component: int = 0) -> None:
        host, sep, port = address.rpartition(":")
        if not sep or not host:
            raise ValueError("UDP ports must be specified as host:port")
        super().__init__(address, input=False, source_system=source_system, source_component=source_component)
        self.peer = _resolve(host, int(port))
        self.destination_addr = self.peer
        self.resolved_destination_addr = self.peer[0]
        try:
            self.port.bind((_route_source(self.peer), 0))
        except OSError:
            self.port.close()
            raise
        self.foreign = ForeignTraffic()

    def recv(self, n: int | None = None) -> Any:
        while True:
            try:
                data, addr = self.port.recvfrom(_UDP_MAX)
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.ECONNREFUSED):
                    return ""
                raise
            if addr[:2] == self.peer:
                return data
            self.foreign.refuse(addr)


class PeerUdpIn(ExclusiveUdpIn):
    """``udpin:HOST:PORT`` (its port its own) that reads one source once ``latch``ed to the vehicle's address."""

    def __init__(self, address: str, *, source_system: int = 255, source_component: int = 0) -> None:
        super().__init__(address, source_system=source_system, source_component=source_component)
        self.peer: tuple[str, int] | None = None
        self.last_source: tuple[str, int] | None = None
        self.foreign = ForeignTraffic()

    def latch(self, peer: tuple[str, int]) -> None:
        """Read ``peer`` alone from now on, and write to it alone."""
        self.peer = (str(peer[0]), int(peer[1]))
        self.clients = {self.peer}
        self.clients_last_alive = {self.peer: time.time()}

    def recv(self, n: int | None = None) -> Any:
        while True:
            try:
                data, addr = self.port.recvfrom(_UDP_MAX)
            except OSError as exc:
                if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.ECONNREFUSED):
                    return ""
                raise
            if self.peer is not None and addr[:2] != self.peer:
                self.foreign.refuse(addr)
                continue
            self.last_source = (str(addr[0]), int(addr[1]))
            if self.peer is None:
                self.clients.add(addr)
                self.clients_last_alive[addr] = time.time()
            return data


class PeerTcp(mavutil.mavtcp):
    """``tcp:HOST:PORT``: one attempt per connection, reconnections after a real backoff, no printing."""

    def __init__(self, address: str, *, source_system: int = 255, source_component: int = 0) -> None:
        self.refused = False  # the last attempt found nothing listening
        self.accepted = False  # a connection was ever accepted (something listens on the port)
        self.reconnections = 0
        self._shut = False
        self._failures = 0
        self._next_try = 0.0
        super().__init__(address, autoreconnect=False, source_system=source_system,
                         source_component=source_component, retries=0)

    def do_connect(self) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.settimeout(TCP_CONNECT_TIMEOUT_S)
        try:
            sock.connect(self.destination_addr)
        except OSError as exc:
            sock.close()
            self.port = None
            self.refused = exc.errno == errno.ECONNREFUSED
            self._closed()
            raise
        self.refused, self.accepted = False, True
        sock.setblocking(False)
        sock.setsockopt(socket.SOL_TCP, socket.TCP_NODELAY, 1)
        mavutil.set_close_on_exec(sock.fileno())
        self.port = sock
        self.fd = sock.fileno()

    def _closed(self) -> None:
        """The connection is gone: the next attempt waits for the backoff's next step."""
        if self.port is not None:
            try:
                self.port.close()
            except OSError:
                pass
            self.port = None
        self.fd = None  # pymavlink's select then sleeps instead of spinning on a closed descriptor
        self._next_try = time.monotonic() + TCP_BACKOFF_S[min(self._failures, len(TCP_BACKOFF_S) - 1)]
        self._failures += 1

    def _ensure(self) -> bool:
        if self._shut:
            return False
        if self.port is not None:
            return True
        if time.monotonic() < self._next_try:
            return False
        self.reconnections += 1
        try:
            self.do_connect()
        except OSError:
            return False
        return True

    def recv(self, n: int | None = None) -> Any:
        if not self._ensure():
            return b""
        if n is None:
            n = self.mav.bytes_needed()
        try:
            data = self.port.recv(n)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                return b""
            self._closed()
            return b""
        if not data:
            self._closed()  # EOF: the peer closed (or accepted and closed at once)
            return b""
        self._failures = 0
        return data

    def write(self, buf: Any) -> None:
        if not self._ensure():
            return
        try:
            self.port.send(buf)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EWOULDBLOCK):
                self._closed()

    def close(self) -> None:
        """Closed for good: no reconnection (the socket object stays, closed, as pymavlink's does)."""
        self._shut = True
        if self.port is not None:
            self.port.close()
        self.fd = None


def _deep_receive_buffer(sock: socket.socket) -> None:
    """Ask the kernel for ``UDP_RECEIVE_BUFFER`` bytes of queue (it grants at most ``net.core.rmem_max``)."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, UDP_RECEIVE_BUFFER)
    except OSError:
        pass  # the default queue: a stall of the reader loses more datagrams, nothing else changes


def open_peer(connection: str, **options: Any) -> Any:
    """The pymavlink connection of a ground-station link string, bound to its peer (see the module docstring)."""
    kind, _, address = connection.partition(":")
    if kind in ("udpout", "udpin"):
        conn = PeerUdpOut(address, **options) if kind == "udpout" else PeerUdpIn(address, **options)
        _deep_receive_buffer(conn.port)
        return conn
    if kind == "tcp":
        return PeerTcp(address, **options)
    return mavutil.mavlink_connection(connection, **options)


def open_hint(connection: str, exc: BaseException) -> str:
    """What a failed opening means: over TCP, nothing listening is not a port held by another client."""
    if not connection.startswith("tcp:"):
        return ""
    if isinstance(exc, ConnectionRefusedError):
        return "; " + nothing_listens(connection)
    if isinstance(exc, TimeoutError):
        return f"; no answer from {connection!r} within the connection timeout (a wrong address, or a host that is down)"
    return ""


def nothing_listens(connection: str) -> str:
    return (f"nothing listens on {connection!r} (connection refused): the vehicle or SITL is not running there, "
            "or the port is wrong")


def busy_hint(connection: str) -> str:
    return (f"; the TCP port of {connection!r} may be held by another client: ArduPilot serves one client per TCP "
            "port, and a second one connects and then hears nothing (not even HEARTBEAT) until the first leaves — "
            "close the other ground station or use another port (SITL: 5760, 5762, 5763)")
