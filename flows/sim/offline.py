"""Fly a stored mission with the simulator's autopilot models alone: no link, no wall clock.

The MAVLink simulator (``flows.sim.vehicle``) steps the same models on its clock; this
runs them as fast as the CPU allows, to compare the models with recorded flights
(``tests/sim``, ``bench/sim_validation.py``) and the SITL corpus. A run starts as a
launched vehicle does (AUTO from the first item, on the ground at home) and ends when
the vehicle disarms, or at ``max_s``. Steps as ``flows.sim.flight.SimFlight`` does: whole
``step_s`` slices, the autopilot's loop period right after the mission moved on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from flows.sim.ardupilot_mission import StoredCommand, store
from flows.sim.copter import CopterModes
from flows.sim.copter_motion import Body
from flows.sim.local_frame import LocalFrame
from flows.sim.px4 import Px4Modes
from flows.sim.px4_mission import store_px4
from flows.sim.sim_params import DEFAULTS
from planner.errors import InvalidArgument
from planner.output.mission_items import MissionItem

__all__ = ["OfflineRun", "fly_mission"]

LOOP_S = 0.0025


@dataclass
class OfflineRun:
    """What a flight said and did, on its own clock (seconds from the launch)."""

    texts: list[tuple[float, str]] = field(default_factory=list)
    reached: list[tuple[float, int]] = field(default_factory=list)
    samples: list[tuple[float, float, float, float, float]] = field(default_factory=list)  # t, north, east, up, speed
    disarm_t: float | None = None

    def first(self, text: str) -> float | None:
        """When ``text`` was first said (a prefix match), or None."""
        return next((t for t, s in self.texts if s.startswith(text)), None)

    def ground_speeds(self) -> list[float]:
        """Horizontal speed at each sample while airborne."""
        return [s for _, _, _, up, s in self.samples if up > 0.5]


def fly_mission(items: Sequence[MissionItem], *, dialect: str = "ardupilot", params: Mapping[str, float] | None = None,
                step_s: float = 0.05, sample_s: float = 0.2, max_s: float = 7200.0) -> OfflineRun:
    """Fly ``items`` (as uploaded; ArduPilot's seq 0 is home) from home at rest; samples every ``sample_s``."""
    p = dict(DEFAULTS[dialect])
    p.update(params or {})
    home = items[0]
    frame = LocalFrame(home.lat, home.lon)
    run = OfflineRun()
    clock = [0.0]

    def say(text: str) -> None:
        run.texts.append((round(clock[0], 4), text))

    def reached(seq: int) -> None:
        run.reached.append((round(clock[0], 4), seq))

    modes: CopterModes | Px4Modes
    if dialect == "ardupilot":
        stored = [store(i) for i in items]
        bad = [s for s in stored if not isinstance(s, StoredCommand)]
        if bad:
            raise InvalidArgument(f"the vehicle would refuse this mission (MAV_MISSION_RESULT {bad[0]})")
        modes = CopterModes(frame, lambda: p, say, reached, mode="GUIDED")
        modes.enter("AUTO", Body(), [s for s in stored if isinstance(s, StoredCommand)])
    else:
        kept = [store_px4(i) for i in items]
        modes = Px4Modes(frame, lambda: p, say, reached, mode="LOITER")
        modes.enter("AUTO", Body(), [k for k in kept if isinstance(k, MissionItem)])
    body = Body()
    small, next_sample = False, 0.0
    while clock[0] < max_s:
        dt = LOOP_S if small else step_s
        before = getattr(getattr(modes, "auto", None), "started", 0)
        modes.step(body, dt)
        clock[0] += dt
        small = getattr(getattr(modes, "auto", None), "started", 0) != before
        if clock[0] >= next_sample:
            next_sample += sample_s
            run.samples.append((round(clock[0], 3), *body.pos, math.hypot(body.vel[0], body.vel[1])))
        if modes.disarm_due:
            run.disarm_t = clock[0]
            break
    return run
