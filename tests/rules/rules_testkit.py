"""Tiny builders for rule tests: hand-made worlds, plans and contexts (no files).

Points are placed in metres with the same local frame the rules measure in
(``planner.projection.LocalFrame`` of the area), so boundary tests are exact.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, time, timedelta, timezone

from shapely.geometry import Polygon, box

from planner.plan import Leg, Plan, Sortie, Waypoint
from planner.projection import LocalFrame
from planner.world import (
    Applicability,
    CircleArea,
    Dock,
    Drone,
    Geozone,
    Restriction,
    VerticalReference,
    Weather,
    WeatherHour,
    WeeklySlot,
    World,
    WorldDefaults,
    ZoneVolume,
)
from rules.context import EvaluationContext
from rules.loading import RuleSet, parse_rules

UTC = timezone.utc
T0 = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)  # a Friday
DOCK_LON, DOCK_LAT = 24.9449, 60.1652
FRAME = LocalFrame.for_point(DOCK_LON, DOCK_LAT)
DOCK_XY = FRAME.forward(DOCK_LON, DOCK_LAT)


def at(dx_m: float, dy_m: float) -> tuple[float, float]:
    """lon/lat of the point dx_m east, dy_m north of the dock, in the rules' frame."""
    return FRAME.inverse(DOCK_XY[0] + dx_m, DOCK_XY[1] + dy_m)


def drone(id: str = "D1", **kw: object) -> Drone:
    base = dict(
        id=id, model="Test 30T", dock_id="DOCK-A", tenant="t",
        capabilities=frozenset({"RGB_CAMERA", "THERMAL_CAMERA"}),
        battery_wh=200.0, battery_pct=100.0, flight_time_s=2400.0, hover_time_s=2000.0,
        cruise_speed_mps=10.0, inspection_speed_mps=5.0, max_wind_mps=12.0,
        min_temp_c=-20.0, max_temp_c=45.0, ip_rating="IP55", camera=None,
        status="ONLINE", last_telemetry_at=T0 - timedelta(seconds=30),
        autopilot="ardupilot", link="udp:127.0.0.1:14550",
    )
    base.update(kw)
    return Drone(**base)  # type: ignore[arg-type]


def dock(id: str = "DOCK-A", **kw: object) -> Dock:
    base = dict(id=id, name=id, tenant="t", lon=DOCK_LON, lat=DOCK_LAT, ground_alt_m=14.0, radius_m=5000.0, max_wind_mps=12.0)
    base.update(kw)
    return Dock(**base)  # type: ignore[arg-type]


def hour(t: datetime, **kw: object) -> WeatherHour:
    base = dict(
        time=t, wind_speed_10m_mps=3.0, wind_speed_80m_mps=4.0, wind_speed_120m_mps=5.0,
        wind_direction_10m_deg=200.0, wind_gusts_10m_mps=6.0, precipitation_mm=0.0, temperature_2m_c=5.0,
    )
    base.update(kw)
    return WeatherHour(**base)  # type: ignore[arg-type]


def calm_weather(start: datetime = T0 - timedelta(hours=2), n: int = 12, **kw: object) -> Weather:
    return Weather(tuple(hour(start + timedelta(hours=i), **kw) for i in range(n)))


def world(drones=None, docks=None, zones=(), weather=None) -> World:  # type: ignore[no-untyped-def]
    return World(
        name="test", timezone="Europe/Helsinki", defaults=WorldDefaults(), attribution="",
        drones=tuple(drones if drones is not None else (drone(),)),
        docks=tuple(docks if docks is not None else (dock(),)),
        zones=tuple(zones), lanes=(), regions=(), pois=(),
        weather=weather if weather is not None else calm_weather(), users=(),
    )


def permanent() -> tuple[Applicability, ...]:
    return (Applicability(permanent=True),)


def fri_sat_14_22(start: datetime | None = None, end: datetime | None = None) -> tuple[Applicability, ...]:
    return (Applicability(permanent=False, start=start, end=end, schedule=(WeeklySlot(frozenset({4, 5}), time(14), time(22)),)),)


