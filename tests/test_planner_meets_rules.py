"""The planner and the rules agree: what the planner routes around, the airspace rule clears.

The planner grows zones by its safety margin (plus a rounding pad) and the airspace rule
uses a buffer of the same size; a plan that hugs a zone must still pass after it has been
rounded to its canonical 7-decimal form.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from flows.context import DEMO_WORLD_DIR, RULES_FILE
from planner.job import Job
from planner.mission import plan_mission
from planner.plan import canonical_json, plan_from_dict
from flows.world_folder import load_world
from rules.context import EvaluationContext
from rules.evaluate import evaluate
from rules.derived_limits import planning_limits
from flows.rule_file import load_rules

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


@pytest.mark.parametrize("altitude_m", [40.0, 60.0])  # under HELX002's floor, and inside its band
@pytest.mark.parametrize("mission_type", ["FIRE_LANE_PATROL", "POINT_INSPECTION"])
def test_canonical_plan_hugging_zones_passes_the_airspace_rule(mission_type: str, altitude_m: float) -> None:
    import json

    world = load_world(DEMO_WORLD_DIR)
    job = Job(mission_type, world.region("region-1001").area, NOW, altitude_m=altitude_m, sensors=frozenset())
    # DOCK-B's drone: DOCK-A stands 5.5 m from HELX002, so a climb to 60 m there is rightly blocked
    rules = load_rules(RULES_FILE)
    plan = plan_mission(world, job, [world.drone("M3TD-01")], limits=planning_limits(rules, world))
    assert plan.sorties
    stored = plan_from_dict(json.loads(canonical_json(plan)))  # what the ledger keeps and dispatch re-checks
    verdict = evaluate(stored, world, rules, context=EvaluationContext(now=NOW))
    airspace = [f for f in verdict.findings if f.kind == "geozone_clearance" and f.severity == "block"]
    assert airspace == [], [f.message_en for f in airspace]
