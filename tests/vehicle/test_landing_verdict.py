"""A recall home may end at another dock of the mission: ArduCopter's RTL flies to the nearest rally point or home.

Seen on the real ArduCopter 4.6.3 SITL (docs/flight.md, "Checked on ArduCopter 4.6.3 SITL"): recalled from a hydrant
round near DOCK-B, the vehicle returned to the mission's rally point at DOCK-B (``ModeRTL::build_path`` →
``AP_Rally::calc_best_rally_or_home_location``), 916 m from its own DOCK-A, and the flight ended ABORTED "recalled to
its dock but landed 916 m from the dock". The mission's rally points are the tenant's docks
(``planner.output.mission_items.rally_items``); a landing at one of them is a recall that came home.
"""

from __future__ import annotations

import pytest

from flows.vehicle.flight_record import DroneFlight, Expectation
from flows.vehicle.landing_verdict import judge_landing

DOCK_A = (60.1652, 24.9449)
DOCK_B = (60.17328, 24.948)


def _landed_at(lat: float, lon: float) -> DroneFlight:
    f = DroneFlight("M30T-01", "tcp:127.0.0.1:5760", 0, nav_total=4, mode="RTL", reached=[1, 2])
    f.recall = {"t_s": 900.0, "mode": "RTL", "seq": 3, "lat": 60.1719, "lon": 24.949}
    f.track = [[900.0, 24.949, 60.1719, 40.0], [1000.0, lon, lat, 0.0]]
    return f


@pytest.mark.parametrize(("where", "status"), [(DOCK_A, "RECALLED"), (DOCK_B, "RECALLED"),
                                               ((60.1690, 24.9400), "ABORTED")])
def test_a_recall_home_lands_at_its_dock_or_a_rally_point_of_the_mission(where: tuple[float, float],
                                                                          status: str) -> None:
    exp = Expectation("M30T-01", 0, "tcp:127.0.0.1:5760", "ardupilot", (1, 2, 3, 4), 1000.0, 600.0, 50.0, 0.2, 263.2,
                      dock_lat=DOCK_A[0], dock_lon=DOCK_A[1], rally=(DOCK_A, DOCK_B))
    state, why = judge_landing(_landed_at(*where), exp, recalled=True)
    assert state == status, why
    if where == DOCK_B:
        assert "nearest rally point" in why and "916 m from its own dock" in why, why


def test_recall_wait_judges_home_by_the_followers_rule() -> None:
    """``sortie recall --wait`` records its own end when it saw the landing; it judged only the sortie's dock and
    said ABORTED "landed 916 m from dock" where the follower says RECALLED. Now both read ``returned_home``."""
    from types import SimpleNamespace

    from flows.usecases.recalling import _verdict

    dock = SimpleNamespace(id="DOCK-A", lat=DOCK_A[0], lon=DOCK_A[1])
    at_b = SimpleNamespace(lat=DOCK_B[0], lon=DOCK_B[1], mode="RTL")
    ok, why, off = _verdict("M30T-01", at_b, dock, (DOCK_A, DOCK_B), land_here=False)
    assert ok is True and "nearest rally point" in why and round(off or 0) == 916, why
    f_state, f_why = judge_landing(_landed_at(*DOCK_B), Expectation(
        "M30T-01", 0, "tcp:127.0.0.1:5760", "ardupilot", (1, 2, 3, 4), 1000.0, 600.0, 50.0, 0.2, 263.2,
        dock_lat=DOCK_A[0], dock_lon=DOCK_A[1], rally=(DOCK_A, DOCK_B)), recalled=True)
    assert f_state == "RECALLED" and why.split(" (dock")[0].removeprefix("M30T-01 ") in f_why
    ok, why, _ = _verdict("M30T-01", at_b, dock, (DOCK_A,), land_here=False)  # no rally point there: not home
    assert ok is False and "916 m from the dock" in why, why


def test_without_rally_points_another_dock_is_not_home() -> None:
    exp = Expectation("M30T-01", 0, "tcp:127.0.0.1:5760", "ardupilot", (1, 2, 3, 4), 1000.0, 600.0, 50.0, 0.2, 263.2,
                      dock_lat=DOCK_A[0], dock_lon=DOCK_A[1])
    state, why = judge_landing(_landed_at(*DOCK_B), exp, recalled=True)
    assert state == "ABORTED" and "916 m from the dock" in why, why


def test_a_failsafe_whose_announcement_was_lost_is_named_by_its_clearing() -> None:
    """The GCS failsafe fires in a telemetry gap, where its "GCS Failsafe" text is lost; "GCS Failsafe Cleared"
    (``Copter::failsafe_gcs_off_event``) arrives after it and names it (seen on the 4.6.3 SITL)."""
    from flows.vehicle.failsafes import failsafe_cleared, failsafe_of_text

    assert failsafe_of_text("GCS Failsafe Cleared") is None  # a clearing is no new failsafe
    assert failsafe_cleared("GCS Failsafe Cleared") == "FAILSAFE_GCS"
    assert failsafe_cleared("Radio Failsafe Cleared") == "FAILSAFE_RADIO"
    assert failsafe_cleared("GCS Failsafe") is None and failsafe_cleared("Mission: 12 WP") is None
