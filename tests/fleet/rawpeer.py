"""Raw pymavlink endpoints on 127.0.0.1 for the link-binding tests: a minimal vehicle whose every message the test
writes (boot time, battery, texts), and a forger that sends from another socket.

Not a simulator: the vehicle here says exactly what the test tells it to, so a test can make the boot clock go
back or send one SYS_STATUS and then none — what the hub must do with that is the subject of the test.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from flows.vehicle.udp_exclusive import mavlink_connection  # noqa: E402

M = mavutil.mavlink
ARDUPILOT_STABILIZE = 0


class RawVehicle:
    """A MAVLink endpoint on ``udpin:127.0.0.1:0`` that sends a heartbeat every ``heartbeat_s`` and whatever the
    test sends with ``send``; ``address`` is the ground station's ``udpout:`` string."""

    def __init__(self, system_id: int = 1, *, heartbeat_s: float = 0.2, signing_key: bytes | None = None,
                 boot_ms: int = 100_000) -> None:
        self.conn = mavlink_connection("udpin:127.0.0.1:0", source_system=system_id, source_component=1)
        if signing_key is not None:
            self.conn.setup_signing(signing_key, sign_outgoing=True)
        self.heartbeat_s = heartbeat_s
        self.boot_ms = boot_ms
        self.custom_mode = ARDUPILOT_STABILIZE
        self.armed = False
        self.received: list[Any] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def address(self) -> str:
        host, port = self.conn.port.getsockname()[:2]
        return f"udpout:{host}:{port}"

    def clients(self) -> set[tuple[str, int]]:
        """The addresses of the ground stations that spoke to it."""
        return set(self.conn.clients)

    def start(self) -> "RawVehicle":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.conn.close()

    def __enter__(self) -> "RawVehicle":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def send(self, build: Callable[[Any], None]) -> None:
        with self._lock:
            if self.conn.clients:
                build(self.conn.mav)

    def heartbeat(self) -> None:
        base = M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | (M.MAV_MODE_FLAG_SAFETY_ARMED if self.armed else 0)
        self.send(lambda m: m.heartbeat_send(M.MAV_TYPE_QUADROTOR, M.MAV_AUTOPILOT_ARDUPILOTMEGA, base,
                                             self.custom_mode, M.MAV_STATE_STANDBY))

    def system_time(self, boot_ms: int | None = None) -> None:
        if boot_ms is not None:
            self.boot_ms = boot_ms
        self.send(lambda m: m.system_time_send(int(time.time() * 1e6), self.boot_ms))

    def battery(self, pct: int) -> None:
        self.send(lambda m: m.sys_status_send(0, 0, 0, 500, 15800, 0, pct, 0, 0, 0, 0, 0, 0))

    def position(self, lat: float, lon: float, rel_alt_m: float) -> None:
        self.send(lambda m: m.global_position_int_send(self.boot_ms, int(lat * 1e7), int(lon * 1e7),
                                                       int(rel_alt_m * 1000), int(rel_alt_m * 1000), 0, 0, 0, 65535))

    def text(self, words: str, severity: int = M.MAV_SEVERITY_CRITICAL) -> None:
        self.send(lambda m: m.statustext_send(severity, words.encode("ascii")))

    def _run(self) -> None:
        last = 0.0
        while not self._stop.is_set():
            now = time.monotonic()
            if now - last >= self.heartbeat_s:
                last = now
                self.boot_ms += int(self.heartbeat_s * 1000)
                self.heartbeat()
            with self._lock:
                try:
                    msg = self.conn.recv_match(blocking=False)
                except OSError:
                    msg = None
            if msg is not None:
                self.received.append(msg)
            else:
                self._stop.wait(0.01)


def forger(host_port: tuple[str, int], system_id: int = 1) -> Any:
    """A pymavlink sender from a socket of its own to ``host_port`` (the hub's side of a link)."""
    return mavutil.mavlink_connection(f"udpout:{host_port[0]}:{host_port[1]}", source_system=system_id,
                                      source_component=1)


def forge_flight(conn: Any, *, battery_pct: int = 5, alt_m: float = 480.0) -> None:
    """What issue 38's attacker sent for M3TD-02: armed in AUTO, 480 m up, 5 % battery."""
    m = conn.mav
    m.heartbeat_send(M.MAV_TYPE_QUADROTOR, M.MAV_AUTOPILOT_ARDUPILOTMEGA,
                     M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED | M.MAV_MODE_FLAG_SAFETY_ARMED, 3, M.MAV_STATE_ACTIVE)
    m.sys_status_send(0, 0, 0, 500, 15800, 0, battery_pct, 0, 0, 0, 0, 0, 0)
    m.global_position_int_send(5_000, int(60.17 * 1e7), int(24.94 * 1e7), int(alt_m * 1000), int(alt_m * 1000),
                               0, 0, 0, 65535)
