"""Changing a limit in the rule file moves the plan, and the moved plan passes the rules that judge it.

For each planning limit (zone margin, ceiling, battery reserve, cold derating,
wind margin) a temporary copy of ``data/rules.yaml`` with that one figure made
stricter is loaded; the planner, given ``rules.derived_limits.planning_limits`` of it,
makes a different plan, which the changed rule set does not block. The plan
made under the bundled file is blocked by the changed one: planning with a
copy of the old figure would have produced a plan the rules refuse.
"""

from __future__ import annotations

import dataclasses
import json
import math
from datetime import datetime
from pathlib import Path

import pytest

from flows.context import DEMO_WORLD_DIR, RULES_FILE
from planner.job import Job
from planner.mission import plan_mission
from planner.plan import Plan, canonical_json, plan_from_dict
from planner.world.model import World
from flows.world_folder import load_world
from rules.context import EvaluationContext
from rules.evaluate import evaluate
from rules.findings import Verdict
from rules.derived_limits import planning_limits
from flows.rule_file import load_rules
from rules.loading import RuleSet

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")  # the demo world's reference time: cold, calm


@pytest.fixture(scope="module")
def world() -> World:
    return load_world(DEMO_WORLD_DIR)


def _rules_with(tmp_path: Path, old: str, new: str) -> RuleSet:
    text = RULES_FILE.read_text(encoding="utf-8")
    assert text.count(old) == 1, f"{old!r} is not in the bundled rule file once"
    path = tmp_path / "rules.yaml"
    path.write_text(text.replace(old, new), encoding="utf-8")
    return load_rules(path)


def _plan(world: World, rules: RuleSet, drones: list, altitude_m: float | None = None) -> Plan:
    limits = planning_limits(rules, world)
    alt = limits.altitude_m(altitude_m, world.defaults.altitude_m)  # what the service does with a request
    job = Job("FIRE_LANE_PATROL", world.region("region-1001").area, NOW, altitude_m=alt)
    plan = plan_mission(world, job, drones, limits=limits)
    return plan_from_dict(json.loads(canonical_json(plan)))  # judged as stored, like the service does


def _verdict(plan: Plan, world: World, rules: RuleSet) -> Verdict:
    return evaluate(plan, world, rules, context=EvaluationContext(now=NOW))


def _blocking(verdict: Verdict) -> list[str]:
    return [f"{f.rule_id}: {f.message_en}" for f in verdict.blocking]


CASES = {
    # limit: (text in data/rules.yaml, the stricter text, the drone's battery % (low where energy is
    # the limit), the requested altitude (60 m: inside HELX002's band, so the zone's margin matters)).
    # ENERGY in the stricter text: a figure that leaves 90 % of the bundled plan's largest sortie usable.
    "zone margin": ("buffer_m: 20", "buffer_m: 45", 96.0, 60.0),
    "ceiling": ("ceiling_m: 120", "ceiling_m: 30", 96.0, None),
    "battery reserve": ("reserve_fraction: 0.25", "reserve_fraction: ENERGY", 30.0, None),
    "cold derating": ("cold_derating: 0.8", "cold_derating: ENERGY", 30.0, None),
    "wind margin": ("wind_margin_mps: 2.0", "wind_margin_mps: 11.5", 96.0, None),
}


def _stricter_energy(case: str, plan: Plan, battery_pct: float) -> str:
    """The reserve or derating under which 90 % of ``plan``'s largest sortie is all that may be used.

    Derived from the plan rather than fixed, so the test does not hang on one route's exact figures:
    the bundled rule set plans with reserve 0.25 and derating 0.8 (the demo morning is below 0 °C).
    """
    usable_share = 0.9 * max(s.battery_fraction for s in plan.sorties) / (battery_pct / 100.0)
    if case == "battery reserve":
        return f"{math.ceil((1.0 - usable_share / 0.8) * 1000) / 1000:.3f}"
    return f"{math.floor(usable_share / 0.75 * 1000) / 1000:.3f}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_stricter_limit_in_the_rule_file_moves_the_plan_inside_it(case: str, world: World, tmp_path: Path) -> None:
    old, new, battery_pct, altitude_m = CASES[case]
    drone = dataclasses.replace(world.drone("M3TD-01"), battery_pct=battery_pct)
    world = dataclasses.replace(world, drones=tuple(drone if d.id == drone.id else d for d in world.drones))
    drones = [drone]
    bundled = load_rules(RULES_FILE)
    before = _plan(world, bundled, drones, altitude_m)
    assert before.sorties and _blocking(_verdict(before, world, bundled)) == []
    if "ENERGY" in new:
        new = new.replace("ENERGY", _stricter_energy(case, before, battery_pct))
    changed = _rules_with(tmp_path, old, new)
    after = _plan(world, changed, drones, altitude_m)

    # the plan made with the old figure is refused by the changed rule set ...
    assert _blocking(_verdict(before, world, changed)), f"{case} ({new}): the old plan passes the changed rules"
    # ... the planner follows the file: another plan, which the changed rule set passes
    assert canonical_json(after) != canonical_json(before)
    if case == "wind margin":  # the only drone may not fly in that wind: nothing is planned, and said why
        assert after.sorties == () and after.parameters["drones_too_windy"] == [drone.id]
    else:
        assert after.sorties, f"{case} ({new}): nothing planned"
    assert _blocking(_verdict(after, world, changed)) == []


def test_each_limit_lands_where_the_planner_uses_it(world: World, tmp_path: Path) -> None:
    """The figures of the changed files reach the plan: its parameters, altitude, sorties and drones."""
    drones = [world.drone("M3TD-01")]
    margin = _plan(world, _rules_with(tmp_path, "buffer_m: 20", "buffer_m: 45"), drones, 60.0)
    assert margin.parameters["safety_margin_m"] == 45.0
    low = _plan(world, _rules_with(tmp_path, "ceiling_m: 120", "ceiling_m: 30"), drones)
    assert low.altitude_m == 30.0 and low.parameters["ceiling_m"] == 30.0
    reserve = _plan(world, _rules_with(tmp_path, "reserve_fraction: 0.25", "reserve_fraction: 0.5"), drones)
    assert reserve.parameters["reserve_fraction"] == 0.5
    cold = _plan(world, _rules_with(tmp_path, "cold_derating: 0.8", "cold_derating: 0.5"), drones)
    assert cold.parameters["energy_derating"] == 0.5
    windy = _plan(world, _rules_with(tmp_path, "wind_margin_mps: 2.0", "wind_margin_mps: 11.5"), drones)
    assert windy.sorties == () and windy.parameters["drones_too_windy"] == ["M3TD-01"]
    d = drones[0]
    for plan, reserve_fraction, derating in ((reserve, 0.5, 0.8), (cold, 0.25, 0.5)):
        limit = d.battery_wh * d.battery_pct / 100 * (1 - reserve_fraction) * derating
        assert plan.sorties and all(s.energy_wh <= limit + 1e-6 for s in plan.sorties)


def test_an_explicit_altitude_above_the_rule_files_ceiling_is_refused(world: World, tmp_path: Path) -> None:
    from planner.errors import InvalidArgument

    changed = _rules_with(tmp_path, "ceiling_m: 120", "ceiling_m: 30")
    with pytest.raises(InvalidArgument, match="above the ceiling of 30 m"):
        _plan(world, changed, [world.drone("M3TD-01")], altitude_m=40.0)
