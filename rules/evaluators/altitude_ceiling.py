"""altitude_ceiling: every waypoint at or below the ceiling (AGL), and at or above the floor.

Straight segments between waypoints never exceed their end points, so checking
waypoints is exact. TAKEOFF and LAND waypoints are exempt from the floor (they
sit on the dock). One finding per leg and limit: the worst waypoint.
"""

from __future__ import annotations

from planner.plan import Sortie
from rules.evaluators._common import Env, make_finding
from rules.findings import Finding
from rules.schema import AltitudeCeilingRule

__all__ = ["evaluate"]

_CEILING = (
    "Sortie {sortie} leg {leg} flies at {measured} m AGL, above the {limit} m ceiling{detail}.",
    "第{sortie}架次第{leg}航段飞行高度 {measured} 米（离地），超过 {limit} 米上限{detail_zh}。",
)
_FLOOR = (
    "Sortie {sortie} leg {leg} flies at {measured} m AGL, below the {limit} m floor.",
    "第{sortie}架次第{leg}航段飞行高度 {measured} 米（离地），低于 {limit} 米下限。",
)


def evaluate(rule: AltitudeCeilingRule, sortie: Sortie, env: Env) -> list[Finding]:
    p = rule.params
    ceiling_m = p.ceiling_limit_m
    detail, detail_zh = ("", "")
    if p.ceiling_ft is not None:
        detail, detail_zh = (f" ({p.ceiling_ft:g} ft)", f"（{p.ceiling_ft:g} 英尺）")
    out: list[Finding] = []
    for li, leg in enumerate(sortie.legs):
        if not leg.waypoints:
            continue
        top = max(wp.alt_m for wp in leg.waypoints)
        if top > ceiling_m:
            out.append(
                make_finding(
                    rule, _CEILING, sortie=sortie, leg=li, measured=top, limit=ceiling_m, unit="m AGL",
                    quantity="altitude", quantity_zh="高度", detail=detail, detail_zh=detail_zh,
                )
            )
        if p.floor_m is not None:
            flying = [wp.alt_m for wp in leg.waypoints if wp.action not in ("TAKEOFF", "LAND")]
            if flying and min(flying) < p.floor_m:
                out.append(
                    make_finding(
                        rule, _FLOOR, sortie=sortie, leg=li, measured=min(flying), limit=p.floor_m, unit="m AGL",
                        quantity="altitude", quantity_zh="高度",
                    )
                )
    return out
