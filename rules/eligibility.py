"""Before planning: which drones may take the job, why each other may not, and what to try next.

``fleet_eligibility`` applies the blocking rules that need no plan — status and
telemetry freshness (drone_available), sensors (capability_required), reach
(dock_range: the area's farthest point within the dock's radius), charge above
the reserve (battery_reserve: nothing above the reserve means no flight) and
the weather at the start hour (weather) — to every drone. Thresholds come from
the rule set's ``block`` rules (the first of each kind; ``when:`` guards are
ignored here, which can only make eligibility stricter); without a rule set
the schema's defaults apply. Warn rules never reject a drone. Two more reasons
come from the world as the shell hands it over: a drone committed to another
draft's dispatch not yet ended (``Drone.committed_to``: it would be DEVICE_BUSY
at dispatch) and a fleet.json entry refused alone (``World.refused_drones``).

``candidate_fleets`` orders the eligible drones into docks to try, by a
documented score (lexicographic, best first):

1. distance from the dock to the area (nearest point, metres, rounded to
   100 m so near-equal docks tie);
2. capability: more eligible drones at the dock first (more parallel sorties);
3. battery: more usable energy above the reserve first (sum over the drones);
4. dock id (determinism).

Each dock alone comes first in that order, then — when more than one dock has
eligible drones — all of them together as the last resort. The service tries
them in order (bounded), replans each as a new version and re-evaluates; a rule
is never weakened.

``waiting_resource_reasons`` is the human list for WAITING_RESOURCE, for
example ``needs THERMAL_CAMERA within 7 km of the area`` followed by
``M3TD-02 offline since 07:12``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import shapely
from shapely.geometry.base import BaseGeometry

from planner.energy import usable_energy_wh
from planner.geo.projection import LocalFrame
from planner.world.model import Dock, Drone, World
from rules.evaluators._common import fmt
from rules.evaluators.weather import wind_at_altitude
from rules.loading import RuleSet
from rules.schema import (
    BatteryReserveParams,
    CapabilityRequiredParams,
    DockRangeParams,
    DroneAvailableParams,
    WeatherParams,
)

__all__ = [
    "Eligibility",
    "FleetCandidate",
    "JobRequirements",
    "Reason",
    "candidate_fleets",
    "fleet_eligibility",
    "waiting_resource_reasons",
]


@dataclass(frozen=True)
class JobRequirements:
    """What the job needs: sensors, where (lon/lat geometry), when; optionally whose drones."""

    sensors: frozenset[str]
    area_wgs84: BaseGeometry
    start_at: datetime
    tenants: frozenset[str] | None = None
    altitude_m: float | None = None  # flight altitude for the wind level; world default if None

    def __post_init__(self) -> None:
        object.__setattr__(self, "sensors", frozenset(str(getattr(s, "value", s)) for s in self.sensors))


@dataclass(frozen=True)
class Reason:
    """Why a drone may not take the job: a stable ``code`` and a sentence in English and Chinese."""

    code: str
    message_en: str
    message_zh: str

    def __str__(self) -> str:
        return self.message_en

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "message_en": self.message_en, "message_zh": self.message_zh}


@dataclass(frozen=True)
class Eligibility:
    """Eligible drones (sorted by id) and, for every other drone, its reasons."""

    eligible: tuple[Drone, ...]
    rejected: tuple[tuple[str, tuple[Reason, ...]], ...]

    def reasons_for(self, drone_id: str) -> tuple[Reason, ...]:
        return next((r for d, r in self.rejected if d == drone_id), ())

    def to_dict(self) -> dict[str, Any]:
        return {
            "eligible": [d.id for d in self.eligible],
            "rejected": [{"drone_id": d, "reasons": [r.to_dict() for r in rs]} for d, rs in self.rejected],
        }


@dataclass(frozen=True)
class FleetCandidate:
    """A set of docks and their eligible drones to plan with, and the figures it was ranked by."""

    dock_ids: tuple[str, ...]
    drones: tuple[Drone, ...]
    distance_m: float
    usable_energy_wh: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "dock_ids": list(self.dock_ids),
            "drone_ids": [d.id for d in self.drones],
            "distance_m": round(self.distance_m, 1),
            "usable_energy_wh": round(self.usable_energy_wh, 1),
        }


# --------------------------------------------------------------------------- thresholds


@dataclass(frozen=True)
class _Limits:
    available: DroneAvailableParams | None
    capability: CapabilityRequiredParams | None
    dock_range: DockRangeParams | None
    battery: BatteryReserveParams | None
    weather: WeatherParams | None


def _limits(rules: RuleSet | None) -> _Limits:
    if rules is None:
        return _Limits(DroneAvailableParams(), CapabilityRequiredParams(), DockRangeParams(), BatteryReserveParams(), WeatherParams())

    def first(kind: str) -> Any:
        return next((r.params for r in rules.rules if r.kind == kind and r.severity == "block"), None)

    return _Limits(first("drone_available"), first("capability_required"), first("dock_range"), first("battery_reserve"), first("weather"))


def _local_clock(when: datetime, world: World, ref: datetime) -> str:
    """HH:MM in the world's timezone; with the date when it is not the day of ``ref``."""
    try:
        tz: Any = ZoneInfo(world.timezone)
    except Exception:  # noqa: BLE001 - an unknown zone name falls back to UTC
        tz = timezone.utc
    local = when.astimezone(tz)
    same_day = local.date() == ref.astimezone(tz).date()
    return local.strftime("%H:%M") if same_day else local.strftime("%Y-%m-%d %H:%M")


