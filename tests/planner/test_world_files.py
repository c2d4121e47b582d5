"""planner.world.files (with flows.world_folder reading the folder): the demo world loads; every bad input
is a located INVALID_ARGUMENT, never half a world — but for one drone's fleet.json entry, refused alone (the rest of
the world loads, the drone named with its problems)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from planner.errors import InvalidArgument, NotFound
from planner.world.model import Restriction
from flows.world_folder import load_world, read_world_folder, validate_world
from planner.world.files import parse_world, snapshot_hash, world_problems

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo-helsinki"
SHARED_ED318 = Path(__file__).resolve().parent / "geozones_ed318_example.geojson"  # byte copy of shared/data/geozones/ed318_example.geojson
REFERENCE_NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


def _copy_demo(tmp_path: Path) -> Path:
    root = tmp_path / "world"
    shutil.copytree(DEMO, root)
    return root


def _edit(root: Path, name: str, change: Callable[[Any], Any], *, replace: bool = False) -> None:
    """Change one file in place (``change`` mutates; with ``replace`` its return value is the new content)."""
    path = root / name
    data = json.loads(path.read_text(encoding="utf-8"))
    result = change(data)
    path.write_text(json.dumps(result if replace else data, ensure_ascii=False), encoding="utf-8")


# --------------------------------------------------------------------------- the good world


def test_demo_world_loads_completely() -> None:
    w = load_world(DEMO)
    assert w.name == "demo-helsinki" and w.timezone == "Europe/Helsinki"
    assert [d.id for d in w.drones] == ["M30T-01", "M30T-02", "M3TD-01", "M3TD-02", "M4TD-01", "M4TD-02"]
    assert [d.id for d in w.docks] == ["DOCK-A", "DOCK-B", "DOCK-C"]
    assert [z.id for z in w.zones] == ["HELX001", "HELX002", "HELX003"]
    assert len(w.lanes) == 182 and all(lane.kind == "fire_lane" for lane in w.lanes)
    assert len(w.pois) == 37 and all(p.kind == "hydrant" for p in w.pois)
    assert len(w.weather.hours) == 9 * 24
    for coll in (w.drones, w.docks, w.zones, w.lanes, w.regions, w.pois, w.users):
        ids = [x.id for x in coll]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert w.root == str(DEMO)
    assert len(w.snapshot_hash) == 64


def test_demo_fleet_has_the_promised_special_cases() -> None:
    w = load_world(DEMO)
    offline = [d.id for d in w.drones if d.status == "OFFLINE"]
    stale = [d.id for d in w.drones if d.status == "ONLINE" and REFERENCE_NOW - d.last_telemetry_at > timedelta(hours=1)]
    no_thermal = [d.id for d in w.drones if "THERMAL_CAMERA" not in d.capabilities]
    assert (offline, stale, no_thermal) == (["M30T-02"], ["M3TD-02"], ["M4TD-02"])
    fresh = [d for d in w.drones if d.id not in offline + stale]
    assert all(timedelta(0) < REFERENCE_NOW - d.last_telemetry_at < timedelta(minutes=5) for d in fresh)
    assert {d.autopilot for d in w.drones} == {"ardupilot", "px4"}
    assert {d.tenant for d in w.drones} == {"city-fire", "port-authority"}


def test_demo_region_1001_holds_lanes_and_hydrants_and_docks_avoid_helx001() -> None:
    w = load_world(DEMO)
    r = w.region("region-1001")
    assert r.tenant == "city-fire"
    assert sum(1 for lane in w.lanes if lane.line.intersects(r.area)) >= 30
    assert sum(1 for p in w.pois if r.area.contains(__import__("shapely").Point(p.lon, p.lat))) >= 8
    helx001 = next(z for z in w.zones if z.id == "HELX001")
    circle = helx001.volumes[0].horizontal
    assert helx001.restriction is Restriction.PROHIBITED and circle.radius_m == 150
    from planner.world.files import _distance_m

    for dock in w.docks:
        assert _distance_m(dock.lon, dock.lat, circle.lon, circle.lat) > 200, dock.id
    assert w.user("chen.jing").may("approver", "city-fire")
    assert not w.user("chen.jing").may("approver", "port-authority")


def test_world_is_frozen_and_variants_come_from_replace() -> None:
    w = load_world(DEMO)
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.name = "x"  # type: ignore[misc]
    fewer = dataclasses.replace(w, zones=w.zones[:1])
    assert len(fewer.zones) == 1 and len(w.zones) == 3


def test_snapshot_hash_is_stable_and_tracks_bytes(tmp_path: Path) -> None:
    root = _copy_demo(tmp_path)
    demo = snapshot_hash(read_world_folder(DEMO))
    assert snapshot_hash(read_world_folder(root)) == demo == load_world(root).snapshot_hash
    _edit(root, "fleet.json", lambda d: d["drones"][0].update(battery_pct=95))
    assert load_world(root).snapshot_hash != demo


def test_a_world_parses_from_content_in_memory_without_a_folder() -> None:
    """The planner side reads no file: the same bytes give the same World wherever they came from."""
    files = read_world_folder(DEMO)
    world = parse_world(dict(files))
    assert world == dataclasses.replace(load_world(DEMO), root="") and world.snapshot_hash == snapshot_hash(files)
    broken = {k: v for k, v in files.items() if k != "fleet.json"}
    assert [(p.file, p.message) for p in world_problems(broken)] == [("fleet.json", "file is missing")]
    with pytest.raises(InvalidArgument, match="fleet.json"):
        parse_world(broken)


def test_extensions_are_allowed_anywhere(tmp_path: Path) -> None:
    root = _copy_demo(tmp_path)
    _edit(root, "fleet.json", lambda d: d["drones"][0].update(extensions={"serial": "1ZNBJ", "anything": [1, 2]}))
    _edit(root, "world.json", lambda d: d.update(extensions={"owner": "demo"}))
    assert validate_world(root) == []
    assert load_world(root).drone("M30T-01").battery_pct == 96


def test_ed318_zone_file_loads_in_a_world(tmp_path: Path) -> None:
    root = _copy_demo(tmp_path)
    (root / "zones" / "helx.json").unlink()
    shutil.copyfile(SHARED_ED318, root / "zones" / "helx.geojson")
    w = load_world(root)
    assert [z.restriction for z in w.zones] == [Restriction.PROHIBITED, Restriction.REQ_AUTHORISATION,
                                                 Restriction.CONDITIONAL]
    assert {z.source for z in w.zones} == {"zones/helx.geojson"}


def test_missing_folder_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFound):
        load_world(tmp_path / "nope")
    with pytest.raises(NotFound):
        validate_world(tmp_path / "nope")


# --------------------------------------------------------------------------- bad input


def _swap_dock(d: Any) -> None:
    dock = d["docks"][1]
    dock["lon"], dock["lat"] = dock["lat"], dock["lon"]


def _bowtie(d: Any) -> None:
    d["features"][0]["geometry"]["coordinates"] = [
        [[24.940, 60.167], [24.951, 60.172], [24.951, 60.167], [24.940, 60.172], [24.940, 60.167]]]


def _unclosed(d: Any) -> None:
    d["features"][2]["geometry"]["coordinates"][0].pop()


def _dup_drone(d: Any) -> None:
    d["drones"][1]["id"] = "M30T-01"


def _ring_lat_out_of_range(d: Any) -> None:
    d["features"][4]["geometry"]["coordinates"][0][3] = [24.95, 124.0]


BAD_CASES: list[tuple[str, str, Callable[[Any], Any] | str, str, str, str]] = [
    # (case id, file, change, expected file, expected path, expected message fragment)
    ("swapped_lat_lon_dock", "docks.json", _swap_dock, "docks.json", "$.docks[1]", "swapped lat/lon"),
    ("swapped_lat_lon_poi", "pois.geojson",
     lambda d: d["features"][5]["geometry"].update(coordinates=d["features"][5]["geometry"]["coordinates"][::-1]),
     "pois.geojson", "$.features[5].geometry.coordinates", "swapped lat/lon"),
    ("lat_out_of_range", "lanes.geojson",
     lambda d: d["features"][3]["geometry"]["coordinates"].__setitem__(1, [24.94, 160.2]),
     "lanes.geojson", "$.features[3].geometry.coordinates[1]", "outside [-90, 90]"),
    ("ring_lat_out_of_range", "regions.geojson", _ring_lat_out_of_range,
     "regions.geojson", "$.features[4].geometry.coordinates[0][3]", "latitude 124.0"),
    ("self_intersecting_polygon", "regions.geojson", _bowtie,
     "regions.geojson", "$.features[0].geometry.coordinates", "Self-intersection"),
    ("unclosed_ring", "regions.geojson", _unclosed,
     "regions.geojson", "$.features[2].geometry.coordinates[0]", "not closed"),
    ("zone_radius_zero", "zones/helx.json",
     lambda d: d["features"][0]["geometry"][0]["horizontalProjection"].update(radius=0),
     "zones/helx.json", "$.features[0].geometry[0].horizontalProjection.radius", "radius must be a number > 0"),
    ("unknown_restriction", "zones/helx.json", lambda d: d["features"][1].update(restriction="FORBIDDEN_ISH"),
     "zones/helx.json", "$.features[1].restriction", "unknown restriction 'FORBIDDEN_ISH'"),
    ("duplicate_drone_id", "fleet.json", _dup_drone, "fleet.json", "$.drones[1].id", "duplicate drone id 'M30T-01'"),
    ("duplicate_lane_id", "lanes.geojson", lambda d: d["features"][7]["properties"].update(id=d["features"][0]["properties"]["id"]),
     "lanes.geojson", "$.features[7].properties.id", "duplicate lane id"),
    ("user_unknown_role", "users.json", lambda d: d["users"][0]["roles"].append("pilot"),
     "users.json", "$.users[0].roles[1]", "unknown role 'pilot'"),
    ("user_unknown_region", "users.json", lambda d: d["users"][3].update(regions=["region-9999"]),
     "users.json", "$.users[3].regions[0]", "region 'region-9999' does not exist"),
    ("unknown_key_world", "world.json", lambda d: d.update(timezon="Europe/Helsinki"),
     "world.json", "$.timezon", "unknown key 'timezon'"),
    ("unknown_key_zone", "zones/helx.json", lambda d: d["features"][2].update(restricton="PROHIBITED"),
     "zones/helx.json", "$.features[2].restricton", "unknown key 'restricton'"),
    ("unknown_lane_kind", "lanes.geojson", lambda d: d["features"][0]["properties"].update(kind="ski_slope"),
     "lanes.geojson", "$.features[0].properties.kind", "unknown lane kind 'ski_slope'"),
    ("unknown_timezone", "world.json", lambda d: d.update(timezone="Europe/Atlantis"),
     "world.json", "$.timezone", "unknown IANA time zone"),
    ("missing_required_key", "docks.json", lambda d: d["docks"][2].pop("radius_m"),
     "docks.json", "$.docks[2].radius_m", "required key 'radius_m' is missing"),
    ("weather_series_length", "weather.json", lambda d: d["hourly"]["wind_speed_10m"].pop(),
     "weather.json", "$.hourly.wind_speed_10m", "must be a list of 216 values"),
    ("schedule_unknown_day", "zones/helx.json",
     lambda d: d["features"][2]["applicability"][0]["schedule"][0].update(day=["FRI", "FUNDAY"]),
     "zones/helx.json", "$.features[2].applicability[0].schedule[0].day[1]", "unknown day 'FUNDAY'"),
    ("negative_turnaround", "docks.json", lambda d: d["docks"][0].update(turnaround_s=-5),
     "docks.json", "$.docks[0].turnaround_s", "greater than or equal to 0"),
    ("empty_file", "weather.json", "", "weather.json", "$", "file is empty"),
    ("not_json", "docks.json", "docks:\n  - id: DOCK-A\n", "docks.json", "$", "not JSON"),
    ("whitespace_only", "users.json", "  \n\t\n", "users.json", "$", "file is empty"),
]


@pytest.mark.parametrize(("case", "file", "change", "exp_file", "exp_path", "fragment"), BAD_CASES,
                         ids=[c[0] for c in BAD_CASES])
def test_bad_input_is_located_and_never_half_loads(
    tmp_path: Path, case: str, file: str, change: Callable[[Any], Any] | str, exp_file: str, exp_path: str,
    fragment: str,
) -> None:
    root = _copy_demo(tmp_path)
    if isinstance(change, str):
        (root / file).write_text(change, encoding="utf-8")
    else:
        _edit(root, file, change)
    problems = validate_world(root)
    located = [p for p in problems if (p.file, p.path) == (exp_file, exp_path)]
    assert located, f"{case}: no problem at {exp_file} {exp_path}; got {[str(p) for p in problems]}"
    assert any(fragment in p.message for p in located), [str(p) for p in located]
    with pytest.raises(InvalidArgument) as info:
        load_world(root)
    err = info.value
    assert err.code == "INVALID_ARGUMENT"
    assert err.details == [p.to_dict() for p in problems]
    assert {"file": exp_file, "path": exp_path} in [{"file": d["file"], "path": d["path"]} for d in err.details]


# One drone's entry: refused alone (issue 42: one unknown key took the whole world down).
DRONE_ENTRY_CASES: list[tuple[str, str, Callable[[Any], Any] | str, str, str, str]] = [
    ("unknown_drone_status", "fleet.json", lambda d: d["drones"][3].update(status="SLEEPING"),
     "fleet.json", "$.drones[3].status", "unknown drone status 'SLEEPING'"),
    ("unknown_capability", "fleet.json", lambda d: d["drones"][0]["capabilities"].append("XRAY_VISION"),
     "fleet.json", "$.drones[0].capabilities[4]", "unknown capability 'XRAY_VISION'"),
    ("battery_pct_130", "fleet.json", lambda d: d["drones"][2].update(battery_pct=130),
     "fleet.json", "$.drones[2].battery_pct", "less than or equal to 100"),
    ("dock_does_not_exist", "fleet.json", lambda d: d["drones"][4].update(dock="DOCK-Z"),
     "fleet.json", "$.drones[4].dock", "dock 'DOCK-Z' does not exist"),
    ("unknown_key_drone", "fleet.json", lambda d: d["drones"][0].update(colour="red"),
     "fleet.json", "$.drones[0].colour", "unknown key 'colour'"),
    ("naive_telemetry_time", "fleet.json", lambda d: d["drones"][1].update(last_telemetry_at="2026-11-29T06:58:00"),
     "fleet.json", "$.drones[1].last_telemetry_at", "timezone"),
    ("nav_param_of_another_autopilot", "fleet.json", lambda d: d["drones"][2].update(nav_params={"WPNAV_SPEED": 800}),
     "fleet.json", "$.drones[2].nav_params", "not px4 navigation parameters"),
    ("nav_param_not_a_number", "fleet.json", lambda d: d["drones"][0].update(nav_params={"WPNAV_SPEED": "fast"}),
     "fleet.json", "$.drones[0].nav_params.WPNAV_SPEED", "valid number"),
]


@pytest.mark.parametrize(("case", "file", "change", "exp_file", "exp_path", "fragment"), DRONE_ENTRY_CASES,
                         ids=[c[0] for c in DRONE_ENTRY_CASES])
def test_a_bad_drone_entry_is_refused_alone_and_the_rest_of_the_world_loads(
    tmp_path: Path, case: str, file: str, change: Callable[[Any], Any], exp_file: str, exp_path: str,
    fragment: str,
) -> None:
    root = _copy_demo(tmp_path)
    index = int(exp_path.split("[")[1].split("]")[0])
    drone_id = json.loads((root / "fleet.json").read_text(encoding="utf-8"))["drones"][index]["id"]
    _edit(root, file, change)
    problems = validate_world(root)  # still listed, located
    assert any((p.file, p.path) == (exp_file, exp_path) and fragment in p.message for p in problems), problems
    w = load_world(root)
    assert drone_id not in [d.id for d in w.drones] and len(w.drones) == 5 and w.docks and w.zones
    (refused,) = w.refused_drones
    assert refused.id == drone_id and refused.tenant and any(exp_path in p and fragment in p for p in refused.problems)
    with pytest.raises(NotFound, match="fleet.json entry is refused"):
        w.drone(drone_id)


def test_navigation_parameters_and_the_dock_turnaround_load(tmp_path: Path) -> None:
    root = _copy_demo(tmp_path)
    _edit(root, "fleet.json", lambda d: d["drones"][0].update(nav_params={"WPNAV_SPEED": 1200, "WPNAV_RADIUS": 300}))
    _edit(root, "docks.json", lambda d: d["docks"][1].update(turnaround_s=1920))
    w = load_world(root)
    assert w.drone("M30T-01").nav_params.as_dict() == {"WPNAV_RADIUS": 300.0, "WPNAV_SPEED": 1200.0}
    assert w.drone("M30T-02").nav_params.as_dict() == {}
    assert w.dock("DOCK-B").turnaround_s == 1920.0 and w.dock("DOCK-A").turnaround_s is None


def test_missing_required_file_is_reported(tmp_path: Path) -> None:
    root = _copy_demo(tmp_path)
    (root / "users.json").unlink()
    problems = validate_world(root)
    assert [(p.file, p.path, p.message) for p in problems] == [("users.json", "$", "file is missing")]
    with pytest.raises(InvalidArgument):
        load_world(root)


def test_duplicate_zone_across_files(tmp_path: Path) -> None:
    root = _copy_demo(tmp_path)
    shutil.copyfile(SHARED_ED318, root / "zones" / "also.geojson")
    problems = validate_world(root)
    dup = [p for p in problems if "duplicate zone id" in p.message]
    assert [p.file for p in dup] == ["zones/helx.json"] * 3  # "also.geojson" sorts first, so helx.json repeats
    assert {p.message.split("'")[1] for p in dup} == {"HELX001", "HELX002", "HELX003"}


def test_every_problem_is_reported_not_only_the_first(tmp_path: Path) -> None:
    root = _copy_demo(tmp_path)
    _edit(root, "fleet.json", lambda d: (d["drones"][0].update(battery_pct=130), d["drones"][5].update(status="X"),
                                         d["drones"][4].update(dock="DOCK-Z")))
    _edit(root, "zones/helx.json", lambda d: d["features"][0]["geometry"][0]["horizontalProjection"].update(radius=-5))
    (root / "weather.json").write_text("{not json", encoding="utf-8")
    _edit(root, "regions.geojson", _bowtie)
    problems = validate_world(root)
    where = {(p.file, p.path) for p in problems}
    assert {
        ("fleet.json", "$.drones[0].battery_pct"),
        ("fleet.json", "$.drones[5].status"),
        ("fleet.json", "$.drones[4].dock"),  # cross-file checks still run on the drones that validated
        ("zones/helx.json", "$.features[0].geometry[0].horizontalProjection.radius"),
        ("weather.json", "$"),
        ("regions.geojson", "$.features[0].geometry.coordinates"),
    } <= where
    with pytest.raises(InvalidArgument) as info:
        load_world(root)
    assert len(info.value.details) == len(problems) >= 5


def test_a_world_that_is_far_away_but_consistent_is_fine(tmp_path: Path) -> None:
    """Locality compares things with each other, not with Helsinki: shift the whole world 10° east."""
    root = _copy_demo(tmp_path)

    def shift(value: Any) -> Any:
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, float) for v in value):
            return [value[0] + 10.0, value[1]]
        if isinstance(value, list):
            return [shift(v) for v in value]
        if isinstance(value, dict):
            return {k: (v + 10.0 if k in ("lon", "longitude") else shift(v) if k != "extensions" else v)
                    for k, v in value.items()}
        return value

    for name in ("lanes.geojson", "regions.geojson", "pois.geojson", "docks.json", "weather.json", "zones/helx.json"):
        _edit(root, name, shift, replace=True)
    w = load_world(root)
    assert 34.9 < w.dock("DOCK-A").lon < 35.0


def test_swapped_zone_centre_is_located_at_its_feature(tmp_path: Path) -> None:
    root = _copy_demo(tmp_path)
    _edit(root, "zones/helx.json",
          lambda d: d["features"][0]["geometry"][0]["horizontalProjection"].update(center=[60.16459, 24.94897]))
    problems = [p for p in validate_world(root) if "swapped" in p.message]
    assert [(p.file, p.path) for p in problems] == [("zones/helx.json", "$.features[0]")]
