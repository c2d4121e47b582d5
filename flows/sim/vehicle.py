"""The vehicle simulator: a MAVLink 2 vehicle that boots, answers the mission protocol, flies, and fails on demand.

``sortie sim-vehicle``, ``sortie sim-fleet``, ``sortie demo`` and the tests talk to it over real UDP or TCP. It
speaks for one vehicle on one or more ports (``listen``; the first is SERIAL0) and behaves as ArduCopter 4.6.3 SITL
was observed to (FACTS.md), **realistic by default** — a test that is not about a delay says so
(``tests/testkit.py``: ``sim_vehicle``). ``docs/simulator.md`` has the whole behaviour table with sources; here:

- **its clock** runs ``speedup`` times the wall clock from boot (SITL's ``--speedup``): ``time_boot_ms``, the boot
  and pre-arm delays, the heartbeat and the flight follow it; timers a ground station races against (the mission
  protocol's, the auto-disarm, the GCS failsafe, link faults) stay on the wall clock. A loop turn advances it by
  at most ``MAX_TURN_SIM_S`` and ``MAX_TURN_WALL_S``: an overloaded loop slows the vehicle, never makes it jump.
- **boot**: nothing sent before it boots (a ``tcpin:`` SERIAL0 boots when its first client connects); for
  ``boot_s`` (10 s) HEARTBEAT says MAV_STATE_BOOT and a MISSION_COUNT is answered NO_SPACE ("Only 0 items are
  supported": ``MissionItemProtocol::handle_mission_count`` before ``AP_Mission::init``), then "ArduPilot Ready".
- **pre-arm** passes ``prearm_s`` (35 s) after boot (``flows.sim.prearm``); **heartbeat** every ``heartbeat_s`` of
  its clock, at most every ``MIN_WALL_S`` (on the ground ``GROUND_MIN_WALL_S``, streams too: an accelerated fleet
  on its docks would flood its ground station).
- **the link**: telemetry only on request, per port (``flows.sim.link_messages``, ``flows.sim.streams``); signing
  and one client per TCP port (``flows.sim.ports``); the mission protocol (``flows.sim.mission_protocol``) storing
  what the autopilot stores (``flows.sim.ardupilot_mission``, ``flows.sim.px4_mission``); parameters
  (``flows.sim.sim_params``).
- **a reboot** (MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN on the ground, or ``reboot()``): silent ``REBOOT_WALL_S``, TCP
  clients dropped, then a new session — clock at 0, boot and pre-arm again, streams forgotten, home where it
  stands, the battery read afresh; mission and parameters kept (EEPROM).
- faults (``flows.sim.sim_faults``): ``drop``, ``lose``, ``lose_final_ack``, ``reject``; the flight's own
  (``flows.sim.flight_options.FlightFaults``): link stall and loss, drain, abort, reboot.

Flying is a ``VehicleBehaviour`` (``flows.sim.flight.SimFlight`` unless a test plugs in another): it sees every
message first, is told when a mission is stored, is ticked from the vehicle's one thread after the clock moved,
and hands the vehicle its ``snapshot()`` for telemetry.

Over 500 lines on purpose: the constructor takes every option the CLI and the tests set (~30, each defaulting to
the realistic value), and the loop, the fault model and the answers share that one vehicle's state; the parts
that stand alone are their own modules (session, pre-arm, ports, streams, protocol, storage, parameters).
"""

from __future__ import annotations

import math
import random
import select
import threading
import time
from collections.abc import Sequence
from typing import Any, Callable, Literal, Mapping, Protocol

from flows.mavlink import mavutil  # noqa: E402

from flows.sim import telemetry  # noqa: E402
from flows.sim.ardupilot_mission import StoredCommand, hand_back, home_item  # noqa: E402
from flows.sim.link_messages import handle_link_message  # noqa: E402
from flows.sim.mission_protocol import Entry, MissionProtocol, protocol_for  # noqa: E402
from flows.sim.ports import SimPort  # noqa: E402
from flows.sim.prearm import PREARM_REASON, PreArm  # noqa: E402
from flows.sim.session import Session  # noqa: E402
from flows.sim.sim_faults import SimStats, parse_loss, result_code  # noqa: E402
from flows.sim.sim_params import FAILSAFE_PRESETS, SORTIE_FAILSAFES, SORTIE_RESERVES, SimParams  # noqa: E402
from flows.sim.state import SimState  # noqa: E402
from flows.sim.streams import PRODUCED, PX4_DEFAULT_RATES_HZ  # noqa: E402
from planner.errors import InvalidArgument
from planner.output.mission_items import FENCE, MISSION, RALLY, MissionItem  # noqa: E402

