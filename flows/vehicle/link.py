"""The one way sortie opens a MAVLink link to a vehicle: ``open_link`` → ``VehicleLink``.

Every part that talks to a vehicle — the upload, launch, the control commands
(pause, resume, recall), the flight follower and reconcile — takes a
``VehicleLink`` (or a connection string it hands to ``open_link``); nothing
else creates a pymavlink connection. A long-lived owner (the authority's
vehicle hub) can hold one link per vehicle and lend it to each part in turn;
``subscribe`` lets it watch every message while a part reads.

What opening a link does, and why (FACTS.md, "MAVLink" and "ArduCopter 4.6.3
SITL, observed"):

- the connection string is pymavlink's (``udpout:``, ``udpin:``, ``tcp:HOST:PORT``);
- the **binding** (``flows.vehicle.binding``) is applied to everything: our
  MAVLink ids, the vehicle's expected system/component id and autopilot
  (``DeviceMismatch`` otherwise, nothing sent), and with a signing key **every
  outgoing message is signed** and unsigned or wrongly signed replies are
  dropped — a signed ArduPilot silently drops unsigned commands and stream
  requests on every port but SERIAL0;
- a GCS HEARTBEAT at 1 Hz while the link is read (some vehicles drop a silent
  partner), and the vehicle's own heartbeat awaited before anything else is sent;
- the telemetry the caller needs is **asked for on every (re)connection**:
  ArduPilot streams nothing but HEARTBEAT on a port until asked, and rates are
  kept per port: MAV_CMD_SET_MESSAGE_INTERVAL per message, and for any that is
  not ACCEPTED, REQUEST_DATA_STREAM of the group that carries it;
- when no heartbeat comes before anything was sent, the error names the likely
  causes: a TCP port held by another client (ArduPilot serves one client per
  port; a second one connects and then hears nothing), a signing mismatch, a
  vehicle that is down or a wrong address.

Every message of the vehicle updates ``view`` (``flows.vehicle.view``), so a
part reads the vehicle's own state, never a value it has not sent.

A link held by a vehicle hub is lent to every part that opens the same address
through the hub's ``Vehicles`` port (``flows.vehicle.vehicles``), never here.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from flows.mavlink import mavutil  # noqa: E402

from flows.vehicle.binding import VehicleBinding  # noqa: E402
from flows.vehicle.peer import PeerUdpIn, busy_hint, nothing_listens, open_hint, open_peer  # noqa: E402
from flows.vehicle.stream_rates import CONTROL_STREAMS, TELEMETRY, UPLOAD_STREAMS  # noqa: E402,F401  (re-exported)
from flows.vehicle.view import VehicleView, apply  # noqa: E402
from flows.errors import DeviceMismatch, DeviceUnavailable
from planner.errors import InvalidArgument

__all__ = [
    "VehicleLink",
    "open_link",
    "GCS_SYSTEM_ID",
    "GCS_COMPONENT_ID",
    "TELEMETRY",
    "CONTROL_STREAMS",
    "UPLOAD_STREAMS",
    "DATA_STREAM_OF",
]

_M = mavutil.mavlink

GCS_SYSTEM_ID = 255
GCS_COMPONENT_ID = _M.MAV_COMP_ID_MISSIONPLANNER  # 190
RECONNECT_SILENCE_S = 3.0  # a heartbeat after this much silence is a reconnection: ask for the streams again
#: Heartbeats but none of the asked streams for this long: the vehicle forgot this port's rates (a reboot, whose
#: silence can be shorter than RECONNECT_SILENCE_S: ~1 s on SITL), and its new boot time comes only once asked.
STREAMS_FORGOTTEN_S = 2.5


_MESSAGE_ID = {"SYS_STATUS": 1, "SYSTEM_TIME": 2, "GPS_RAW_INT": 24, "GLOBAL_POSITION_INT": 33,
               "MISSION_CURRENT": 42, "BATTERY_STATUS": 147, "HOME_POSITION": 242, "EXTENDED_SYS_STATE": 245}
#: ArduPilot's stream group of each message (``STREAM_*_msgs``, GCS_MAVLink_Parameters.cpp); None: in no group.
DATA_STREAM_OF: Mapping[str, int | None] = {
    "SYS_STATUS": _M.MAV_DATA_STREAM_EXTENDED_STATUS, "MISSION_CURRENT": _M.MAV_DATA_STREAM_EXTENDED_STATUS,
    "GPS_RAW_INT": _M.MAV_DATA_STREAM_EXTENDED_STATUS, "GLOBAL_POSITION_INT": _M.MAV_DATA_STREAM_POSITION,
    "BATTERY_STATUS": _M.MAV_DATA_STREAM_EXTRA3, "SYSTEM_TIME": _M.MAV_DATA_STREAM_EXTRA3,
    "HOME_POSITION": None, "EXTENDED_SYS_STATE": None,
}
Subscriber = Callable[[Any], None]


class VehicleLink:
    """One open MAVLink link to one bound vehicle; a context manager (the socket is closed on exit).

    Reads and sends are serialised (one lock); a message read by one part is
    returned to that part only, but every ``subscribe``r sees every message of the
    vehicle, whoever read it — so a follower can watch while a launch or a
    command reads, through the same link.
    """

    def __init__(self, connection: str, binding: VehicleBinding | None = None, *,
                 streams: Mapping[str, float] | None = None, heartbeat_timeout_s: float = 5.0,
                 stream_ack_s: float = 1.0, system_id: int = GCS_SYSTEM_ID,
                 component_id: int = GCS_COMPONENT_ID) -> None:
        self.connection = connection
        self.binding = binding or VehicleBinding()
        self.streams: dict[str, float] = dict(TELEMETRY if streams is None else streams)
        unknown = sorted(set(self.streams) - set(_MESSAGE_ID))
        if unknown:
            raise InvalidArgument(f"no stream request for {', '.join(unknown)}; known: {', '.join(sorted(_MESSAGE_ID))}")
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.stream_ack_s = stream_ack_s
        try:
            self.conn = open_peer(connection, source_system=system_id, source_component=component_id)
        except Exception as exc:  # noqa: BLE001 - pymavlink raises many kinds for a bad string or socket
            raise DeviceUnavailable(f"cannot open MAVLink link {connection!r}: {exc}" + open_hint(connection, exc),
                                    details={"link": connection, "nothing_sent": True}) from None
        key = self.binding.signing_key
        if key is not None:
            if len(key) != 32:
                raise InvalidArgument("a MAVLink 2 signing key is 32 bytes")
            # an unsigned or wrongly signed reply is dropped as BAD_DATA; the callback only lets pymavlink
            # count the refusals (signing.reject_count), so a mismatch can be told from silence
            self.conn.setup_signing(key, sign_outgoing=True, allow_unsigned_callback=_refuse_unsigned)
        self.target_system = 0
        self.target_component = 0
        self.autopilot: int | None = None
        self.view = VehicleView()
        self.seen: dict[str, float] = {}  # message type → monotonic time of the last one from the vehicle
        self.stream_outcome: dict[str, str] = {}  # message → "interval" | "data_stream" | "unanswered"
        self.stream_answers: dict[str, Any] = {}
        self._asked: dict[str, Any] | None = None  # stream requests sent and not yet settled
        self.sent_anything = False  # anything but our heartbeat has gone to the vehicle
        self.other_systems: Counter[int] = Counter()  # messages of another system id heard on this link
        self.sessions = 0  # vehicle session restarts seen (its boot time went back: a reboot)
        self._subscribers: list[Subscriber] = []
        self._lock = threading.RLock()
        self.leases = 0  # parts this link is lent to (``vehicles.HeldLinks``); its owner does not read meanwhile
        self._last_hello = 0.0
        self._last_rx = 0.0
        self._streams_asked_at = 0.0

    # --- lifecycle ---------------------------------------------------------------------------

    def __enter__(self) -> "VehicleLink":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, *, force: bool = False) -> None:
        """Close the socket; a lent link returns one lease instead (its owner closes it with ``force``)."""
        with self._lock:
            if self.leases > 0 and not force:
                self.leases -= 1
                return
        try:
            self.conn.close()
        except OSError:
            pass

    def lend(self) -> "VehicleLink":
        """One more part speaks through this link (``vehicles.HeldLinks``); its ``close()`` returns the lease."""
        with self._lock:
            self.leases += 1
        return self

    @property
    def signed(self) -> bool:
        return self.binding.signing_key is not None

    @property
    def mav(self) -> Any:
        """The pymavlink MAVLink object: everything sent through it is signed when the binding has a key."""
        return self.conn.mav

    @property
    def dialect(self) -> str | None:
        from flows.vehicle.binding import AUTOPILOT_DIALECT

        return AUTOPILOT_DIALECT.get(self.autopilot or -1)

    # --- sending -----------------------------------------------------------------------------

    def send(self, build: Callable[[Any], None]) -> None:
        """Send one message (``build(mav)`` calls a ``*_send``); serialised for parts on several threads."""
        with self._lock:
            self.sent_anything = True
            build(self.conn.mav)

    def command_long(self, command: int, params: Iterable[float], confirmation: int = 0) -> None:
        p = list(params) + [0.0] * 7
        self.send(lambda m: m.command_long_send(self.target_system, self.target_component, command, confirmation,
                                                *p[:7]))

    def heartbeat(self) -> None:
        self._last_hello = time.monotonic()
        try:
            with self._lock:
                self.conn.mav.heartbeat_send(_M.MAV_TYPE_GCS, _M.MAV_AUTOPILOT_INVALID, 0, 0, _M.MAV_STATE_ACTIVE)
        except OSError:
            pass  # a udpin link has no peer until the vehicle speaks

    # --- reading -----------------------------------------------------------------------------

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """Call ``fn(msg)`` for every message of the vehicle read from now on; returns the unsubscribe."""
        self._subscribers.append(fn)
        return lambda: self._subscribers.remove(fn) if fn in self._subscribers else None

    @property
    def subscriber_count(self) -> int:
        """How many read this link's messages (a launch waits for its follower to be one before the vehicle moves)."""
        return len(self._subscribers)

    def recv(self, types: str | list[str] | None = None, timeout: float = 0.0) -> Any:
        """The next message (of ``types``) within ``timeout`` s, or None; keeps the 1 Hz GCS heartbeat going.

        Every message of the bound vehicle read on the way updates ``view`` and
        goes to the subscribers, whatever its type.
        """
        wanted = None if types is None else ({types} if isinstance(types, str) else set(types))
        end = time.monotonic() + max(0.0, timeout)
        while True:
            now = time.monotonic()
            if now - self._last_hello >= 1.0:
                self.heartbeat()
            left = end - now
            try:
                with self._lock:  # (pymavlink returns at once, unread, for a timeout of 0: no timeout when not waiting)
                    msg = self.conn.recv_match(blocking=True, timeout=min(left, 0.25)) if left > 0 else \
                        self.conn.recv_match(blocking=False)
                    if self._asked is not None:
                        self._settle_streams()
                    if msg is not None:
                        self._observe(msg)  # in the lock: subscribers see each message once, one at a time
            except OSError:
                msg = None
            if msg is not None:
                if msg.get_type() != "BAD_DATA" and (wanted is None or msg.get_type() in wanted):
                    return msg
                continue
            if time.monotonic() >= end:
                return None

    def _observe(self, msg: Any) -> None:
        kind = msg.get_type()
        if kind == "BAD_DATA":
            return
        src = msg.get_srcSystem()
        if self.target_system and src != self.target_system:
            if len(self.other_systems) < 64 or src in self.other_systems:
                self.other_systems[src] += 1  # counted (``foreign``), never read: another system is not our vehicle
            return
        if src in (0, GCS_SYSTEM_ID) or (kind == "HEARTBEAT" and msg.type == _M.MAV_TYPE_GCS):
            return
        if not self.target_system:
            return  # only the bound vehicle, once heard (``wait_vehicle``/``adopt``), describes the vehicle
        if kind == "HEARTBEAT" and msg.autopilot == _M.MAV_AUTOPILOT_INVALID:
            return  # a camera or gimbal of the same system
        now = time.monotonic()
        if kind == "HEARTBEAT" and self.target_system and self.stream_outcome and (
                now - self._last_rx >= RECONNECT_SILENCE_S or now - max(
                    [self._streams_asked_at, *(self.seen.get(n, 0.0) for n in self.streams)]) >= STREAMS_FORGOTTEN_S):
            self._last_rx = now
            self.request_streams(wait=False)  # back after silence (a reconnection), or rates forgotten (a reboot)
        self._last_rx = now
        if kind == "COMMAND_ACK" and self._asked is not None and int(msg.command) == _M.MAV_CMD_SET_MESSAGE_INTERVAL:
            self._asked["acks"][0 if int(msg.result) == _M.MAV_RESULT_ACCEPTED else 1] += 1
        before = self.view
        self.view = apply(before, msg)
        if self.view.session != before.session:
            # the vehicle's boot time went back: a new session (a reboot). Nothing of the old one is kept, and
            # what was asked of the port is asked again (a rebooted ArduPilot streams nothing until asked)
            self.sessions += 1
            self.seen = {k: t for k, t in self.seen.items() if k == "HEARTBEAT"}
            if self.stream_outcome:
                self.request_streams(wait=False)
        self.seen[kind] = now
        for fn in list(self._subscribers):
            fn(msg)

    def pump(self, seconds: float, until: Callable[[], bool] | None = None) -> bool:
        """Read for up to ``seconds`` (bounded) or until ``until()``; True if ``until`` became true."""
        deadline = time.monotonic() + max(0.0, seconds)
        while True:
            if until is not None and until():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.recv(None, timeout=min(0.05, left))

    def fresh(self, kind: str, after: float, timeout_s: float) -> bool:
        """Whether a ``kind`` message of the vehicle arrives after ``after`` (monotonic) within ``timeout_s``."""
        return self.pump(timeout_s, lambda: self.seen.get(kind, 0.0) > after)

    # --- connecting --------------------------------------------------------------------------

    def connect(self, deadline: float | None = None) -> VehicleView:
        """Hello, the bound vehicle's heartbeat (``wait_vehicle``), then the streams; returns the view."""
        self.wait_vehicle(deadline if deadline is not None else time.monotonic() + self.heartbeat_timeout_s)
        if self.streams:
            self.request_streams()
            answered = self.stream_answers.get("accepted", 0) + self.stream_answers.get("refused", 0)
            hint = self.unanswered_hint()
            if not answered and hint:
                # heard, but deaf to us: a signed vehicle drops this unsigned link's requests (nothing else was sent)
                raise DeviceUnavailable(f"the vehicle on {self.connection!r} answers no request of this link." + hint,
                                        details={"link": self.connection, "nothing_sent": True})
        return self.view

    def wait_vehicle(self, deadline: float) -> None:
        """Send heartbeats until the bound autopilot's heartbeat names its ids.

        Heartbeats of ground stations and of components without an autopilot
        (cameras, gimbals) are skipped. With an expected system id, a heartbeat
        from another system is noted and waited past; one from the right system
        with another component or autopilot type is refused at once. Raises
        ``DeviceMismatch`` when only other vehicles (or only unverifiable
        signatures) were heard, and ``DeviceUnavailable`` naming the likely
        causes when nothing was.
        """
        b = self.binding
        end = min(deadline, time.monotonic() + self.heartbeat_timeout_s)
        others: set[tuple[int, int, int]] = set()
        while time.monotonic() < end:
            self.heartbeat()
            try:
                with self._lock:
                    msg = self.conn.recv_match(type="HEARTBEAT", blocking=True,
                                               timeout=max(0.0, min(0.5, end - time.monotonic())))
            except OSError:
                msg = None
            if msg is None or msg.type == _M.MAV_TYPE_GCS or msg.autopilot == _M.MAV_AUTOPILOT_INVALID \
                    or msg.get_srcSystem() == 0:
                continue
            sysid, compid, autopilot = msg.get_srcSystem(), msg.get_srcComponent(), int(msg.autopilot)
            if b.system_id is not None and sysid != b.system_id:
                others.add((sysid, compid, autopilot))
                continue
            if b.component_id is not None and compid != b.component_id:
                raise DeviceMismatch(
                    f"the autopilot of system {sysid} on {self.connection!r} is component {compid}, "
                    f"the fleet entry says {b.component_id}; nothing sent"
                )
            if b.autopilot is not None and autopilot != b.autopilot:
                raise DeviceMismatch(
                    f"system {sysid} on {self.connection!r} reports autopilot {_autopilot_name(autopilot)}, "
                    f"the fleet entry says {_autopilot_name(b.autopilot)}; nothing sent"
                )
            self.target_system, self.target_component, self.autopilot = sysid, compid, autopilot
            self._latch()
            self._observe(msg)
            return
        if others:
            seen = ", ".join(f"system {s} component {c} ({_autopilot_name(a)})" for s, c, a in sorted(others))
            raise DeviceMismatch(
                f"the vehicle on {self.connection!r} is {seen}, not system {b.system_id} of the fleet entry; nothing sent"
            )
        signing = self.conn.mav.signing
        if self.signed and signing.reject_count > 0:
            raise DeviceMismatch(
                f"the vehicle on {self.connection!r} answers, but not signed with this drone's key "
                f"({signing.reject_count} messages refused, {signing.badsig_count} with another key); nothing sent"
            )
        raise DeviceUnavailable(self.silence_causes(), details={"link": self.connection, "nothing_sent": True})

    def adopt(self, msg: Any) -> str | None:  # noqa: C901 - one check per binding field
        """Take the sender of a HEARTBEAT as this link's vehicle if the binding allows it (for a reader that does
        not block in ``wait_vehicle``); returns why not, or None once adopted (then the streams are asked)."""
        if self.target_system or msg.get_type() != "HEARTBEAT" or msg.type == _M.MAV_TYPE_GCS \
                or msg.autopilot == _M.MAV_AUTOPILOT_INVALID or msg.get_srcSystem() in (0, GCS_SYSTEM_ID):
            return "not a vehicle's heartbeat"
        b = self.binding
        sysid, compid, autopilot = msg.get_srcSystem(), msg.get_srcComponent(), int(msg.autopilot)
        if b.system_id is not None and sysid != b.system_id:
            return f"system {sysid} answers, the fleet entry says {b.system_id}"
        if b.component_id is not None and compid != b.component_id:
            return f"component {compid} answers, the fleet entry says {b.component_id}"
        if b.autopilot is not None and autopilot != b.autopilot:
            return f"autopilot {_autopilot_name(autopilot)} answers, the fleet entry says {_autopilot_name(b.autopilot)}"
        with self._lock:
            self.target_system, self.target_component, self.autopilot = sysid, compid, autopilot
            self._latch()
            self._observe(msg)
        if self.streams:
            self.request_streams(wait=False)
        return None

    def _latch(self) -> None:
        """A ``udpin:`` link reads the source of the vehicle's accepted heartbeat alone from now on."""
        if isinstance(self.conn, PeerUdpIn) and self.conn.peer is None and self.conn.last_source is not None:
            self.conn.latch(self.conn.last_source)

    def foreign(self) -> dict[str, Any]:
        """What this link refused and never read: datagrams from another source, messages of another system id,
        and (signed links) frames not signed with the drone's key; counts since the link opened, with samples."""
        traffic = getattr(self.conn, "foreign", None)
        signing: Any = self.conn.mav.signing
        return {
            "other_source": 0 if traffic is None else traffic.datagrams,
            "other_system": sum(self.other_systems.values()),
            "unsigned": int(signing.reject_count) if self.signed else 0,
            "sources": [] if traffic is None else [a for a, _ in traffic.sources.most_common(5)],
            "systems": [s for s, _ in self.other_systems.most_common(5)],
        }

    def silence_causes(self) -> str:
        """Why a link may hear no heartbeat before anything was sent: the likely causes, most specific first."""
        causes = []
        if self.connection.startswith("tcp:"):
            if getattr(self.conn, "refused", False):
                causes.append(nothing_listens(self.connection))
            else:
                causes.append(busy_hint(self.connection).strip("; "))
        if self.signed:
            causes.append("a signing mismatch: this link signs with the drone's key and drops what is not signed "
                          "with it, so a vehicle with another key (or none) is not heard")
        else:
            causes.append("a signing mismatch: a vehicle that requires signing drops this unsigned link's messages "
                          "on every port but SERIAL0 (set the fleet entry's signing_key)")
        causes.append("the vehicle (or `sortie sim-vehicle`) is not running, or the address is wrong")
        return (f"no vehicle heartbeat on {self.connection!r} within {self.heartbeat_timeout_s:g} s and nothing was "
                f"sent to it; likely causes: " + "; ".join(causes))

    def request_streams(self, streams: Mapping[str, float] | None = None, *, wait: bool = True) -> dict[str, str]:
        """Ask for telemetry on this connection: SET_MESSAGE_INTERVAL per message now, and REQUEST_DATA_STREAM
        for the groups of the messages once it is clear not all were ACCEPTED (``stream_ack_s``).

        ``wait``: read until that is settled (a few hundred ms on a live vehicle); otherwise it settles while
        the link is read. Returns (and keeps in ``stream_outcome``) how each message was asked.
        """
        wanted = dict(self.streams if streams is None else streams)
        if not wanted or not self.target_system:
            return {}
        for name, hz in sorted(wanted.items()):
            self.command_long(_M.MAV_CMD_SET_MESSAGE_INTERVAL, (float(_MESSAGE_ID[name]), 1e6 / hz))
        self._asked = {"wanted": wanted, "since": time.monotonic(), "acks": [0, 0]}
        self._streams_asked_at = self._asked["since"]
        if wait:
            self.pump(self.stream_ack_s + 0.05, lambda: self._asked is None)
            self._settle_streams(force=True)
        return dict(self.stream_outcome)

    def _settle_streams(self, force: bool = False) -> None:
        """Once every SET_MESSAGE_INTERVAL was answered, or ``stream_ack_s`` passed: fall back where needed."""
        asked = self._asked
        if asked is None:
            return
        wanted, (accepted, refused) = asked["wanted"], asked["acks"]
        late = time.monotonic() - asked["since"] >= self.stream_ack_s
        if accepted + refused < len(wanted) and not late and not force:
            return
        self._asked = None
        self.stream_answers = {"accepted": accepted, "refused": refused, "asked": len(wanted),
                               "seconds": round(time.monotonic() - asked["since"], 3)}
        if accepted >= len(wanted):
            self.stream_outcome.update({name: "interval" for name in wanted})
            return
        # COMMAND_ACK does not say which message it answers: every group of a wanted message is asked again
        groups: dict[int, float] = {}
        for name, hz in wanted.items():
            group = DATA_STREAM_OF.get(name)
            self.stream_outcome[name] = "data_stream" if group is not None else ("interval" if accepted else "unanswered")
            if group is not None:
                groups[group] = max(groups.get(group, 0.0), hz)
        for group, hz in sorted(groups.items()):
            rate = max(1, int(round(hz)))
            self.send(lambda m, g=group, r=rate: m.request_data_stream_send(
                self.target_system, self.target_component, g, r, 1))

    def unanswered_hint(self) -> str:
        """What to suspect when the vehicle shows nothing of what was asked (commands, streams): signing."""
        if self.signed:
            return ""
        if self.conn.mav.signing.sig_count > 0:
            return (" The vehicle signs its messages and this drone has no signing key: ArduPilot drops unsigned "
                    "commands and stream requests on every port but SERIAL0 (set the fleet entry's signing_key).")
        return ""


