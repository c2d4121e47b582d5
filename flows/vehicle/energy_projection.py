"""The battery a flying vehicle will land with: the consumption so far, applied to the rest of its route.

Why: the plan's energy is a model; the vehicle's battery is the fact. A patrol
that spends 11 % where the plan expected 1 % (issue 43) will not land with the
reserve the plan promised, and waiting for the battery alarm is too late. So,
while a sortie flies, the authority projects its battery at landing:

    ratio       = used so far / planned so far          (1 until there is evidence: MIN_EVIDENCE_*)
    landing_pct = battery now − planned rest × ratio   (as % of the drone's battery)

"Planned so far" is the plan's cumulative energy at the last navigation item
the vehicle reached (``EnergyProfile``: per nav item, from the sortie's modelled
flight) plus the share of the leg after it that the vehicle has flown since, by
time (capped at the next item: it is not reached yet) — without that share a
long leg looked expensive: on the real ArduCopter SITL a survey sortie 27 s into
a 29 s sweep had used 16.7 % where the plan at the sweep's start said 12.1 %
(×1.38), and the authority recalled a sortie that would have landed with 45 %;
"used so far" is what the vehicle's battery reports (consumed Wh when
it sends them, else its remaining %). The reserve is the plan's reserve fraction
of the charge at take-off (the battery-reserve rule keeps
``reserve_fraction × battery_pct`` unspent). When the projection falls under it
the authority recalls the vehicle (``flows.usecases.monitoring``); this module
only computes. Pure: no I/O, no clock.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

__all__ = ["EnergyProfile", "Projection", "ReachedClock", "project", "MIN_EVIDENCE_PCT", "MIN_EVIDENCE_SHARE"]

#: The plan must expect at least this much of the battery spent, and this share of the sortie's own energy, before
#: the measured consumption is trusted over the plan: a battery reports whole per cent, and the take-off's fixed
#: cost (spool-up, climb) is not a rate to extrapolate over the route (measured: a survey sortie's take-off and
#: first transit used 8.3 % where the plan said 5.1 %, ×1.63, and its whole flight matched the plan).
MIN_EVIDENCE_PCT = 3.0
MIN_EVIDENCE_SHARE = 0.15


@dataclass(frozen=True)
class EnergyProfile:
    """A sortie's plan per navigation item: on reaching ``seqs[i]`` the vehicle has flown ``time_s_at[i]`` seconds
    since its take-off and spent ``energy_wh_at[i]``; the whole sortie takes ``total_s`` and ``total_wh``."""

    seqs: tuple[int, ...]
    time_s_at: tuple[float, ...]
    energy_wh_at: tuple[float, ...]
    total_s: float
    total_wh: float
    battery_wh: float
    reserve_fraction: float

    def _at(self, values: tuple[float, ...], reached_seq: int | None) -> float:
        if reached_seq is None or not self.seqs:
            return 0.0
        i = bisect.bisect_right(self.seqs, reached_seq) - 1
        return 0.0 if i < 0 else values[i]

    def planned_wh(self, reached_seq: int | None, since_s: float = 0.0) -> float:
        """The plan's energy spent once ``reached_seq`` is reached (0 before the first item), and ``since_s`` seconds
        into the leg after it (at most the next item's)."""
        done = self._at(self.energy_wh_at, reached_seq)
        if since_s <= 0.0 or not self.seqs:
            return done
        i = 0 if reached_seq is None else bisect.bisect_right(self.seqs, reached_seq)  # the next item's index
        if i >= len(self.seqs):
            return done
        t0 = 0.0 if i == 0 else self.time_s_at[i - 1]
        leg_s = self.time_s_at[i] - t0
        if leg_s <= 0.0:
            return done
        return done + (self.energy_wh_at[i] - done) * min(1.0, since_s / leg_s)

    def planned_s(self, reached_seq: int | None) -> float:
        """The plan's flight time once ``reached_seq`` is reached (0 before the first item)."""
        return self._at(self.time_s_at, reached_seq)


@dataclass
class ReachedClock:
    """When, on the vehicle's clock, the follower first saw the highest item reached: how long the vehicle has
    flown the leg after it (``project``'s ``since_s``)."""

    seq: int | None = None
    at_s: float = 0.0

    def since(self, top: int | None, now_s: float, takeoff_s: float | None) -> float:
        """Seconds since ``top`` was first seen reached (since the take-off before the first item)."""
        if top is None:
            return 0.0 if takeoff_s is None else max(0.0, now_s - takeoff_s)
        if self.seq != top:
            self.seq, self.at_s = top, now_s
        return max(0.0, now_s - self.at_s)


@dataclass(frozen=True)
class Projection:
    """One projection of the battery at landing, with what it was made from."""

    landing_pct: float
    reserve_pct: float
    ratio: float
    evidence: bool  # False: too early to trust the measured consumption, the plan's own figures were used
    used_pct: float
    planned_used_pct: float
    planned_left_pct: float
    reached_seq: int | None

    @property
    def breached(self) -> bool:
        return self.landing_pct < self.reserve_pct

    def to_dict(self) -> dict[str, Any]:
        return {"landing_pct": round(self.landing_pct, 1), "reserve_pct": round(self.reserve_pct, 1),
                "ratio": round(self.ratio, 2), "evidence": self.evidence, "used_pct": round(self.used_pct, 1),
                "planned_used_pct": round(self.planned_used_pct, 1), "planned_left_pct": round(self.planned_left_pct, 1),
                "reached_seq": self.reached_seq, "breached": self.breached}

    def sentence(self) -> str:
        """What an operator reads: the projection, the reserve, and why."""
        basis = (f"{self.used_pct:.1f} % of the battery used where the plan expected {self.planned_used_pct:.1f} % "
                 f"(×{self.ratio:.2f})" if self.evidence else "the plan's own figures (too early to measure)")
        return (f"battery projected at {self.landing_pct:.1f} % on landing against a reserve of "
                f"{self.reserve_pct:.1f} %: {basis}, {self.planned_left_pct:.1f} % of the battery still planned "
                f"after item {self.reached_seq if self.reached_seq is not None else '–'}")


def project(profile: EnergyProfile, *, start_pct: float, now_pct: float, reached_seq: int | None,
            used_wh: float | None = None, since_s: float = 0.0) -> Projection:
    """The battery at landing if the rest of the route costs what the route so far cost, relative to the plan.

    ``start_pct``/``now_pct``: the vehicle's remaining charge at take-off and now; ``used_wh``: the energy it
    reports consumed since take-off (more precise than whole per cent), when it reports it; ``since_s``: the
    vehicle's seconds since it reached ``reached_seq`` (since its take-off before the first item).
    """
    battery_wh = max(profile.battery_wh, 1e-9)
    planned_so_far_wh = profile.planned_wh(reached_seq, since_s)
    planned_used_pct = planned_so_far_wh / battery_wh * 100.0
    planned_left_pct = max(profile.total_wh - planned_so_far_wh, 0.0) / battery_wh * 100.0
    if used_wh is not None and used_wh > 0:
        measured = used_wh / battery_wh * 100.0
    else:
        measured = max(start_pct - now_pct, 0.0)
    evidence = planned_used_pct >= max(MIN_EVIDENCE_PCT, MIN_EVIDENCE_SHARE * profile.total_wh / battery_wh * 100.0)
    ratio = measured / planned_used_pct if evidence else 1.0
    return Projection(landing_pct=now_pct - planned_left_pct * ratio,
                      reserve_pct=profile.reserve_fraction * start_pct, ratio=ratio, evidence=evidence,
                      used_pct=measured, planned_used_pct=planned_used_pct, planned_left_pct=planned_left_pct,
                      reached_seq=reached_seq)
