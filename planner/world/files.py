"""The world folder's files (``../shared/WORLD.md``), already read, into one immutable ``World``.

The input is the folder's content as a mapping ``{relative path: bytes}`` (``"fleet.json"``,
``"zones/helx.json"``); ``flows.world_folder`` reads a folder into one and is the only
place that touches the disk. Here: each file is decoded and checked against its pydantic
model (``planner.world.schema``), then semantic checks run that a schema cannot express
(valid polygons, closed rings, ids unique, a drone's dock exists, coordinates that look
like swapped lat/lon). Every problem is *located*: file, JSON path
(``$.drones[2].battery_pct``) and a sentence.

``parse_world`` is all-or-nothing for everything but one drone: it returns a complete ``World`` or
raises ``InvalidArgument`` whose ``details`` lists **all** problems — a world is never
half-loaded. ``world_problems`` returns the same list without raising. The one exception is
a fleet.json entry whose problems are its own (a key it should not have, a value out of
range, a dock that does not exist): that drone is **refused alone** — left out of the
world and listed in ``World.refused_drones`` with its located problems — and the rest of
the world loads (issue 42: one unknown key in one drone's entry made every request
WORLD_UNAVAILABLE). A drone id seen twice is the file's problem, not an entry's: which one
is meant is not known, so the world is refused.

Pure: no files, no clock, no environment (``tests/test_import_contract.py``).

Longer than most modules (~580 lines) on purpose: the cross-file checks (a drone's dock
exists and shares its tenant, a user's regions exist, every point lies near the others)
need every file's partial result at once, and one ``_read`` that sees them all keeps the
"every problem, never half a world" promise in one place. The file shapes are
``planner.world.schema``; the zone formats ``planner.world.geozones``.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import statistics
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from collections.abc import Mapping
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from shapely.geometry import MultiPolygon

from planner.errors import InvalidArgument
from planner.world.geozones import (
    ZoneProblem,
    check_position,
    linestring_from_coordinates,
    parse_geozones,
    polygon_from_coordinates,
)
from planner.world.model import (
    Camera,
    Dock,
    Drone,
    Geozone,
    Lane,
    Poi,
    RefusedDrone,
    Region,
    User,
    Weather,
    WeatherHour,
    World,
    WorldDefaults,
)

from planner.world.nav_params import NavParams
from planner.world.schema import (
    WorldFileModel,
    DroneModel,
    FleetFileModel,
    DockModel,
    DocksFileModel,
    UserModel,
    UsersFileModel,
    LaneFeature,
    RegionFeature,
    PoiFeature,
    LanesFileModel,
    RegionsFileModel,
    PoisFileModel,
    WeatherFileModel,
)

__all__ = [
    "WorldProblem",
    "WORLD_FILES",
    "MAX_WORLD_SPAN_M",
    "parse_world",
    "world_problems",
    "snapshot_hash",
]

X = TypeVar("X")

WORLD_FILES = ("world.json", "fleet.json", "docks.json", "weather.json", "users.json")
"""Files a world folder must have; ``zones/``, lanes, regions and POIs are optional (empty when absent)."""
OPTIONAL_FILES = ("lanes.geojson", "regions.geojson", "pois.geojson")
MAX_WORLD_SPAN_M = 50_000.0
"""Anything farther than this from the world's median point is reported (catches swapped lat/lon)."""


@dataclass(frozen=True)
class WorldProblem:
    """One located problem in a world folder."""

    file: str  # relative to the world folder, e.g. "fleet.json" or "zones/helx.json"
    path: str  # JSON path, e.g. "$.drones[2].battery_pct"; "$" for the whole file
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"file": self.file, "path": self.path, "message": self.message}

    def __str__(self) -> str:
        return f"{self.file} {self.path}: {self.message}"


# --------------------------------------------------------------------------- reading helpers