def _km(metres: float) -> str:
    return fmt(round(metres / 1000.0, 1))


def _dock_area_distances(dock: Dock, area: BaseGeometry, frame: LocalFrame) -> tuple[float, float]:
    """(nearest, farthest) distance in metres from the dock to the area."""
    x, y = frame.forward(dock.lon, dock.lat)
    local = frame.to_local(area)
    nearest = float(shapely.distance(local, shapely.points(x, y)))
    coords = shapely.get_coordinates(local)
    farthest = float(np.max(np.hypot(coords[:, 0] - x, coords[:, 1] - y))) if coords.size else nearest
    return nearest, farthest


# --------------------------------------------------------------------------- eligibility


def fleet_eligibility(world: World, requirements: JobRequirements, now: datetime, *, rules: RuleSet | None = None) -> Eligibility:
    """Which drones may take the job at ``now`` and why each other may not (all reasons, not just one)."""
    lim = _limits(rules)
    frame = LocalFrame.for_geometry(requirements.area_wgs84)
    docks = {d.id: d for d in world.docks}
    dist_cache: dict[str, tuple[float, float]] = {}
    eligible: list[Drone] = []
    rejected: list[tuple[str, tuple[Reason, ...]]] = []
    for drone in sorted(world.drones, key=lambda d: d.id):
        reasons: list[Reason] = []
        if requirements.tenants is not None and drone.tenant not in requirements.tenants:
            reasons.append(Reason("TENANT", f"{drone.id} belongs to tenant {drone.tenant}", f"{drone.id} 属于其他租户 {drone.tenant}"))
        if lim.available is not None:
            since = _local_clock(drone.last_telemetry_at, world, now)
            if drone.status not in lim.available.statuses:
                word = {"OFFLINE": "offline", "MAINTENANCE": "in maintenance", "IN_FLIGHT": "in flight"}.get(drone.status, drone.status.lower())
                word_zh = {"OFFLINE": "离线", "MAINTENANCE": "维护中", "IN_FLIGHT": "飞行中"}.get(drone.status, drone.status)
                reasons.append(Reason(drone.status, f"{drone.id} {word} since {since}", f"{drone.id} 自 {since} 起{word_zh}"))
            else:
                age_s = (now - drone.last_telemetry_at).total_seconds()
                if age_s > lim.available.max_telemetry_age_s:
                    reasons.append(
                        Reason(
                            "STALE_TELEMETRY",
                            f"{drone.id} silent since {since} ({fmt(age_s / 60)} min, limit {fmt(lim.available.max_telemetry_age_s / 60)} min)",
                            f"{drone.id} 自 {since} 起无遥测（{fmt(age_s / 60)} 分钟，上限 {fmt(lim.available.max_telemetry_age_s / 60)} 分钟）",
                        )
                    )
        if drone.committed_to is not None:
            reasons.append(Reason("COMMITTED", f"{drone.id} is committed to {drone.committed_to}",
                                  f"{drone.id} 已被 {drone.committed_to} 占用"))
        if lim.capability is not None:
            missing = sorted((set(requirements.sensors) | set(lim.capability.always_required)) - set(drone.capabilities))
            if missing:
                m = ", ".join(missing)
                reasons.append(Reason("MISSING_SENSOR", f"{drone.id} has no {m}", f"{drone.id} 没有 {m}"))
        dock = docks.get(drone.dock_id)
        if dock is None:
            reasons.append(Reason("UNKNOWN_DOCK", f"{drone.id}'s dock {drone.dock_id} is not in the world", f"{drone.id} 的机场 {drone.dock_id} 不存在"))
        elif lim.dock_range is not None:
            if dock.id not in dist_cache:
                dist_cache[dock.id] = _dock_area_distances(dock, requirements.area_wgs84, frame)
            _, farthest = dist_cache[dock.id]
            reach = dock.radius_m - lim.dock_range.margin_m
            if farthest > reach:
                reasons.append(
                    Reason(
                        "OUT_OF_RANGE",
                        f"{drone.id} at {dock.id} reaches {_km(reach)} km, the area extends to {_km(farthest)} km",
                        f"{drone.id}（{dock.id}）作业半径 {_km(reach)} 公里，区域最远 {_km(farthest)} 公里",
                    )
                )
        if lim.battery is not None and drone.battery_pct / 100.0 <= lim.battery.reserve_fraction:
            reasons.append(
                Reason(
                    "LOW_BATTERY",
                    f"{drone.id} battery {fmt(drone.battery_pct)} %, at or below the {fmt(lim.battery.reserve_fraction * 100)} % reserve",
                    f"{drone.id} 电量 {fmt(drone.battery_pct)}%，不高于 {fmt(lim.battery.reserve_fraction * 100)}% 保留电量",
                )
            )
        if lim.weather is not None:
            reasons.extend(_weather_reasons(world, drone, dock, requirements, lim.weather, now))
        if reasons:
            rejected.append((drone.id, tuple(reasons)))
        else:
            eligible.append(drone)
    for refused in world.refused_drones:  # not in the world: its fleet.json entry did not load (named, not hidden)
        if requirements.tenants is None or refused.tenant in requirements.tenants:
            why = "; ".join(refused.problems)
            rejected.append((refused.id, (Reason("FLEET_ENTRY_REFUSED", f"{refused.id}: {refused.reason}",
                                                 f"{refused.id}：fleet.json 中的条目被拒绝：{why}"),)))
    return Eligibility(eligible=tuple(eligible), rejected=tuple(sorted(rejected, key=lambda r: r[0])))


