"""A local metric frame per job: the UTM zone of the job's area.

Every metric computation of the planner (coverage sweeps, transits, distances,
buffers) happens in metres in one local frame, chosen once per job from the
centroid of its area, and is turned back into WGS84 lon/lat only at the end.
UTM keeps scale error below 0.04 % inside its 6° zone, far below what a drone
path cares about, and the round trip WGS84 → local → WGS84 is exact to well
under a centimetre (property-tested).

Axis order is always (x=east, y=north) and (lon, lat): the transformers are
built with ``always_xy=True`` so no EPSG axis-order surprise can swap them.

Example::

    >>> frame = LocalFrame.for_point(24.94, 60.17)
    >>> frame.epsg
    32635
    >>> lon, lat = frame.inverse(*frame.forward(24.94, 60.17))
    >>> round(lon, 9), round(lat, 9)
    (24.94, 60.17)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

import numpy as np
import shapely
from pyproj import Transformer
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument

__all__ = ["LocalFrame", "utm_epsg_for"]

G = TypeVar("G", bound=BaseGeometry)

MAX_ABS_LAT_DEG = 84.0  # UTM is defined up to 84°N / 80°S; polar jobs are refused, not mis-projected


def utm_epsg_for(lon: float, lat: float) -> int:
    """EPSG code of the WGS84 UTM zone containing (lon, lat): 326zz north, 327zz south.

    The Norway/Svalbard zone exceptions are ignored on purpose: a neighbouring
    zone is just as accurate for a job a few kilometres across.
    """
    if not (math.isfinite(lon) and math.isfinite(lat)):
        raise InvalidArgument(f"coordinates must be finite numbers, got lon={lon!r}, lat={lat!r}")
    if not -180.0 <= lon <= 180.0 or not -90.0 <= lat <= 90.0:
        raise InvalidArgument(f"lon/lat out of range: lon={lon}, lat={lat} (WGS84 degrees, lon first)")
    if not -80.0 <= lat <= MAX_ABS_LAT_DEG:
        raise InvalidArgument(f"latitude {lat} is outside the UTM band (-80..84): polar jobs are not supported")
    zone = min(60, int(math.floor((lon + 180.0) / 6.0)) + 1)
    return (32600 if lat >= 0 else 32700) + zone


@lru_cache(maxsize=64)
def _transformers(epsg: int) -> tuple[Transformer, Transformer]:
    """(to local, to WGS84) for one zone; pyproj transformers are costly to build, so cached."""
    fwd = Transformer.from_crs("EPSG:4326", f"EPSG:{epsg}", always_xy=True)
    inv = Transformer.from_crs(f"EPSG:{epsg}", "EPSG:4326", always_xy=True)
    return fwd, inv


@dataclass(frozen=True)
class LocalFrame:
    """A metric frame (UTM, metres, x east / y north) for one job.

    Equal frames compare equal by ``epsg``; the pyproj transformers are kept
    privately and excluded from equality and repr.
    """

    epsg: int
    _fwd: Transformer = field(init=False, repr=False, compare=False, hash=False)
    _inv: Transformer = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not (32601 <= self.epsg <= 32660 or 32701 <= self.epsg <= 32760):
            raise InvalidArgument(f"EPSG:{self.epsg} is not a WGS84 UTM zone (32601-32660, 32701-32760)")
        fwd, inv = _transformers(self.epsg)
        object.__setattr__(self, "_fwd", fwd)
        object.__setattr__(self, "_inv", inv)

    @classmethod
    def for_point(cls, lon: float, lat: float) -> LocalFrame:
        """The frame of the UTM zone containing (lon, lat)."""
        return cls(utm_epsg_for(float(lon), float(lat)))

    @classmethod
    def for_geometry(cls, geom_wgs84: BaseGeometry) -> LocalFrame:
        """The frame of the UTM zone containing the centroid of a lon/lat geometry."""
        if geom_wgs84 is None or geom_wgs84.is_empty:
            raise InvalidArgument("cannot choose a local frame for an empty geometry")
        c = geom_wgs84.centroid
        if c.is_empty:  # degenerate collections
            x, y = shapely.get_coordinates(geom_wgs84)[0]
            return cls.for_point(float(x), float(y))
        return cls.for_point(c.x, c.y)

    def forward(self, lon: float, lat: float) -> tuple[float, float]:
        """WGS84 (lon, lat) degrees → local (x, y) metres."""
        x, y = self._fwd.transform(lon, lat)
        return float(x), float(y)

    def inverse(self, x: float, y: float) -> tuple[float, float]:
        """Local (x, y) metres → WGS84 (lon, lat) degrees."""
        lon, lat = self._inv.transform(x, y)
        return float(lon), float(lat)

    def forward_many(self, lonlat: np.ndarray) -> np.ndarray:
        """Vectorised ``forward`` over an (n, 2) array."""
        a = np.asarray(lonlat, dtype=float).reshape(-1, 2)
        x, y = self._fwd.transform(a[:, 0], a[:, 1])
        return np.column_stack([x, y])

    def inverse_many(self, xy: np.ndarray) -> np.ndarray:
        """Vectorised ``inverse`` over an (n, 2) array."""
        a = np.asarray(xy, dtype=float).reshape(-1, 2)
        lon, lat = self._inv.transform(a[:, 0], a[:, 1])
        return np.column_stack([lon, lat])

    def to_local(self, geom: G) -> G:
        """A lon/lat geometry in local metres (same type)."""
        return shapely.transform(geom, self.forward_many)

    def to_wgs84(self, geom: G) -> G:
        """A local geometry back in lon/lat (same type)."""
        return shapely.transform(geom, self.inverse_many)
