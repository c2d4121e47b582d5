"""Latitude/longitude ↔ metres north/east of the vehicle's EKF origin.

ArduPilot navigates in a local frame: ``Location::get_vector_from_origin_NEU`` turns a
mission location into centimetres north/east of the EKF origin with a flat-earth
scale (``Location::LOCATION_SCALING_FACTOR`` and ``longitude_scale``). The simulator
does the same in metres; within a dock's range (a few km) the error is centimetres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["LocalFrame", "M_PER_DEG"]

M_PER_DEG = 111319.4908  # LOCATION_SCALING_FACTOR_INV (libraries/AP_Common/Location.h), metres per degree × 1e7 / 1e7


@dataclass(frozen=True)
class LocalFrame:
    """The EKF origin (where the vehicle booted) and the conversions around it."""

    lat: float
    lon: float

    @property
    def _lon_scale(self) -> float:
        return max(math.cos(math.radians(self.lat)), 0.01)  # Location::longitude_scale

    def to_ne(self, lat: float, lon: float) -> tuple[float, float]:
        return ((lat - self.lat) * M_PER_DEG, (lon - self.lon) * M_PER_DEG * self._lon_scale)

    def to_latlon(self, north: float, east: float) -> tuple[float, float]:
        return (self.lat + north / M_PER_DEG, self.lon + east / (M_PER_DEG * self._lon_scale))

    def distance_m(self, lat1: float, lon1: float, lat2: float, lon2: float) -> float:
        n1, e1 = self.to_ne(lat1, lon1)
        n2, e2 = self.to_ne(lat2, lon2)
        return math.hypot(n2 - n1, e2 - e1)