def open_link(connection: str, binding: VehicleBinding | None = None, *, connect: bool = True,
              deadline: float | None = None, streams: Mapping[str, float] | None = None,
              heartbeat_timeout_s: float = 5.0, stream_ack_s: float = 1.0,
              component_id: int = GCS_COMPONENT_ID) -> VehicleLink:
    """Open the link of a drone's binding and (by default) connect: hello, heartbeat, streams.

    The one function that opens a MAVLink connection in sortie (see the module
    docstring). On any failure the socket is closed before the error is raised.
    A part that speaks to a vehicle reaches it through a ``Vehicles`` port
    (``flows.vehicle.vehicles``), which lends a held link where its owner holds one.
    """
    link = VehicleLink(connection, binding, streams=streams, heartbeat_timeout_s=heartbeat_timeout_s,
                       stream_ack_s=stream_ack_s, component_id=component_id)
    if connect:
        try:
            link.connect(deadline)
        except BaseException:
            link.close()
            raise
    return link


def _refuse_unsigned(mav: Any, msg_id: int) -> bool:
    """A bound, signing link accepts no unsigned message, not even a heartbeat."""
    return False


def _autopilot_name(code: int) -> str:
    entry = _M.enums["MAV_AUTOPILOT"].get(int(code))
    return entry.name if entry is not None else str(code)
