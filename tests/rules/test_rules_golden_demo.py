"""Golden verdicts: hand-built plans over the demo world at three times of 2026-12-04.

* morning 10:00 UTC — HELX003 does not apply; −1 °C derates the batteries;
* afternoon 15:00 UTC — HELX003 (Fri 14–22 UTC) applies; gusts above the limits;
* evening 19:00 UTC — HELX003 applies; rain warns; HELX002 flown under an authorisation.

Update with ``uv run pytest --update-golden -k rules_demo`` and review the diff.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from shapely.geometry import box

from flows.context import DEMO_WORLD_DIR, RULES_FILE
from planner.output.sortie_flight import TIMING
from planner.plan import Leg, Plan, Sortie, Waypoint
from flows.world_folder import load_world
from flows.rule_file import load_rules
from rules.context import EvaluationContext
from rules.evaluate import evaluate

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")  # the demo's reference now


def _leg(kind: str, points: list[tuple[float, float, float]], duration_s: float, energy_wh: float, action: str = "WAYPOINT") -> Leg:
    wps = []
    for i, (lon, lat, alt) in enumerate(points):
        a = action
        if kind == "takeoff" and i == 0:
            a = "TAKEOFF"
        elif kind == "landing" and i == len(points) - 1:
            a = "LAND"
        wps.append(Waypoint(lon=lon, lat=lat, alt_m=alt, action=a))  # type: ignore[arg-type]
    return Leg(kind=kind, waypoints=tuple(wps), distance_m=0.0, duration_s=duration_s, energy_wh=energy_wh)  # type: ignore[arg-type]


def demo_plan(start: datetime) -> Plan:
    a_lon, a_lat = 24.9449, 60.1652  # DOCK-A
    b_lon, b_lat = 24.948, 60.17328  # DOCK-B
    s0_legs = (
        _leg("takeoff", [(a_lon, a_lat, 0), (a_lon, a_lat, 60)], 30, 4),
        _leg("transit", [(a_lon, a_lat, 60), (24.9430, 60.1700, 60)], 60, 7),
        _leg("sweep", [(24.9410, 60.1705, 60), (24.9440, 60.1705, 60), (24.9440, 60.1712, 60), (24.9410, 60.1712, 60)], 240, 26),
        _leg("inspect", [(24.9470, 60.1690, 60)], 90, 12, action="INSPECT"),
        _leg("transit", [(a_lon, a_lat, 60)], 60, 7),
        _leg("landing", [(a_lon, a_lat, 60), (a_lon, a_lat, 0)], 30, 4),
    )
    s1_legs = (
        _leg("takeoff", [(b_lon, b_lat, 0), (b_lon, b_lat, 40)], 30, 4),
        _leg("transit", [(b_lon, b_lat, 40), (24.9495, 60.1660, 40)], 90, 20),
        _leg("inspect", [(24.9495, 60.1660, 40)], 120, 22, action="INSPECT"),
        _leg("transit", [(b_lon, b_lat, 40)], 90, 20),
        _leg("landing", [(b_lon, b_lat, 40), (b_lon, b_lat, 0)], 30, 4),
    )

    def sortie(i: int, drone: str, dock: str, legs: tuple[Leg, ...]) -> Sortie:
        return Sortie(
            index=i, drone_id=drone, dock_id=dock, start_at=start, legs=legs, distance_m=0.0,
            duration_s=sum(l.duration_s for l in legs), energy_wh=sum(l.energy_wh for l in legs), battery_fraction=0.0,
        )

    return Plan(
        mission_type="AREA_SURVEY", planned_for=start, area_wgs84=box(24.9400, 60.1668, 24.9510, 60.1720), altitude_m=60.0,
        sorties=(sortie(0, "M30T-01", "DOCK-A", s0_legs), sortie(1, "M3TD-01", "DOCK-B", s1_legs)),
        parameters={"timing": TIMING},  # the legs' times are the case's own (chosen against the zones' windows)
    )


CASES = {
    "rules_demo_morning": (datetime(2026, 12, 4, 10, 0, tzinfo=timezone.utc), {}),
    "rules_demo_afternoon": (datetime(2026, 12, 4, 15, 0, tzinfo=timezone.utc), {}),
    "rules_demo_evening": (datetime(2026, 12, 4, 19, 0, tzinfo=timezone.utc), {"HELX002": "ANSP-HEL-2026-118"}),
}


@pytest.fixture(scope="module")
def demo():  # type: ignore[no-untyped-def]
    return load_world(DEMO_WORLD_DIR), load_rules(RULES_FILE)


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden_verdicts(case: str, demo, golden) -> None:  # type: ignore[no-untyped-def]
    world, rules = demo
    start, auth = CASES[case]
    ctx = EvaluationContext(now=NOW, required_sensors=frozenset({"THERMAL_CAMERA"}), authorisations=auth)
    verdict = evaluate(demo_plan(start), world, rules, context=ctx)
    text = json.dumps(verdict.to_dict(), ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    golden.check(case, "verdict.json", text)
    # the same inputs give the same bytes
    again = evaluate(demo_plan(start), world, rules, context=ctx)
    assert json.dumps(again.to_dict(), ensure_ascii=False, indent=2, sort_keys=True) + "\n" == text


def test_helx003_only_when_it_applies(demo) -> None:  # type: ignore[no-untyped-def]
    world, rules = demo
    ctx = EvaluationContext(now=NOW, required_sensors=frozenset({"THERMAL_CAMERA"}))
    zones = {
        case: {f.zone_id for f in evaluate(demo_plan(start), world, rules, context=ctx).findings if f.zone_id}
        for case, (start, _) in CASES.items()
    }
    assert "HELX003" not in zones["rules_demo_morning"]
    assert "HELX003" in zones["rules_demo_afternoon"] and "HELX003" in zones["rules_demo_evening"]
    assert {"HELX001", "HELX002"} <= zones["rules_demo_morning"]
    # a sortie starting one hour later on Saturday 23:00 UTC: outside the 14–22 slot
    late = evaluate(demo_plan(datetime(2026, 12, 5, 22, 0, tzinfo=timezone.utc) + timedelta(minutes=1)), world, rules, context=ctx)
    assert "HELX003" not in {f.zone_id for f in late.findings}
