"""Dispatch against the vehicle simulator over real UDP on 127.0.0.1: the cases around the matrix.

Each case starts ``SimVehicle`` on a free port (``udpin:127.0.0.1:0``) and
uploads a small hand-built plan with ``upload_plan``. The fault matrix itself
(both autopilots × every loss point × drop rates) is
``tests/vehicle/test_fault_matrix.py``. Timers are short (50 ms).
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Any

import pytest

os.environ.setdefault("MAVLINK20", "1")

from flows.vehicle.upload import upload_plan  # noqa: E402
from flows.sim.vehicle import SimVehicle  # noqa: E402
from testkit import sim_vehicle  # noqa: E402
from flows.errors import DeviceMismatch, DeviceUnavailable, DispatchFailed, DispatchUncertain
from planner.errors import InvalidArgument
from planner.output.mission_items import FENCE, MISSION, RALLY, mission_set  # noqa: E402
from planner.output.mission_wire import compare_items  # noqa: E402
from planner.plan import Plan  # noqa: E402
from planner.world.model import World  # noqa: E402
from testkit import wire_plan, wire_world  # noqa: E402

FAST = dict(timeout_s=10.0, retry_s=0.05, max_retries=12, heartbeat_timeout_s=3.0)
SIM_FAST = dict(heartbeat_s=0.05, rerequest_s=0.05, transfer_timeout_s=3.0)
CEILING = {"ardupilot": "FENCE_ALT_MAX", "px4": "GF_MAX_VER_DIST"}
ARDUPILOT_HOME = (60.1699, 24.9409, 13.5)  # the vehicle's own home: differs from the plan's placeholder


def _differences(sim: SimVehicle, plan: Plan, world: World, dialect: str) -> dict[int, tuple[str, ...]]:
    ms = mission_set(plan, 0, world)
    held = sim.missions
    return {t: compare_items(ms.items_of(t), held[t], dialect=dialect, mission_type=t) for t in (FENCE, MISSION, RALLY)}  # type: ignore[arg-type]


def test_ardupilot_home_slot_is_seq0_and_comes_back_as_home() -> None:
    world, plan = wire_world("ardupilot"), wire_plan()
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", home=ARDUPILOT_HOME, **SIM_FAST) as sim:
        upload_plan(plan, world, link=sim.address, **FAST)
        held = sim.missions[MISSION]
    planned = mission_set(plan, 0, world).mission
    assert held[0].lat == pytest.approx(ARDUPILOT_HOME[0]) and planned[0].lat != held[0].lat
    assert held[1].command == planned[1].command == 22  # MAV_CMD_NAV_TAKEOFF at seq 1
    assert compare_items(planned, held, dialect="ardupilot") == ()


def test_a_changed_item_is_a_difference() -> None:
    world, plan = wire_world("px4"), wire_plan()
    planned = mission_set(plan, 0, world).mission
    moved = list(planned)
    moved[2] = replace(moved[2], lat=moved[2].lat + 2e-7)
    assert compare_items(planned, tuple(moved), dialect="px4")
    nudged = list(planned)
    nudged[2] = replace(nudged[2], lat=nudged[2].lat + 0.6e-7)
    assert compare_items(planned, tuple(nudged), dialect="px4") == ()


class SwallowLastItem:
    """A vehicle part that loses the mission's last item every time (a broken radio, say)."""

    def __init__(self) -> None:
        self.swallowed = 0

    def on_message(self, vehicle: SimVehicle, msg: Any) -> bool:
        if msg.get_type() == "MISSION_ITEM_INT" and msg.mission_type == MISSION:
            if msg.seq == len(mission_set(wire_plan(), 0, wire_world("px4")).mission) - 1:
                self.swallowed += 1
                return True
        return False

    def on_mission_stored(self, vehicle: SimVehicle, mission_type: int, items: tuple[Any, ...]) -> None:
        return None

    def tick(self, vehicle: SimVehicle, now_s: float) -> None:
        return None


@pytest.mark.timeout(30)
def test_an_incomplete_upload_is_read_back_and_reported_uncertain() -> None:
    world, plan = wire_world("px4"), wire_plan()
    part = SwallowLastItem()
    with sim_vehicle("udpin:127.0.0.1:0", "px4", flight=part, **SIM_FAST) as sim:
        t0 = time.monotonic()
        with pytest.raises(DispatchUncertain) as info:
            upload_plan(plan, world, link=sim.address, **{**FAST, "timeout_s": 3.0})
        assert time.monotonic() - t0 < 4.0
    assert part.swallowed >= 2
    # PX4 keeps waiting for the item (GETLIST) and ignores a download meanwhile: the mission is unknown
    assert "ended without a final ack" in info.value.message and "mission is unknown" in info.value.message
    upload = info.value.details["uploads"][0]
    attempts = upload["attempts"]
    verify = [a for a in attempts if a["kind"] == "verify"]
    assert verify and verify[-1]["outcome"] == "DOWNLOAD_FAILED"
    assert not any(a["kind"] == "upload" and a["mission_type"] == "rally" for a in attempts), "nothing after a doubt"
    assert upload["holds"] is not None and upload["holds"]["mission"] is None, "what could not be read is said so"
    assert upload["status"] == "UNCERTAIN"


