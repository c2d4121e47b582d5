"""The vehicle simulator: a MAVLink 2 vehicle that answers the mission protocol, with faults.

``sortie sim-vehicle`` and ``sortie demo`` run it as the drone at the other
end of a link; the dispatch tests fly their fault matrix against it over real
UDP. It speaks for one vehicle (system 1, component 1 by default):

- heartbeats at ``heartbeat_s``;
- mission upload (MISSION_COUNT → MISSION_REQUEST[_INT]… → MISSION_ACK) and
  download (MISSION_REQUEST_LIST → MISSION_COUNT → MISSION_ITEM_INT…) of the
  mission, the fence and the rally points, stored per ``mission_type``;
  MISSION_CLEAR_ALL. An upload that makes no progress for
  ``transfer_timeout_s`` is cancelled (ack OPERATION_CANCELLED). Both dialects
  store an upload only when it is complete (real ArduPilot writes items as
  they arrive; the dispatcher's wording allows for that).
- the dialect's habits: ``ardupilot`` asks with the legacy MISSION_REQUEST,
  re-asks after 1 s, answers a duplicate item with an INVALID_SEQUENCE ack,
  returns its home as mission seq 0, stores altitudes in centimetres and
  unused (NaN) params as 0; ``px4`` asks with MISSION_REQUEST_INT, re-asks
  after 250 ms and acknowledges a repeated last item again.
- PARAM_SET / PARAM_REQUEST_READ of the dialect's own parameters (the fence
  ceiling ``FENCE_ALT_MAX`` or ``GF_MAX_VER_DIST`` among them), answered with
  PARAM_VALUE; an unknown name is ignored, as autopilots do.
- faults: ``drop`` drops that fraction of incoming and of outgoing messages
  (seeded RNG), ``lose_final_ack`` never delivers the ACCEPTED ack that ends an
  upload, ``reject`` answers every upload of ``reject_types`` with that
  MAV_MISSION_RESULT.

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
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Protocol

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from planner.errors import InvalidArgument  # noqa: E402
from planner.mission_items import (
    # noqa: E402,
    FENCE,
    FRAME_GLOBAL,
    MISSION,
    RALLY,
    MissionItem,
)
from planner.mission_wire import from_wire, normalise_as_vehicle, to_wire

__all__ = ["SimVehicle", "SimStats", "VehicleBehaviour", "result_code"]

_M = mavutil.mavlink

_REREQUEST_S = {"ardupilot": 1.0, "px4": 0.25}
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


@dataclass
class _Upload:
    mission_type: int
    count: int
    items: list[MissionItem | None]
    expected: int = 0
    last_activity_s: float = 0.0  # last request sent or item received: drives the re-request timer
    progress_s: float = 0.0  # last time ``expected`` advanced: drives the transfer timeout
    partner: tuple[int, int] = (255, 0)


@dataclass
class _Done:
    count: int
    partner: tuple[int, int]


@dataclass
class _State:
    uploads: dict[int, _Upload] = field(default_factory=dict)
    done: dict[int, _Done] = field(default_factory=dict)


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
        seed: int = 0,
        system_id: int = 1,
        component_id: int = 1,
        heartbeat_s: float = 1.0,
        rerequest_s: float | None = None,
        transfer_timeout_s: float = 5.0,
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
        self.system_id = system_id
        self.component_id = component_id
        self.heartbeat_s = heartbeat_s
        self.rerequest_s = rerequest_s if rerequest_s is not None else _REREQUEST_S[dialect]
        self.transfer_timeout_s = transfer_timeout_s
        self.home = home
        self.flight = flight
        self.stats = SimStats()
        self._log = log
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._missions: dict[int, tuple[MissionItem, ...]] = {MISSION: (), FENCE: (), RALLY: ()}
        self._params: dict[str, float] = dict(_DEFAULT_PARAMS[dialect])
        self._state = _State()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_hb_s = 0.0
        self.conn = mavutil.mavlink_connection(listen, source_system=system_id, source_component=component_id)
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

    def send(self, build: Callable[[Any], None]) -> bool:
        """Send one message through the fault model; ``build(mav)`` calls a ``*_send``.

        Returns whether it went out (False when the fault model dropped it).
        """
        if self.drop and self._rng.random() < self.drop:
            self.stats.dropped_out += 1
            return False
        build(self.conn.mav)
        self.stats.sent += 1
        return True

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
        for mtype, up in list(self._state.uploads.items()):
            if now - up.progress_s > self.transfer_timeout_s:
                del self._state.uploads[mtype]
                self.log(f"upload of type {mtype} made no progress for {self.transfer_timeout_s:g} s at seq {up.expected}; cancelled, old one kept")
                self._ack(up.partner, mtype, _M.MAV_MISSION_OPERATION_CANCELLED)
            elif now - up.last_activity_s >= self.rerequest_s:
                up.last_activity_s = now
                self._request(up)
        if self.flight is not None:
            self.flight.tick(self, now)

    def _receive(self, msg: Any, now: float) -> None:
        if msg.get_type() == "BAD_DATA":
            return
        self.stats.received += 1
        if self.drop and self._rng.random() < self.drop:
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

    # --- upload --------------------------------------------------------------------------------

    def _partner(self, msg: Any) -> tuple[int, int]:
        return (msg.get_srcSystem(), msg.get_srcComponent())

    def _ack(self, partner: tuple[int, int], mission_type: int, result: int) -> bool:
        return self.send(lambda m: m.mission_ack_send(partner[0], partner[1], result, mission_type))

    def _request(self, up: _Upload) -> None:
        if self.dialect == "ardupilot":
            self.send(lambda m: m.mission_request_send(up.partner[0], up.partner[1], up.expected, up.mission_type))
        else:
            self.send(lambda m: m.mission_request_int_send(up.partner[0], up.partner[1], up.expected, up.mission_type))

    def _on_mission_count(self, msg: Any, now: float) -> None:
        mtype = int(getattr(msg, "mission_type", MISSION))
        partner = self._partner(msg)
        if self.reject_result is not None and mtype in self.reject_types:
            self.stats.uploads_rejected += 1
            self._ack(partner, mtype, self.reject_result)
            return
        current = self._state.uploads.get(mtype)
        if current is not None and current.expected == 0 and current.count == msg.count:
            current.last_activity_s = now
            self._request(current)  # a repeated COUNT: our first request was lost
            return
        if current is not None and current.expected > 0:
            return  # a late duplicate COUNT mid-transfer; UDP here keeps order, so ignore it
        if msg.count == 0:
            self._store(mtype, ())
            self._state.done[mtype] = _Done(0, partner)
            self._ack(partner, mtype, _M.MAV_MISSION_ACCEPTED)
            return
        up = _Upload(mtype, int(msg.count), [None] * int(msg.count), 0, now, now, partner)
        self._state.uploads[mtype] = up
        self._state.done.pop(mtype, None)
        self._request(up)

    def _on_mission_item_int(self, msg: Any, now: float) -> None:
        self._on_item(msg, now)

    def _on_mission_item(self, msg: Any, now: float) -> None:
        self._on_item(msg, now)

    def _on_item(self, msg: Any, now: float) -> None:
        mtype = int(getattr(msg, "mission_type", MISSION))
        partner = self._partner(msg)
        up = self._state.uploads.get(mtype)
        if up is None:
            done = self._state.done.get(mtype)
            if done is not None and self.dialect == "px4" and done.count and msg.seq == done.count - 1:
                self._final_ack(partner, mtype)  # PX4 acknowledges a repeated last item again
            return
        if msg.seq != up.expected:
            if self.dialect == "ardupilot":
                self._ack(partner, mtype, _M.MAV_MISSION_INVALID_SEQUENCE)
            else:
                up.last_activity_s = now
                self._request(up)
            return
        up.items[up.expected] = normalise_as_vehicle(from_wire(msg), self.dialect)
        up.expected += 1
        up.last_activity_s = up.progress_s = now
        if up.expected < up.count:
            self._request(up)
            return
        del self._state.uploads[mtype]
        items = tuple(i for i in up.items if i is not None)
        self._store(mtype, items)
        self._state.done[mtype] = _Done(up.count, partner)
        self.stats.uploads_completed += 1
        self._final_ack(partner, mtype)
        if self.flight is not None:
            self.flight.on_mission_stored(self, mtype, items)

    def _final_ack(self, partner: tuple[int, int], mtype: int) -> None:
        if self.lose_final_ack:
            self.stats.final_acks_lost += 1
            return
        self._ack(partner, mtype, _M.MAV_MISSION_ACCEPTED)

    def _store(self, mtype: int, items: tuple[MissionItem, ...]) -> None:
        with self._lock:
            self._missions[mtype] = items
        self.log(f"stored {len(items)} items of mission type {mtype}")

    def _on_mission_clear_all(self, msg: Any, now: float) -> None:
        mtype = int(getattr(msg, "mission_type", MISSION))
        self._state.uploads.pop(mtype, None)
        self._store(mtype, ())
        self._ack(self._partner(msg), mtype, _M.MAV_MISSION_ACCEPTED)

    def _on_mission_ack(self, msg: Any, now: float) -> None:
        return  # the end of a download; nothing to keep

    # --- download --------------------------------------------------------------------------

    def _as_downloaded(self, mtype: int, items: tuple[MissionItem, ...]) -> tuple[MissionItem, ...]:
        if self.dialect != "ardupilot" or mtype != MISSION or not items:
            return items
        first = items[0]
        lat, lon, alt = self.home if self.home is not None else (first.lat, first.lon, 0.0)
        home = MissionItem(seq=0, command=_M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL, lat=lat, lon=lon, alt_m=alt)
        return (normalise_as_vehicle(home, "ardupilot"),) + items[1:]

    def _on_mission_request_list(self, msg: Any, now: float) -> None:
        mtype = int(getattr(msg, "mission_type", MISSION))
        partner = self._partner(msg)
        with self._lock:
            n = len(self._missions.get(mtype, ()))
        self.send(lambda m: m.mission_count_send(partner[0], partner[1], n, mtype))

    def _on_mission_request_int(self, msg: Any, now: float) -> None:
        self._serve_item(msg)

    def _on_mission_request(self, msg: Any, now: float) -> None:
        self._serve_item(msg)

    def _serve_item(self, msg: Any) -> None:
        mtype = int(getattr(msg, "mission_type", MISSION))
        partner = self._partner(msg)
        with self._lock:
            items = self._as_downloaded(mtype, self._missions.get(mtype, ()))
        if not 0 <= msg.seq < len(items):
            self._ack(partner, mtype, _M.MAV_MISSION_INVALID_SEQUENCE)
            return
        wire = to_wire(items[msg.seq])
        self.stats.downloads_served += 1
        self.send(lambda m: m.mission_item_int_send(partner[0], partner[1], **wire))

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
