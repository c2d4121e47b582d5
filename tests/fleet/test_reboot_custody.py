"""A vehicle reboot is a new session of the same vehicle, not an intrusion — unless it came back armed or elsewhere.

Issue 42 left this: every reboot of a vehicle (a battery swap at the dock) HELD the drone as foreign control,
because the reboot's first HEARTBEAT (the boot mode, STABILIZE) reached the hub before any message carrying the
new boot time, and was judged as a mode change of the old session. The simulator reboots as ArduPilot does
(``GCS_MAVLINK::handle_preflight_reboot`` → ``hal.scheduler->reboot``; FACTS.md "A rebooted vehicle starts a new
session": silent, the clock back to 0, the boot mode, the mission and parameters kept in storage). The hub here
is the server's (a real ledger for its records), over real MAVLink on 127.0.0.1.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from flows.fleet.custody import CLOCK_WAIT_S, Custody
from flows.fleet.hub import VehicleHub
from flows.fleet.live import Freshness
from flows.fleet.records import LedgerRecords
from flows.fleet.watch import HoldTimes
from flows.ledger import open_ledger
from flows.vehicle.view import VehicleView
from testkit import bare_world, drone, sim_vehicle

pytestmark = pytest.mark.timeout(90)
HOME = (60.1700, 24.9410, 12.0)


@pytest.fixture
def hub_and_feed(tmp_path: Path) -> Iterator[tuple[VehicleHub, list[tuple[str, dict[str, Any]]]]]:
    feed: list[tuple[str, dict[str, Any]]] = []
    records = LedgerRecords(open_ledger(tmp_path / "home"), lambda: datetime.now(timezone.utc))
    hub = VehicleHub(now=lambda: datetime.now(timezone.utc), links=dict, key_store=tmp_path / "keys",
                     publish=lambda kind, tenant, data: feed.append((kind, data)), silent_after_s=3.0,
                     times=HoldTimes(heartbeat_timeout_s=1.0), freshness=Freshness(3.0, 3.0, 3.0), records=records)
    try:
        yield hub, feed
    finally:
        hub.stop()


def _until(what: Callable[[], Any], timeout_s: float) -> Any:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end and not (got := what()):
        time.sleep(0.05)
    return what()


def test_a_landed_vehicle_rebooted_on_its_dock_is_the_same_drone_in_a_new_session(
        hub_and_feed: tuple[VehicleHub, list[tuple[str, dict[str, Any]]]]) -> None:
    hub, feed = hub_and_feed
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, home=HOME, speedup=1.0) as sim:
        sim.flight.mode = "LAND"  # where a flight leaves it: landed and disarmed in LAND (or RTL)
        world = bare_world(drones=[drone("D1", link=sim.address, tenant="city-fire")])
        hub.follow(world)
        live = lambda: hub.snapshot()["D1"]  # noqa: E731
        assert _until(lambda: live().status == "ONLINE" and live().view.mode == "LAND"
                      and "RTL_ALT" in live().view.params and live().view.lat is not None, 10), live()
        assert _until(lambda: (live().view.boot_ms or 0) > 4_000, 10)  # it has stood on its dock a while
        sim.reboot("battery swap", battery_pct=96.0)  # the dock swapped the pack: a new boot
        assert _until(lambda: live().view.session == 1 and live().view.mode == "STABILIZE"
                      and live().battery_pct == 96.0, 10), live()
        # its parameters are read again in the new session, and it stays a drone to plan with
        assert _until(lambda: "RTL_ALT" in live().view.params, 10), live().view.params
        time.sleep(CLOCK_WAIT_S + 0.5)  # past any wait for the vehicle's clock
        assert live().status == "ONLINE" and live().fault is None, live()
        assert [d for k, d in feed if k == "fleet.intrusion"] == []
        assert [d["session"] for k, d in feed if k == "fleet.session"] == [1]
        assert hub.world(world).drone("D1").status == "ONLINE"


def _view(**kw: Any) -> VehicleView:
    base: dict[str, Any] = dict(autopilot=3, mode="LAND", armed=False, mission_count_said=12, lat=HOME[0],
                                lon=HOME[1], alt_m=0.0, boot_ms=900_000, session=0)
    return VehicleView(**{**base, **kw})


def _never_busy() -> bool:
    return False


def test_a_reboot_is_judged_where_the_vehicle_was_and_with_the_mission_it_had() -> None:
    """The custody's rule, view by view (pure): the boot mode is not a change; a first heartbeat ahead of the new
    boot time waits for the clock; moved, another mission, or armed across the reboot is foreign control."""
    away = HOME[0] + 0.001  # 111 m north
    cases = {
        "same place, same mission": ([_view(session=1, mode="STABILIZE", boot_ms=3_000)], None),
        "the boot heartbeat before the clock, then the clock": (
            [_view(mode="STABILIZE"), _view(mode="STABILIZE", session=1, boot_ms=3_000, lat=None, lon=None),
             _view(mode="STABILIZE", session=1, boot_ms=4_000)], None),
        "came back 111 m away": ([_view(session=1, mode="STABILIZE", boot_ms=3_000, lat=away)], ("moved",)),
        "came back with another mission": ([_view(session=1, mode="STABILIZE", boot_ms=3_000, mission_count_said=40)],
                                           ("mission",)),
        "came back armed": ([_view(session=1, mode="STABILIZE", boot_ms=3_000, armed=True)], ("rebooted",)),
    }
    for name, (views, expected) in cases.items():
        custody, t = Custody(), 0.0
        assert custody.judge(_view(), t, _never_busy) is None  # the baseline: landed in LAND on its dock
        found = None
        for v in views:
            t += 0.5
            found = found or custody.judge(v, t, _never_busy)
        t += CLOCK_WAIT_S  # a deviation waits for the clock at most this long
        found = found or custody.judge(views[-1], t, _never_busy)
        assert (found.what if found else None) == expected, (name, found)
    # a reboot while armed (in flight) is one, even while a dispatch of this authority holds the drone
    custody = Custody()
    custody.judge(_view(armed=True, mode="AUTO", alt_m=40.0), 0.0, lambda: True)
    found = custody.judge(_view(session=1, mode="STABILIZE", boot_ms=2_000, alt_m=40.0), 0.5, lambda: True)
    assert found is not None and found.what == ("rebooted",) and "while armed" in found.message
    # a mode change of the same session with the clock heard since is foreign control, as before
    custody = Custody()
    custody.judge(_view(), 0.0, _never_busy)
    assert custody.judge(_view(mode="GUIDED"), 0.5, _never_busy) is None  # waits for the clock
    found = custody.judge(_view(mode="GUIDED", boot_ms=901_000), 1.0, _never_busy)
    assert found is not None and found.what == ("mode",)
