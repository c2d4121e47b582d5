"""Geozones from EUROCAE ED-269 JSON and ED-318 GeoJSON, normalised to one ``Geozone``.

Operators get geozones from national authorities in either shape, with the
quirks of real data: ED-269 spells ``REQ_AUTHORISATION``, ED-318
``REQ_AUTHORIZATION``; an upper limit of ``null`` (or the sentinel ``99999``)
means unbounded; limits may be in feet; a circle is a centre and a radius; a
zone may stack several volumes; applicability is permanent, between two
dates, and/or on a weekly schedule. Both shapes become the same
``planner.world.model.Geozone`` so the rules never care where a zone came from.

This module works on already-decoded JSON (``dict``/``list``) and never reads
files: ``planner.world.files`` does the reading and locates each problem in
its file. Every problem is returned as ``(json_path, message)`` — parsing
carries on past a bad feature so one run reports all of them.

One module per format (``planner.world.ed269``, ``planner.world.ed318``), built
from the shared pieces of ``planner.world.zone_fields``; this module detects the format and
is the entry point. The small geometry checkers (``check_position``,
``polygon_from_coordinates``, ``linestring_from_coordinates``) are re-exported here for
``planner.world.files``.
"""

from __future__ import annotations

from typing import Any, Literal

from planner.errors import InvalidArgument
from planner.world.ed269 import parse_ed269
from planner.world.ed318 import parse_ed318
from planner.world.model import Geozone
from planner.world.zone_fields import (
    FT_TO_M,
    UNBOUNDED_SENTINEL,
    ZoneProblem,
    check_position,
    linestring_from_coordinates,
    polygon_from_coordinates,
)

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
    zones = parse_ed318(data, source, problems) if fmt == "ED-318" else parse_ed269(data, source, problems)
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

