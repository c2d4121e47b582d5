"""EUROCAE ED-318 geozone GeoJSON (a FeatureCollection) → ``Geozone``s, with located problems."""

from __future__ import annotations

from typing import Any

from shapely.geometry import Polygon

from planner.world.model import Applicability, CircleArea, Geozone, ZoneVolume
from planner.world.zone_fields import (  # shared internals of the two format parsers
    ZoneProblem,
    _circle,
    _dates_and_schedule,
    _entries,
    _limit,
    _obj,
    _reference,
    _restriction,
    _text,
    _unknown_keys,
    _uom,
    polygon_from_coordinates,
)

__all__ = ["parse_ed318"]

# Keys ED-318 allows; anything else is reported (a typo must not pass silently).
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


def parse_ed318(data: dict[str, Any], source: str, problems: list[ZoneProblem]) -> list[Geozone]:
    _unknown_keys(data, _ED318_TOP, "$", problems)
    feats = data.get("features")
    if not isinstance(feats, list):
        problems.append(("$.features", "must be a list of features"))
        return []
    zones = [_ed318_feature(f, f"$.features[{i}]", source, problems) for i, f in enumerate(feats)]
    return [z for z in zones if z is not None]
