"""The plan value: sorties → legs → waypoints, with canonical JSON and a hash.

A ``Plan`` is what the rules evaluate, the ledger stores, the operator approves
and dispatch uploads. Its canonical JSON (sorted keys, fixed precision, no
whitespace) is the one byte form everything agrees on; ``plan_hash`` is the
sha256 of it, and an approval is bound to that hash.

Units and frames: lon/lat WGS84 degrees (7 decimals ≈ 1 cm), ``alt_m`` metres
above ground at the waypoint (AGL), distances metres, durations seconds,
energy watt-hours.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from shapely.geometry import mapping, shape
from shapely.geometry.base import BaseGeometry

__all__ = [
    "WaypointAction",
    "LegKind",
    "Waypoint",
    "Leg",
    "Sortie",
    "Unserved",
    "Plan",
    "plan_to_dict",
    "plan_from_dict",
    "canonical_json",
    "plan_hash",
    "plan_to_geojson",
]

WaypointAction = Literal["TAKEOFF", "WAYPOINT", "CAMERA_ON", "CAMERA_OFF", "INSPECT", "LAND"]
LegKind = Literal["takeoff", "transit", "sweep", "lane", "inspect", "landing"]

LONLAT_DECIMALS = 7
METRE_DECIMALS = 2
ENERGY_DECIMALS = 3
FRACTION_DECIMALS = 4


@dataclass(frozen=True)
class Waypoint:
    """A point the drone flies to; ``alt_m`` is AGL, ``hold_s`` the hover there.

    ``action`` says what happens on arrival: CAMERA_ON/OFF bracket a sweep or a
    lane, INSPECT hovers ``hold_s`` at a target, TAKEOFF/LAND are at the dock.
    """

    lon: float
    lat: float
    alt_m: float
    action: WaypointAction = "WAYPOINT"
    speed_mps: float = 0.0
    hold_s: float = 0.0
    target_id: str | None = None


@dataclass(frozen=True)
class Leg:
    """A piece of a sortie with one purpose; figures are for this leg alone."""

    kind: LegKind
    waypoints: tuple[Waypoint, ...]
    distance_m: float
    duration_s: float
    energy_wh: float
    target_id: str | None = None


@dataclass(frozen=True)
class Sortie:
    """One flight of one drone from its dock back to the same dock."""

    index: int
    drone_id: str
    dock_id: str
    start_at: datetime
    legs: tuple[Leg, ...]
    distance_m: float
    duration_s: float
    energy_wh: float
    battery_fraction: float

    @property
    def end_at(self) -> datetime:
        return self.start_at + timedelta(seconds=self.duration_s)

    @property
    def waypoints(self) -> tuple[Waypoint, ...]:
        """All waypoints in flight order, consecutive duplicates between legs removed."""
        return self._joined()[0]

    @property
    def leg_ends(self) -> tuple[int, ...]:
        """Per leg, the index in ``waypoints`` of its last waypoint (where the leg's figures end)."""
        return self._joined()[1]

    def _joined(self) -> tuple[tuple[Waypoint, ...], tuple[int, ...]]:
        out: list[Waypoint] = []
        ends: list[int] = []
        for leg in self.legs:
            for wp in leg.waypoints:
                if out and (out[-1].lon, out[-1].lat, out[-1].alt_m, out[-1].action) == (
                    wp.lon,
                    wp.lat,
                    wp.alt_m,
                    wp.action,
                ):
                    continue
                out.append(wp)
            ends.append(len(out) - 1)
        return tuple(out), tuple(ends)


@dataclass(frozen=True)
class Unserved:
    """A target (POI, lane, area part) the plan does not serve, and why."""

    target_id: str
    reason: str


@dataclass(frozen=True)
class Plan:
    """A whole mission plan for one intent at one planned time."""

    mission_type: str
    planned_for: datetime
    area_wgs84: BaseGeometry
    altitude_m: float
    sorties: tuple[Sortie, ...]
    unserved: tuple[Unserved, ...] = ()
    coverage_fraction: float | None = None
    parameters: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    # surveys: the part of the area no planned sweep images (None: not a survey, or not computed)
    unimaged_wgs84: BaseGeometry | None = None

    @property
    def distance_m(self) -> float:
        return sum(s.distance_m for s in self.sorties)

    @property
    def duration_s(self) -> float:
        return max((s.duration_s for s in self.sorties), default=0.0)

    @property
    def energy_wh(self) -> float:
        return sum(s.energy_wh for s in self.sorties)


def _r(x: float, nd: int) -> float:
    v = round(float(x), nd)
    return 0.0 if v == 0 else v  # no "-0.0" in canonical bytes


def _round_geom(obj: Any) -> Any:
    if isinstance(obj, (list, tuple)):
        if obj and isinstance(obj[0], (int, float)):
            return [_r(c, LONLAT_DECIMALS) for c in obj]
        return [_round_geom(o) for o in obj]
    return obj


def _geometry_dict(geom: BaseGeometry) -> dict[str, Any]:
    g = mapping(geom)
    return {"type": g["type"], "coordinates": _round_geom(g["coordinates"])}


def _waypoint_dict(wp: Waypoint) -> dict[str, Any]:
    return {
        "lon": _r(wp.lon, LONLAT_DECIMALS),
        "lat": _r(wp.lat, LONLAT_DECIMALS),
        "alt_m": _r(wp.alt_m, METRE_DECIMALS),
        "action": wp.action,
        "speed_mps": _r(wp.speed_mps, METRE_DECIMALS),
        "hold_s": _r(wp.hold_s, METRE_DECIMALS),
        "target_id": wp.target_id,
    }


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    """The plan as plain JSON-able data at canonical precision.

    ``unimaged`` appears only for a survey that computed it, so other plans keep their bytes.
    """
    out = {
        "mission_type": plan.mission_type,
        "planned_for": plan.planned_for.isoformat(),
        "area": _geometry_dict(plan.area_wgs84),
        "altitude_m": _r(plan.altitude_m, METRE_DECIMALS),
        "coverage_fraction": None
        if plan.coverage_fraction is None
        else _r(plan.coverage_fraction, FRACTION_DECIMALS),
        "parameters": json.loads(json.dumps(plan.parameters, sort_keys=True, default=str)),
        "unserved": [{"target_id": u.target_id, "reason": u.reason} for u in plan.unserved],
        "sorties": [
            {
                "index": s.index,
                "drone_id": s.drone_id,
                "dock_id": s.dock_id,
                "start_at": s.start_at.isoformat(),
                "distance_m": _r(s.distance_m, METRE_DECIMALS),
                "duration_s": _r(s.duration_s, METRE_DECIMALS),
                "energy_wh": _r(s.energy_wh, ENERGY_DECIMALS),
                "battery_fraction": _r(s.battery_fraction, FRACTION_DECIMALS),
                "legs": [
                    {
                        "kind": leg.kind,
                        "target_id": leg.target_id,
                        "distance_m": _r(leg.distance_m, METRE_DECIMALS),
                        "duration_s": _r(leg.duration_s, METRE_DECIMALS),
                        "energy_wh": _r(leg.energy_wh, ENERGY_DECIMALS),
                        "waypoints": [_waypoint_dict(w) for w in leg.waypoints],
                    }
                    for leg in s.legs
                ],
            }
            for s in plan.sorties
        ],
    }
    if plan.unimaged_wgs84 is not None:
        out["unimaged"] = _geometry_dict(plan.unimaged_wgs84)
    return out


def plan_from_dict(data: dict[str, Any]) -> Plan:
    """Rebuild a plan from ``plan_to_dict`` output (as stored in the ledger)."""
    sorties = tuple(
        Sortie(
            index=s["index"],
            drone_id=s["drone_id"],
            dock_id=s["dock_id"],
            start_at=datetime.fromisoformat(s["start_at"]),
            distance_m=s["distance_m"],
            duration_s=s["duration_s"],
            energy_wh=s["energy_wh"],
            battery_fraction=s["battery_fraction"],
            legs=tuple(
                Leg(
                    kind=leg["kind"],
                    target_id=leg["target_id"],
                    distance_m=leg["distance_m"],
                    duration_s=leg["duration_s"],
                    energy_wh=leg["energy_wh"],
                    waypoints=tuple(Waypoint(**w) for w in leg["waypoints"]),
                )
                for leg in s["legs"]
            ),
        )
        for s in data["sorties"]
    )
    return Plan(
        mission_type=data["mission_type"],
        planned_for=datetime.fromisoformat(data["planned_for"]),
        area_wgs84=shape(data["area"]),
        altitude_m=data["altitude_m"],
        sorties=sorties,
        unserved=tuple(Unserved(**u) for u in data["unserved"]),
        coverage_fraction=data["coverage_fraction"],
        parameters=dict(data.get("parameters") or {}),
        unimaged_wgs84=shape(data["unimaged"]) if data.get("unimaged") else None,
    )


def canonical_json(plan: Plan) -> str:
    """Sorted keys, fixed precision, no whitespace: the bytes the hash is taken over."""
    return json.dumps(plan_to_dict(plan), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def plan_hash(plan: Plan) -> str:
    """sha256 hex of the canonical JSON; approvals are bound to it."""
    return hashlib.sha256(canonical_json(plan).encode("utf-8")).hexdigest()


def plan_to_geojson(plan: Plan) -> dict[str, Any]:
    """RFC 7946 FeatureCollection: the area, what a survey leaves unimaged, one LineString per sortie, its waypoints."""
    features: list[dict[str, Any]] = [
        {
            "type": "Feature",
            "geometry": _geometry_dict(plan.area_wgs84),
            "properties": {"role": "area", "mission_type": plan.mission_type},
        }
    ]
    if plan.unimaged_wgs84 is not None and not plan.unimaged_wgs84.is_empty:
        features.append(
            {
                "type": "Feature",
                "geometry": _geometry_dict(plan.unimaged_wgs84),
                "properties": {
                    "role": "unimaged",
                    "coverage_fraction": None
                    if plan.coverage_fraction is None
                    else _r(plan.coverage_fraction, FRACTION_DECIMALS),
                },
            }
        )
    for s in plan.sorties:
        wps = s.waypoints
        coords = [[_r(w.lon, LONLAT_DECIMALS), _r(w.lat, LONLAT_DECIMALS)] for w in wps]
        if len(coords) >= 2:
            features.append(
                {
                    "type": "Feature",
                    "geometry": {"type": "LineString", "coordinates": coords},
                    "properties": {
                        "role": "sortie",
                        "sortie": s.index,
                        "drone_id": s.drone_id,
                        "dock_id": s.dock_id,
                        "distance_m": _r(s.distance_m, METRE_DECIMALS),
                        "duration_s": _r(s.duration_s, METRE_DECIMALS),
                        "energy_wh": _r(s.energy_wh, ENERGY_DECIMALS),
                        "battery_fraction": _r(s.battery_fraction, FRACTION_DECIMALS),
                    },
                }
            )
        for i, w in enumerate(wps):
            features.append(
                {
                    "type": "Feature",
                    "geometry": {
                        "type": "Point",
                        "coordinates": [_r(w.lon, LONLAT_DECIMALS), _r(w.lat, LONLAT_DECIMALS)],
                    },
                    "properties": {
                        "role": "waypoint",
                        "sortie": s.index,
                        "seq": i,
                        "alt_m": _r(w.alt_m, METRE_DECIMALS),
                        "action": w.action,
                        "speed_mps": _r(w.speed_mps, METRE_DECIMALS),
                        "hold_s": _r(w.hold_s, METRE_DECIMALS),
                        "target_id": w.target_id,
                    },
                }
            )
    return {"type": "FeatureCollection", "features": features}