def test_no_vehicle_is_device_unavailable_quickly() -> None:
    world, plan = wire_world("px4"), wire_plan()
    with sim_vehicle("udpin:127.0.0.1:0", "px4") as sim:
        dead = sim.address
    seen: list[dict[str, Any]] = []
    t0 = time.monotonic()
    with pytest.raises(DeviceUnavailable) as info:
        upload_plan(plan, world, link=dead, on_attempt=seen.append, timeout_s=5.0, retry_s=0.05, heartbeat_timeout_s=0.5)
    assert time.monotonic() - t0 < 2.0
    assert seen and seen[0]["outcome"] == "NO_ANSWER"
    assert info.value.details["status"] == "UNREACHABLE"


def test_wrong_autopilot_uploads_nothing() -> None:
    world, plan = wire_world("ardupilot"), wire_plan()
    with sim_vehicle("udpin:127.0.0.1:0", "px4", **SIM_FAST) as sim:
        with pytest.raises(DeviceMismatch, match="MAV_AUTOPILOT_PX4"):
            upload_plan(plan, world, link=sim.address, **FAST)
        assert sim.stats.uploads_completed == 0


def test_link_defaults_to_the_drone_and_a_single_link_needs_a_single_drone() -> None:
    plan = wire_plan()
    with sim_vehicle("udpin:127.0.0.1:0", "px4", **SIM_FAST) as sim:
        world = wire_world("px4", link=sim.address)
        outcome = upload_plan(plan, world, **FAST)
    assert outcome.uploads[0].link == world.drones[0].link
    two = replace(plan, sorties=plan.sorties + (replace(plan.sorties[0], index=1, drone_id="OTHER"),))
    with pytest.raises(InvalidArgument):
        upload_plan(two, world, link="udpout:127.0.0.1:9", **FAST)


class IgnoreParamSet:
    """A vehicle part that never answers PARAM_SET (an autopilot without that parameter)."""

    def on_message(self, vehicle: SimVehicle, msg: Any) -> bool:
        return msg.get_type() == "PARAM_SET"

    def on_mission_stored(self, vehicle: SimVehicle, mission_type: int, items: tuple[Any, ...]) -> None:
        return None

    def tick(self, vehicle: SimVehicle, now_s: float) -> None:
        return None


def test_an_unconfirmed_ceiling_stops_the_dispatch_and_clears_the_fence() -> None:
    world, plan = wire_world("px4"), wire_plan()
    with sim_vehicle("udpin:127.0.0.1:0", "px4", flight=IgnoreParamSet(), **SIM_FAST) as sim:
        with pytest.raises(DispatchFailed, match="ceiling") as info:
            upload_plan(plan, world, link=sim.address, **{**FAST, "max_retries": 3})
        assert sim.missions[MISSION] == (), "no mission goes up over a fence without its ceiling"
        assert sim.missions[FENCE] == (), "and the fence of a dispatch that did not happen is cleared"
    assert info.value.details["uploads"][0]["cleared"] == ["fence"]
    assert sim.params["GF_MAX_VER_DIST"] == 0.0


def test_verify_plan_settles_by_reading_back_and_uploads_nothing() -> None:
    from flows.vehicle.upload import verify_plan

    world, plan = wire_world("ardupilot"), wire_plan()
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", home=ARDUPILOT_HOME, **SIM_FAST) as sim:
        before = verify_plan(plan, world, link=sim.address, **FAST)
        assert not before.matches and before.vehicles[0]["counts"] == {"fence": 0, "mission": 0, "rally": 0}
        upload_plan(plan, world, link=sim.address, **FAST)
        completed = sim.stats.uploads_completed
        after = verify_plan(plan, world, link=sim.address, **FAST)
        assert after.matches and after.vehicles[0]["differences"] == {}
        assert sim.stats.uploads_completed == completed, "verifying uploads nothing"
        other = replace(plan, altitude_m=60.0)  # rally altitudes follow the plan altitude
        changed = verify_plan(other, world, link=sim.address, **FAST)
    assert not changed.matches and list(changed.vehicles[0]["differences"]) == ["rally"]
