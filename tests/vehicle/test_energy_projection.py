"""The energy guard's projection counts the part of the current leg already flown (issue 43).

Measured on the real ArduCopter 4.6.3 SITL flying a three-sortie survey through ``sortie server``: 23.7 s into a
29.2 s sweep (item 7 → 8) sortie 1 had used 16.7 % of its pack; the plan said 12.1 % at item 7 and 18.8 % at
item 8. Compared with item 7 alone the consumption looked ×1.38 the plan, the projection fell under the reserve
and the authority recalled a sortie that was flying to plan (its twin sortie 0 landed with 45 %).
"""

from __future__ import annotations

import pytest

from flows.vehicle.energy_projection import EnergyProfile, ReachedClock, project

# sortie 1 of that survey, as planned (planner.output.sortie_flight.item_figures; 40 Wh pack, 25 % reserve)
PROFILE = EnergyProfile(seqs=(1, 2, 4, 7, 8, 9), time_s_at=(21.4, 21.4, 37.1, 41.7, 70.9, 75.6),
                        energy_wh_at=(2.88, 2.88, 4.36, 4.86, 7.52, 8.02), total_s=214.15, total_wh=21.905,
                        battery_wh=40.0, reserve_fraction=0.25)


def test_a_vehicle_flying_to_plan_along_a_long_leg_is_projected_to_land_with_its_plan() -> None:
    p = project(PROFILE, start_pct=99.0, now_pct=82.3, reached_seq=7, used_wh=0.167 * 40.0, since_s=23.7)
    assert p.planned_used_pct == pytest.approx(100 * (4.86 + (7.52 - 4.86) * 23.7 / 29.2) / 40.0, abs=0.01)
    assert p.ratio == pytest.approx(0.95, abs=0.01)
    assert not p.breached and p.landing_pct > 45.0, p.to_dict()


def test_the_leg_counts_no_more_than_up_to_its_next_item_until_that_is_reached() -> None:
    late = project(PROFILE, start_pct=99.0, now_pct=70.0, reached_seq=7, used_wh=0.29 * 40.0, since_s=300.0)
    assert late.planned_used_pct == pytest.approx(100 * 7.52 / 40.0)  # item 8's, not beyond
    assert late.breached  # stuck on a leg, spending: the guard still sees it


def test_before_the_first_item_the_take_off_is_counted_from_the_take_off() -> None:
    assert PROFILE.planned_wh(None, 10.7) == pytest.approx(2.88 / 2)
    assert PROFILE.planned_wh(None) == 0.0 and PROFILE.planned_wh(9, 50.0) == 8.02  # nothing planned after the last


def test_the_leg_is_timed_from_when_its_start_was_first_seen_reached() -> None:
    clock = ReachedClock()
    assert clock.since(None, 50.0, None) == 0.0 and clock.since(None, 50.0, 40.0) == 10.0
    assert clock.since(7, 100.0, 40.0) == 0.0 and clock.since(7, 123.7, 40.0) == pytest.approx(23.7)
    assert clock.since(8, 130.0, 40.0) == 0.0
