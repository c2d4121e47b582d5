"""The limits a stated number is checked against, given by the caller as plain values.

intents/ does not know the world or the rule set; the caller (``flows``) passes
the minimum safe height and the ceiling it plans with (world defaults, the rule
set's ``altitude_ceiling`` ceiling and floor). A stated altitude outside them is
a question, never clamped and never replaced by a default. ``ground_amsl_m`` lets a
height said above sea level (海拔, AMSL) be converted to one above ground; without it
such a height is asked about.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FEET_TO_M", "Limits"]

FEET_TO_M = 0.3048


@dataclass(frozen=True)
class Limits:
    """Altitude bounds in metres above ground (the defaults are the Intent's historical 10–120 m) and the
    coverage targets a survey may be asked for (the defaults are ``planner.job``'s range, 0.5–1.0)."""

    min_altitude_m: float = 10.0
    max_altitude_m: float = 120.0
    min_coverage: float = 0.5
    max_coverage: float = 1.0
    ground_amsl_m: float | None = None  # the ground's height above sea level over the area, when the caller knows it

    def __post_init__(self) -> None:
        if not 0 <= self.min_altitude_m <= self.max_altitude_m:
            raise ValueError(f"altitude limits {self.min_altitude_m}–{self.max_altitude_m} m are not a range")
        if not 0 < self.min_coverage <= self.max_coverage <= 1:
            raise ValueError(f"coverage limits {self.min_coverage}–{self.max_coverage} are not a range in (0, 1]")

    def altitude_ok(self, altitude_m: float) -> bool:
        return self.min_altitude_m <= altitude_m <= self.max_altitude_m

    def coverage_ok(self, share: float) -> bool:
        return self.min_coverage <= share <= self.max_coverage
