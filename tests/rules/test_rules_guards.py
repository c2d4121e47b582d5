"""``when:`` guards: typed at load time, pure (no clock, no randomness), never eval, fail towards applying."""

from __future__ import annotations

import pytest

from rules.evaluate import evaluate
from rules.loading import parse_rules
from rules.guards import GUARD_DEFAULTS, GUARD_SYMBOLS, GuardError, compile_guard
from testkit import T0, ctx, simple_plan, sortie, plan, leg, world


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("phase < 3", "data type mismatch"),
        ("nope == 1", "unknown symbol 'nope'"),
        ("phase ==", "syntax error"),
        ("$now > $today", "not allowed"),
        ("$random() < 0.5", "not allowed"),
        ("__import__('os')", ""),
    ],
)
def test_bad_guards_fail_at_load(text: str, fragment: str) -> None:
    with pytest.raises(GuardError, match=fragment or None):
        compile_guard(text)


def test_every_symbol_has_a_default_of_its_type() -> None:
    assert set(GUARD_SYMBOLS) == set(GUARD_DEFAULTS)
    for name in GUARD_SYMBOLS:
        compile_guard(f"{name} == {name}")


def test_guard_selects_sorties() -> None:
    rules = parse_rules(
        """version: 1
rules:
  - id: night-ceiling
    kind: altitude_ceiling
    severity: block
    when: start_hour_utc >= 20 or weekday_utc in ["SAT", "SUN"]
    params: {ceiling_m: 60}
""",
        "t.yaml",
    )
    legs = [leg([(0, 0, 0), (0, 0, 80)], kind="takeoff"), leg([(0, 0, 80), (0, 0, 0)], kind="landing")]
    day = plan([sortie(legs, start_at=T0)])  # Friday 10:00 UTC
    night = plan([sortie(legs, start_at=T0.replace(hour=21))])
    assert evaluate(day, world(), rules, context=ctx()).findings == ()
    assert evaluate(night, world(), rules, context=ctx()).blocked


def test_guard_on_required_sensors_and_capabilities() -> None:
    rules = parse_rules(
        """version: 1
rules:
  - id: thermal-low
    kind: altitude_ceiling
    severity: warn
    when: '"THERMAL_CAMERA" in required_sensors and "THERMAL_CAMERA" in capabilities'
    params: {ceiling_m: 40}
""",
        "t.yaml",
    )
    p = simple_plan([(0, 0, 50), (10, 0, 50)])
    assert evaluate(p, world(), rules, context=ctx()).findings == ()
    v = evaluate(p, world(), rules, context=ctx(sensors=("THERMAL_CAMERA",)))
    assert {f.rule_id for f in v.findings} == {"thermal-low"} and [f.leg_index for f in v.findings] == [0, 1, 2]


def test_guard_failing_at_run_time_counts_as_true() -> None:
    # comparing an unknown temperature (NaN) raises inside rule-engine: the rule applies
    g = compile_guard("min_temperature_c < 0")
    assert g.matches(dict(GUARD_DEFAULTS)) is True
