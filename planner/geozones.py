"""Geozones from EUROCAE ED-269 JSON and ED-318 GeoJSON, normalised to one ``Geozone``.

Operators get geozones from national authorities in either shape, with the
quirks of real data: ED-269 spells ``REQ_AUTHORISATION``, ED-318
``REQ_AUTHORIZATION``; an upper limit of ``null`` (or the sentinel ``99999``)
means unbounded; limits may be in feet; a circle is a centre and a radius; a
zone may stack several volumes; applicability is permanent, between two
dates, and/or on a weekly schedule. Both shapes become the same
``planner.world.Geozone`` so the rules never care where a zone came from.

This module works on already-decoded JSON (``dict``/``list``) and never reads
files: ``planner.world_files`` does the reading and locates each problem in
its file. Every problem is returned as ``(json_path, message)`` — parsing
carries on past a bad feature so one run reports all of them.

The small geometry checkers (``check_position``, ``polygon_from_coordinates``,
``linestring_from_coordinates``) are shared with ``planner.world_files``.
"""

from __future__ import annotations

from datetime import date, datetime, time, timezone
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from shapely.geometry import LineString, Polygon
from shapely.validation import explain_validity

from planner.errors import InvalidArgument
from planner.world import (
    Applicability,
    CircleArea,
    Geozone,
    Restriction,
    VerticalReference,
    WeeklySlot,
    ZoneVolume,
)

T = TypeVar("T")

__all__ = [
    "ZoneProblem",
    "FT_TO_M",
    "UNBOUNDED_SENTINEL",
    "detect_format",
    "parse_geozones",
    "read_geozones",
    "check_position",
    "polygon_from_coordinates",
    "linestring_from_coordinates",
]

ZoneProblem = tuple[str, str]
"""One problem: (JSON path such as ``$.features[2].restriction``, message)."""

FT_TO_M = 0.3048
UNBOUNDED_SENTINEL = 99999  # Swiss ED-318 data uses it for "no upper limit"

_RESTRICTIONS = {
    "PROHIBITED": Restriction.PROHIBITED,
    "REQ_AUTHORISATION": Restriction.REQ_AUTHORISATION,
    "REQ_AUTHORIZATION": Restriction.REQ_AUTHORISATION,
    "CONDITIONAL": Restriction.CONDITIONAL,
    "NO_RESTRICTION": Restriction.NO_RESTRICTION,
}
_REFERENCES = {"AGL": VerticalReference.AGL, "AMSL": VerticalReference.AMSL, "WGS84": VerticalReference.WGS84}
_UOM = {"M": 1.0, "FT": FT_TO_M}
_DAYS = {"MON": 0, "TUE": 1, "WED": 2, "THU": 3, "FRI": 4, "SAT": 5, "SUN": 6}
_END_OF_DAY = time(23, 59, 59, 999999)

# Keys each standard allows; anything else is reported (a typo must not pass silently).
_ED269_TOP = {"title", "description", "features", "UASZoneList", "extensions"}
_ED269_FEATURE = {
    "identifier", "country", "name", "type", "restriction", "restrictionConditions", "region", "reason",
    "otherReasonInfo", "regulationExemption", "uSpaceClass", "message", "zoneAuthority", "applicability",
    "geometry", "extendedProperties", "extensions",
}
_ED269_APPLICABILITY = {"permanent", "startDateTime", "endDateTime", "schedule", "extensions"}
_ED269_VOLUME = {
    "uomDimensions", "lowerLimit", "lowerVerticalReference", "upperLimit", "upperVerticalReference",
    "horizontalProjection", "extensions",
}
_ED318_TOP = {"type", "name", "description", "metadata", "features", "bbox", "extensions"}
_ED318_FEATURE = {"type", "id", "geometry", "properties", "bbox"}
_ED318_PROPERTIES = {
    "identifier", "country", "name", "type", "variant", "restrictionConditions", "region", "reason",
    "otherReasonInfo", "regulationExemption", "uSpaceClass", "message", "extendedProperties",
    "limitedApplicability", "zoneAuthority", "dataSource", "extensions",
}
_ED318_GEOMETRY = {"type", "coordinates", "layer", "extent", "geometries", "bbox"}
_ED318_LAYER = {"upper", "upperReference", "lower", "lowerReference", "uom"}
_ED318_APPLICABILITY = {"startDateTime", "endDateTime", "schedule", "extensions"}
_SCHEDULE = {"day", "startTime", "endTime"}


