"""The vehicle simulator: a MAVLink 2 vehicle that answers the mission protocol, with faults.

``sortie sim-vehicle`` and ``sortie demo`` run it as the drone at the other
end of a link; the dispatch tests fly their fault matrix against it over real
UDP or TCP. It speaks for one vehicle (system 1, component 1 by default) on
one or more ports (``listen``: a connection string or a list of them; the first
is SERIAL0), and behaves as ArduCopter was observed to (FACTS.md, "ArduCopter
4.6.3 SITL, observed"), each habit with its source:

- **boot**: nothing is sent before the vehicle boots (a ``tcpin:`` SERIAL0 boots
  when its first client connects, as SITL does); during the first ``boot_s``
  seconds its HEARTBEAT says MAV_STATE_BOOT and a MISSION_COUNT is answered
  MAV_MISSION_NO_SPACE with "Only 0 items are supported", then it says
  "ArduPilot Ready" (observed on SITL built from ArduPilot master: BOOT for
  ~2.5 s; an upload at 1 s refused NO_SPACE, at 4 s accepted); TIMESYNC every
  10 s carries its clock
  (``MissionItemProtocol::handle_mission_count``: ``packet.count > max_items()``,
  and ``max_items()`` is 0 until ``AP_Mission::init`` has run; observed);
  the pre-arm checks pass ``prearm_s`` seconds after boot (None: never), shown
  by SYS_STATUS's PREARM_CHECK bit (``flows.sim.telemetry``). ``up_s`` starts
  the vehicle's clock (``time_boot_ms``) as if it had booted that long ago.
- **telemetry only on request** (``flows.sim.streams``): HEARTBEAT to every
  port; once per port the boot messages; anything else only after
  MAV_CMD_SET_MESSAGE_INTERVAL (``GCS_MAVLINK::handle_command_set_message_interval``,
  DENIED for a message it has no ``ap_message`` for) or REQUEST_DATA_STREAM
  (``GCS_MAVLINK::handle_request_data_stream``), rates kept per port
  (``flows.sim.ports``). PX4 streams its defaults on every port.
- **signing** (``signing_key``, or SETUP_SIGNING): every frame signed on every
  port; unsigned messages dropped silently except on SERIAL0 (``flows.sim.ports``).
- **one client per TCP port** (``tcpin:`` ports, ``flows.sim.ports``).
- **the mission protocol** of ArduPilot or PX4 (``flows.sim.mission_protocol``
  has the behaviour table with sources), replies on the port the request came
  from; ArduPilot returns its home as mission seq 0, DO_ commands with frame 0
  and NAV_LAND with param4 = 1 (``planner.output.mission_wire.normalise_as_vehicle``).
- PARAM_SET / PARAM_REQUEST_READ of the dialect's own parameters (``flows.sim.sim_params``).
- faults (parsed by ``flows.sim.sim_faults``): ``drop`` drops that fraction of incoming and outgoing messages
  (seeded RNG); ``lose`` names single messages to lose once each (``count:fence``,
  ``item:mission:3``, ``request:rally:0``, ``ack:mission``; ``*`` for every
  type); ``lose_final_ack`` never delivers the ACCEPTED ack that ends an upload;
  ``reject`` answers every upload of ``reject_types`` with that MAV_MISSION_RESULT,
  at its COUNT or, with ``reject_at_seq``, at that item.

Flying is a ``VehicleBehaviour`` passed as ``flight`` (``flows.sim.flight``): it
sees every message first (``on_message``), is told when a mission is stored,
is ticked from the vehicle's one thread (its ``tick`` may return the simulated
seconds it advanced, which then drive the vehicle's clock), and hands the
vehicle its ``snapshot()`` for telemetry. All sends happen on that one thread.
"""

from __future__ import annotations

import random
import select
import threading
import time
from collections.abc import Sequence
from typing import Any, Callable, Literal, Protocol

from flows.mavlink import mavutil  # noqa: E402

from flows.sim import telemetry  # noqa: E402
from flows.sim.mission_protocol import MissionProtocol, protocol_for  # noqa: E402
from flows.sim.ports import SimPort  # noqa: E402
from flows.sim.sim_faults import SimStats, parse_loss, result_code  # noqa: E402
from flows.sim.sim_params import SimParams  # noqa: E402
from flows.sim.state import SimState  # noqa: E402
from flows.sim.streams import PRODUCED, PX4_DEFAULT_RATES_HZ, group_messages, interval_s_for  # noqa: E402
from planner.errors import InvalidArgument  # noqa: E402
from planner.output.mission_items import FENCE, FRAME_GLOBAL, MISSION, RALLY, MissionItem  # noqa: E402
from planner.output.mission_wire import normalise_as_vehicle  # noqa: E402