__all__ = ["SimVehicle", "SimStats", "VehicleBehaviour", "result_code", "parse_loss", "BOOT_S", "PREARM_S"]

_M = mavutil.mavlink

BOOT_S = 10.0  # uploads answered NO_SPACE (FACTS.md: "wait ~10 s or retry")
PREARM_S = 35.0  # pre-arm checks pass (FACTS.md: ~20–60 s after boot in SITL)
MAX_TURN_WALL_S = 0.25  # a loop turn advances the vehicle's clock by at most this much wall time …
MAX_TURN_SIM_S = 1.0  # … and by at most this much of its own (each turn then streams what is due)
MIN_STEP_SIM_S = 1.0 / 400  # a stream goes out on a loop turn of the autopilot: ArduCopter's 400 Hz
#                              (SCHEDULER_DEFAULT_LOOP_RATE, libraries/AP_Scheduler/AP_Scheduler.cpp)
MIN_WALL_S = 0.02  # in flight, the heartbeat at most 50 times a wall second, whatever the speed-up
GROUND_MIN_WALL_S = 0.1  # on the ground (nothing moves), the heartbeat and each stream at most 10 times a wall second
REBOOT_WALL_S = 1.0  # silent while it restarts
_REREQUEST_S = {"ardupilot": 1.0, "px4": 0.25}  # MissionItemProtocol::update; MAVLINK_MISSION_RETRY_TIMEOUT_DEFAULT
_TRANSFER_TIMEOUT_S = {"ardupilot": 8.0, "px4": 5.0}  # upload_timeout_ms; MAVLINK_MISSION_PROTOCOL_TIMEOUT_DEFAULT
_BOOT_MODE = {"ardupilot": "STABILIZE", "px4": "LOITER"}  # Copter::init_ardupilot → STABILIZE; PX4 boots in Hold


class VehicleBehaviour(Protocol):
    """A pluggable part of the vehicle: the flight (``flows.sim.flight.SimFlight``) or a test's recorder."""

    def on_message(self, vehicle: "SimVehicle", msg: Any) -> bool:
        """See a message before the mission protocol; return True if it was handled."""
        ...

    def on_mission_stored(self, vehicle: "SimVehicle", mission_type: int, items: tuple[MissionItem, ...]) -> None:
        """A complete upload of ``mission_type`` was stored (``items`` as a download would return them)."""
        ...

    def tick(self, vehicle: "SimVehicle", now_s: float) -> Any:
        """Called every loop turn (about every 10 ms) with the monotonic clock, after ``vehicle.clock_s`` moved."""
        ...


def _on_loop(t: float) -> float:
    """The autopilot's first loop turn at or after vehicle time ``t``: ``GCS_MAVLINK::update_send`` runs once a
    turn, so a stream due at ``t`` goes out then (a 200 ms stream every 200 ms exactly, on a 2.5 ms loop)."""
    return math.ceil(t / MIN_STEP_SIM_S - 1e-6) * MIN_STEP_SIM_S


def _next_loop(t: float) -> float:
    """The autopilot's first loop turn after vehicle time ``t``."""
    return (math.floor(t / MIN_STEP_SIM_S + 1e-6) + 1) * MIN_STEP_SIM_S


