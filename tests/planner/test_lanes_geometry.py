"""Lane pieces split at junctions and clipped to a selection; leg builders; golden files on the demo world."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from shapely.geometry import LineString, Point, box

from planner.energy import EnergyModel
from planner.errors import InvalidArgument
import testkit
from planner.job import Job
from planner.patrol.lanes import lane_graph, required_lane_edges, split_lanes
from planner.planning_limits import PlanningLimits
from planner.mission import plan_mission
from planner.legs import inspect_leg, lane_leg, landing_leg, sweep_leg, takeoff_leg, transit_leg
from planner.plan import Plan
from planner.geo.projection import LocalFrame
from planner.world.model import (
    Applicability,
    CircleArea,
    Geozone,
    Lane,
    Restriction,
    VerticalReference,
    World,
    ZoneVolume,
)
from testkit import bare_world

T0 = datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc)
D = 0.001  # ≈ 55 m east, 111 m north at 60°N


def world_with(lanes=(), zones=()) -> World:
    return bare_world(zones=zones, lanes=lanes)


def lane(lid: str, coords, kind="fire_lane") -> Lane:
    return Lane(lid, kind, lid, LineString(coords))


# a T junction: A runs west→east through (24.941, 60.17); B starts at that vertex and runs north
A = lane("A", [(24.940, 60.170), (24.941, 60.170), (24.942, 60.170)])
B = lane("B", [(24.941, 60.170), (24.941, 60.171)])
R = lane("R", [(24.940, 60.1705), (24.942, 60.1705)], kind="road")


def test_split_at_shared_vertices() -> None:
    edges = split_lanes([A, B])
    assert [e.id for e in edges] == ["A#0", "A#1", "B#0"]
    assert edges[0].coords_wgs84 == ((24.940, 60.170), (24.941, 60.170))
    g = lane_graph(world_with([A, B, R]))
    assert g.number_of_edges() == 3 and g.number_of_nodes() == 4  # the road is another kind
    lengths = sorted(round(d["length_m"]) for _, _, d in g.edges(data=True))
    assert lengths == [56, 56, 111]  # 0.001° of longitude at 60.17°N ≈ 55.5 m (UTM scale ≈ 0.9996..1.0)


def test_required_edges_clipped_to_the_selection() -> None:
    w = world_with([A, B, R])
    area = box(24.9405, 60.1695, 24.9415, 60.1715)  # the middle of A and all of B
    edges = required_lane_edges(w, area)
    assert [e.id for e in edges] == ["A#0.0", "A#1.0", "B#0"]
    assert edges[0].coords_wgs84 == ((24.9405, 60.170), (24.941, 60.170))  # lane direction kept
    frame = LocalFrame.for_geometry(area)
    assert sum(e.length_m(frame) for e in edges) == pytest.approx(55.6 + 111.3, abs=1.0)
    assert required_lane_edges(w, area, kinds=("road",))[0].kind == "road"
    assert required_lane_edges(w, box(25.0, 61.0, 25.1, 61.1)) == []
    with pytest.raises(InvalidArgument):
        required_lane_edges(w, area, kinds=("river",))
    with pytest.raises(InvalidArgument):
        required_lane_edges(w, box(0, 0, 0, 0).buffer(0))


def test_leg_builders_figures_and_actions() -> None:
    frame = LocalFrame.for_point(24.94, 60.17)
    model = EnergyModel(439.0, 385.0, 12.0, 0.1)
    o = frame.forward(24.94, 60.17)
    up = takeoff_leg(o, 50, frame, model)
    assert up.waypoints[0].action == "TAKEOFF" and up.waypoints[0].alt_m == 50 and up.duration_s > 0
    tr = transit_leg([o, (o[0] + 300, o[1]), (o[0] + 300, o[1]), (o[0] + 300, o[1] + 400)], 50, frame, model, 10)
    assert len(tr.waypoints) == 3 and tr.distance_m == pytest.approx(700) and tr.duration_s == pytest.approx(70)
    ln = lane_leg([o, (o[0], o[1] + 100)], 50, frame, model, 7, lane_edge_id="A#0", reverse=True)
    assert [w.action for w in ln.waypoints] == ["CAMERA_ON", "CAMERA_OFF"] and ln.target_id == "A#0"
    assert ln.waypoints[0].lat > ln.waypoints[1].lat
    ins = inspect_leg(o, 50, frame, model, target_id="H1", hold_s=20)
    assert ins.waypoints[0].hold_s == 20 and ins.duration_s == pytest.approx(20)
    down = landing_leg(o, 50, frame, model)
    assert down.waypoints[0].action == "LAND" and down.waypoints[0].alt_m == 0
    path = [(0, 0), (100, 0), (100, 20), (0, 20), (0, 60), (100, 60)]
    path = [(o[0] + x, o[1] + y) for x, y in path]
    sweeps = [(path[0], path[1]), (path[1], path[2]), (path[2], path[3]), (path[4], path[5])]
    sw = sweep_leg(path, sweeps, 50, frame, model, 7)
    assert [w.action for w in sw.waypoints] == ["CAMERA_ON", "WAYPOINT", "WAYPOINT", "CAMERA_OFF", "CAMERA_ON", "CAMERA_OFF"]
    with pytest.raises(InvalidArgument):
        takeoff_leg(o, 0, frame, model)


# ---------------------------------------------------------------- a survey around a no-fly circle
CIRCLE = Geozone(
    "NFZ1", "circle", Restriction.PROHIBITED,
    (ZoneVolume(CircleArea(24.94897, 60.16459, 150.0), 0.0, VerticalReference.AGL, 120.0, VerticalReference.AGL),),
    (Applicability(permanent=True),), "", "test",
)
SURVEY_AREA = box(24.9440, 60.1625, 24.9545, 60.1665)


MARGIN = PlanningLimits(safety_margin_m=20.0)


def _flown_local(plan: Plan, frame: LocalFrame) -> list[LineString]:
    """Every leg of every sortie as a local-frame line (single-waypoint legs as a point-line)."""
    out = []
    for s in plan.sorties:
        for leg in s.legs:
            pts = [frame.forward(wp.lon, wp.lat) for wp in leg.waypoints]
            out.append(LineString(pts if len(pts) > 1 else pts * 2))
    return out


def test_survey_keeps_the_margin_around_a_zone_inside_the_area() -> None:
    job = Job("AREA_SURVEY", SURVEY_AREA, T0, altitude_m=40, swath_m=30)
    w = bare_world(zones=[CIRCLE], drones=[testkit.drone()], docks=[testkit.dock()], weather=testkit.calm_weather(T0))
    plan = plan_mission(w, job, w.drones, limits=MARGIN)
    assert plan.sorties and plan.coverage_fraction is not None and plan.coverage_fraction > 0.9
    centre = Point(job.frame.forward(24.94897, 60.16459))
    sweeps = [leg for s in plan.sorties for leg in s.legs if leg.kind == "sweep"]
    assert sweeps
    for line in _flown_local(plan, job.frame):
        assert line.distance(centre) >= 150 + 20 - 0.1  # the zone's radius plus the rule set's margin


def test_area_wholly_inside_a_zone_is_left_unserved() -> None:
    inside = Point(24.94897, 60.16459).buffer(0.0005)
    job = Job("AREA_SURVEY", inside, T0, altitude_m=40, swath_m=30)
    w = bare_world(zones=[CIRCLE], drones=[testkit.drone()], docks=[testkit.dock()], weather=testkit.calm_weather(T0))
    plan = plan_mission(w, job, w.drones, limits=MARGIN)
    assert plan.sorties == ()
    assert [(u.target_id, u.reason) for u in plan.unserved] == [("area", "wholly inside no-fly zones")]
    assert plan.coverage_fraction == 0.0


def _demo_world():
    from flows.context import DEMO_WORLD_DIR
    from flows.world_folder import load_world

    if not DEMO_WORLD_DIR.exists():
        pytest.skip("demo world not present")
    return load_world(DEMO_WORLD_DIR)


def test_golden_survey_with_a_no_fly_hole(golden) -> None:
    """One drone surveys around HELX001 (HELX002 starts at 50 m), inside the bundled rule set's limits."""
    from flows.context import RULES_FILE
    from rules.derived_limits import planning_limits
    from flows.rule_file import load_rules

    w = _demo_world()
    drone = w.drone("M30T-01")
    job = Job("AREA_SURVEY", SURVEY_AREA, T0, altitude_m=40, swath_m=30)
    limits = planning_limits(load_rules(RULES_FILE), w)
    plan = plan_mission(w, job, [drone], limits=limits)
    assert plan.sorties and {s.drone_id for s in plan.sorties} == {"M30T-01"}
    helx001 = next(z for z in w.zones if z.id == "HELX001").volumes[0].horizontal
    centre = Point(job.frame.forward(helx001.lon, helx001.lat))
    for line in _flown_local(plan, job.frame):
        assert line.distance(centre) >= helx001.radius_m + limits.safety_margin_m - 0.1
    golden.check_plan("survey_nfz_hole", plan)


