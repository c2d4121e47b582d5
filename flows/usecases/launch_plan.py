"""What one vehicle must hold and have before a sortie flies (``LaunchPlan``), and the rule set's judgement of
its own state at launch: where it is, what its failsafes do.

``launch_plan`` gathers it from the approved plan, the world and the rule set:
the mission items, the battery the sortie needs with the plan's reserve, the
dock, and the vehicle rules below.

Why through the rule set and not a launch option: the limits a launch checks
(how far from its dock a vehicle may take off, which failsafe actions a mission
needs) are rules an operator reads and changes in ``data/rules.yaml``
(``vehicle_at_dock``, ``vehicle_failsafes``), and the same rules judge the
drone at planning and at the dispatch re-check when its state comes from the
authority's hub. At launch the drone is made from what its vehicle says on the
launch's link (``VehicleView``): its position — only when it is fresher than
``position_fresh_s`` (issue 42: a stale value is never read as the vehicle's
state) — and the parameters read from it (``flows.vehicle.param_read``). Each
rule of those kinds becomes one pre-flight ``Check`` named by the rule's id.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from flows.fleet.params import FAILSAFE_PARAMS
from flows.vehicle.launch import Check, LaunchPlan, RuleChecks, battery_needed_pct
from flows.vehicle.view import VehicleView
from planner.output.mission_items import mission_items
from planner.plan import Plan, Sortie
from planner.world.model import World
from rules.context import EvaluationContext
from rules.evaluate import evaluate
from rules.loading import RuleSet

__all__ = ["VEHICLE_KINDS", "POSITION_FRESH_S", "launch_plan", "vehicle_rule_checks", "live_drone_from_view"]

#: The rule kinds judged from the vehicle's own state at launch.
VEHICLE_KINDS = ("vehicle_at_dock", "vehicle_failsafes")
#: A position older than this is not the vehicle's position now (the hub's freshness limit, ``flows.fleet.live``).
POSITION_FRESH_S = 10.0


def live_drone_from_view(world: World, drone_id: str, view: VehicleView, position_age_s: float | None, now: datetime,
                         *, position_fresh_s: float = POSITION_FRESH_S) -> World:
    """``world`` with ``drone_id`` as its vehicle says it is now (position when fresh, its parameters)."""
    fresh = view.position_known and position_age_s is not None and position_age_s <= position_fresh_s
    drone = replace(world.drone(drone_id), live=True, position=(view.lat, view.lon) if fresh else None,
                    vehicle_params=dict(view.params), last_telemetry_at=now)
    return replace(world, drones=tuple(drone if d.id == drone_id else d for d in world.drones))


def vehicle_rule_checks(rules: RuleSet, plan: Plan, sortie: Sortie, world: World, now: datetime,
                        dialect: str) -> tuple[tuple[str, ...], RuleChecks | None]:
    """(the parameters to read from the vehicle first, the checks) for one sortie's launch; (``()``, None) when
    the rule set has no rule of ``VEHICLE_KINDS``."""
    chosen = tuple(r for r in rules.rules if r.kind in VEHICLE_KINDS)
    if not chosen:
        return (), None
    subset = RuleSet(source=rules.source, version=rules.version, rules=chosen,
                     guards={k: g for k, g in rules.guards.items() if any(r.id == k for r in chosen)},
                     sha256=rules.sha256)
    one = replace(plan, sorties=(sortie,))
    wanted = FAILSAFE_PARAMS.get(dialect, ()) if any(r.kind == "vehicle_failsafes" for r in chosen) else ()

    def check(view: VehicleView, position_age_s: float | None) -> list[Check]:
        judged = live_drone_from_view(world, sortie.drone_id, view, position_age_s, now)
        verdict = evaluate(one, judged, subset, context=EvaluationContext(now=now, phase="launch"))
        out = []
        for rule in chosen:
            found = [f for f in verdict.findings if f.rule_id == rule.id]
            blocking = [f for f in found if f.blocks]
            detail = "; ".join(f.message_en for f in found) if found else f"{rule.kind}: the vehicle meets it"
            out.append(Check(rule.id, not blocking, detail, measured=[f.measured for f in found] or None,
                             limit=[f.limit for f in found] or None))
        return out

    return wanted, check


def launch_plan(rules: RuleSet, plan: Plan, sortie: Sortie, world: World, now: datetime, dialect: str) -> LaunchPlan:
    """The ``LaunchPlan`` of one sortie's vehicle: the approved items, the battery need, the dock, the rules."""
    dock = world.dock(sortie.dock_id)
    reserve = float(plan.parameters.get("reserve_fraction", 0.0) or 0.0)
    wanted, checks = vehicle_rule_checks(rules, plan, sortie, world, now, dialect)
    return LaunchPlan(drone_id=sortie.drone_id, dialect=dialect,
                      mission=mission_items(plan, sortie, world, dialect=dialect),  # type: ignore[arg-type]
                      battery_needed_pct=battery_needed_pct(sortie.battery_fraction, reserve),
                      dock_lat=dock.lat, dock_lon=dock.lon, params_wanted=wanted, rule_checks=checks)