__all__ = ["SimVehicle", "SimStats", "VehicleBehaviour", "result_code", "parse_loss"]

_M = mavutil.mavlink

_REREQUEST_S = {"ardupilot": 1.0, "px4": 0.25}  # MissionItemProtocol::update; MAVLINK_MISSION_RETRY_TIMEOUT_DEFAULT
_TRANSFER_TIMEOUT_S = {"ardupilot": 8.0, "px4": 5.0}  # upload_timeout_ms; MAVLINK_MISSION_PROTOCOL_TIMEOUT_DEFAULT
_BOOT_MODE = {"ardupilot": "STABILIZE", "px4": "LOITER"}  # Copter::init_ardupilot → STABILIZE; PX4 boots in Hold
_SET_MESSAGE_INTERVAL = 511  # MAV_CMD_SET_MESSAGE_INTERVAL


class VehicleBehaviour(Protocol):
    """A pluggable part of the vehicle: the flight (``flows.sim.flight.SimFlight``) or a test's recorder."""

    def on_message(self, vehicle: "SimVehicle", msg: Any) -> bool:
        """See a message before the mission protocol; return True if it was handled."""
        ...

    def on_mission_stored(self, vehicle: "SimVehicle", mission_type: int, items: tuple[MissionItem, ...]) -> None:
        """A complete upload of ``mission_type`` was stored."""
        ...

    def tick(self, vehicle: "SimVehicle", now_s: float) -> float | None:
        """Called every loop turn (about every 10 ms) with the monotonic clock; may return simulated seconds."""
        ...


