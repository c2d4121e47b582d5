"""Inspection points (hydrants, roofs, masts, gates, assets) inside a selection, with hover time.

A POINT_INSPECTION job visits each point of the wanted kinds that lies in the
selected area (boundary included) and hovers ``hover_s`` there. Order is by id,
so the same world and area give the same list; the route order is the router's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from shapely.geometry import Point
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.geo.projection import LocalFrame
from planner.world.model import POI_KINDS, World

__all__ = ["InspectionPoint", "inspection_points", "DEFAULT_HOVER_S"]

DEFAULT_HOVER_S = 20.0


@dataclass(frozen=True)
class InspectionPoint:
    """One point to inspect: where, what, and how long to hover there."""

    id: str
    kind: str
    name: str
    lon: float
    lat: float
    hover_s: float = DEFAULT_HOVER_S

    def xy(self, frame: LocalFrame) -> tuple[float, float]:
        """The point in ``frame``'s metres."""
        return frame.forward(self.lon, self.lat)


def inspection_points(
    world: World,
    area_wgs84: BaseGeometry,
    kinds: Iterable[str] = ("hydrant",),
    hover_s: float = DEFAULT_HOVER_S,
) -> list[InspectionPoint]:
    """World POIs of ``kinds`` inside ``area_wgs84`` (boundary included), sorted by id."""
    kinds = frozenset(kinds)
    unknown = kinds - POI_KINDS
    if unknown:
        raise InvalidArgument(f"unknown point kinds {sorted(unknown)}; known: {sorted(POI_KINDS)}")
    if not (isinstance(hover_s, (int, float)) and math.isfinite(hover_s) and hover_s >= 0):
        raise InvalidArgument(f"hover_s must be >= 0, got {hover_s!r}")
    if area_wgs84 is None or area_wgs84.is_empty:
        raise InvalidArgument("the selection is empty")
    out = [
        InspectionPoint(p.id, p.kind, p.name, p.lon, p.lat, float(hover_s))
        for p in world.pois
        if p.kind in kinds and area_wgs84.covers(Point(p.lon, p.lat))
    ]
    out.sort(key=lambda p: p.id)
    return out