# --------------------------------------------------------------------------- geometry checks


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_position(value: Any, path: str, problems: list[ZoneProblem]) -> tuple[float, float] | None:
    """A GeoJSON position ``[lon, lat]`` (an optional third altitude is ignored), range-checked."""
    if not isinstance(value, list) or len(value) not in (2, 3) or not all(_is_number(v) for v in value):
        problems.append((path, f"a position must be two numbers, lon then lat, got {value!r}"))
        return None
    lon, lat = float(value[0]), float(value[1])
    ok = True
    if not -180.0 <= lon <= 180.0:
        problems.append((path, f"longitude {lon} is outside [-180, 180] (positions are lon, lat in that order)"))
        ok = False
    if not -90.0 <= lat <= 90.0:
        hint = " — looks like swapped lat/lon" if -90.0 <= lon <= 90.0 else ""
        problems.append((path, f"latitude {lat} is outside [-90, 90] (positions are lon, lat in that order){hint}"))
        ok = False
    return (lon, lat) if ok else None


def _ring(value: Any, path: str, problems: list[ZoneProblem]) -> list[tuple[float, float]] | None:
    if not isinstance(value, list):
        problems.append((path, f"a linear ring must be a list of positions, got {type(value).__name__}"))
        return None
    before = len(problems)
    points = [check_position(p, f"{path}[{i}]", problems) for i, p in enumerate(value)]
    if len(problems) > before:
        return None
    pts = [p for p in points if p is not None]
    if len(pts) < 4:
        problems.append((path, f"a linear ring needs at least 4 positions (first = last), got {len(pts)}"))
        return None
    if pts[0] != pts[-1]:
        problems.append((path, f"ring is not closed: first position {list(pts[0])} != last {list(pts[-1])}"))
        return None
    return pts


def polygon_from_coordinates(coords: Any, path: str, problems: list[ZoneProblem]) -> Polygon | None:
    """A valid shapely Polygon from GeoJSON Polygon ``coordinates`` or ``None`` with problems added."""
    if not isinstance(coords, list) or not coords:
        problems.append((path, "polygon coordinates must be a non-empty list of rings"))
        return None
    rings = [_ring(r, f"{path}[{i}]", problems) for i, r in enumerate(coords)]
    if any(r is None for r in rings):
        return None
    poly = Polygon(rings[0], rings[1:])
    if not poly.is_valid:
        problems.append((path, f"polygon is not valid: {explain_validity(poly)}"))
        return None
    if poly.area <= 0:
        problems.append((path, "polygon has zero area"))
        return None
    return poly


def linestring_from_coordinates(coords: Any, path: str, problems: list[ZoneProblem]) -> LineString | None:
    """A shapely LineString of at least two distinct positions, or ``None`` with problems added."""
    if not isinstance(coords, list) or len(coords) < 2:
        problems.append((path, "a LineString needs at least 2 positions"))
        return None
    before = len(problems)
    pts = [check_position(p, f"{path}[{i}]", problems) for i, p in enumerate(coords)]
    if len(problems) > before:
        return None
    line = LineString(pts)
    if line.length <= 0:
        problems.append((path, "LineString has zero length (all positions equal)"))
        return None
    return line


# --------------------------------------------------------------------------- small parsers


def _unknown_keys(obj: dict[str, Any], allowed: set[str], path: str, problems: list[ZoneProblem]) -> None:
    for key in sorted(set(obj) - allowed):
        problems.append((f"{path}.{key}", f"unknown key {key!r}"))


