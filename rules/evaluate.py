"""Evaluate a plan against the world with a rule set: the verdict, with evidence.

Every rule is applied to every sortie (unless its ``when:`` guard says it does
not apply to that sortie); the findings are collected, de-duplicated and
sorted (``Finding.sort_key``) so the same inputs give the same verdict, byte
for byte. Pure: the world, the time and the draft's facts are arguments.

Example::

    >>> # verdict = evaluate(plan, world, load_rules(RULES_FILE), context=EvaluationContext(now=now))
    >>> # verdict.blocked, [f.message_en for f in verdict.blocking]
"""

from __future__ import annotations

import math
from typing import Any

from planner.plan import Plan, Sortie
from planner.world.model import World
from rules.context import EvaluationContext
from rules.evaluators import EVALUATORS, Env
from rules.findings import Finding, Verdict
from rules.loading import RuleSet

__all__ = ["evaluate", "guard_values"]

_WEEKDAYS = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")


def guard_values(plan: Plan, sortie: Sortie, env: Env) -> dict[str, Any]:
    """The typed values a ``when:`` guard sees for one sortie (see ``rules.guards.GUARD_SYMBOLS``)."""
    drone = env.drone(sortie)
    start = sortie.start_at
    utc = start.utcoffset()
    start_utc = start - utc if utc is not None else start
    hours = env.forecast(sortie)
    temps = [h.temperature_2m_c for h in hours if h.temperature_2m_c is not None]
    winds = [
        w
        for h in hours
        for w in (h.wind_speed_10m_mps, h.wind_speed_80m_mps, h.wind_speed_120m_mps)
        if w is not None
    ]
    return {
        "phase": env.context.phase,
        "mission_type": str(plan.mission_type),
        "sortie_index": float(sortie.index),
        "drone_id": sortie.drone_id,
        "drone_model": drone.model if drone else "",
        "dock_id": sortie.dock_id,
        "tenant": drone.tenant if drone else "",
        "capabilities": set(drone.capabilities) if drone else set(),
        "required_sensors": set(env.context.required_sensors),
        "start_hour_utc": start_utc.hour + start_utc.minute / 60.0 + start_utc.second / 3600.0,
        "weekday_utc": _WEEKDAYS[start_utc.weekday()],
        "duration_s": float(sortie.duration_s),
        "max_altitude_m": float(max((wp.alt_m for leg in sortie.legs for wp in leg.waypoints), default=0.0)),
        "forecast_known": bool(hours),
        "min_temperature_c": float(min(temps)) if temps else math.nan,
        "max_wind_mps": float(max(winds)) if winds else math.nan,
    }


def evaluate(plan: Plan, world: World, rules: RuleSet, *, context: EvaluationContext) -> Verdict:
    """Every rule over every sortie of ``plan`` in ``world`` at ``context.now``; never raises for a violation."""
    env = Env.for_plan(plan, world, context)
    findings: list[Finding] = []
    for sortie in plan.sorties:
        values: dict[str, Any] | None = None
        for rule in rules.rules:
            guard = rules.guards.get(rule.id)
            if guard is not None:
                if values is None:
                    values = guard_values(plan, sortie, env)
                if not guard.matches(values):
                    continue
            findings.extend(EVALUATORS[rule.kind](rule, sortie, env))
    return Verdict.from_findings(findings)