def test_golden_fire_lanes_of_a_region(golden) -> None:
    w = _demo_world()
    region = w.region("region-1003")
    frame = LocalFrame.for_geometry(region.area)
    edges = required_lane_edges(w, region.area, ("fire_lane",))
    assert edges, "the demo region should have fire lanes"
    for e in edges:
        assert region.area.buffer(1e-9).covers(e.line_wgs84)
    doc = [
        {"id": e.id, "lane_id": e.lane_id, "length_m": round(e.length_m(frame), 2),
         "coords": [[round(x, 7), round(y, 7)] for x, y in e.coords_wgs84]}
        for e in edges
    ]
    golden.check("fire_lanes_region_1003", "edges.json", json.dumps(doc, sort_keys=True, indent=1) + "\n")


def test_zone_splitting_the_area_is_bridged_around() -> None:
    # a no-fly box cutting the survey area in two: the hop between the halves goes around it
    wall = Geozone(
        "WALL", "wall", Restriction.PROHIBITED,
        (ZoneVolume(box(24.9480, 60.1600, 24.9490, 60.1700), None, VerticalReference.AGL, None, VerticalReference.AGL),),
        (Applicability(permanent=True),), "", "test",
    )
    area = box(24.9440, 60.1625, 24.9545, 60.1665)
    job = Job("AREA_SURVEY", area, T0, altitude_m=40, swath_m=40)
    w = bare_world(zones=[wall], drones=[testkit.drone()], docks=[testkit.dock()], weather=testkit.calm_weather(T0))
    plan = plan_mission(w, job, w.drones, limits=PlanningLimits(safety_margin_m=10.0))
    grown = job.frame.to_local(wall.volumes[0].horizontal).buffer(10.0 - 0.05)
    sweep_points = [job.frame.forward(wp.lon, wp.lat) for s in plan.sorties for leg in s.legs if leg.kind == "sweep"
                    for wp in leg.waypoints]
    east, west = job.frame.forward(24.9490, 60.1645)[0], job.frame.forward(24.9480, 60.1645)[0]
    assert any(x > east for x, _ in sweep_points) and any(x < west for x, _ in sweep_points)  # both halves flown
    for line in _flown_local(plan, job.frame):
        assert not line.intersects(grown)
