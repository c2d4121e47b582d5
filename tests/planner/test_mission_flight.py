"""Mission rows a vehicle flies fast, how the mission engine runs them, and the sortie figures they give."""

from __future__ import annotations

import os
from dataclasses import replace
from datetime import datetime, timezone

import pytest

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from planner.energy import EnergyModel  # noqa: E402
from planner.flight.params import NavLimits  # noqa: E402
from planner.output.mission_flight import nav_points  # noqa: E402
from planner.output.mission_items import MissionItem, waypoint_rows  # noqa: E402
from planner.output.sortie_flight import fly_waypoints  # noqa: E402
from planner.plan import Leg, Sortie, Waypoint  # noqa: E402
from planner.world.model import Dock  # noqa: E402
from planner.world.nav_params import NavParams  # noqa: E402
from testkit import dispatch_world  # noqa: E402

M = mavutil.mavlink
T0 = datetime(2026, 12, 1, 9, tzinfo=timezone.utc)
DOCK = Dock("DOCK-A", "dock", "city-fire", 24.9410, 60.1700, 12.0, 7000.0, 12.0)


def _wp(dx: float, dy: float, action: str = "WAYPOINT", speed: float = 12.0, **kw) -> Waypoint:  # noqa: ANN003
    return Waypoint(24.9410 + dx * 1e-4, 60.1700 + dy * 1e-4, 40.0, action, speed, **kw)  # type: ignore[arg-type]


def _patrol_like() -> Sortie:
    """A transit to P, a lane P→Q, a second lane Q→R starting where the first ends, a transit home."""
    legs = (
        Leg("takeoff", (_wp(0, 0, "TAKEOFF", 0.0),), 0.0, 0.0, 0.0),
        Leg("transit", (_wp(0, 0), _wp(0, 20)), 0.0, 0.0, 0.0),
        Leg("lane", (_wp(0, 20, "CAMERA_ON", 7.0), _wp(3, 22, speed=7.0), _wp(6, 20, "CAMERA_OFF", 7.0)), 0.0, 0.0, 0.0, "L1"),
        Leg("lane", (_wp(6, 20, "CAMERA_ON", 7.0), _wp(9, 20, "CAMERA_OFF", 7.0)), 0.0, 0.0, 0.0, "L2"),
        Leg("transit", (_wp(9, 20), _wp(0, 0)), 0.0, 0.0, 0.0),
        Leg("landing", (_wp(0, 0, "LAND", 0.0),), 0.0, 0.0, 0.0),
    )
    return Sortie(0, "M30T-01", "DOCK-A", T0, legs, 0.0, 0.0, 0.0, 0.0)


def _rows(sortie: Sortie, dialect: str = "ardupilot") -> tuple[MissionItem, ...]:
    return waypoint_rows(sortie.waypoints, DOCK, dialect, default_alt=40.0, trigger_m=15.0)[0]  # type: ignore[arg-type]


def test_one_nav_row_per_place_and_the_camera_switched_only_when_it_changes() -> None:
    rows = _rows(_patrol_like())
    navs = [(r.lat, r.lon, r.alt_m) for r in rows if r.command == M.MAV_CMD_NAV_WAYPOINT and r.seq > 0]
    assert all(a != b for a, b in zip(navs, navs[1:]))
    cams = [r.param1 for r in rows if r.command == M.MAV_CMD_DO_SET_CAM_TRIGG_DIST]
    assert cams == [15.0, 0.0]  # on at P, off at R: not off and on again at Q
    speeds = [(r.seq, r.param2) for r in rows if r.command == M.MAV_CMD_DO_CHANGE_SPEED]
    assert [s for _, s in speeds] == [12.0, 7.0, 12.0]
    first_wp = next(r for r in rows if r.command == M.MAV_CMD_NAV_WAYPOINT and r.seq > 0)
    assert speeds[0][0] == first_wp.seq + 1  # set once the waypoint controller runs
    # before each nav row the speed comes first, then the camera
    for a, b in zip(rows, rows[1:]):
        assert not (a.command == M.MAV_CMD_DO_SET_CAM_TRIGG_DIST and b.command == M.MAV_CMD_DO_CHANGE_SPEED)


def test_every_speed_asked_for_is_flown() -> None:
    points, _ = nav_points(_rows(_patrol_like()), "ardupilot", DOCK)
    flown = [p.speed_mps for p in points if p.speed_mps is not None]
    assert flown == [12.0, 7.0, 12.0]


