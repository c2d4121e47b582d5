"""A stream asked at 5 Hz is 5 Hz of the vehicle's own clock, at any speed-up, each position where it was then.

ArduPilot times each stream on ``AP_HAL::millis()`` (``GCS_MAVLINK::update_send``), SITL's clock; so does the
simulator, stepping its flight to each due time within a loop turn. Before, one position went out per loop turn:
at 500× one every simulated second (the turn's cap), and a lane patrol's corners were chords on the track
(the worker-served patrol of tests/orchestration ended INCOMPLETE, 94.7 % of its lanes within 5 m).
"""

from __future__ import annotations

import math
import socket

import pytest

from sim.simkit import LAT0, LON0, M, Station, square_mission
from testkit import sim_vehicle

pytestmark = pytest.mark.timeout(90)


@pytest.mark.parametrize("speedup", [10.0, 500.0])
def test_positions_come_every_fifth_of_a_vehicle_second_at_any_speedup(speedup: float) -> None:
    sim = sim_vehicle(home=(LAT0, LON0, 10.0), speedup=speedup).start()
    gs = Station(sim.address)  # asks GLOBAL_POSITION_INT at 5 Hz
    try:
        gs.conn.port.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)  # this test reads, a stall drops none
        assert gs.upload(square_mission()) == M.MAV_MISSION_ACCEPTED
        gs.launch()
        assert gs.landed(60.0) is not None
    finally:
        gs.close()
        sim.stop()
    flying = [m for m in gs.seen if m.get_type() == "GLOBAL_POSITION_INT" and m.relative_alt > 1_000]
    times = [m.time_boot_ms for m in flying]
    steps = [b - a for a, b in zip(times, times[1:])]
    assert len(flying) > 200, len(flying)  # a square of 60 m at 20 m, flown for over 40 vehicle seconds
    assert max(steps) <= 220 and sorted(steps)[len(steps) // 2] == 200, sorted(steps)[-10:]
    # each is where the vehicle was at its time: no two positions 0.2 s apart are further than it can fly
    metres = [math.hypot((b.lat - a.lat) * 1.113195e-2, (b.lon - a.lon) * 1.113195e-2 * math.cos(math.radians(LAT0)))
              for a, b in zip(flying, flying[1:])]
    assert max(metres) < 0.2 * 15.0, max(metres)
