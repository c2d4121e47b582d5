"""The simulator's ArduCopter against two flights of a real ArduCopter 4.6.3 (SITL) flying sortie's plans.

``recorded/*.json`` hold what the vehicle was sent (the mission, rebuilt from the plan),
what it said (STATUSTEXT with its clock) and how fast it went (the 5 Hz track); see
``recorded/README.md``. The simulator flies the same mission with the same parameters
(ArduCopter defaults; SIM_SPEED_MAX 10 m/s, the speed SITL's "+" frame reached on every
fast leg) and must agree on the whole and on each item — the recorded flight is what the
model was checked on (tuned on: the 10 m/s), not held out.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest

from flows.sim.offline import OfflineRun, fly_mission
from planner.output.mission_items import MissionItem

RECORDED = Path(__file__).parent / "recorded"
SITL_FRAME = {"SIM_SPEED_MAX": 10.0}  # SITL's "+" quad at ANGLE_MAX 30°: 10.0 m/s on every leg asked to go faster


def _load(name: str) -> tuple[list[MissionItem], dict[str, Any]]:
    data = json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8"))
    items = [MissionItem(seq=d["seq"], command=d["command"], frame=d["frame"], lat=d["lat"], lon=d["lon"],
                         alt_m=d["alt_m"], param1=d["params"][0], param2=d["params"][1], param3=d["params"][2],
                         param4=d["params"][3], autocontinue=d["autocontinue"]) for d in data["mission"]]
    return items, data


def _reached_times(texts: list[tuple[float, str]], start: float) -> dict[str, float]:
    return {s: t - start for t, s in texts if s.startswith("Reached command #")}


@pytest.fixture(scope="module")
def patrol() -> tuple[OfflineRun, dict[str, Any]]:
    items, data = _load("lane_patrol")
    return fly_mission(items, params=SITL_FRAME), data


def test_the_patrol_takes_as_long_as_the_real_vehicle_took(patrol: tuple[OfflineRun, dict[str, Any]]) -> None:
    run, data = patrol
    texts = [(float(t), s) for t, s in data["texts"]]
    # the monitor attached during the climb: compare from the end of the take-off ("Mission: 2") to the disarm
    real = next(t for t, s in texts if s == "Disarming motors") - next(t for t, s in texts if s.startswith("Mission: 2 "))
    start = run.first("Mission: 2 ")
    assert start is not None and run.disarm_t is not None
    sim = run.disarm_t - start
    assert abs(sim - real) / real < 0.10, (sim, real)
    assert abs(run.disarm_t - data["monitor"]["duration_s"]) / data["monitor"]["duration_s"] < 0.10


def test_the_patrol_says_what_the_real_vehicle_said_in_its_order(patrol: tuple[OfflineRun, dict[str, Any]]) -> None:
    """AP_Mission's sequencing: the same "Mission: N" texts, so the same DO commands skipped (a DO_CHANGE_SPEED after
    a zero-length leg never runs) and the same waypoints reached."""
    run, data = patrol
    real = [s for _, s in data["texts"] if s.startswith(("Mission: ", "Reached command #"))]
    assert real[-1] == "Mission: 1 Takeoff"  # said after the disarm, when the mission resets (flows.sim.flight)
    sim = [s for _, s in run.texts if s.startswith(("Mission: ", "Reached command #"))]
    assert sim[1:] == real[:-1]  # the recording starts after "Mission: 1 Takeoff"


def test_each_patrol_item_takes_as_long_as_it_did(patrol: tuple[OfflineRun, dict[str, Any]]) -> None:
    run, data = patrol
    real = _reached_times([(float(t), s) for t, s in data["texts"]], next(float(t) for t, s in data["texts"]
                                                                         if s.startswith("Mission: 2 ")))
    start = run.first("Mission: 2 ")
    assert start is not None
    sim = _reached_times(run.texts, start)
    keys = [k for k in real if k in sim]
    assert len(keys) == len(real)
    steps = []
    prev_r = prev_s = 0.0
    for k in keys:
        steps.append(abs((sim[k] - prev_s) - (real[k] - prev_r)))
        prev_r, prev_s = real[k], sim[k]
    assert statistics.median(steps) < 0.3  # seconds per item (the record's clock has 0.2 s steps)
    assert max(steps) < 2.0


def test_the_patrol_dawdles_as_the_real_vehicle_did(patrol: tuple[OfflineRun, dict[str, Any]]) -> None:
    """The speed profile, not just the total: slow at almost every waypoint (real: median 2.6 m/s, 41 % under 2)."""
    run, data = patrol
    real = [s for _, s, alt in data["track_speed"] if alt > 0.5]
    sim = run.ground_speeds()
    assert abs(statistics.median(sim) - statistics.median(real)) < 0.8
    slow_real = sum(s < 2.0 for s in real) / len(real)
    slow_sim = sum(s < 2.0 for s in sim) / len(sim)
    assert abs(slow_sim - slow_real) < 0.08


def test_the_survey_sortie_takes_as_long_as_it_did() -> None:
    items, data = _load("area_survey")
    run = fly_mission(items, params=SITL_FRAME)
    texts = [(float(t), s) for t, s in data["texts"]]
    # the record starts at the end of the first transit ("Reached command #4")
    real = next(t for t, s in texts if s == "Disarming motors") - next(t for t, s in texts if s == "Reached command #4")
    start = run.first("Reached command #4")
    assert start is not None and run.disarm_t is not None
    assert abs((run.disarm_t - start) - real) / real < 0.05, (run.disarm_t - start, real)
    assert abs(run.disarm_t - data["monitor"]["duration_s"]) / data["monitor"]["duration_s"] < 0.10
