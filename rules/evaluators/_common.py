"""What every evaluator shares: the per-evaluation environment and finding construction."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

from planner.output.sortie_flight import TIMING, fly_sortie
from planner.plan import Plan, Sortie
from planner.geo.projection import LocalFrame
from planner.world.model import Dock, Drone, WeatherHour, World
from rules.context import EvaluationContext
from rules.findings import Finding
from rules.schema import TEMPLATE_FIELDS, Severity
from rules.spatial import SortieSegments, ZoneIndex, sortie_segments, zone_index_for

__all__ = ["Env", "Evaluator", "fmt", "make_finding"]


class Evaluator(Protocol):
    """One rule kind: the findings of ``rule`` for one sortie (empty when it passes)."""

    def __call__(self, rule: Any, sortie: Sortie, env: Env) -> list[Finding]: ...


@dataclass
class Env:
    """Everything one ``evaluate`` call shares between rules and sorties (memoised, not global)."""

    plan: Plan
    world: World
    context: EvaluationContext
    frame: LocalFrame
    _segments: dict[int, SortieSegments] = field(default_factory=dict)
    _flown: dict[int, tuple[tuple[float, ...], float]] = field(default_factory=dict)

    @classmethod
    def for_plan(cls, plan: Plan, world: World, context: EvaluationContext) -> Env:
        return cls(plan=plan, world=world, context=context, frame=_frame_for(plan, world))

    @property
    def zone_index(self) -> ZoneIndex:
        return zone_index_for(self.world.zones, self.frame)

    def segments(self, sortie: Sortie) -> SortieSegments:
        key = id(sortie)
        hit = self._segments.get(key)
        if hit is None:
            hit = self._segments[key] = sortie_segments(sortie, self.frame)
        return hit

    def drone(self, sortie: Sortie) -> Drone | None:
        return next((d for d in self.world.drones if d.id == sortie.drone_id), None)

    def dock(self, sortie: Sortie) -> Dock | None:
        return next((d for d in self.world.docks if d.id == sortie.dock_id), None)

    def flown(self, sortie: Sortie) -> tuple[tuple[float, ...], float]:
        """(each leg's seconds, the sortie's Wh) as its vehicle flies it: the plan's own figures when the
        plan says it was timed by the current model (``planner.output.sortie_flight.TIMING``), else
        flown again here (a plan made before, or elsewhere); the plan's figures if its drone is unknown."""
        key = id(sortie)
        hit = self._flown.get(key)
        if hit is None:
            hit = ((tuple(max(l.duration_s, 0.0) for l in sortie.legs), sortie.energy_wh))
            if self.plan.parameters.get("timing") != TIMING and any(d.id == sortie.drone_id for d in self.world.drones):
                flight = fly_sortie(self.plan, sortie, self.world)
                hit = (flight.leg_duration_s, flight.energy_wh)
            self._flown[key] = hit
        return hit

    def leg_windows(self, sortie: Sortie) -> list[tuple[datetime, datetime]]:
        """[start, end] of each leg: the sortie's start plus the flown durations of the legs before it."""
        out: list[tuple[datetime, datetime]] = []
        t = sortie.start_at
        for seconds in self.flown(sortie)[0]:
            end = t + timedelta(seconds=seconds)
            out.append((t, end))
            t = end
        return out

    def forecast(self, sortie: Sortie) -> tuple[WeatherHour, ...]:
        end = max(sortie.end_at, sortie.start_at + timedelta(seconds=sum(self.flown(sortie)[0])))
        return self.world.weather.hours_between(sortie.start_at, end)


def _frame_for(plan: Plan, world: World) -> LocalFrame:
    area = plan.area_wgs84
    if area is not None and not area.is_empty:
        return LocalFrame.for_geometry(area)
    for s in plan.sorties:
        for leg in s.legs:
            for wp in leg.waypoints:
                return LocalFrame.for_point(wp.lon, wp.lat)
    if world.docks:
        return LocalFrame.for_point(world.docks[0].lon, world.docks[0].lat)
    return LocalFrame.for_point(0.0, 0.0)


def fmt(value: Any) -> str:
    """Numbers for messages: at most 2 decimals, no trailing zeros; inf as ∞."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, (int, float)):
        if math.isinf(value):
            return "∞" if value > 0 else "-∞"
        if math.isnan(value):
            return "?"
        text = f"{float(value):.2f}".rstrip("0").rstrip(".")
        return "0" if text in ("-0", "") else text
    return str(value)


def make_finding(
    rule: Any,
    defaults: tuple[str, str],
    *,
    sortie: Sortie | None,
    leg: int | None = None,
    measured: float | str | None,
    limit: float | str | None,
    unit: str,
    zone_id: str | None = None,
    severity: Severity | None = None,
    **fields: Any,
) -> Finding:
    """A finding with its messages rendered from the rule's templates (or the kind's ``defaults``)."""
    values: dict[str, Any] = {name: "" for name in TEMPLATE_FIELDS}
    values.update(
        rule_id=rule.id,
        kind=rule.kind,
        sortie="" if sortie is None else sortie.index,
        leg="" if leg is None else leg,
        drone_id="" if sortie is None else sortie.drone_id,
        dock_id="" if sortie is None else sortie.dock_id,
        zone_id=zone_id or "",
        measured=fmt(measured),
        limit=fmt(limit),
        unit=unit,
    )
    values.update({k: fmt(v) if isinstance(v, float) else v for k, v in fields.items()})
    en_t, zh_t = (rule.message.en, rule.message.zh) if rule.message is not None else defaults
    return Finding(
        rule_id=rule.id,
        kind=rule.kind,
        severity=severity or rule.severity,
        sortie_index=None if sortie is None else sortie.index,
        leg_index=leg,
        measured=measured,
        limit=limit,
        unit=unit,
        zone_id=zone_id,
        message_en=en_t.format(**values).strip(),
        message_zh=zh_t.format(**values).strip(),
    )
