"""The vehicle simulator: a MAVLink 2 vehicle that answers the mission protocol, with faults.

``sortie sim-vehicle`` and ``sortie demo`` run it as the drone at the other
end of a link; the dispatch tests fly their fault matrix against it over real
UDP. It speaks for one vehicle (system 1, component 1 by default):

- heartbeats at ``heartbeat_s``;
- mission upload (MISSION_COUNT → MISSION_REQUEST[_INT]… → MISSION_ACK) and
  download (MISSION_REQUEST_LIST → MISSION_COUNT → MISSION_ITEM_INT…) of the
  mission, the fence and the rally points, stored per ``mission_type``, and
  MISSION_CLEAR_ALL — each the way its autopilot's own code does it
  (``flows.sim.mission_protocol`` has the behaviour table with the source
  file and function of each habit): ArduPilot asks with the legacy
  MISSION_REQUEST, answers a stray item with INVALID_SEQUENCE and an item
  after the transfer with ERROR, writes mission and rally items as they
  arrive and returns its home as mission seq 0; PX4 asks with
  MISSION_REQUEST_INT every 250 ms, ignores an item out of order, acks a
  repeated last item again and has no home slot. Stored altitudes are in
  centimetres on ArduPilot and unused (NaN) params come back as 0.
- PARAM_SET / PARAM_REQUEST_READ of the dialect's own parameters (the fence
  ceiling ``FENCE_ALT_MAX`` or ``GF_MAX_VER_DIST`` among them), answered with
  PARAM_VALUE; an unknown name is ignored, as autopilots do.
- faults: ``drop`` drops that fraction of incoming and of outgoing messages
  (seeded RNG); ``lose`` names single messages to lose once each (a loss
  point: ``count:fence``, ``item:mission:3``, ``request:rally:0``,
  ``ack:mission`` — the ACCEPTED ack that ends an upload; ``*`` for every
  mission type); ``lose_final_ack`` never delivers that ack; ``reject``
  answers every upload of ``reject_types`` with that MAV_MISSION_RESULT, at
  its COUNT or, with ``reject_at_seq``, at that item (after ArduPilot wrote
  the ones before it).
- binding: ``system_id``/``component_id`` are the vehicle's MAVLink ids; with
  ``signing_key`` (32 bytes) it signs everything it sends and drops every
  message that is unsigned or signed with another key (pymavlink
  ``setup_signing`` without an unsigned callback), as a vehicle with
  MAVLink 2 signing enabled does.

Flying the mission is left to a ``VehicleBehaviour`` passed as ``flight``:
it sees every message first (``on_message``), is told when a mission is
stored (``on_mission_stored``), and is ticked from the same thread
(``tick``), where it may send telemetry with ``vehicle.send``. All sends
happen on the simulator's one thread, so a behaviour needs no locks.
"""

from __future__ import annotations

import os
import random
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Literal, Protocol

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from planner.errors import InvalidArgument  # noqa: E402
from flows.sim.mission_protocol import MissionProtocol, protocol_for  # noqa: E402
from planner.output.mission_items import (  # noqa: E402
    FENCE,
    FRAME_GLOBAL,
    MISSION,
    RALLY,
    MissionItem,
)
from planner.output.mission_wire import normalise_as_vehicle  # noqa: E402

__all__ = ["SimVehicle", "SimStats", "VehicleBehaviour", "result_code"]

_M = mavutil.mavlink

_REREQUEST_S = {"ardupilot": 1.0, "px4": 0.25}  # MissionItemProtocol::update; MAVLINK_MISSION_RETRY_TIMEOUT_DEFAULT
_TRANSFER_TIMEOUT_S = {"ardupilot": 8.0, "px4": 5.0}  # upload_timeout_ms; MAVLINK_MISSION_PROTOCOL_TIMEOUT_DEFAULT
_DEFAULT_PARAMS = {
    "ardupilot": {"FENCE_ALT_MAX": 100.0, "FENCE_ENABLE": 0.0, "FENCE_TYPE": 7.0, "RTL_ALT": 1500.0},
    "px4": {"GF_MAX_VER_DIST": 0.0, "GF_ACTION": 1.0, "RTL_RETURN_ALT": 60.0},
}
_AUTOPILOT = {"ardupilot": _M.MAV_AUTOPILOT_ARDUPILOTMEGA, "px4": _M.MAV_AUTOPILOT_PX4}


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


class VehicleBehaviour(Protocol):
    """A pluggable part of the vehicle (the next issue: flying the mission and telemetry)."""

    def on_message(self, vehicle: "SimVehicle", msg: Any) -> bool:
        """See a message before the mission protocol; return True if it was handled."""
        ...

    def on_mission_stored(self, vehicle: "SimVehicle", mission_type: int, items: tuple[MissionItem, ...]) -> None:
        """A complete upload of ``mission_type`` was stored."""
        ...

    def tick(self, vehicle: "SimVehicle", now_s: float) -> None:
        """Called every loop turn (about every 10 ms) with the monotonic clock."""
        ...


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