def _obj(value: Any, path: str, problems: list[ZoneProblem], what: str) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        problems.append((path, f"{what} must be an object, got {type(value).__name__}"))
        return None
    return value


def _text(value: Any) -> str:
    """A plain string, or ED-318's multilingual ``[{text, lang}]`` (English preferred)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        entries = [v for v in value if isinstance(v, dict) and isinstance(v.get("text"), str)]
        for prefix in ("en",):
            for v in entries:
                if str(v.get("lang", "")).lower().startswith(prefix):
                    return v["text"]
        return entries[0]["text"] if entries else ""
    return str(value)


def _restriction(value: Any, path: str, problems: list[ZoneProblem]) -> Restriction | None:
    r = _RESTRICTIONS.get(value) if isinstance(value, str) else None
    if r is None:
        problems.append((path, f"unknown restriction {value!r}; known: {', '.join(sorted(_RESTRICTIONS))}"))
    return r


def _reference(value: Any, path: str, problems: list[ZoneProblem]) -> VerticalReference | None:
    ref = _REFERENCES.get(value.upper()) if isinstance(value, str) else None
    if ref is None:
        problems.append((path, f"unknown vertical reference {value!r}; known: AGL, AMSL, WGS84"))
    return ref


def _uom(value: Any, path: str, problems: list[ZoneProblem]) -> float | None:
    factor = _UOM.get(value.upper()) if isinstance(value, str) else None
    if factor is None:
        problems.append((path, f"unknown unit {value!r}; known: M, FT"))
    return factor


def _limit(value: Any, factor: float, upper: bool, path: str, problems: list[ZoneProblem]) -> tuple[bool, float | None]:
    """(ok, metres or None = unbounded)."""
    if value is None:
        return True, None
    if not _is_number(value):
        problems.append((path, f"altitude limit must be a number or null, got {value!r}"))
        return False, None
    if upper and value >= UNBOUNDED_SENTINEL:
        return True, None
    return True, round(float(value) * factor, 3)


def _datetime(value: Any, path: str, problems: list[ZoneProblem]) -> datetime | None:
    if value is None:
        return None
    try:
        dt = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        dt = None
    if dt is None:
        problems.append((path, f"not an ISO 8601 date-time: {value!r}"))
        return None
    if dt.tzinfo is None:
        problems.append((path, f"date-time {value!r} needs an offset (for example Z)"))
        return None
    return dt.astimezone(timezone.utc)


def _utc_time(value: Any, path: str, problems: list[ZoneProblem]) -> time | None:
    """A schedule time as a naive UTC ``time`` (times without an offset are taken as UTC)."""
    if isinstance(value, str) and value.rstrip("Z").startswith("24:00"):
        return _END_OF_DAY
    try:
        t = time.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        t = None
    if t is None:
        problems.append((path, f"not an ISO 8601 time: {value!r}"))
        return None
    if t.tzinfo is not None:
        t = datetime.combine(date(2000, 1, 3), t).astimezone(timezone.utc).time()
    return t.replace(tzinfo=None)


def _entries(
    value: list[Any], path: str, problems: list[ZoneProblem], what: str,
    parse: Callable[[dict[str, Any], str, list[ZoneProblem]], list[T] | None],
) -> tuple[T, ...] | None:
    """Every entry of a list, each an object at ``path[i]`` turned into values by ``parse`` (None = it failed).

    All entries are checked so every problem is reported at once; None when any failed."""
    out: list[T] = []
    ok = True
    for i, item in enumerate(value):
        p = f"{path}[{i}]"
        obj = _obj(item, p, problems, what)
        parsed = None if obj is None else parse(obj, p, problems)
        if parsed is None:
            ok = False
        else:
            out.extend(parsed)
    return tuple(out) if ok else None


def _schedule(value: Any, path: str, problems: list[ZoneProblem]) -> tuple[WeeklySlot, ...] | None:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append((path, "schedule must be a list"))
        return None
    return _entries(value, path, problems, "a schedule entry", _schedule_entry)


def _schedule_entry(obj: dict[str, Any], p: str, problems: list[ZoneProblem]) -> list[WeeklySlot] | None:
    """One weekly slot, or two when it runs overnight (split at midnight UTC)."""
    before = len(problems)
    _unknown_keys(obj, _SCHEDULE, p, problems)
    raw_days = obj.get("day", ["ANY"])
    if isinstance(raw_days, str):
        raw_days = [raw_days]
    days: set[int] = set()
    if not isinstance(raw_days, list):
        problems.append((f"{p}.day", "day must be a list such as [\"FRI\", \"SAT\"]"))
    else:
        for j, d in enumerate(raw_days):
            if d == "ANY":
                days.update(range(7))
            elif d in _DAYS:
                days.add(_DAYS[d])
            else:
                problems.append((f"{p}.day[{j}]", f"unknown day {d!r}; known: {', '.join(_DAYS)}, ANY"))
    start = _utc_time(obj.get("startTime", "00:00:00Z"), f"{p}.startTime", problems)
    end = _utc_time(obj.get("endTime", "24:00Z"), f"{p}.endTime", problems)
    if len(problems) > before or start is None or end is None:
        return None
    if start < end:
        return [WeeklySlot(days=frozenset(days), start=start, end=end)]
    if start > end:  # overnight: split at midnight UTC
        return [
            WeeklySlot(days=frozenset(days), start=start, end=_END_OF_DAY),
            WeeklySlot(days=frozenset((d + 1) % 7 for d in days), start=time(0), end=end),
        ]
    problems.append((p, "schedule entry starts and ends at the same time"))
    return None


def _dates_and_schedule(obj: dict[str, Any], path: str, problems: list[ZoneProblem]) -> Applicability | None:
    before = len(problems)
    start = _datetime(obj.get("startDateTime"), f"{path}.startDateTime", problems)
    end = _datetime(obj.get("endDateTime"), f"{path}.endDateTime", problems)
    schedule = _schedule(obj.get("schedule"), f"{path}.schedule", problems)
    if len(problems) > before or schedule is None:
        return None
    if start is not None and end is not None and end <= start:
        problems.append((path, f"endDateTime {end.isoformat()} is not after startDateTime {start.isoformat()}"))
        return None
    return Applicability(permanent=False, start=start, end=end, schedule=schedule)


def _circle(center: Any, radius: Any, factor: float, path: str, center_path: str, radius_path: str,
            problems: list[ZoneProblem]) -> CircleArea | None:
    pos = check_position(center, center_path, problems)
    if not _is_number(radius) or radius <= 0:
        problems.append((radius_path, f"circle radius must be a number > 0, got {radius!r}"))
        return None
    if pos is None:
        return None
    return CircleArea(lon=pos[0], lat=pos[1], radius_m=round(float(radius) * factor, 3))


# --------------------------------------------------------------------------- ED-269


def _ed269_volume(vol: Any, path: str, problems: list[ZoneProblem]) -> ZoneVolume | None:
    obj = _obj(vol, path, problems, "a geometry entry")
    if obj is None:
        return None
    before = len(problems)
    _unknown_keys(obj, _ED269_VOLUME, path, problems)
    factor = _uom(obj.get("uomDimensions", "M"), f"{path}.uomDimensions", problems) or 1.0
    _, lower = _limit(obj.get("lowerLimit"), factor, False, f"{path}.lowerLimit", problems)
    _, upper = _limit(obj.get("upperLimit"), factor, True, f"{path}.upperLimit", problems)
    lower_ref = _reference(obj.get("lowerVerticalReference", "AGL"), f"{path}.lowerVerticalReference", problems)
    upper_ref = _reference(obj.get("upperVerticalReference", "AGL"), f"{path}.upperVerticalReference", problems)
    hp_path = f"{path}.horizontalProjection"
    hp = _obj(obj.get("horizontalProjection"), hp_path, problems, "horizontalProjection")
    horizontal: Polygon | CircleArea | None = None
    if hp is not None:
        kind = hp.get("type")
        if kind == "Circle":
            _unknown_keys(hp, {"type", "center", "radius"}, hp_path, problems)
            horizontal = _circle(hp.get("center"), hp.get("radius"), factor, hp_path, f"{hp_path}.center",
                                 f"{hp_path}.radius", problems)
        elif kind == "Polygon":
            _unknown_keys(hp, {"type", "coordinates"}, hp_path, problems)
            horizontal = polygon_from_coordinates(hp.get("coordinates"), f"{hp_path}.coordinates", problems)
        else:
            problems.append((f"{hp_path}.type", f"unknown horizontal projection {kind!r}; known: Circle, Polygon"))
    if len(problems) > before or horizontal is None or lower_ref is None or upper_ref is None:
        return None
    if lower is not None and upper is not None and upper <= lower and lower_ref == upper_ref:
        problems.append((path, f"upper limit {upper} m is not above lower limit {lower} m"))
        return None
    return ZoneVolume(horizontal=horizontal, lower_m=lower, lower_ref=lower_ref, upper_m=upper, upper_ref=upper_ref)


def _ed269_applicability(value: Any, path: str, problems: list[ZoneProblem]) -> tuple[Applicability, ...] | None:
    if value is None:
        return (Applicability(permanent=True),)
    if not isinstance(value, list) or not value:
        problems.append((path, "applicability must be a non-empty list"))
        return None
    return _entries(value, path, problems, "an applicability entry", _ed269_applicability_entry)


def _ed269_applicability_entry(obj: dict[str, Any], p: str, problems: list[ZoneProblem]) -> list[Applicability] | None:
    _unknown_keys(obj, _ED269_APPLICABILITY, p, problems)
    permanent = obj.get("permanent", "NO")
    if permanent == "YES":
        return [Applicability(permanent=True)]
    if permanent == "NO":
        a = _dates_and_schedule(obj, p, problems)
        return None if a is None else [a]
    problems.append((f"{p}.permanent", f"permanent must be \"YES\" or \"NO\", got {permanent!r}"))
    return None


def _ed269_feature(feat: Any, path: str, source: str, problems: list[ZoneProblem]) -> Geozone | None:
    obj = _obj(feat, path, problems, "a zone")
    if obj is None:
        return None
    before = len(problems)
    _unknown_keys(obj, _ED269_FEATURE, path, problems)
    ident = obj.get("identifier")
    if not isinstance(ident, str) or not ident.strip():
        problems.append((f"{path}.identifier", f"identifier must be a non-empty string, got {ident!r}"))
    restriction = _restriction(obj.get("restriction"), f"{path}.restriction", problems)
    applicability = _ed269_applicability(obj.get("applicability"), f"{path}.applicability", problems)
    geometry = obj.get("geometry")
    volumes: list[ZoneVolume] = []
    if not isinstance(geometry, list) or not geometry:
        problems.append((f"{path}.geometry", "geometry must be a non-empty list of volumes"))
    else:
        for i, vol in enumerate(geometry):
            v = _ed269_volume(vol, f"{path}.geometry[{i}]", problems)
            if v is not None:
                volumes.append(v)
    if len(problems) > before or restriction is None or applicability is None:
        return None
    return Geozone(id=ident, name=_text(obj.get("name")), restriction=restriction, volumes=tuple(volumes),
                   applicability=applicability, message=_text(obj.get("message")), source=source)


def _parse_ed269(data: dict[str, Any], source: str, problems: list[ZoneProblem]) -> list[Geozone]:
    _unknown_keys(data, _ED269_TOP, "$", problems)
    key = "UASZoneList" if "UASZoneList" in data else "features"
    feats = data.get(key)
    if not isinstance(feats, list):
        problems.append((f"$.{key}", "must be a list of zones"))
        return []
    zones = [_ed269_feature(f, f"$.{key}[{i}]", source, problems) for i, f in enumerate(feats)]
    return [z for z in zones if z is not None]


# --------------------------------------------------------------------------- ED-318


def _ed318_geometry(geom: Any, path: str, problems: list[ZoneProblem]) -> list[ZoneVolume]:
    obj = _obj(geom, path, problems, "geometry")
    if obj is None:
        return []
    _unknown_keys(obj, _ED318_GEOMETRY, path, problems)
    kind = obj.get("type")
    if kind == "GeometryCollection":
        parts = obj.get("geometries")
        if not isinstance(parts, list) or not parts:
            problems.append((f"{path}.geometries", "a GeometryCollection needs a non-empty geometries list"))
            return []
        out: list[ZoneVolume] = []
        for i, part in enumerate(parts):
            out.extend(_ed318_geometry(part, f"{path}.geometries[{i}]", problems))
        return out
    before = len(problems)
    layer_path = f"{path}.layer"
    layer = _obj(obj.get("layer"), layer_path, problems, "layer")
    lower = upper = None
    lower_ref = upper_ref = None
    factor = 1.0
    if layer is not None:
        _unknown_keys(layer, _ED318_LAYER, layer_path, problems)
        factor = _uom(layer.get("uom", "m"), f"{layer_path}.uom", problems) or 1.0
        _, lower = _limit(layer.get("lower"), factor, False, f"{layer_path}.lower", problems)
        _, upper = _limit(layer.get("upper"), factor, True, f"{layer_path}.upper", problems)
        lower_ref = _reference(layer.get("lowerReference", "AGL"), f"{layer_path}.lowerReference", problems)
        upper_ref = _reference(layer.get("upperReference", "AGL"), f"{layer_path}.upperReference", problems)
    horizontal: Polygon | CircleArea | None = None
    if kind == "Point":
        extent = _obj(obj.get("extent"), f"{path}.extent", problems, "extent (a Point zone is a circle)")
        if extent is not None:
            _unknown_keys(extent, {"subType", "radius"}, f"{path}.extent", problems)
            if extent.get("subType") != "Circle":
                problems.append((f"{path}.extent.subType", f"unknown extent {extent.get('subType')!r}; known: Circle"))
            else:
                horizontal = _circle(obj.get("coordinates"), extent.get("radius"), factor, path,
                                     f"{path}.coordinates", f"{path}.extent.radius", problems)
    elif kind == "Polygon":
        horizontal = polygon_from_coordinates(obj.get("coordinates"), f"{path}.coordinates", problems)
    else:
        problems.append((f"{path}.type", f"unknown geometry type {kind!r}; known: Polygon, Point, GeometryCollection"))
    if len(problems) > before or horizontal is None or lower_ref is None or upper_ref is None:
        return []
    if lower is not None and upper is not None and upper <= lower and lower_ref == upper_ref:
        problems.append((layer_path, f"upper limit {upper} m is not above lower limit {lower} m"))
        return []
    return [ZoneVolume(horizontal=horizontal, lower_m=lower, lower_ref=lower_ref, upper_m=upper, upper_ref=upper_ref)]


def _ed318_applicability(value: Any, path: str, problems: list[ZoneProblem]) -> tuple[Applicability, ...] | None:
    if value is None or value == []:
        return (Applicability(permanent=True),)
    if not isinstance(value, list):
        problems.append((path, "limitedApplicability must be a list"))
        return None
    return _entries(value, path, problems, "a limitedApplicability entry", _ed318_applicability_entry)


def _ed318_applicability_entry(obj: dict[str, Any], p: str, problems: list[ZoneProblem]) -> list[Applicability] | None:
    _unknown_keys(obj, _ED318_APPLICABILITY, p, problems)
    a = _dates_and_schedule(obj, p, problems)
    return None if a is None else [a]


def _ed318_feature(feat: Any, path: str, source: str, problems: list[ZoneProblem]) -> Geozone | None:
    obj = _obj(feat, path, problems, "a feature")
    if obj is None:
        return None
    before = len(problems)
    _unknown_keys(obj, _ED318_FEATURE, path, problems)
    if obj.get("type") != "Feature":
        problems.append((f"{path}.type", f"type must be \"Feature\", got {obj.get('type')!r}"))
    props_path = f"{path}.properties"
    props = _obj(obj.get("properties"), props_path, problems, "properties")
    volumes = _ed318_geometry(obj.get("geometry"), f"{path}.geometry", problems)
    if props is None:
        return None
    _unknown_keys(props, _ED318_PROPERTIES, props_path, problems)
    ident = props.get("identifier")
    if not isinstance(ident, str) or not ident.strip():
        problems.append((f"{props_path}.identifier", f"identifier must be a non-empty string, got {ident!r}"))
    restriction = _restriction(props.get("type"), f"{props_path}.type", problems)
    applicability = _ed318_applicability(props.get("limitedApplicability"), f"{props_path}.limitedApplicability",
                                         problems)
    if len(problems) > before or restriction is None or applicability is None or not volumes:
        return None
    return Geozone(id=ident, name=_text(props.get("name")), restriction=restriction, volumes=tuple(volumes),
                   applicability=applicability, message=_text(props.get("message")), source=source)


def _parse_ed318(data: dict[str, Any], source: str, problems: list[ZoneProblem]) -> list[Geozone]:
    _unknown_keys(data, _ED318_TOP, "$", problems)
    feats = data.get("features")
    if not isinstance(feats, list):
        problems.append(("$.features", "must be a list of features"))
        return []
    zones = [_ed318_feature(f, f"$.features[{i}]", source, problems) for i, f in enumerate(feats)]
    return [z for z in zones if z is not None]


# --------------------------------------------------------------------------- entry points


def detect_format(data: Any) -> Literal["ED-269", "ED-318"] | None:
    """``ED-318`` for a GeoJSON FeatureCollection, ``ED-269`` for ``features``/``UASZoneList``, else None."""
    if not isinstance(data, dict):
        return None
    if data.get("type") == "FeatureCollection":
        return "ED-318"
    if "UASZoneList" in data or "features" in data:
        return "ED-269"
    return None


def parse_geozones(data: Any, source: str) -> tuple[tuple[Geozone, ...], tuple[ZoneProblem, ...]]:
    """Every zone of one decoded ED-269 or ED-318 document, and every problem found.

    The zones are in file order; a zone with a problem is left out (the caller
    decides whether a partial result is usable — ``load_world`` never uses one).
    Duplicate identifiers within the document are reported.
    """
    problems: list[ZoneProblem] = []
    fmt = detect_format(data)
    if fmt is None:
        problems.append(("$", "not a geozone document: expected an ED-269 object with \"features\" or "
                              "\"UASZoneList\", or an ED-318 GeoJSON FeatureCollection"))
        return (), tuple(problems)
    zones = _parse_ed318(data, source, problems) if fmt == "ED-318" else _parse_ed269(data, source, problems)
    seen: set[str] = set()
    for z in zones:
        if z.id in seen:
            problems.append(("$", f"duplicate zone identifier {z.id!r}"))
        seen.add(z.id)
    return tuple(zones), tuple(problems)


def read_geozones(data: Any, source: str) -> tuple[Geozone, ...]:
    """Like ``parse_geozones`` but all-or-nothing: raises ``InvalidArgument`` listing every problem."""
    zones, problems = parse_geozones(data, source)
    if problems:
        details = [{"file": source, "path": p, "message": m} for p, m in problems]
        raise InvalidArgument(f"{source}: {len(problems)} geozone problem(s), first: {problems[0][0]}: "
                              f"{problems[0][1]}", details=details)
    return zones