class SimVehicle:
    """A simulated vehicle on one or more pymavlink ports; ``start()`` runs it on a thread.

    ``listen`` is a connection string (``udpin:127.0.0.1:PORT``, ``tcpin:127.0.0.1:PORT``;
    port 0 picks a free one: read ``address``) or a list of them, SERIAL0 first.
    """

    def __init__(
        self,
        listen: str | Sequence[str],
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
        boot_s: float = 0.0,
        prearm_s: float | None = 0.0,
        gps_fix_type: int = 3,
        battery_pct: float = 96.0,
        up_s: float = 0.0,
        flight: VehicleBehaviour | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if dialect not in _REREQUEST_S:
            raise InvalidArgument(f"dialect {dialect!r}: expected ardupilot or px4")
        if not 0.0 <= drop < 1.0:
            raise InvalidArgument(f"drop {drop!r} must be in [0, 1)")
        if boot_s < 0 or (prearm_s is not None and prearm_s < 0):
            raise InvalidArgument("boot_s and prearm_s must be >= 0")
        if signing_key is not None and len(signing_key) != 32:
            raise InvalidArgument("a MAVLink 2 signing key is 32 bytes")
        self.listen = [listen] if isinstance(listen, str) else list(listen)
        if not self.listen:
            raise InvalidArgument("a vehicle needs at least one port to listen on")
        self.dialect = dialect
        self.drop = drop
        self.lose_final_ack = lose_final_ack
        self.reject_result = result_code(reject) if reject else None
        self.reject_types = reject_types
        self.reject_at_seq = reject_at_seq
        self._losses = [parse_loss(x) for x in lose]
        self._lost: set[tuple[int, str, int]] = set()
        self.system_id = system_id
        self.component_id = component_id
        self.heartbeat_s = heartbeat_s
        self.rerequest_s = rerequest_s if rerequest_s is not None else _REREQUEST_S[dialect]
        self.transfer_timeout_s = transfer_timeout_s if transfer_timeout_s is not None else _TRANSFER_TIMEOUT_S[dialect]
        self.home = home
        self.boot_s = boot_s
        self.prearm_s = prearm_s
        self.gps_fix_type = gps_fix_type
        self.flight = flight
        self.stats = SimStats()
        self._log = log
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._missions: dict[int, tuple[MissionItem, ...]] = {MISSION: (), FENCE: (), RALLY: ()}
        self._params = SimParams(dialect)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        lat, lon, alt = home if home is not None else (0.0, 0.0, 0.0)
        self.ground = SimState(mode=_BOOT_MODE[dialect], lat=lat, lon=lon, home=(lat, lon, alt), battery_pct=battery_pct)
        self.clock_s = float(up_s)  # simulated seconds since boot (time_boot_ms); ``up_s``: booted that long ago
        self._booted_wall: float | None = None
        self._last_wall: float | None = None
        self._last_hb_wall = 0.0
        self._last_hb_clock = -1.0
        self._last_timesync_clock = -10.0
        self._ready_said = False
        self.ports = [SimPort(i, spec, system_id=system_id, component_id=component_id)
                      for i, spec in enumerate(self.listen)]
        self.signing_key: bytes | None = None
        self.set_signing_key(signing_key)
        self._greeted: set[int] = set()
        if dialect == "px4":  # Mavlink::configure_streams_to_default: PX4 streams without being asked
            for port in self.ports:
                port.rates_s.update({n: 1.0 / hz for n, hz in PX4_DEFAULT_RATES_HZ.items()})
        self.reply_port: SimPort = self.ports[0]
        self._protocol: MissionProtocol = protocol_for(self)

    # --- public surface -------------------------------------------------------------------

    @property
    def address(self) -> str:
        """The connection string a ground station uses to reach SERIAL0 (``udpout:host:port`` or ``tcp:host:port``)."""
        return self.ports[0].address

    @property
    def addresses(self) -> list[str]:
        """Every port's connection string, SERIAL0 first."""
        return [p.address for p in self.ports]

    @property
    def missions(self) -> dict[int, tuple[MissionItem, ...]]:
        """What the vehicle holds, per mission type, as it would hand it back (seq 0 = home on ArduPilot)."""
        with self._lock:
            stored = dict(self._missions)
        return {t: self._as_downloaded(t, items) for t, items in stored.items()}

    @property
    def params(self) -> dict[str, float]:
        """The vehicle's parameters as it holds them (float32 values)."""
        return self._params.values()

    def set_signing_key(self, key: bytes | None) -> None:
        """Sign on every port with ``key`` (None or all zeros: signing off), as SETUP_SIGNING does."""
        if key is not None and not any(key):
            key = None
        self.signing_key = key
        for port in self.ports:
            port.sign(key)

    def uptime_s(self) -> float:
        """Wall seconds since the vehicle booted (0 before it did)."""
        return 0.0 if self._booted_wall is None else time.monotonic() - self._booted_wall

    def booting(self) -> bool:
        """Within ``boot_s`` of boot: the mission storage is not initialised yet (ArduPilot)."""
        return self.dialect == "ardupilot" and self.uptime_s() < self.boot_s

    def prearm_ok(self) -> bool:
        """Whether the pre-arm checks pass now (``prearm_s`` after boot; never with ``prearm_s=None``)."""
        return self._booted_wall is not None and self.prearm_s is not None and self.uptime_s() >= self.prearm_s

    def snapshot(self) -> SimState:
        """What the vehicle says about itself now: its flight's state, or on the ground at home."""
        snap = getattr(self.flight, "snapshot", None)
        return snap(self) if callable(snap) else self.ground

    def start(self) -> "SimVehicle":
        """Run the vehicle on a daemon thread until ``stop()``."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.serve, name=f"sim-vehicle-{self.address}", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout_s: float = 2.0) -> None:
        """Stop the loop, join the thread (bounded) and close the sockets."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None
        for port in self.ports:
            port.close()

    def __enter__(self) -> "SimVehicle":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def serve(self, duration_s: float | None = None) -> None:
        """The vehicle loop (blocking): until ``stop()`` or ``duration_s`` seconds."""
        end = None if duration_s is None else time.monotonic() + duration_s
        if not self.ports[0].listen.startswith("tcpin:"):
            self._boot(time.monotonic())
        while not self._stop.is_set() and (end is None or time.monotonic() < end):
            got = 0
            for port in self.ports:
                for _ in range(50):
                    msg = port.recv()
                    if msg is None:
                        break
                    got += 1
                    self._receive(msg, time.monotonic(), port)
            if self._booted_wall is None and self.ports[0].has_client:
                self._boot(time.monotonic())  # SITL boots once SERIAL0's first client connects
            self._periodic(time.monotonic())
            if not got:
                self._wait_readable(0.01)

    def _wait_readable(self, timeout_s: float) -> None:
        try:
            select.select([p.fileno() for p in self.ports], [], [], timeout_s)
        except (OSError, ValueError):
            time.sleep(timeout_s)

    def _boot(self, now: float) -> None:
        self._booted_wall = now
        self._last_wall = now
        self.log(f"booted ({self.dialect}); ports {', '.join(self.addresses)}")

    def send(self, build: Callable[[Any], None], loss: tuple[str, int, int] | None = None,
             port: SimPort | None = None) -> bool:
        """Send one message through the fault model to ``port`` (default: the port being answered).

        ``loss`` names the message as a loss point (kind, mission type, seq) so a
        ``lose`` entry can drop it. Returns whether it went out.
        """
        if self._booted_wall is None or getattr(self.flight, "link_lost", False):
            return False
        if loss is not None and self._loses(*loss):
            self.stats.dropped_out += 1
            return False
        if self.drop and self._rng.random() < self.drop:
            self.stats.dropped_out += 1
            return False
        if (port or self.reply_port).send(build):
            self.stats.sent += 1
            return True
        return False

    def broadcast(self, build: Callable[[Any], None]) -> None:
        """Send to every port (STATUSTEXT, MISSION_ITEM_REACHED: ``GCS::send_text``,
        ``GCS::send_mission_item_reached_message`` queue them on every channel)."""
        for port in self.ports:
            self.send(build, port=port)

    def mission_current_changed(self) -> None:
        """The item being flown changed: PX4 says so at once (``MavlinkMissionManager::send`` sends MISSION_CURRENT
        when the mission result changes); ArduPilot only streams it (MSG_CURRENT_WAYPOINT is an EXTENDED_STATUS
        stream message)."""
        if self.dialect != "px4":
            return
        build = telemetry.message("MISSION_CURRENT", self.snapshot(), boot_ms=self.boot_ms(), prearm_ok=self.prearm_ok(),
                                  fix_type=self.gps_fix_type)
        if build is not None:
            self.broadcast(build)

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
        if self._booted_wall is None:
            return
        wall_dt = now - (self._last_wall if self._last_wall is not None else now)
        self._last_wall = now
        advanced = self.flight.tick(self, now) if self.flight is not None else None
        self.clock_s += advanced if isinstance(advanced, (int, float)) else wall_dt
        self._protocol.tick(now)
        self._heartbeat(now)
        if self.dialect == "ardupilot" and self.clock_s - self._last_timesync_clock >= 10.0:
            self._last_timesync_clock = self.clock_s
            self.broadcast(telemetry.timesync(self.boot_ms()))
        if not self._ready_said and not self.booting():
            self._ready_said = True  # observed on SITL once its initialisation is done
            if self.dialect == "ardupilot":
                self.broadcast(lambda m: m.statustext_send(_M.MAV_SEVERITY_INFO, b"ArduPilot Ready"))
        self._stream()

    def _heartbeat(self, now: float) -> None:
        """1 Hz of simulated time (``GCS_MAVLINK::update_send``: MSG_HEARTBEAT every second), at least every
        ``heartbeat_s`` wall seconds and at most every 20 ms."""
        wall = now - self._last_hb_wall
        due = wall >= self.heartbeat_s or (self.clock_s - self._last_hb_clock >= 1.0 and wall >= 0.02)
        if not due:
            return
        self._last_hb_wall, self._last_hb_clock = now, self.clock_s
        self.broadcast(telemetry.heartbeat(self.snapshot(), self.dialect, booting=self.booting()))

    def _stream(self) -> None:
        """Each port's asked-for telemetry that is due (intervals in simulated time)."""
        state: SimState | None = None
        for port in self.ports:
            if not port.rates_s or not port.has_client:
                continue
            for name in PRODUCED.values():
                if port.due(name, self.clock_s):
                    state = state or self.snapshot()
                    build = telemetry.message(name, state, boot_ms=self.boot_ms(), prearm_ok=self.prearm_ok(),
                                              fix_type=self.gps_fix_type)
                    if build is not None:
                        self.send(build, port=port)

    def boot_ms(self) -> int:
        return int(self.clock_s * 1000.0) & 0xFFFFFFFF

    def _receive(self, msg: Any, now: float, port: SimPort) -> None:
        if msg.get_type() == "BAD_DATA":
            if "signature" in str(getattr(msg, "reason", "")).lower():
                self.stats.refused_unsigned += 1  # GCS_Signing: dropped, no ACK, no STATUSTEXT
            return
        self.stats.received += 1
        if self.drop and self._rng.random() < self.drop:
            self.stats.dropped_in += 1
            return
        kind = {"MISSION_COUNT": "count", "MISSION_ITEM_INT": "item", "MISSION_ITEM": "item"}.get(msg.get_type())
        if kind is not None and self._loses(kind, int(getattr(msg, "mission_type", MISSION)), int(getattr(msg, "seq", -1))):
            self.stats.dropped_in += 1
            return
        self.reply_port = port
        if port.index not in self._greeted and msg.get_type() == "HEARTBEAT":
            self._greeted.add(port.index)
            for build in telemetry.boot_messages(self.snapshot(), boot_ms=self.boot_ms(), prearm_ok=self.prearm_ok()):
                self.send(build, port=port)
        target = getattr(msg, "target_system", None)
        mine = target is None or target in (0, self.system_id)
        if mine and self._link_message(msg):
            return
        if self.flight is not None and self.flight.on_message(self, msg):
            return
        if not mine:
            return
        handler = getattr(self, "_on_" + msg.get_type().lower(), None)
        if handler is not None:
            handler(msg, now)
        elif msg.get_type() in ("COMMAND_LONG", "COMMAND_INT"):
            self._ack(msg, _M.MAV_RESULT_UNSUPPORTED)  # GCS_MAVLINK::handle_command_*: unknown command

    def _ack(self, msg: Any, result: int) -> None:
        cmd, src = int(msg.command), (msg.get_srcSystem(), msg.get_srcComponent())
        self.send(lambda m: m.command_ack_send(cmd, result, 0, 0, src[0], src[1]))

    # --- streams and signing (per port) -------------------------------------------------------

    def _link_message(self, msg: Any) -> bool:
        """Stream requests and SETUP_SIGNING, handled for the port they came on; True when handled."""
        kind = msg.get_type()
        port = self.reply_port
        if kind in ("COMMAND_LONG", "COMMAND_INT") and int(msg.command) == _SET_MESSAGE_INTERVAL:
            name = PRODUCED.get(int(msg.param1))
            if name is None:
                self._ack(msg, _M.MAV_RESULT_DENIED)  # "No ap_message for mavlink id"
                return True
            interval_us = float(msg.param2)
            if interval_us < 0:
                port.rates_s.pop(name, None)
            elif interval_us > 0:
                port.rates_s[name] = interval_us / 1e6
            port.last_sent_s.pop(name, None)
            self._ack(msg, _M.MAV_RESULT_ACCEPTED)
            return True
        if kind == "REQUEST_DATA_STREAM":
            if self.dialect == "px4":
                return True  # PX4's receiver ignores the legacy request (it streams its defaults)
            rate = float(msg.req_message_rate) if int(msg.start_stop) else 0.0
            for name in group_messages(int(msg.req_stream_id)):
                interval = interval_s_for(rate)
                if interval is None:
                    port.rates_s.pop(name, None)
                else:
                    port.rates_s[name] = interval
                port.last_sent_s.pop(name, None)
            return True
        if kind == "SETUP_SIGNING":
            self.set_signing_key(bytes(msg.secret_key))  # GCS_MAVLINK::handle_setup_signing: active at once
            self.log("signing key set by SETUP_SIGNING")
            return True
        return False

    # --- mission protocol (flows.sim.mission_protocol, per autopilot) --------------------------

    def _on_mission_count(self, msg: Any, now: float) -> None:
        if self.booting() and int(msg.count) > 0:
            # MissionItemProtocol::handle_mission_count: max_items() is 0 until AP_Mission::init → NO_SPACE
            self.stats.booting_refusals += 1
            mtype, src = int(getattr(msg, "mission_type", MISSION)), (msg.get_srcSystem(), msg.get_srcComponent())
            self.send(lambda m: m.mission_ack_send(src[0], src[1], _M.MAV_MISSION_NO_SPACE, mtype))
            self.broadcast(lambda m: m.statustext_send(_M.MAV_SEVERITY_WARNING, b"Only 0 items are supported"))
            return
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

    # --- parameters (``flows.sim.sim_params``) ---------------------------------------------

    def _on_param_set(self, msg: Any, now: float) -> None:
        self._params.on_set(self, msg)

    def _on_param_request_read(self, msg: Any, now: float) -> None:
        self._params.on_read(self, msg)