def _weather_reasons(
    world: World, drone: Drone, dock: Dock | None, req: JobRequirements, p: WeatherParams, now: datetime
) -> list[Reason]:
    hour = world.weather.hour_at(req.start_at)
    if hour is None:
        return []  # no forecast: the plan's weather rule decides (missing_forecast)
    out: list[Reason] = []
    cap = min(drone.max_wind_mps, dock.max_wind_mps if dock is not None else drone.max_wind_mps)
    at = _local_clock(hour.time, world, now)
    altitude_m = req.altitude_m if req.altitude_m is not None else world.defaults.altitude_m
    if "wind" in p.checks:
        w = wind_at_altitude(hour, altitude_m)
        if w is not None and w[0] > cap - p.wind_margin_mps:
            lim = cap - p.wind_margin_mps
            out.append(Reason("WIND", f"{drone.id}: wind {fmt(w[0])} m/s above {fmt(lim)} m/s at {at}", f"{drone.id}：{at} 风速 {fmt(w[0])} m/s 超过 {fmt(lim)} m/s"))
    if "gust" in p.checks and hour.wind_gusts_10m_mps is not None and hour.wind_gusts_10m_mps > cap - p.gust_margin_mps:
        lim = cap - p.gust_margin_mps
        g = hour.wind_gusts_10m_mps
        out.append(Reason("GUSTS", f"{drone.id}: gusts {fmt(g)} m/s above {fmt(lim)} m/s at {at}", f"{drone.id}：{at} 阵风 {fmt(g)} m/s 超过 {fmt(lim)} m/s"))
    if "temperature" in p.checks and hour.temperature_2m_c is not None:
        t = hour.temperature_2m_c
        lo, hi = drone.min_temp_c + p.temperature_margin_c, drone.max_temp_c - p.temperature_margin_c
        if t < lo or t > hi:
            out.append(
                Reason("TEMPERATURE", f"{drone.id}: {fmt(t)} °C outside {fmt(lo)}..{fmt(hi)} °C at {at}", f"{drone.id}：{at} 气温 {fmt(t)} °C 超出 {fmt(lo)}..{fmt(hi)} °C")
            )
    return out


