"""The simulated vehicle's serial ports: one MAVLink channel each, with its own streams and signing rule.

An autopilot talks to ground stations through numbered ports (ArduPilot's
SERIAL0, SERIAL1, …; SITL puts them on TCP 5760, 5762, 5763). What a ground
station sees depends on the port it holds, so the simulator keeps, per port
(FACTS.md, "ArduCopter 4.6.3 SITL, observed"):

- its own **stream rates**: a port nobody asked sends only HEARTBEAT (and the
  single messages of boot), and rates asked on a port stay with that port
  (``GCS_MAVLINK::streamRates`` and the deferred-message buckets are members
  of each channel's ``GCS_MAVLINK``, ``libraries/GCS_MAVLink/GCS_Common.cpp``);
- its own **signing rule**: with a key set every frame is signed on every port,
  and an unsigned (or wrongly signed) message is accepted only on SERIAL0
  (``accept_unsigned_callback`` in ``libraries/GCS_MAVLink/GCS_Signing.cpp``:
  "always accept channel 0, assumed to be secure channel", plus RADIO_STATUS);
  elsewhere it is dropped without a word;
- **one client per TCP port**: SITL's ``UARTDriver`` accepts one connection per
  port; a second client is left in the listen queue (its connect succeeds) and
  receives nothing, not even HEARTBEAT, until the first one leaves (observed).

A ``udpin:`` port answers every client that has spoken to it (pymavlink's
``udpin``), as a router in front of the vehicle would; its port is its own
(``flows.vehicle.udp_exclusive``: no other socket can bind it).
"""

from __future__ import annotations

import errno
import math
import socket
from typing import Any, Callable

from flows.mavlink import mavutil  # noqa: E402

from flows.vehicle.udp_exclusive import mavlink_connection  # noqa: E402

__all__ = ["SimPort", "RADIO_STATUS_ID"]

_TCP_QUEUE_BYTES = 1 << 20  # what a TCP port holds for a client that does not read (then it drops whole messages)
_DUE_SLACK_S = 1e-6  # a stream stepped to its due time is due then, whatever the floating-point sum says
RADIO_STATUS_ID = 109  # MAVLINK_MSG_ID_RADIO_STATUS: accepted unsigned on any port (GCS_Signing.cpp accept_list)


class _OneClientTcp(mavutil.mavtcpin):
    """pymavlink's ``tcpin`` that also notices when its client leaves (``recv`` of b'' is a closed socket).

    pymavlink keeps a closed client forever, so the next client would wait in
    the listen queue for good; SITL accepts the next one once the first is gone.
    """

    def recv(self, n: int | None = None) -> Any:  # noqa: D401 - pymavlink's signature
        if not self.port:
            try:
                (self.port, _addr) = self.listen.accept()
            except OSError:
                return ""
            self.port.setsockopt(socket.SOL_TCP, socket.TCP_NODELAY, 1)
            self.port.setblocking(False)
            self.fd = self.port.fileno()
        if n is None:
            n = self.mav.bytes_needed()
        try:
            data = self.port.recv(n)
        except OSError as exc:
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                return ""
            data = b""
        if data == b"":
            self._drop_client()
            return ""
        return data

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._unsent = bytearray()  # bytes of whole messages the client's socket has not taken yet
        super().__init__(*args, **kwargs)

    def _drop_client(self) -> None:
        try:
            self.port.close()
        except (OSError, AttributeError):
            pass
        self._unsent = bytearray()
        self.port = None
        self.fd = self.listen.fileno()

    def write(self, buf: Any) -> None:
        """Queue ``buf`` whole behind what the socket has not taken yet; a full queue drops the new message whole,
        as ArduPilot skips a message its port's transmit buffer has no room for (``GCS_MAVLINK::txspace``): a slow
        reader loses messages, never the framing of one (a non-blocking ``send`` may take part of it)."""
        if self.port is None:
            return
        if len(self._unsent) + len(buf) <= _TCP_QUEUE_BYTES:
            self._unsent += bytes(buf)
        try:
            sent = self.port.send(self._unsent) if self._unsent else 0
        except BlockingIOError:
            sent = 0
        except OSError:
            self._drop_client()
            return
        del self._unsent[:sent]


