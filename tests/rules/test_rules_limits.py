"""rules.derived_limits: the planner's limits are the strictest figures of the rule set's block rules."""

from __future__ import annotations

import dataclasses

import pytest

from planner.planning_limits import EnergyReserve, PlanningLimits
from planner.world.model import WorldDefaults
from rules.derived_limits import planning_limits
from rules.loading import parse_rules
from testkit import world


def _rules(*lines: str):
    return parse_rules("version: 1\nrules:\n" + "".join(f"- {line}\n" for line in lines))


def test_the_strictest_block_rule_of_each_kind_sets_the_limit() -> None:
    rs = _rules(
        "{id: a1, kind: geozone_clearance, severity: block, params: {buffer_m: 20}}",
        "{id: a2, kind: geozone_clearance, severity: block, params: {buffer_m: 35}, when: 'phase == \"dispatch\"'}",
        "{id: a3, kind: geozone_clearance, severity: warn, params: {buffer_m: 500}}",
        "{id: c1, kind: altitude_ceiling, severity: block, params: {ceiling_ft: 400, floor_m: 10}}",
        "{id: c2, kind: altitude_ceiling, severity: block, params: {ceiling_m: 90, floor_m: 5}}",
        "{id: b1, kind: battery_reserve, severity: block, params: {reserve_fraction: 0.2}}",
        "{id: b2, kind: battery_reserve, severity: block, params: {reserve_fraction: 0.3, cold_derating: 0.9}}",
        "{id: w1, kind: weather, severity: block, params: {checks: [wind], wind_margin_mps: 3}}",
        "{id: w2, kind: weather, severity: block, params: {checks: [wind, gust], wind_margin_mps: 1, gust_margin_mps: -2}}",
        "{id: w3, kind: weather, severity: warn, params: {checks: [wind], wind_margin_mps: 9}}",
    )
    lim = planning_limits(rs)
    assert lim.safety_margin_m == 35.0  # a guarded block rule counts (stricter, never looser)
    assert lim.ceiling_m == 90.0 and lim.floor_m == 10.0
    assert lim.reserves == (
        EnergyReserve(0.2, cold_below_c=0.0, cold_derating=0.8, derate_when_temperature_unknown=True),
        EnergyReserve(0.3, cold_below_c=0.0, cold_derating=0.9, derate_when_temperature_unknown=True),
    )
    assert (lim.wind_margin_mps, lim.gust_margin_mps) == (3.0, -2.0)
    # usable energy: the least any reserve allows — cold: 0.8·0.8 = 0.64 vs 0.7·0.9 = 0.63
    assert lim.usable_energy_wh(100.0, 100.0, [-5.0]) == pytest.approx(63.0)
    assert lim.usable_energy_wh(100.0, 100.0, [5.0]) == pytest.approx(70.0)


def test_an_empty_rule_set_sets_no_limit_and_warn_rules_none_either() -> None:
    rs = _rules("{id: c, kind: altitude_ceiling, severity: warn, params: {ceiling_m: 60}}")
    assert planning_limits(rs) == PlanningLimits()
    assert PlanningLimits().usable_energy_wh(100.0, 50.0, []) == 50.0


def test_site_limits_of_the_world_only_tighten() -> None:
    rs = _rules(
        "{id: c, kind: altitude_ceiling, severity: block, params: {ceiling_m: 120}}",
        "{id: b, kind: battery_reserve, severity: block, params: {reserve_fraction: 0.25}}",
    )
    site = dataclasses.replace(world(), defaults=WorldDefaults(altitude_m=50, ceiling_m=80, reserve_fraction=0.1))
    lim = planning_limits(rs, site)
    assert lim.ceiling_m == 80.0 and lim.reserve_fraction == 0.25  # the lower ceiling, the larger reserve
    higher = dataclasses.replace(site, defaults=WorldDefaults(altitude_m=50, ceiling_m=150, reserve_fraction=0.4))
    lim = planning_limits(rs, higher)
    assert lim.ceiling_m == 120.0 and lim.reserve_fraction == 0.4


def test_the_flight_altitude_sits_in_the_band() -> None:
    lim = PlanningLimits(ceiling_m=30.0, floor_m=10.0)
    assert lim.altitude_m(None, 40.0) == 30.0 and lim.altitude_m(None, 5.0) == 10.0 and lim.altitude_m(20.0, 40.0) == 20.0
    with pytest.raises(ValueError, match="above the ceiling"):
        lim.altitude_m(31.0, 40.0)
    with pytest.raises(ValueError, match="below the floor"):
        lim.check_altitude(9.0)
