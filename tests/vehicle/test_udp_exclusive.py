"""A ``udpin:`` port belongs to one socket: two simulators or two links never share it.

pymavlink's own ``udpin:`` sets SO_REUSEADDR, and on Linux a port-0 bind may
then land on a port another such socket holds (the cause of a launch being
answered by another test's vehicle). These tests bind real sockets on loopback.
"""

from __future__ import annotations

import errno
import os

import pytest

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from flows.errors import DeviceUnavailable
from flows.sim.ports import SimPort  # noqa: E402
from flows.vehicle.link import VehicleLink  # noqa: E402
from flows.vehicle.udp_exclusive import ExclusiveUdpIn, mavlink_connection  # noqa: E402

M = mavutil.mavlink
HELD = 1200  # port-0 binds kept open at once; with SO_REUSEADDR about 1 in 40 of them shares a port


def test_many_port_zero_binds_get_distinct_ports() -> None:
    conns = []
    try:
        for _ in range(HELD):
            conns.append(mavlink_connection("udpin:127.0.0.1:0", source_system=1, source_component=1))
        ports = [c.port.getsockname()[1] for c in conns]
        assert len(set(ports)) == len(ports)
    finally:
        for c in conns:
            c.close()


def test_a_held_port_cannot_be_bound_again() -> None:
    first = SimPort(0, "udpin:127.0.0.1:0", system_id=1, component_id=1)
    try:
        port = first.conn.port.getsockname()[1]
        with pytest.raises(OSError) as caught:
            ExclusiveUdpIn(f"127.0.0.1:{port}")
        assert caught.value.errno == errno.EADDRINUSE
        with pytest.raises(DeviceUnavailable):
            VehicleLink(f"udpin:127.0.0.1:{port}")
    finally:
        first.close()


def test_the_port_answers_the_client_that_spoke() -> None:
    vehicle = mavlink_connection("udpin:127.0.0.1:0", source_system=1, source_component=1)
    host, port = vehicle.port.getsockname()[:2]
    station = mavutil.mavlink_connection(f"udpout:{host}:{port}", source_system=255, source_component=190)
    try:
        station.mav.heartbeat_send(M.MAV_TYPE_GCS, M.MAV_AUTOPILOT_INVALID, 0, 0, 0)
        heard = vehicle.recv_match(type="HEARTBEAT", blocking=True, timeout=2.0)
        assert heard is not None and heard.get_srcSystem() == 255
        vehicle.mav.heartbeat_send(M.MAV_TYPE_QUADROTOR, M.MAV_AUTOPILOT_ARDUPILOTMEGA, 0, 0, 0)
        answer = station.recv_match(type="HEARTBEAT", blocking=True, timeout=2.0)
        assert answer is not None and answer.get_srcSystem() == 1
    finally:
        station.close()
        vehicle.close()