class SimPort:
    """One port of the vehicle: a pymavlink connection plus the per-port state an autopilot keeps."""

    def __init__(self, index: int, listen: str, *, system_id: int, component_id: int) -> None:
        self.index = index
        self.name = f"SERIAL{index}"
        self.listen = listen
        if listen.startswith("tcpin:"):
            self.conn: Any = _OneClientTcp(listen[len("tcpin:"):], source_system=system_id,
                                           source_component=component_id)
        else:
            self.conn = mavlink_connection(listen, source_system=system_id, source_component=component_id)
        self.rates_s: dict[str, float] = {}  # message name → interval (simulated seconds) asked on this port
        self.last_sent_s: dict[str, float] = {}
        self._last_wall_s: dict[str, float] = {}
        self.address = self._address()

    @property
    def secure(self) -> bool:
        """SERIAL0: where ArduPilot accepts unsigned messages even with a signing key set."""
        return self.index == 0

    @property
    def has_client(self) -> bool:
        """Whether anyone is there to hear this port (a TCP port without an accepted client sends nothing)."""
        if isinstance(self.conn, _OneClientTcp):
            return self.conn.port is not None
        return True

    def _address(self) -> str:
        if isinstance(self.conn, _OneClientTcp):
            host, port = self.conn.listen.getsockname()[:2]
            return f"tcp:{host}:{port}"
        sock = getattr(self.conn, "port", None)
        if sock is None or not hasattr(sock, "getsockname"):
            return self.listen
        host, port = sock.getsockname()[:2]
        return f"udpout:{host}:{port}"

    def sign(self, key: bytes | None) -> None:
        """Sign everything this port sends with ``key`` and drop what is unsigned, SERIAL0 aside (None: off)."""
        if key is None:
            self.conn.disable_signing()
            return
        secure = self.secure

        def accept_unsigned(mav: Any, msg_id: int) -> bool:
            return secure or msg_id == RADIO_STATUS_ID

        self.conn.setup_signing(key, sign_outgoing=True, allow_unsigned_callback=accept_unsigned)

    def recv(self) -> Any:
        """The next whole message waiting on this port, or None (never blocks)."""
        try:
            return self.conn.recv_match(blocking=False)
        except OSError:
            return None

    def fileno(self) -> int:
        return int(self.conn.fd)

    def send(self, build: Callable[[Any], None]) -> bool:
        """Send one message through this port's MAVLink object; False when nobody holds the port."""
        if not self.has_client:
            return False
        try:
            build(self.conn.mav)
        except OSError:
            return False  # a udpin port with no peer yet, or a peer that went away
        return True

    def next_due_s(self, after_s: float = -math.inf) -> float | None:
        """The vehicle time, after ``after_s``, the earliest asked stream of this port is due next (None: nothing
        asked, nothing due after then, or no client). A stream already overdue goes out on the next step anyway."""
        if not self.has_client:
            return None
        due = [t for t in (self.last_sent_s.get(name, -1e9) + interval
                           for name, interval in self.rates_s.items() if interval > 0) if t > after_s]
        return min(due) if due else None

    def due(self, name: str, now_s: float, wall_s: float = 0.0, min_wall_s: float = 0.0) -> bool:
        """Whether ``name`` is asked on this port and its interval has passed (``now_s``: simulated seconds), and
        ``min_wall_s`` wall seconds since it last went (``wall_s``: the wall clock)."""
        interval = self.rates_s.get(name)
        if interval is None or interval <= 0:
            return False
        last = self.last_sent_s.get(name)
        if last is not None and now_s - last < interval - _DUE_SLACK_S and now_s >= last:
            return False
        if min_wall_s > 0 and wall_s - self._last_wall_s.get(name, -1e9) < min_wall_s:
            return False
        self.last_sent_s[name] = now_s
        self._last_wall_s[name] = wall_s
        return True

    def drop_client(self) -> None:
        """A TCP port lets its client go (the vehicle restarted); the next connection is accepted afresh."""
        if isinstance(self.conn, _OneClientTcp) and self.conn.port is not None:
            self.conn._drop_client()

    def close(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass
