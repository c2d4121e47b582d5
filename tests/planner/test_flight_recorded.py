"""planner.flight against a real ArduCopter 4.6.3: the recorded lane patrol and area survey, leg by leg.

The fixture (``recorded/ardupilot_4_6_3.json``) holds the mission rows sortie uploaded for the two
flights of ``../shared/data/ardupilot-sitl-4.6.3`` and the vehicle's clock of every "Reached command",
of the NAV_LAND and of the disarm. Each leg's time is the gap between two reached commands. The take-off
is not compared: the records' track starts part-way up the climb.

These flights are what the model was checked on while it was written: they are tuned-on, not held-out.
The SITL airframe (``--model +``, ANGLE_MAX 30°) cannot fly faster than 10 m/s (its lean limit against
its drag; ArduPilot's ``_track_scalar_dt`` slows the target to what the vehicle achieves), so speeds are
capped at 10 m/s here as a property of that airframe.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from planner.flight.ardupilot import fly_auto
from planner.flight.params import NavLimits
from planner.output.mission_flight import nav_points
from planner.output.mission_items import MissionItem
from planner.world.model import Dock
from planner.world.nav_params import NavParams

FIXTURE = json.loads((Path(__file__).parent / "recorded" / "ardupilot_4_6_3.json").read_text())
LIMITS = NavLimits.from_params(NavParams(), "ardupilot")  # the SITL ran ArduPilot's defaults
AIRFRAME_MPS = 10.0  # the SITL quad's top speed at ANGLE_MAX 30° (sitl, board 08:10)


def _flown(name: str):
    rec = FIXTURE[name]
    items = tuple(
        MissionItem(seq=s, command=c, frame=f, lat=la, lon=lo, alt_m=al, param1=p1, param2=p2, param3=p3)
        for s, c, f, la, lo, al, p1, p2, p3 in rec["items"]
    )
    dock = Dock("D", "dock", "t", rec["dock"]["lon"], rec["dock"]["lat"], 0.0, 7000.0, 12.0)
    points, seqs = nav_points(items, "ardupilot", dock)
    points = [replace(p, speed_mps=min(p.speed_mps, AIRFRAME_MPS)) if p.speed_mps else p for p in points]
    timeline = fly_auto(points, LIMITS)
    reached = {int(k): v for k, v in rec["reached_t_s"].items()}
    pairs = [(timeline.arrivals_s[i], reached[s]) for i, s in enumerate(seqs) if s in reached]
    return rec, timeline, pairs


@pytest.mark.parametrize("name", ["lane_patrol", "area_survey"])
def test_each_leg_and_the_whole_flight_take_what_the_vehicle_took(name: str) -> None:
    rec, timeline, pairs = _flown(name)
    model = np.diff([m for m, _ in pairs])
    flown = np.diff([r for _, r in pairs])
    err = np.abs(model - flown)
    assert np.median(err) < 0.25, f"median leg error {np.median(err):.2f} s"
    assert np.mean(err) < 0.5, f"mean leg error {np.mean(err):.2f} s"
    # from the first reached waypoint to the disarm: within 3 % (the plan said 463 s for 1,195 s here)
    m0, r0 = pairs[0]
    ratio = (timeline.end_s - m0) / (rec["disarmed_t_s"] - r0)
    assert 0.97 <= ratio <= 1.03, f"model / flown = {ratio:.3f}"


def test_the_patrol_is_slow_for_the_reasons_the_model_says() -> None:
    """Speeds the vehicle got: 12 m/s asked for the first transit (the SITL airframe flies 10 at its lean
    limit), then every later transit at the lanes' 7 m/s (the 12 m/s after a camera-off is dropped)."""
    items = FIXTURE["lane_patrol"]["items"]
    dock = Dock("D", "dock", "t", FIXTURE["lane_patrol"]["dock"]["lon"], FIXTURE["lane_patrol"]["dock"]["lat"], 0.0, 7000.0, 12.0)
    rows = tuple(MissionItem(seq=s, command=c, frame=f, lat=la, lon=lo, alt_m=al, param1=p1, param2=p2, param3=p3)
                 for s, c, f, la, lo, al, p1, p2, p3 in items)
    points, _ = nav_points(rows, "ardupilot", dock)
    speeds = [p.speed_mps for p in points if p.speed_mps is not None]
    assert speeds[0] == 12.0 and set(speeds[1:]) == {7.0}
    planned_12 = sum(1 for r in items if r[1] == 178 and r[7] == 12.0)
    assert planned_12 > 20  # the plan asked for 12 m/s transits more than 20 times


def test_the_landing_takes_what_it_took() -> None:
    rec, timeline, _ = _flown("lane_patrol")
    land = next(v for v in timeline.verticals if v.kind == "descent")
    model = timeline.end_s - land.start_s
    flown = rec["disarmed_t_s"] - rec["land_command_t_s"]
    assert model == pytest.approx(flown, rel=0.05)
