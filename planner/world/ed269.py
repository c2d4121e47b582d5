"""EUROCAE ED-269 geozone JSON (``features`` or ``UASZoneList``) → ``Geozone``s, with located problems."""

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

__all__ = ["parse_ed269"]

# Keys ED-269 allows; anything else is reported (a typo must not pass silently).
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


def parse_ed269(data: dict[str, Any], source: str, problems: list[ZoneProblem]) -> list[Geozone]:
    _unknown_keys(data, _ED269_TOP, "$", problems)
    key = "UASZoneList" if "UASZoneList" in data else "features"
    feats = data.get(key)
    if not isinstance(feats, list):
        problems.append((f"$.{key}", "must be a list of zones"))
        return []
    zones = [_ed269_feature(f, f"$.{key}[{i}]", source, problems) for i, f in enumerate(feats)]
    return [z for z in zones if z is not None]
