"""MAVLink connections whose ``udpin:`` port belongs to one socket alone.

pymavlink's ``udpin:`` (``mavutil.py``, ``mavudp.__init__``) sets SO_REUSEADDR
before it binds. On Linux that lets two UDP sockets hold one address:

- a second ``udpin:127.0.0.1:14550`` binds without a word, and the kernel
  gives each datagram to one of the two, so a ground station may hear another
  vehicle and a vehicle may answer another station;
- a bind to port 0 may be given a port another such socket already holds
  (3,000 port-0 binds on loopback, all kept open: 167 landed on a port in use;
  none without the option). Two simulators, or two test workers, then share a
  port, and a link to one is answered by the other.

Without the option the second bind fails with EADDRINUSE, which the link
reports as DEVICE_UNAVAILABLE. Every other kind of connection string is
pymavlink's own.
"""

from __future__ import annotations

from typing import Any

from flows.mavlink import mavutil  # noqa: E402

__all__ = ["ExclusiveUdpIn", "mavlink_connection"]

_UDPIN = "udpin:"


class ExclusiveUdpIn(mavutil.mavudp):
    """pymavlink's ``udpin`` (it answers every client that has spoken to it), bound without SO_REUSEADDR."""

    def __init__(self, address: str, *, source_system: int = 255, source_component: int = 0) -> None:
        host, sep, port = address.rpartition(":")
        if not sep or not host:
            raise ValueError("UDP ports must be specified as host:port")
        # The sending side's constructor makes the socket and binds nothing (off Windows); the bind is ours.
        super().__init__(address, input=False, source_system=source_system, source_component=source_component)
        try:
            self.port.bind((host, int(port)))
        except OSError:
            self.port.close()
            raise
        self.udp_server = True
        self.destination_addr = None


def mavlink_connection(connection: str, **options: Any) -> Any:
    """``mavutil.mavlink_connection``, with a ``udpin:`` port that no other socket can share."""
    if connection.startswith(_UDPIN):
        return ExclusiveUdpIn(connection[len(_UDPIN):], **options)
    return mavutil.mavlink_connection(connection, **options)