class SimVehicle:
    """A simulated vehicle on one or more pymavlink ports; ``start()`` runs it on a thread.

    ``listen`` is a connection string (``tcpin:127.0.0.1:PORT`` as ArduPilot SITL, ``udpin:127.0.0.1:PORT``;
    port 0 picks a free one: read ``address``) or a list of them, SERIAL0 first. ``params`` override the dialect's
    defaults (``flows.sim.sim_params``: SITL's); ``failsafes="sortie"`` first applies what an operator configures for
    sorties (``SORTIE_FAILSAFES``, battery reserves from the pack's capacity), "sitl" keeps SITL's (no action).
    """

    def __init__(
        self,
        listen: str | Sequence[str],
        dialect: Literal["ardupilot", "px4"] = "ardupilot",
        *,
        speedup: float = 1.0,
        boot_s: float = BOOT_S,
        prearm_s: float | None = PREARM_S,
        prearm_reason: str = PREARM_REASON,
        heartbeat_s: float = 1.0,
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
        rerequest_s: float | None = None,
        transfer_timeout_s: float | None = None,
        home: tuple[float, float, float] | None = None,
        gps_fix_type: int = 3,
        battery_pct: float = 96.0,
        up_s: float = 0.0,
        params: Mapping[str, float] | None = None,
        failsafes: str = "sitl",
        flight: VehicleBehaviour | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        if dialect not in _REREQUEST_S:
            raise InvalidArgument(f"dialect {dialect!r}: expected ardupilot or px4")
        if not 0.0 <= drop < 1.0:
            raise InvalidArgument(f"drop {drop!r} must be in [0, 1)")
        if boot_s < 0 or (prearm_s is not None and prearm_s < 0):
            raise InvalidArgument("boot_s and prearm_s must be >= 0")
        if not 1.0 <= speedup <= 10_000.0:
            raise InvalidArgument(f"speedup {speedup} must be within 1..10000")
        if failsafes not in FAILSAFE_PRESETS:
            raise InvalidArgument(f"failsafes {failsafes!r}: expected one of {', '.join(FAILSAFE_PRESETS)}")
        if signing_key is not None and len(signing_key) != 32:
            raise InvalidArgument("a MAVLink 2 signing key is 32 bytes")
        self.listen = [listen] if isinstance(listen, str) else list(listen)
        if not self.listen:
            raise InvalidArgument("a vehicle needs at least one port to listen on")
        self.dialect = dialect
        self._speedup = float(speedup)
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
        self.boot_s = boot_s
        self.prearm_s = prearm_s
        self._prearm = PreArm(prearm_reason)
        self.gps_fix_type = gps_fix_type
        self.stats = SimStats()
        self.reboots = 0
        self._log = log
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._missions: dict[int, tuple[Entry, ...]] = {MISSION: (), FENCE: (), RALLY: ()}
        preset = SORTIE_FAILSAFES[dialect] if failsafes == "sortie" else {}
        self._params = SimParams(dialect, {**preset, **(params or {})})
        self.failsafes = failsafes
        #: the reserves to set from the pack's capacity when a flight knows it (the preset's, unless ``params`` said)
        self.reserves = {k: f for k, f in SORTIE_RESERVES.items() if k not in (params or {})} \
            if failsafes == "sortie" and dialect == "ardupilot" else {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        lat, lon, alt = home if home is not None else (0.0, 0.0, 0.0)
        self.home: tuple[float, float, float] = (lat, lon, alt)
        self.ground = SimState(mode=_BOOT_MODE[dialect], lat=lat, lon=lon, home=(lat, lon, alt), battery_pct=battery_pct)
        self.session = Session(up_s)  # the clock (time_boot_ms); ``up_s``: booted that long ago
        self._last_hb_wall = -1.0
        self._last_hb_clock = -1e9
        self._last_timesync_clock = -10.0
        self._ready_said = False
        self.ports = [SimPort(i, spec, system_id=system_id, component_id=component_id)
                      for i, spec in enumerate(self.listen)]
        self.signing_key: bytes | None = None
        self.set_signing_key(signing_key)
        self._greeted: set[int] = set()
        self._default_rates()
        self.reply_port: SimPort = self.ports[0]
        self._protocol: MissionProtocol = protocol_for(self)
        self.flight: Any = None
        if flight is None:
            from flows.sim.flight import SimFlight

            flight = SimFlight()
        self.use_flight(flight)

    # --- public surface -------------------------------------------------------------------

    @property
    def speedup(self) -> float:
        """Simulated seconds per wall second: the flight's, if it sets one, else the vehicle's own."""
        options = getattr(self.flight, "options", None)
        flight_speedup = getattr(options, "speedup", None)
        return float(flight_speedup) if flight_speedup else self._speedup

    @speedup.setter
    def speedup(self, value: float) -> None:
        self._speedup = float(value)

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

    def set_param(self, name: str, value: float) -> None:
        """Set a parameter from inside (a flight's configuration, a test): as if loaded at boot."""
        self._params.set(name, value)

    def stored_mission(self) -> tuple[MissionItem, ...]:
        """The mission as a download returns it."""
        return self.missions[MISSION]

    def stored_commands(self) -> tuple[StoredCommand, ...]:
        """ArduPilot: the mission as AP_Mission keeps it (seq 0 included)."""
        with self._lock:
            return tuple(e for e in self._missions[MISSION] if isinstance(e, StoredCommand))

    def stored_rally(self) -> tuple[MissionItem, ...]:
        return self.missions[RALLY]

    def set_home(self, lat: float, lon: float, alt_amsl_m: float) -> None:
        """Home moves (``Copter::set_home_to_current_location`` at arming; a reboot sets it where the vehicle is)."""
        self.home = (lat, lon, alt_amsl_m)

    def use_flight(self, flight: VehicleBehaviour) -> None:
        """Plug in the flight (or a test's behaviour); a ``SimFlight`` joins the vehicle's state."""
        self.flight = flight
        attach = getattr(flight, "attach", None)
        if callable(attach):
            attach(self)

    def set_signing_key(self, key: bytes | None) -> None:
        """Sign on every port with ``key`` (None or all zeros: signing off), as SETUP_SIGNING does."""
        if key is not None and not any(key):
            key = None
        self.signing_key = key
        for port in self.ports:
            port.sign(key)

    def uptime_s(self) -> float:
        """The vehicle's seconds since boot (its clock)."""
        return self.clock_s if self.session.booted else 0.0

    @property
    def booted(self) -> bool:
        return self.session.booted

    @property
    def clock_s(self) -> float:
        """The vehicle's seconds since boot (``flows.sim.session``)."""
        return self.session.clock_s

    @property
    def boot_clock_s(self) -> float:
        return self.session.boot_clock_s

    def booting(self) -> bool:
        """Within ``boot_s`` of boot: the mission storage is not initialised yet (ArduPilot)."""
        return self.dialect == "ardupilot" and self.clock_s - self.boot_clock_s < self.boot_s

    def located(self) -> bool:
        """Whether the vehicle knows its position: an ArduPilot from its EKF's origin on, which is when SITL's
        "AHRS: waiting for home" clears (``prearm_s`` after boot; FACTS.md: ~40 s); PX4 always (its position
        stream waits for a valid estimate instead)."""
        if self.dialect != "ardupilot":
            return True
        return self.booted and self.clock_s - self.boot_clock_s >= (self.prearm_s or 0.0)

    def prearm_failure(self) -> str | None:
        """Why arming is refused now ("PreArm: …" without the prefix), or None when the checks pass."""
        return self._prearm.failure(self)

    def prearm_ok(self) -> bool:
        """Whether the pre-arm checks pass now (SYS_STATUS PREARM_CHECK)."""
        return self.prearm_failure() is None

    def snapshot(self) -> SimState:
        """What the vehicle says about itself now: its flight's state, or on the ground at home."""
        snap = getattr(self.flight, "snapshot", None)
        if callable(snap):
            return snap(self)
        g = self.ground
        return SimState(mode=g.mode, lat=g.lat, lon=g.lon, home=self.home, battery_pct=g.battery_pct)

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
            now = time.monotonic()
            got = 0
            silent = now < self.session.silent_until or self._link_down(now)
            for port in self.ports:
                for _ in range(50):
                    msg = port.recv()
                    if msg is None:
                        break
                    got += 1
                    if not silent:
                        self._receive(msg, time.monotonic(), port)
            if not self.session.booted and self.ports[0].has_client:
                self._boot(time.monotonic())  # SITL boots once SERIAL0's first client connects
            if self.session.running(now):
                self._periodic(time.monotonic())
            if not got:
                self._wait_readable(0.01)

    def _wait_readable(self, timeout_s: float) -> None:
        try:
            select.select([p.fileno() for p in self.ports], [], [], timeout_s)
        except (OSError, ValueError):
            time.sleep(timeout_s)

    def _boot(self, now: float) -> None:
        self.session.boot(now)
        self.log(f"booted ({self.dialect}, {self.speedup:g}×); ports {', '.join(self.addresses)}")

    def reboot(self, why: str = "reboot", *, battery_pct: float | None = None) -> None:
        """A new session (MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN, a watchdog): silent for a moment, then booting again
        with the clock at 0; the mission and parameters stay, what was streamed and armed does not. ``battery_pct``:
        the pack it boots with (a swap while it was off); None: the pack it had."""
        self.reboots += 1
        self.log(f"rebooting ({why})")
        now = time.monotonic()
        self.session.restart(now, REBOOT_WALL_S)
        self._last_hb_clock, self._last_timesync_clock = -1e9, -10.0
        self._prearm.last_text_s = 0.0
        self._ready_said = False
        self._greeted.clear()
        for port in self.ports:
            port.rates_s.clear()
            port.last_sent_s.clear()
            port.drop_client()
        self._default_rates()
        self._protocol = protocol_for(self)
        restart = getattr(self.flight, "rebooted", None)
        if callable(restart):
            restart(self, battery_pct)

    def _default_rates(self) -> None:
        if self.dialect == "px4":  # Mavlink::configure_streams_to_default: PX4 streams without being asked
            for port in self.ports:
                port.rates_s.update({n: 1.0 / hz for n, hz in PX4_DEFAULT_RATES_HZ.items()})

    def _link_down(self, now: float) -> bool:
        down = getattr(self.flight, "link_down", None)
        return bool(down(now)) if callable(down) else False

    def send(self, build: Callable[[Any], None], loss: tuple[str, int, int] | None = None,
             port: SimPort | None = None) -> bool:
        """Send one message through the fault model to ``port`` (default: the port being answered).

        ``loss`` names the message as a loss point (kind, mission type, seq) so a
        ``lose`` entry can drop it. Returns whether it went out.
        """
        now = time.monotonic()
        if not self.session.running(now) or self._link_down(now):
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
        """One loop turn. In flight the turn's stretch of the vehicle's clock is flown in steps that end where a
        stream is due, each step streaming what is due then: a position asked at 5 Hz goes out every 0.2 s of the
        vehicle's time with where it was then, at any speed-up, as ArduPilot's ``GCS_MAVLINK::update_send``
        (``libraries/GCS_MAVLink/GCS_Common.cpp``) times each stream on ``AP_HAL::millis()`` — SITL's own clock —
        and PX4's ``MavlinkStream::update`` on ``hrt_absolute_time()``. (One step per turn sent one position per
        turn: at 500× one a simulated second, a chord across every corner.)"""
        target = self.session.advance(now, self.speedup, MAX_TURN_SIM_S, MAX_TURN_WALL_S)
        while True:
            clock = self.session.clock_s
            due = [d for d in (p.next_due_s(clock) for p in self.ports) if d is not None] if self._flying() else []
            step_to = max(_on_loop(min(due)) if due else target, _next_loop(clock))
            self.session.clock_s = min(target, step_to)
            if self.flight is not None:
                self.flight.tick(self, now)
            if self.session.clock_s >= target:
                break
            self._stream(now)
        self._protocol.tick(now)
        self._heartbeat(now)
        if self.dialect == "ardupilot" and self.clock_s - self._last_timesync_clock >= 10.0:
            self._last_timesync_clock = self.clock_s
            self.broadcast(telemetry.timesync(self.boot_ms()))
        if not self._ready_said and not self.booting():
            self._ready_said = True  # observed on SITL once its initialisation is done
            if self.dialect == "ardupilot":
                self.broadcast(lambda m: m.statustext_send(_M.MAV_SEVERITY_INFO, b"ArduPilot Ready"))
        self._prearm.report(self)
        self._stream(now)

    def say_prearm(self, reason: str) -> None:
        """A "PreArm: …" STATUSTEXT (``AP_Arming::check_failed``)."""
        self._prearm.say(self, reason)

    def _heartbeat(self, now: float) -> None:
        """Every ``heartbeat_s`` of the vehicle's clock (``GCS_MAVLINK::update_send``: MSG_HEARTBEAT at 1 Hz), at most
        every ``MIN_WALL_S`` of wall time."""
        min_wall = MIN_WALL_S if self._flying() else GROUND_MIN_WALL_S
        if self.clock_s - self._last_hb_clock < self.heartbeat_s or now - self._last_hb_wall < min_wall:
            return
        self._last_hb_wall, self._last_hb_clock = now, self.clock_s
        self.broadcast(telemetry.heartbeat(self.snapshot(), self.dialect, booting=self.booting()))

    def _stream(self, now: float) -> None:
        """Each port's asked-for telemetry that is due (intervals in the vehicle's time)."""
        state: SimState | None = None
        min_wall = 0.0 if self._flying() else GROUND_MIN_WALL_S
        for port in self.ports:
            if not port.rates_s or not port.has_client:
                continue
            for name in PRODUCED.values():
                if port.due(name, self.clock_s, now, min_wall):
                    state = state or self.snapshot()
                    build = telemetry.message(name, state, boot_ms=self.boot_ms(), prearm_ok=self.prearm_ok(),
                                              fix_type=self.gps_fix_type, located=self.located())
                    if build is not None:
                        self.send(build, port=port)

    def _flying(self) -> bool:
        return getattr(self.flight, "phase", "") == "FLYING"

    def boot_ms(self) -> int:
        return self.session.boot_ms()

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
        handler = self._mission_handler(msg.get_type())
        if handler is not None:
            handler(msg, now)
        elif msg.get_type() in ("COMMAND_LONG", "COMMAND_INT"):
            self.ack(msg, _M.MAV_RESULT_UNSUPPORTED)  # GCS_MAVLINK::handle_command_*: unknown command

    def _link_message(self, msg: Any) -> bool:
        """A stream request or SETUP_SIGNING, for the port it came on (``flows.sim.link_messages``)."""
        return handle_link_message(self, msg, self.reply_port)

    def ack(self, msg: Any, result: int) -> None:
        """COMMAND_ACK to the sender of ``msg``."""
        cmd, src = int(msg.command), (msg.get_srcSystem(), msg.get_srcComponent())
        self.send(lambda m: m.command_ack_send(cmd, result, 0, 0, src[0], src[1]))

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

    def _mission_handler(self, kind: str) -> Callable[[Any, float], None] | None:
        """The mission protocol's handler for a message type (``flows.sim.mission_protocol``)."""
        p = self._protocol
        return {"MISSION_COUNT": self._on_mission_count, "MISSION_ITEM_INT": p.on_item, "MISSION_ITEM": p.on_item,
                "MISSION_REQUEST_LIST": p.on_request_list, "MISSION_REQUEST_INT": p.on_request,
                "MISSION_REQUEST": p.on_request, "MISSION_CLEAR_ALL": p.on_clear_all, "MISSION_ACK": p.on_ack,
                "PARAM_SET": lambda msg, now: self._params.on_set(self, msg),
                "PARAM_REQUEST_READ": lambda msg, now: self._params.on_read(self, msg)}.get(kind)

    def _store(self, mtype: int, items: tuple[Entry, ...]) -> None:
        with self._lock:
            self._missions[mtype] = items
            if mtype == MISSION:
                # MISSION_CURRENT ``total`` says the stored count at once: ArduPilot's
                # GCS_MAVLINK::send_mission_current sends num_commands() - 1 (home excluded); PX4 its item count
                home = 1 if self.dialect == "ardupilot" and items else 0
                self.ground.mission_total = len(items) - home
        self.log(f"stored {len(items)} items of mission type {mtype}")

    def _as_downloaded(self, mtype: int, items: tuple[Entry, ...]) -> tuple[MissionItem, ...]:
        """What a download returns: ArduPilot's mission through ``mission_cmd_to_mavlink_int``, seq 0 its home."""
        out = [hand_back(e) if isinstance(e, StoredCommand) else e for e in items]
        if self.dialect == "ardupilot" and mtype == MISSION and out:
            out[0] = home_item(*self.home)
        return tuple(out)