class SimVehicle:
    """A simulated vehicle on a pymavlink link; ``start()`` runs it on a thread.

    ``listen`` is a pymavlink connection string, normally ``udpin:127.0.0.1:PORT``
    (port 0 picks a free one: read ``address``). The vehicle learns the ground
    station's address from the first packet it receives.
    """

    def __init__(
        self,
        listen: str,
        dialect: Literal["ardupilot", "px4"] = "ardupilot",
        *,
        drop: float = 0.0,
        lose_final_ack: bool = False,
        reject: str | None = None,
        reject_types: tuple[int, ...] = (MISSION,),
        reject_at_seq: int | None = None,
        lose: tuple[str, ...] | list[str] = (),
        signing_key: bytes | None = None,
        seed: int = 0,
        system_id: int = 1,
        component_id: int = 1,
        heartbeat_s: float = 1.0,
        rerequest_s: float | None = None,
        transfer_timeout_s: float | None = None,
        home: tuple[float, float, float] | None = None,
        flight: VehicleBehaviour | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if dialect not in _REREQUEST_S:
            raise InvalidArgument(f"dialect {dialect!r}: expected ardupilot or px4")
        if not 0.0 <= drop < 1.0:
            raise InvalidArgument(f"drop {drop!r} must be in [0, 1)")
        self.listen = listen
        self.dialect = dialect
        self.drop = drop
        self.lose_final_ack = lose_final_ack
        self.reject_result = result_code(reject) if reject else None
        self.reject_types = reject_types
        self.reject_at_seq = reject_at_seq
        # loss points: each (kind, type or any, seq or any) loses one message per mission type it matches
        self._losses = [parse_loss(x) for x in lose]
        self._lost: set[tuple[int, str, int]] = set()
        self.system_id = system_id
        self.component_id = component_id
        self.heartbeat_s = heartbeat_s
        self.rerequest_s = rerequest_s if rerequest_s is not None else _REREQUEST_S[dialect]
        self.transfer_timeout_s = transfer_timeout_s if transfer_timeout_s is not None else _TRANSFER_TIMEOUT_S[dialect]
        self.home = home
        self.flight = flight
        self.stats = SimStats()
        self._log = log
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._missions: dict[int, tuple[MissionItem, ...]] = {MISSION: (), FENCE: (), RALLY: ()}
        self._params: dict[str, float] = dict(_DEFAULT_PARAMS[dialect])
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_hb_s = 0.0
        self.conn = mavutil.mavlink_connection(listen, source_system=system_id, source_component=component_id)
        if signing_key is not None:
            if len(signing_key) != 32:
                raise InvalidArgument("a MAVLink 2 signing key is 32 bytes")
            self.conn.setup_signing(signing_key, sign_outgoing=True)
        self._protocol: MissionProtocol = protocol_for(self)
        self._address = self._bound_address()

    # --- public surface -------------------------------------------------------------------

    @property
    def address(self) -> str:
        """The connection string a ground station uses to reach this vehicle (``udpout:host:port``)."""
        return self._address

    def _bound_address(self) -> str:
        sock = getattr(self.conn, "port", None)
        if sock is None or not hasattr(sock, "getsockname"):
            return self.listen
        host, port = sock.getsockname()[:2]
        return f"udpout:{host}:{port}"

    @property
    def missions(self) -> dict[int, tuple[MissionItem, ...]]:
        """What the vehicle holds, per mission type, as it would hand it back (seq 0 = home on ArduPilot)."""
        with self._lock:
            stored = dict(self._missions)
        return {t: self._as_downloaded(t, items) for t, items in stored.items()}

    @property
    def params(self) -> dict[str, float]:
        """The vehicle's parameters as it holds them (float32 values)."""
        with self._lock:
            return dict(self._params)

    def start(self) -> "SimVehicle":
        """Run the vehicle on a daemon thread until ``stop()``."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve, name=f"sim-vehicle-{self.address}", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout_s: float = 2.0) -> None:
        """Stop the loop, join the thread (bounded) and close the socket."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None
        try:
            self.conn.close()
        except OSError:
            pass

    def __enter__(self) -> "SimVehicle":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve(self, duration_s: float | None = None) -> None:
        """The vehicle loop (blocking): until ``stop()`` or ``duration_s`` seconds."""
        end = None if duration_s is None else time.monotonic() + duration_s
        while not self._stop.is_set() and (end is None or time.monotonic() < end):
            try:
                msg = self.conn.recv_match(blocking=True, timeout=0.01)
            except OSError:
                if self._stop.is_set():
                    return
                raise
            now = time.monotonic()
            if msg is not None:
                self._receive(msg, now)
            self._periodic(now)

    def send(self, build: Callable[[Any], None], loss: tuple[str, int, int] | None = None) -> bool:
        """Send one message through the fault model; ``build(mav)`` calls a ``*_send``.

        ``loss`` names the message as a loss point (kind, mission type, seq) so a
        ``lose`` entry can drop it. Returns whether it went out.
        """
        if loss is not None and self._loses(*loss):
            self.stats.dropped_out += 1
            return False
        if self.drop and self._rng.random() < self.drop:
            self.stats.dropped_out += 1
            return False
        build(self.conn.mav)
        self.stats.sent += 1
        return True

    def _loses(self, kind: str, mtype: int, seq: int) -> bool:
        for n, (k, t, s) in enumerate(self._losses):
            if k == kind and (t is None or t == mtype) and (s is None or s == seq) and (n, kind, mtype) not in self._lost:
                self._lost.add((n, kind, mtype))
                self.stats.lost_on_purpose += 1
                return True
        return False

    def log(self, text: str) -> None:
        if self._log is not None:
            self._log(text)

    # --- the loop ---------------------------------------------------------------------------

    def _periodic(self, now: float) -> None:
        if now - self._last_hb_s >= self.heartbeat_s:
            self._last_hb_s = now
            self.send(
                lambda m: m.heartbeat_send(
                    _M.MAV_TYPE_QUADROTOR, _AUTOPILOT[self.dialect], _M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED, 0, _M.MAV_STATE_STANDBY
                )
            )
        self._protocol.tick(now)
        if self.flight is not None:
            self.flight.tick(self, now)

    def _receive(self, msg: Any, now: float) -> None:
        if msg.get_type() == "BAD_DATA":
            return
        self.stats.received += 1
        if self.drop and self._rng.random() < self.drop:
            self.stats.dropped_in += 1
            return
        kind = {"MISSION_COUNT": "count", "MISSION_ITEM_INT": "item", "MISSION_ITEM": "item"}.get(msg.get_type())
        if kind is not None and self._loses(kind, int(getattr(msg, "mission_type", MISSION)), int(getattr(msg, "seq", -1))):
            self.stats.dropped_in += 1
            return
        if self.flight is not None and self.flight.on_message(self, msg):
            return
        target = getattr(msg, "target_system", None)
        if target is not None and target not in (0, self.system_id):
            return
        handler = getattr(self, "_on_" + msg.get_type().lower(), None)
        if handler is not None:
            handler(msg, now)

    # --- mission protocol (flows.sim.mission_protocol, per autopilot) --------------------------

    def _on_mission_count(self, msg: Any, now: float) -> None:
        self._protocol.on_count(msg, now)

    def _on_mission_item_int(self, msg: Any, now: float) -> None:
        self._protocol.on_item(msg, now)

    def _on_mission_item(self, msg: Any, now: float) -> None:
        self._protocol.on_item(msg, now)

    def _on_mission_request_list(self, msg: Any, now: float) -> None:
        self._protocol.on_request_list(msg, now)

    def _on_mission_request_int(self, msg: Any, now: float) -> None:
        self._protocol.on_request(msg, now)

    def _on_mission_request(self, msg: Any, now: float) -> None:
        self._protocol.on_request(msg, now)

    def _on_mission_clear_all(self, msg: Any, now: float) -> None:
        self._protocol.on_clear_all(msg, now)

    def _on_mission_ack(self, msg: Any, now: float) -> None:
        self._protocol.on_ack(msg, now)

    def _store(self, mtype: int, items: tuple[MissionItem, ...]) -> None:
        with self._lock:
            self._missions[mtype] = items
        self.log(f"stored {len(items)} items of mission type {mtype}")

    def _as_downloaded(self, mtype: int, items: tuple[MissionItem, ...]) -> tuple[MissionItem, ...]:
        if self.dialect != "ardupilot" or mtype != MISSION or not items:
            return items
        first = items[0]
        lat, lon, alt = self.home if self.home is not None else (first.lat, first.lon, 0.0)
        home = MissionItem(seq=0, command=_M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL, lat=lat, lon=lon, alt_m=alt)
        return (normalise_as_vehicle(home, "ardupilot"),) + items[1:]

    # --- parameters ------------------------------------------------------------------------

    def _param_value(self, name: str) -> None:
        names = sorted(self._params)
        value = self._params[name]
        self.send(
            lambda m: m.param_value_send(
                name.encode("ascii"), value, _M.MAV_PARAM_TYPE_REAL32, len(names), names.index(name)
            )
        )

    @staticmethod
    def _name(raw: Any) -> str:
        text = raw if isinstance(raw, str) else bytes(raw).decode("ascii", "replace")
        return text.rstrip("\x00")

    def _on_param_set(self, msg: Any, now: float) -> None:
        name = self._name(msg.param_id)
        if name not in self._params:
            return
        with self._lock:
            self._params[name] = _f32(msg.param_value)
        self.log(f"param {name} = {msg.param_value:g}")
        self._param_value(name)

    def _on_param_request_read(self, msg: Any, now: float) -> None:
        name = self._name(msg.param_id)
        if name in self._params:
            self._param_value(name)


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]