def test_the_mission_engine_drops_what_ardupilot_drops_and_px4_does_not() -> None:
    """Two "do" rows before a waypoint where the vehicle already is: only the first runs (AP_Mission);
    a speed set between the take-off and the first waypoint holds (wp_start's desired_speed_override)."""
    def row(seq: int, cmd: int, dx: float = 0, dy: float = 0, p1: float = 0.0, p2: float = 0.0) -> MissionItem:
        frame = 3 if cmd in (M.MAV_CMD_NAV_WAYPOINT, M.MAV_CMD_NAV_TAKEOFF, M.MAV_CMD_NAV_LAND) else 2
        lat, lon = (60.17 + dy * 1e-4, 24.941 + dx * 1e-4) if frame == 3 else (0.0, 0.0)
        return MissionItem(seq, cmd, frame, lat, lon, 40.0 if frame == 3 else 0.0, p1, p2)

    rows = (
        row(0, M.MAV_CMD_NAV_WAYPOINT), row(1, M.MAV_CMD_NAV_TAKEOFF), row(2, M.MAV_CMD_DO_CHANGE_SPEED, p1=1, p2=12),
        row(3, M.MAV_CMD_NAV_WAYPOINT), row(4, M.MAV_CMD_NAV_WAYPOINT, dy=10),
        row(5, M.MAV_CMD_DO_SET_CAM_TRIGG_DIST, p1=0), row(6, M.MAV_CMD_DO_CHANGE_SPEED, p1=1, p2=9),
        row(7, M.MAV_CMD_NAV_WAYPOINT, dy=10), row(8, M.MAV_CMD_NAV_WAYPOINT, dy=20),
        row(9, M.MAV_CMD_DO_CHANGE_SPEED, p1=1, p2=5), row(10, M.MAV_CMD_NAV_WAYPOINT, dy=30), row(11, M.MAV_CMD_NAV_LAND, dy=30),
    )
    ap, seqs = nav_points(rows, "ardupilot", DOCK)
    assert seqs == (1, 3, 4, 7, 8, 10, 11)
    assert [p.speed_mps for p in ap] == [None, 12.0, None, None, None, 5.0, None]
    px4 = rows[1:]
    px, _ = nav_points(px4, "px4", DOCK)
    assert [p.speed_mps for p in px] == [None, 12.0, None, 9.0, None, 5.0, None]


def test_the_legs_figures_add_up_to_the_flight() -> None:
    world = dispatch_world("ardupilot")
    drone = world.drone("M30T-01")
    sortie = _patrol_like()
    model = EnergyModel.for_drone(drone, None, 40.0)
    flown = fly_waypoints(sortie.waypoints, sortie.leg_ends, drone, DOCK, model, default_alt=40.0)
    assert len(flown.leg_duration_s) == len(sortie.legs)
    assert flown.duration_s == pytest.approx(flown.timeline.end_s)
    assert all(d >= 0 for d in flown.leg_duration_s) and all(e >= 0 for e in flown.leg_energy_wh)
    # the take-off leg is the climb, the landing leg the descent and the disarm
    assert flown.leg_duration_s[0] == pytest.approx(flown.timeline.arrivals_s[0])
    assert flown.leg_duration_s[-1] > 40.0
    # slow flight is priced near hover power (a constant-speed plan would say 12 m/s at cruise power)
    hover_wh = model.power_w(0.0) * flown.duration_s / 3600.0
    assert 0.8 * hover_wh < flown.energy_wh < 1.05 * hover_wh
    # the vehicle's own parameters change the figures: a wider waypoint radius flies the corners faster
    wide = replace(drone, nav_params=NavParams.of({"WPNAV_RADIUS": 800}))
    assert fly_waypoints(sortie.waypoints, sortie.leg_ends, wide, DOCK, model, default_alt=40.0).duration_s < flown.duration_s
    assert NavLimits.for_drone(wide).radius_m == 8.0


def test_the_light_mavlink_numbers_are_pymavlinks() -> None:
    from pymavlink.dialects.v20 import common

    import planner.output.mav_ids as ids

    names = [n for n in vars(ids) if n.startswith("MAV_")]
    assert len(names) > 15 and all(getattr(ids, n) == getattr(common, n) for n in names)