def circle_zone(
    id: str, dx_m: float, dy_m: float, radius_m: float, restriction: Restriction = Restriction.PROHIBITED,
    lower_m: float | None = 0.0, upper_m: float | None = 120.0, ref: VerticalReference = VerticalReference.AGL,
    applicability: tuple[Applicability, ...] | None = None, message: str = "zone message",
) -> Geozone:
    lon, lat = at(dx_m, dy_m)
    vol = ZoneVolume(CircleArea(lon, lat, radius_m), lower_m, ref, upper_m, ref)
    return Geozone(id, f"{id} name", restriction, (vol,), applicability or permanent(), message, "test")


def box_zone(
    id: str, x0: float, y0: float, x1: float, y1: float, restriction: Restriction = Restriction.PROHIBITED,
    lower_m: float | None = 0.0, upper_m: float | None = 120.0, ref: VerticalReference = VerticalReference.AGL,
    applicability: tuple[Applicability, ...] | None = None, message: str = "zone message",
) -> Geozone:
    """A zone whose corners are at these metre offsets from the dock (a rectangle in the frame)."""
    ring = [at(x0, y0), at(x1, y0), at(x1, y1), at(x0, y1)]
    vol = ZoneVolume(Polygon(ring), lower_m, ref, upper_m, ref)
    return Geozone(id, f"{id} name", restriction, (vol,), applicability or permanent(), message, "test")


def wp(dx_m: float, dy_m: float, alt_m: float, action: str = "WAYPOINT") -> Waypoint:
    lon, lat = at(dx_m, dy_m)
    return Waypoint(lon=lon, lat=lat, alt_m=alt_m, action=action)  # type: ignore[arg-type]


def leg(points: list[tuple[float, float, float]], kind: str = "transit", duration_s: float = 60.0, energy_wh: float = 1.0) -> Leg:
    return Leg(kind=kind, waypoints=tuple(wp(*p) for p in points), distance_m=0.0, duration_s=duration_s, energy_wh=energy_wh)  # type: ignore[arg-type]


def sortie(legs: list[Leg], index: int = 0, drone_id: str = "D1", dock_id: str = "DOCK-A",
           start_at: datetime = T0, energy_wh: float | None = None) -> Sortie:
    e = sum(l.energy_wh for l in legs) if energy_wh is None else energy_wh
    return Sortie(index=index, drone_id=drone_id, dock_id=dock_id, start_at=start_at, legs=tuple(legs),
                  distance_m=0.0, duration_s=sum(l.duration_s for l in legs), energy_wh=e, battery_fraction=0.0)


def plan(sorties: list[Sortie], area: Polygon | None = None) -> Plan:
    if area is None:
        lo, la = at(-2000, -2000)
        hi_lo, hi_la = at(2000, 2000)
        area = box(lo, la, hi_lo, hi_la)
    return Plan(mission_type="AREA_SURVEY", planned_for=sorties[0].start_at if sorties else T0, area_wgs84=area,
                altitude_m=50.0, sorties=tuple(sorties))


def simple_plan(points: list[tuple[float, float, float]], **kw: object) -> Plan:
    """One sortie: a vertical takeoff under the first point, a transit leg through ``points``,
    a vertical landing under the last point (so only leg 1 goes anywhere)."""
    (x0, y0, a0), (x1, y1, a1) = points[0], points[-1]
    legs = [
        Leg("takeoff", (wp(x0, y0, 0, "TAKEOFF"), wp(x0, y0, a0)), 0.0, 60.0, 1.0),
        leg(points),
        Leg("landing", (wp(x1, y1, a1), wp(x1, y1, 0, "LAND")), 0.0, 60.0, 1.0),
    ]
    return plan([sortie(legs, **kw)])  # type: ignore[arg-type]


def ctx(now: datetime = T0, sensors: tuple[str, ...] = (), auth: dict[str, str] | None = None, phase: str = "plan") -> EvaluationContext:
    return EvaluationContext(now=now, required_sensors=frozenset(sensors), authorisations=auth or {}, phase=phase)  # type: ignore[arg-type]


def one_rule(kind: str, severity: str = "block", params: str = "{}", rid: str = "r", extra: str = "") -> RuleSet:
    return parse_rules(f"version: 1\nrules:\n  - {{id: {rid}, kind: {kind}, severity: {severity}, params: {params}{extra}}}\n", "test.yaml")


__all__ = [n for n in dir() if not n.startswith("_")] + ["replace"]
