"""A booting ArduPilot says latitude 0, longitude 0 until its EKF has an origin; that is no position, not a move.

Found flying sortie on the real ArduCopter 4.6.3 SITL (issue 43): ``GCS_MAVLINK::send_global_position_int``
ignores ``AP_AHRS::get_location``'s refusal and sends its zeroed location for the first ~40 s after boot. The
hub took 0, 0 as where the drone stood, and when the real position came it judged a 7,107 km move with no
dispatch active: foreign control, the drone HELD and out of planning. The simulator now says 0, 0 the same way
(``SimVehicle.located``) and the hub reads it as no position yet (``flows.vehicle.view``).
"""

from __future__ import annotations

from collections.abc import Callable

from flows.fleet.hub import VehicleHub
from fleet.test_bound_links import Feed, feed, live, make_hub, until  # noqa: F401  (fixtures)
from testkit import bare_world, drone, sim_vehicle

HOME = (60.1652, 24.9449, 14.0)


def test_a_vehicle_without_a_position_yet_is_not_held_when_its_position_comes(
        make_hub: Callable[..., VehicleHub], feed: Feed) -> None:
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, home=HOME, ready_at_once=False, boot_s=0.0,
                     prearm_s=2.0, speedup=1.0) as sim:
        hub = make_hub()
        hub.follow(bare_world(drones=[drone("D1", link=sim.address, tenant="city-fire")]))
        assert until(lambda: live(hub).status == "ONLINE" and live(hub).view.boot_ms is not None, 5), live(hub)
        assert not sim.located() and live(hub).view.lat is None  # heard, and no position: 0, 0 is not a place
        assert until(lambda: live(hub).view.lat is not None, 6), live(hub)
        assert abs(live(hub).view.lat - HOME[0]) < 1e-5 and abs(live(hub).view.lon - HOME[1]) < 1e-5
        until(lambda: live(hub).status != "ONLINE", 1.5)  # the hub judges each view: give it a few
        assert live(hub).status == "ONLINE" and live(hub).fault is None, live(hub)
        assert not feed.of("fleet.intrusion"), feed.events