# --------------------------------------------------------------------------- alternatives


def candidate_fleets(
    world: World,
    requirements: JobRequirements,
    now: datetime,
    *,
    rules: RuleSet | None = None,
    eligibility: Eligibility | None = None,
    max_candidates: int | None = None,
) -> tuple[FleetCandidate, ...]:
    """Dock/drone sets to plan with, best first by the module's documented score."""
    elig = eligibility or fleet_eligibility(world, requirements, now, rules=rules)
    if not elig.eligible:
        return ()
    lim = _limits(rules)
    reserve = lim.battery.reserve_fraction if lim.battery is not None else 0.0
    frame = LocalFrame.for_geometry(requirements.area_wgs84)
    by_dock: dict[str, list[Drone]] = {}
    for d in elig.eligible:
        by_dock.setdefault(d.dock_id, []).append(d)
    docks = {d.id: d for d in world.docks}
    singles: list[tuple[tuple[Any, ...], FleetCandidate]] = []
    for dock_id, drones in by_dock.items():
        nearest, _ = _dock_area_distances(docks[dock_id], requirements.area_wgs84, frame)
        energy = sum(usable_energy_wh(d.battery_wh, d.battery_pct, reserve) for d in drones)
        cand = FleetCandidate((dock_id,), tuple(sorted(drones, key=lambda d: d.id)), nearest, energy)
        key = (round(nearest / 100.0), -len(drones), -round(energy, 3), dock_id)
        singles.append((key, cand))
    singles.sort(key=lambda kc: kc[0])
    out = [c for _, c in singles]
    if len(out) > 1:
        out.append(
            FleetCandidate(
                tuple(c.dock_ids[0] for c in out),
                tuple(d for c in out for d in c.drones),
                max(c.distance_m for c in out),
                sum(c.usable_energy_wh for c in out),
            )
        )
    return tuple(out[:max_candidates] if max_candidates is not None else out)


def waiting_resource_reasons(
    world: World,
    requirements: JobRequirements,
    now: datetime,
    *,
    rules: RuleSet | None = None,
    eligibility: Eligibility | None = None,
) -> tuple[Reason, ...]:
    """What is missing, for a WAITING_RESOURCE outcome: the need first, then the near misses.

    The need: the sensors within the largest dock radius of the area. The near
    misses: drones that have the sensors but are rejected for other reasons,
    each with those reasons (``M3TD-02 offline since 07:12``). When no drone
    of the fleet has the sensors at all, that is said instead.
    """
    elig = eligibility or fleet_eligibility(world, requirements, now, rules=rules)
    sensors = sorted(requirements.sensors)
    need = ", ".join(sensors) if sensors else "an available drone"
    need_zh = "、".join(sensors) if sensors else "一架可用无人机"
    radius_m = max((d.radius_m for d in world.docks), default=0.0)
    out = [
        Reason(
            "NEEDS",
            f"needs {need} within {_km(radius_m)} km of the area",
            f"需要在区域 {_km(radius_m)} 公里范围内的 {need_zh}",
        )
    ]
    has_sensors = [d for d in world.drones if set(requirements.sensors) <= set(d.capabilities)]
    if not has_sensors:
        out.append(Reason("NO_SENSOR_IN_FLEET", f"no drone of the fleet has {need}", f"机队中没有带 {need_zh} 的无人机"))
    for drone_id, reasons in elig.rejected:
        unknown = any(r.code == "FLEET_ENTRY_REFUSED" for r in reasons)  # its sensors are not known: named
        if drone_id not in {d.id for d in has_sensors} and not unknown:
            continue
        out.extend(r for r in reasons if r.code != "MISSING_SENSOR")
    return tuple(out)