def _json_path(loc: tuple[Any, ...], prefix: str = "$") -> str:
    out = prefix
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _pydantic_problems(file: str, exc: ValidationError) -> list[WorldProblem]:
    out = []
    for err in exc.errors(include_url=False):
        loc = tuple(err["loc"])
        if err["type"] == "extra_forbidden":
            msg = f"unknown key {loc[-1]!r} (put custom data under \"extensions\")"
        elif err["type"] == "missing":
            msg = f"required key {loc[-1]!r} is missing"
        else:
            msg = err["msg"].removeprefix("Value error, ")
        out.append(WorldProblem(file, _json_path(loc), msg))
    return out


class _Reader:
    """Collects problems while decoding one folder's files."""

    def __init__(self, files: Mapping[str, bytes]) -> None:
        self.files = files
        self.problems: list[WorldProblem] = []
        self.zone_paths: dict[tuple[str, str], str] = {}

    def add(self, file: str, path: str, message: str) -> None:
        self.problems.append(WorldProblem(file, path, message))

    def add_zone_problems(self, file: str, problems: list[ZoneProblem] | tuple[ZoneProblem, ...]) -> None:
        for path, message in problems:
            self.add(file, path, message)

    def decode(self, rel: str, required: bool) -> Any:
        """The decoded JSON of ``rel``; ``None`` (with a problem if required/broken) when unusable."""
        raw = self.files.get(rel)
        if raw is None:
            if required:
                self.add(rel, "$", "file is missing")
            return None
        if not raw.strip():
            self.add(rel, "$", "file is empty")
            return None
        try:
            return json.loads(raw.decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            self.add(rel, "$", f"file is not UTF-8 text: {exc.reason} at byte {exc.start}")
        except json.JSONDecodeError as exc:
            self.add(rel, "$", f"file is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
        return None

    def model(self, rel: str, cls: type[BaseModel], required: bool = True) -> Any:
        """The validated file model; when only some list items are bad, a partial model.

        A partial model (built with ``model_construct``) keeps ``None`` in place of
        each bad item, so cross-file checks still run on the good ones and keep
        their original indices: the report lists every problem, not only the
        first file's. A partial model never becomes a ``World`` (problems exist).
        """
        data = self.decode(rel, required)
        if data is None:
            return None
        try:
            return cls.model_validate_json(json.dumps(data), strict=True)
        except ValidationError as exc:
            self.problems.extend(_pydantic_problems(rel, exc))
        salvage = _SALVAGE.get(cls)
        if salvage is None or not isinstance(data, dict) or not isinstance(data.get(salvage[0]), list):
            return None
        key, item_cls = salvage
        items: list[Any] = []
        for raw in data[key]:
            try:
                items.append(item_cls.model_validate_json(json.dumps(raw), strict=True))
            except ValidationError:
                items.append(None)
        return cls.model_construct(**{key: items})


_SALVAGE: dict[type[BaseModel], tuple[str, type[BaseModel]]] = {
    FleetFileModel: ("drones", DroneModel),
    DocksFileModel: ("docks", DockModel),
    UsersFileModel: ("users", UserModel),
    LanesFileModel: ("features", LaneFeature),
    RegionsFileModel: ("features", RegionFeature),
    PoisFileModel: ("features", PoiFeature),
}


def _present(items: list[Any]) -> list[tuple[int, Any]]:
    """(original index, item) for the items that validated (a partial model holds ``None`` for the rest)."""
    return [(i, x) for i, x in enumerate(items) if x is not None]


def _duplicates(reader: _Reader, file: str, ids: list[tuple[str, str]], what: str) -> None:
    """Report each id seen before; ``ids`` is [(id, json path)]."""
    first: dict[str, str] = {}
    for ident, path in ids:
        if ident in first:
            reader.add(file, path, f"duplicate {what} id {ident!r} (first at {first[ident]})")
        else:
            first[ident] = path


_DRONE_ENTRY = re.compile(r"^\$\.drones\[(\d+)\]")


def _refuse_drone_entries(reader: _Reader) -> dict[int, RefusedDrone]:
    """Take out of ``reader.problems`` those of single fleet.json entries (not a duplicate id: the file's); the
    refused entries by index, each with its id and tenant as the entry wrote them."""
    mine: dict[int, list[WorldProblem]] = {}
    kept: list[WorldProblem] = []
    for p in reader.problems:
        m = _DRONE_ENTRY.match(p.path) if p.file == "fleet.json" else None
        if m is None or p.message.startswith("duplicate drone id"):
            kept.append(p)
        else:
            mine.setdefault(int(m.group(1)), []).append(p)
    if not mine:
        return {}
    reader.problems = kept
    try:
        raw = json.loads(reader.files["fleet.json"].decode("utf-8-sig"))["drones"]
    except (KeyError, TypeError, ValueError):
        raw = []

    def said(i: int, key: str) -> str | None:
        entry = raw[i] if i < len(raw) and isinstance(raw[i], dict) else {}
        value = entry.get(key)
        return value if isinstance(value, str) and value else None

    return {i: RefusedDrone(id=said(i, "id") or f"drones[{i}]", tenant=said(i, "tenant"),
                            problems=tuple(f"{p.file} {p.path}: {p.message}" for p in ps))
            for i, ps in sorted(mine.items())}


def snapshot_hash(files: Mapping[str, bytes]) -> str:
    """sha256 over the folder's file names (relative, ``/``-separated) and bytes, in sorted order."""
    h = hashlib.sha256()
    for name in sorted(files):
        data = files[name]
        h.update(name.encode("utf-8") + b"\0")
        h.update(str(len(data)).encode("ascii") + b"\0")
        h.update(data)
    return h.hexdigest()


# --------------------------------------------------------------------------- building values


_WIND_TO_MPS = {"m/s": 1.0, "km/h": 1 / 3.6, "mp/h": 0.44704, "mph": 0.44704, "kn": 0.514444, "kt": 0.514444}


def _weather(reader: _Reader, m: WeatherFileModel) -> Weather | None:
    file = "weather.json"
    before = len(reader.problems)
    hourly = m.hourly
    n = len(hourly.time)
    series: dict[str, list[float | None]] = {}
    for name, values in (hourly.model_extra or {}).items():
        if not isinstance(values, list) or len(values) != n:
            reader.add(file, f"$.hourly.{name}", f"must be a list of {n} values, one per hourly.time entry")
            continue
        bad = [i for i, v in enumerate(values) if v is not None and not (isinstance(v, (int, float)) and not isinstance(v, bool))]
        if bad:
            reader.add(file, f"$.hourly.{name}[{bad[0]}]", f"must be a number or null, got {values[bad[0]]!r}")
            continue
        series[name] = [None if v is None else float(v) for v in values]
    units = m.hourly_units
    if units.get("time", "iso8601") != "iso8601":
        reader.add(file, "$.hourly_units.time", f"only iso8601 times are supported, got {units.get('time')!r}")
        return None
    factors: dict[str, float] = {}
    for name in series:
        unit = units.get(name)
        if name.startswith(("wind_speed", "wind_gusts")):
            unit = unit or "km/h"  # Open-Meteo's default
            if unit not in _WIND_TO_MPS:
                reader.add(file, f"$.hourly_units.{name}", f"unknown wind unit {unit!r}; known: {', '.join(_WIND_TO_MPS)}")
            factors[name] = _WIND_TO_MPS.get(unit, 1.0)
        elif name.startswith("temperature") and unit not in (None, "°C"):
            reader.add(file, f"$.hourly_units.{name}", f"temperature must be in °C, got {unit!r}")
        elif name == "precipitation" and unit not in (None, "mm"):
            reader.add(file, f"$.hourly_units.{name}", f"precipitation must be in mm, got {unit!r}")
    offset = timezone(timedelta(seconds=m.utc_offset_seconds))
    times: list[datetime] = []
    for i, text in enumerate(hourly.time):
        try:
            t = datetime.fromisoformat(text)
        except ValueError:
            reader.add(file, f"$.hourly.time[{i}]", f"not an ISO 8601 time: {text!r}")
            continue
        t = t if t.tzinfo else t.replace(tzinfo=offset)
        if times and t <= times[-1]:
            reader.add(file, f"$.hourly.time[{i}]", f"times must increase: {text!r} is not after the previous entry")
        times.append(t)
    if len(reader.problems) > before:
        return None

    def val(name: str, i: int) -> float | None:
        v = series.get(name, [None] * n)[i]
        return None if v is None else round(v * factors.get(name, 1.0), 3)

    hours = tuple(
        WeatherHour(
            time=times[i],
            wind_speed_10m_mps=val("wind_speed_10m", i),
            wind_speed_80m_mps=val("wind_speed_80m", i),
            wind_speed_120m_mps=val("wind_speed_120m", i),
            wind_direction_10m_deg=val("wind_direction_10m", i),
            wind_gusts_10m_mps=val("wind_gusts_10m", i),
            precipitation_mm=val("precipitation", i),
            temperature_2m_c=val("temperature_2m", i),
        )
        for i in range(n)
    )
    return Weather(hours=hours)


def _features(
    reader: _Reader, file: str, features: list[Any], what: str,
    build: Callable[[Any, str, list[ZoneProblem]], X | None],
) -> list[X]:
    """The values ``build`` makes of a GeoJSON file's validated features (from the feature and the
    JSON path of its geometry); a feature with any geometry problem is reported and left out, and
    so is every id seen before."""
    out: list[X] = []
    for i, f in _present(features):
        probs: list[ZoneProblem] = []
        value = build(f, f"$.features[{i}].geometry", probs)
        if value is not None and not probs:
            out.append(value)
        reader.add_zone_problems(file, probs)
    _duplicates(reader, file, [(f.properties.id, f"$.features[{i}].properties.id") for i, f in _present(features)], what)
    return out


def _lanes(reader: _Reader, m: LanesFileModel) -> list[Lane]:
    def build(f: Any, path: str, probs: list[ZoneProblem]) -> Lane | None:
        if not _geometry_of(f.geometry, "LineString", "a lane", path, probs):
            return None
        line = linestring_from_coordinates(f.geometry.get("coordinates"), f"{path}.coordinates", probs)
        p = f.properties
        return None if line is None else Lane(id=p.id, kind=p.kind, name=p.name, line=line)

    return _features(reader, "lanes.geojson", m.features, "lane", build)


def _geometry_keys(geom: dict[str, Any], path: str, probs: list[ZoneProblem]) -> None:
    for key in sorted(set(geom) - {"type", "coordinates", "bbox"}):
        probs.append((f"{path}.{key}", f"unknown key {key!r}"))


def _geometry_of(geom: dict[str, Any], kind: str, what: str, path: str, probs: list[ZoneProblem]) -> bool:
    """Whether ``geom`` is the one geometry type a lane or POI may have (its unknown keys reported too).

    Lanes and POIs check their geometry the same way; one place keeps their messages alike.
    """
    if geom.get("type") != kind:
        probs.append((f"{path}.type", f"{what} must be a {kind}, got {geom.get('type')!r}"))
        return False
    _geometry_keys(geom, path, probs)
    return True


def _regions(reader: _Reader, m: RegionsFileModel) -> list[Region]:
    def build(f: Any, path: str, probs: list[ZoneProblem]) -> Region | None:
        kind = f.geometry.get("type")
        _geometry_keys(f.geometry, path, probs)
        area = None
        if kind == "Polygon":
            area = polygon_from_coordinates(f.geometry.get("coordinates"), f"{path}.coordinates", probs)
        elif kind == "MultiPolygon":
            coords = f.geometry.get("coordinates")
            if not isinstance(coords, list) or not coords:
                probs.append((f"{path}.coordinates", "MultiPolygon coordinates must be a non-empty list of polygons"))
            else:
                parts = [polygon_from_coordinates(c, f"{path}.coordinates[{j}]", probs) for j, c in enumerate(coords)]
                if all(p is not None for p in parts):
                    area = MultiPolygon(parts)
                    if not area.is_valid:
                        probs.append((f"{path}.coordinates", "MultiPolygon parts overlap"))
                        area = None
        else:
            probs.append((f"{path}.type", f"a region must be a Polygon or MultiPolygon, got {kind!r}"))
        p = f.properties
        return None if area is None else Region(id=p.id, name=p.name, tenant=p.tenant, area=area)

    return _features(reader, "regions.geojson", m.features, "region", build)


def _pois(reader: _Reader, m: PoisFileModel) -> list[Poi]:
    def build(f: Any, path: str, probs: list[ZoneProblem]) -> Poi | None:
        if not _geometry_of(f.geometry, "Point", "a POI", path, probs):
            return None
        pos = check_position(f.geometry.get("coordinates"), f"{path}.coordinates", probs)
        p = f.properties
        return None if pos is None else Poi(id=p.id, kind=p.kind, name=p.name, lon=pos[0], lat=pos[1])

    return _features(reader, "pois.geojson", m.features, "POI", build)


def _zone_paths(data: Any) -> dict[str, str]:
    """identifier -> JSON path of its feature, in either standard (for locating cross-file problems)."""
    if not isinstance(data, dict):
        return {}
    key = "UASZoneList" if "UASZoneList" in data else "features"
    feats = data.get(key) if isinstance(data.get(key), list) else []
    out: dict[str, str] = {}
    for i, f in enumerate(feats):
        if not isinstance(f, dict):
            continue
        props = f.get("properties") if isinstance(f.get("properties"), dict) else f
        ident = props.get("identifier")
        if isinstance(ident, str):
            out.setdefault(ident, f"$.{key}[{i}]")
    return out


def _zones(reader: _Reader) -> list[Geozone]:
    """Every ``zones/*.json`` and ``zones/*.geojson`` file (not in sub-folders), by name."""
    out: list[Geozone] = []
    first: dict[str, str] = {}
    names = [n for n in reader.files if n.startswith("zones/") and "/" not in n[6:] and n.endswith((".json", ".geojson"))]
    for rel in sorted(names):
        data = reader.decode(rel, required=True)
        if data is None:
            continue
        zones, probs = parse_geozones(data, rel)
        reader.add_zone_problems(rel, probs)
        reader.zone_paths.update({(rel, zid): zpath for zid, zpath in _zone_paths(data).items()})
        for z in zones:
            if z.id in first:
                reader.add(rel, "$", f"duplicate zone id {z.id!r} (also in {first[z.id]})")
            else:
                first[z.id] = rel
        out.extend(zones)
    return out


def _distance_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    """Great-circle distance (haversine, mean Earth radius); only used for sanity checks."""
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6_371_008.8 * math.asin(min(1.0, math.sqrt(a)))


def _check_locality(reader: _Reader, items: list[tuple[str, str, float, float]]) -> None:
    """Report anything far from the world's median point; say so when swapping lat/lon would fix it.

    Swapped Helsinki coordinates (lat 24.9, lon 60.2) are in range, so a range
    check alone cannot catch them; distance from everything else can.
    """
    if len(items) < 3:
        return
    mid_lon = statistics.median(i[2] for i in items)
    mid_lat = statistics.median(i[3] for i in items)
    for file, path, lon, lat in items:
        d = _distance_m(lon, lat, mid_lon, mid_lat)
        if d <= MAX_WORLD_SPAN_M:
            continue
        swapped_ok = -90 <= lon <= 90 and _distance_m(lat, lon, mid_lon, mid_lat) <= MAX_WORLD_SPAN_M
        if swapped_ok:
            reader.add(file, path, f"looks like swapped lat/lon: [{lon}, {lat}] is {d / 1000:.0f} km from the rest "
                                   f"of the world, [{lat}, {lon}] would fit; positions are lon, lat in that order")
        else:
            reader.add(file, path, f"[{lon}, {lat}] is {d / 1000:.0f} km from the rest of the world "
                                   f"(median [{mid_lon:.5f}, {mid_lat:.5f}]); a world spans at most "
                                   f"{MAX_WORLD_SPAN_M / 1000:.0f} km")


def _read(files: Mapping[str, bytes], root: str) -> tuple[World | None, list[WorldProblem]]:
    reader = _Reader(files)
    world_m = reader.model("world.json", WorldFileModel)
    fleet_m = reader.model("fleet.json", FleetFileModel)
    docks_m = reader.model("docks.json", DocksFileModel)
    weather_m = reader.model("weather.json", WeatherFileModel)
    users_m = reader.model("users.json", UsersFileModel)
    lanes_m = reader.model("lanes.geojson", LanesFileModel, required=False)
    regions_m = reader.model("regions.geojson", RegionsFileModel, required=False)
    pois_m = reader.model("pois.geojson", PoisFileModel, required=False)

    zones = _zones(reader)
    lanes = _lanes(reader, lanes_m) if lanes_m else []
    regions = _regions(reader, regions_m) if regions_m else []
    pois = _pois(reader, pois_m) if pois_m else []
    weather = _weather(reader, weather_m) if weather_m else None

    docks: list[Dock] = []
    if docks_m:
        docks = [Dock(id=d.id, name=d.name, tenant=d.tenant, lon=d.lon, lat=d.lat, ground_alt_m=d.ground_alt_m,
                      radius_m=d.radius_m, max_wind_mps=d.max_wind_mps, turnaround_s=d.turnaround_s)
                 for _, d in _present(docks_m.docks)]
        _duplicates(reader, "docks.json", [(d.id, f"$.docks[{i}].id") for i, d in _present(docks_m.docks)], "dock")
    drones: list[tuple[int, Drone]] = []  # (index in fleet.json, drone)
    if fleet_m:
        dock_by_id = {d.id: d for d in docks}
        for i, d in _present(fleet_m.drones):
            if docks_m is not None and None not in docks_m.docks:  # a bad dock entry may be the one named
                dock = dock_by_id.get(d.dock)
                if dock is None:
                    reader.add("fleet.json", f"$.drones[{i}].dock",
                               f"dock {d.dock!r} does not exist in docks.json (known: {', '.join(sorted(dock_by_id)) or 'none'})")
                elif dock.tenant != d.tenant:
                    reader.add("fleet.json", f"$.drones[{i}].tenant",
                               f"drone tenant {d.tenant!r} differs from its dock {dock.id}'s tenant {dock.tenant!r}")
            if d.max_temp_c <= d.min_temp_c:
                reader.add("fleet.json", f"$.drones[{i}].max_temp_c", "max_temp_c must be above min_temp_c")
            seen_caps: set[str] = set()
            for j, cap in enumerate(d.capabilities):
                if cap in seen_caps:
                    reader.add("fleet.json", f"$.drones[{i}].capabilities[{j}]", f"capability {cap!r} is listed twice")
                seen_caps.add(cap)
            camera = Camera(hfov_deg=d.camera.hfov_deg, vfov_deg=d.camera.vfov_deg) if d.camera else None
            nav = NavParams.of(d.nav_params or {})
            try:
                nav.check(d.autopilot)
            except InvalidArgument as exc:
                reader.add("fleet.json", f"$.drones[{i}].nav_params", str(exc).removeprefix("INVALID_ARGUMENT: "))
            drones.append((i, Drone(
                id=d.id, model=d.model, dock_id=d.dock, tenant=d.tenant, capabilities=frozenset(d.capabilities),
                battery_wh=d.battery_wh, battery_pct=d.battery_pct, flight_time_s=d.flight_time_s,
                hover_time_s=d.hover_time_s, cruise_speed_mps=d.cruise_speed_mps,
                inspection_speed_mps=d.inspection_speed_mps, max_wind_mps=d.max_wind_mps, min_temp_c=d.min_temp_c,
                max_temp_c=d.max_temp_c, ip_rating=d.ip_rating, camera=camera, status=d.status,
                last_telemetry_at=d.last_telemetry_at.replace(tzinfo=timezone(d.last_telemetry_at.utcoffset() or timedelta(0))), autopilot=d.autopilot, link=d.link,
                mavlink_system_id=d.mavlink_system_id, mavlink_component_id=d.mavlink_component_id,
                signing_key=d.signing_key, nav_params=nav,
            )))
        _duplicates(reader, "fleet.json", [(d.id, f"$.drones[{i}].id") for i, d in _present(fleet_m.drones)], "drone")
    users: list[User] = []
    if users_m:
        region_ids = {r.id for r in regions}
        for i, u in _present(users_m.users):
            if regions_m is not None and None not in regions_m.features and len(region_ids) == len(regions_m.features):
                for j, rid in enumerate(u.regions):
                    if rid != "*" and rid not in region_ids:
                        reader.add("users.json", f"$.users[{i}].regions[{j}]",
                                   f"region {rid!r} does not exist in regions.geojson")
            users.append(User(id=u.id, name=u.name, roles=frozenset(u.roles), tenants=frozenset(u.tenants),
                              regions=frozenset(u.regions)))
        _duplicates(reader, "users.json", [(u.id, f"$.users[{i}].id") for i, u in _present(users_m.users)], "user")

    # Locality: one representative point per thing, so no single file dominates by size alone.
    items: list[tuple[str, str, float, float]] = []
    if docks_m:
        items += [("docks.json", f"$.docks[{i}]", d.lon, d.lat) for i, d in _present(docks_m.docks)]
    if weather_m:
        items.append(("weather.json", "$.latitude", weather_m.longitude, weather_m.latitude))
    for name, feats, src in (("lanes.geojson", lanes_m, lanes), ("regions.geojson", regions_m, regions),
                             ("pois.geojson", pois_m, pois)):
        if feats is None:
            continue
        by_id = {x.id: x for x in src}
        for i, f in _present(feats.features):
            x = by_id.get(f.properties.id)
            if x is None:
                continue
            if isinstance(x, Poi):
                pt = (x.lon, x.lat)
            elif isinstance(x, Lane):
                pt = x.line.coords[0][:2]
            else:
                pt = x.area.representative_point().coords[0]
            items.append((name, f"$.features[{i}].geometry.coordinates", pt[0], pt[1]))
    for z in zones:
        c = z.volumes[0].horizontal
        pt = (c.lon, c.lat) if hasattr(c, "radius_m") else c.representative_point().coords[0]
        items.append((z.source, reader.zone_paths.get((z.source, z.id), "$"), pt[0], pt[1]))
    _check_locality(reader, items)

    everything = list(reader.problems)
    refused = _refuse_drone_entries(reader)
    if reader.problems or world_m is None or weather is None or fleet_m is None or docks_m is None or users_m is None:
        return None, everything
    d = world_m.defaults
    world = World(
        name=world_m.name,
        timezone=world_m.timezone,
        defaults=WorldDefaults(altitude_m=d.altitude_m, ceiling_m=d.ceiling_m, reserve_fraction=d.reserve_fraction),
        attribution=world_m.attribution,
        drones=tuple(sorted((d for i, d in drones if i not in refused), key=lambda x: x.id)),
        docks=tuple(sorted(docks, key=lambda x: x.id)),
        zones=tuple(sorted(zones, key=lambda x: x.id)),
        lanes=tuple(sorted(lanes, key=lambda x: x.id)),
        regions=tuple(sorted(regions, key=lambda x: x.id)),
        pois=tuple(sorted(pois, key=lambda x: x.id)),
        weather=weather,
        users=tuple(sorted(users, key=lambda x: x.id)),
        snapshot_hash=snapshot_hash(files),
        root=root,
        refused_drones=tuple(refused.values()),
    )
    return world, everything  # the refused entries' problems: the world loaded without those drones


def world_problems(files: Mapping[str, bytes]) -> list[WorldProblem]:
    """Every problem in a world folder's ``files`` (empty when it parses whole; a refused fleet entry's problems
    are listed although the rest of the world loads)."""
    _, problems = _read(files, "")
    return problems


def parse_world(files: Mapping[str, bytes], root: str = "") -> World:
    """The complete ``World`` of a folder's ``files``, or ``InvalidArgument`` listing every problem.

    ``root`` is where the files came from (kept on the ``World`` for messages and for
    re-reading a fresh snapshot; never opened here). Never half-succeeds: one bad value
    anywhere and nothing is returned — but for a fleet.json entry with problems of its own,
    refused alone (``World.refused_drones``; see the module docstring).
    """
    world, problems = _read(files, root)
    if world is None:
        first = problems[0] if problems else WorldProblem("?", "$", "unknown problem")
        raise InvalidArgument(
            f"world {root or '(in memory)'!r} has {len(problems)} problem(s); first: {first}",
            details=[p.to_dict() for p in problems],
        )
    return world
