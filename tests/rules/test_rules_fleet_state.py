"""capability_required and drone_available: sensors on board, ONLINE, fresh telemetry."""

from __future__ import annotations

from datetime import timedelta

import pytest

from rules.evaluate import evaluate
from rules.loading import parse_rules
from testkit import T0, ctx, drone, one_rule, simple_plan, world

PLAN = simple_plan([(0, 0, 50), (100, 0, 50)])


def test_capability_present_passes_and_missing_blocks() -> None:
    rules = one_rule("capability_required")
    assert evaluate(PLAN, world(), rules, context=ctx(sensors=("THERMAL_CAMERA",))).findings == ()
    v = evaluate(PLAN, world(), rules, context=ctx(sensors=("THERMAL_CAMERA", "LIDAR", "SPEAKER")))
    (f,) = v.findings
    assert v.blocked and f.measured == "LIDAR, SPEAKER" and f.unit == "sensors"
    assert "LIDAR" in f.message_en and "缺少" in f.message_zh


def test_capability_always_required() -> None:
    rules = one_rule("capability_required", params="{always_required: [SPOTLIGHT]}")
    assert evaluate(PLAN, world(), rules, context=ctx()).blocked


@pytest.mark.parametrize(("age_s", "blocked"), [(299.0, False), (300.0, False), (301.0, True)])
def test_telemetry_age_boundary(age_s: float, blocked: bool) -> None:
    w = world(drones=[drone(last_telemetry_at=T0 - timedelta(seconds=age_s))])
    v = evaluate(PLAN, w, one_rule("drone_available", params="{max_telemetry_age_s: 300}"), context=ctx())
    assert v.blocked is blocked
    if blocked:
        assert (v.findings[0].measured, v.findings[0].limit, v.findings[0].unit) == (301.0, 300.0, "s")


@pytest.mark.parametrize("status", ["OFFLINE", "MAINTENANCE", "IN_FLIGHT"])
def test_status_not_online_blocks(status: str) -> None:
    w = world(drones=[drone(status=status)])
    v = evaluate(PLAN, w, one_rule("drone_available"), context=ctx())
    assert v.blocked and v.findings[0].measured == status and v.findings[0].limit == "ONLINE"


def test_unknown_drone_blocks_as_a_finding() -> None:
    v = evaluate(PLAN, world(drones=[drone("X9")]), one_rule("drone_available"), context=ctx())
    assert v.blocked and v.findings[0].measured == "UNKNOWN"


def test_dispatch_guard_rechecks_with_a_new_now() -> None:
    rules = parse_rules(
        """version: 1
rules:
  - {id: online, kind: drone_available, severity: block, params: {max_telemetry_age_s: 300}}
  - id: dispatch-fresh
    kind: drone_available
    severity: block
    when: phase == "dispatch"
    params: {max_telemetry_age_s: 60}
""",
        "t.yaml",
    )
    w = world(drones=[drone(last_telemetry_at=T0 - timedelta(seconds=120))])
    assert not evaluate(PLAN, w, rules, context=ctx(phase="plan")).blocked
    v = evaluate(PLAN, w, rules, context=ctx(phase="dispatch"))
    assert [f.rule_id for f in v.findings] == ["dispatch-fresh"]
    # a later dispatch sees older telemetry: both rules block
    later = evaluate(PLAN, w, rules, context=ctx(now=T0 + timedelta(minutes=10), phase="dispatch"))
    assert [f.rule_id for f in later.findings] == ["dispatch-fresh", "online"]
