"""The ``Job``: one piece of work the core plans, validated once.

A ``Job`` is what the planner's geometry needs from an intent after the edge has
resolved it: the mission type, the area (WGS84), when, how high, which sensors,
and the survey parameters. Building one validates everything a user could get
wrong (empty or degenerate area, an area over the configured maximum, a swath
<= 0, an altitude <= 0, a naive time) and raises
``planner.errors.InvalidArgument`` with a sentence saying what to fix, so the
algorithms below never see nonsense and never loop on it.

Example::

    >>> from datetime import datetime, timezone
    >>> from shapely.geometry import box
    >>> job = Job("AREA_SURVEY", box(24.94, 60.17, 24.945, 60.172),
    ...           datetime(2026, 12, 1, 9, tzinfo=timezone.utc), altitude_m=60, swath_m=40)
    >>> round(job.area_m2 / 1e4, 1)   # hectares
    6.2
    >>> Job("AREA_SURVEY", box(24.94, 60.17, 24.945, 60.172),
    ...     datetime(2026, 12, 1, 9, tzinfo=timezone.utc), altitude_m=60, swath_m=0)
    Traceback (most recent call last):
    ...
    planner.errors.InvalidArgument: INVALID_ARGUMENT: swath_m must be > 0 m, got 0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

from shapely.geometry import MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.geo.projection import LocalFrame
from planner.world.model import CAPABILITIES, LANE_KINDS, POI_KINDS, Drone

__all__ = [
    "MISSION_TYPES",
    "DEFAULT_COVERAGE_TARGET",
    "MIN_COVERAGE_TARGET",
    "MAX_COVERAGE_TARGET",
    "check_coverage_target",
    "Job",
    "survey_swath_m",
    "MIN_AREA_M2",
]

MISSION_TYPES = frozenset({"FIRE_LANE_PATROL", "AREA_SURVEY", "POINT_INSPECTION"})
MIN_AREA_M2 = 1.0  # anything smaller is a click, not an area


def survey_swath_m(drone: Drone, altitude_m: float, side_overlap: float) -> float:
    """Across-track spacing of survey sweeps from the camera footprint.

    The footprint width on flat ground is ``2·h·tan(hfov/2)``; keeping
    ``side_overlap`` of it shared with the neighbouring sweep leaves a spacing of
    ``footprint·(1 − overlap)``. The camera is assumed mounted with its wide
    (horizontal) field of view across track, as survey apps do.
    """
    if drone.camera is None:
        raise InvalidArgument(
            f"drone {drone.id} ({drone.model}) has no camera model (field of view): "
            "it cannot fly an area survey; pick a drone with a camera or give an explicit swath"
        )
    if not altitude_m > 0:
        raise InvalidArgument(f"altitude_m must be > 0 m, got {altitude_m}")
    if not 0.0 <= side_overlap < 1.0:
        raise InvalidArgument(f"side_overlap must be in [0, 1), got {side_overlap}")
    hfov = drone.camera.hfov_deg
    if not 0.0 < hfov < 180.0:
        raise InvalidArgument(f"drone {drone.id}: camera hfov_deg must be in (0, 180), got {hfov}")
    footprint_m = 2.0 * altitude_m * math.tan(math.radians(hfov) / 2.0)
    return footprint_m * (1.0 - side_overlap)


# The share of the free area the sweeps must image unless the operator asks otherwise. Why 0.99:
# a careful ground-station survey (QGroundControl, Mission Planner: parallel lines clipped to
# the polygon, no holes) leaves the triangles beside every line end on a slanted edge and the
# tips of sharp corners dark, 1-3 % of a real parcel; Fields2Cover, tuned per parcel, reaches
# 0.96-0.99 on real parcels with buildings and on corridors (bench README, issue 19). 0.99
# asks for more than either; beyond it, extra passes image slivers at a few m² per metre
# flown, which ``planner.survey.repair.TARGET_RATE`` refuses, and the plan reports what it reached.
# The operator may ask for another target (``Job.coverage_target``: ``sortie plan --coverage-target``,
# the server's plan body, the Prefect flow's parameter, "cover at least 99.5 %" in the request).
DEFAULT_COVERAGE_TARGET = 0.99
# What an operator may ask for. Below one half the result is no survey of the area (a spot check
# is a point inspection); 1.0 is allowed and is reported as not met wherever a boundary is not
# parallel to some sweep (flat-ended strips cannot fill the corner triangles).
MIN_COVERAGE_TARGET = 0.5
MAX_COVERAGE_TARGET = 1.0


def check_coverage_target(value: object) -> float:
    """``value`` as a coverage target (a share of the free area), or ``InvalidArgument`` naming the range.

    One check for every way in (the CLI's ``--coverage-target``, the server's plan body, the
    Prefect flow's parameter, the Intent, ``Job``), so all refuse alike with INVALID_ARGUMENT.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InvalidArgument(f"coverage target must be a number between {MIN_COVERAGE_TARGET} and {MAX_COVERAGE_TARGET}, got {value!r}")
    if not MIN_COVERAGE_TARGET <= float(value) <= MAX_COVERAGE_TARGET:
        raise InvalidArgument(
            f"coverage target {float(value):g} is out of range: a share of the area between "
            f"{MIN_COVERAGE_TARGET:g} and {MAX_COVERAGE_TARGET:g} (e.g. 0.995 for 99.5 %)"
        )
    return float(value)


@dataclass(frozen=True)
class Job:
    """One job for the planner core. Validated in ``__post_init__``.

    ``altitude_m`` is above ground (AGL); whether it sits inside the rule set's
    ceiling and floor is ``planner.planning_limits.PlanningLimits``'s to say (checked by
    ``plan_mission``), as is the margin kept from zones.
    ``swath_m`` overrides the camera-derived sweep spacing when given.
    ``authorised_zone_ids`` are REQ_AUTHORISATION zones the operator holds an
    authorisation for; every other such zone is treated as no-fly.
    """

    mission_type: str
    area_wgs84: BaseGeometry
    start_at: datetime
    altitude_m: float = 50.0
    sensors: frozenset[str] = frozenset()
    poi_kinds: frozenset[str] = frozenset({"hydrant"})
    lane_kinds: frozenset[str] = frozenset({"fire_lane"})
    swath_m: float | None = None
    side_overlap: float = 0.7
    hover_s: float = 20.0
    coverage_target: float = DEFAULT_COVERAGE_TARGET
    max_area_m2: float = 5_000_000.0
    authorised_zone_ids: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        for name in ("sensors", "poi_kinds", "lane_kinds", "authorised_zone_ids"):
            value = getattr(self, name)
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise InvalidArgument(f"{name} must be a set of strings, got {value!r}")
            object.__setattr__(self, name, frozenset(value))
        if self.mission_type not in MISSION_TYPES:
            raise InvalidArgument(
                f"mission_type {self.mission_type!r} is not one of {', '.join(sorted(MISSION_TYPES))}"
            )
        if not isinstance(self.start_at, datetime) or self.start_at.tzinfo is None:
            raise InvalidArgument(f"start_at must be a timezone-aware datetime, got {self.start_at!r}")
        self._check_numbers()
        unknown = self.sensors - CAPABILITIES
        if unknown:
            raise InvalidArgument(f"unknown sensors {sorted(unknown)}; known: {sorted(CAPABILITIES)}")
        if self.poi_kinds - POI_KINDS:
            raise InvalidArgument(f"unknown poi kinds {sorted(self.poi_kinds - POI_KINDS)}; known: {sorted(POI_KINDS)}")
        if self.lane_kinds - LANE_KINDS:
            raise InvalidArgument(
                f"unknown lane kinds {sorted(self.lane_kinds - LANE_KINDS)}; known: {sorted(LANE_KINDS)}"
            )
        self._check_area()

    def _check_numbers(self) -> None:
        def finite(name: str) -> float:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise InvalidArgument(f"{name} must be a finite number, got {v!r}")
            return float(v)

        alt = finite("altitude_m")
        if alt <= 0:
            raise InvalidArgument(f"altitude_m must be > 0 m above ground, got {alt:g}")
        if self.swath_m is not None and not finite("swath_m") > 0:
            raise InvalidArgument(f"swath_m must be > 0 m, got {self.swath_m:g}")
        if not 0.0 <= finite("side_overlap") < 1.0:
            raise InvalidArgument(f"side_overlap must be in [0, 1), got {self.side_overlap}")
        if finite("hover_s") < 0:
            raise InvalidArgument(f"hover_s must be >= 0 s, got {self.hover_s}")
        check_coverage_target(finite("coverage_target"))
        if not finite("max_area_m2") > 0:
            raise InvalidArgument(f"max_area_m2 must be > 0, got {self.max_area_m2}")

    def _check_area(self) -> None:
        area = self.area_wgs84
        if not isinstance(area, (Polygon, MultiPolygon)):
            raise InvalidArgument(
                f"the area must be a Polygon or MultiPolygon, got {getattr(area, 'geom_type', type(area).__name__)}"
            )
        if area.is_empty:
            raise InvalidArgument("the area is empty: select a polygon on the map")
        if not area.is_valid:
            raise InvalidArgument("the area polygon is invalid (self-intersecting or with crossing rings); redraw it")
        a = self.area_m2  # also validates coordinate ranges through the frame
        if a < MIN_AREA_M2:
            raise InvalidArgument(f"the area is degenerate ({a:.3g} m²): select a polygon with a real extent")
        if a > self.max_area_m2:
            raise InvalidArgument(
                f"the area is {a / 1e6:.2f} km², over the maximum of {self.max_area_m2 / 1e6:.2f} km² for one job; "
                "split it into smaller areas"
            )

    @cached_property
    def frame(self) -> LocalFrame:
        """The local metric frame of this job (UTM zone of the area's centroid)."""
        return LocalFrame.for_geometry(self.area_wgs84)

    @cached_property
    def area_local(self) -> Polygon | MultiPolygon:
        """The area in local metres."""
        return self.frame.to_local(self.area_wgs84)

    @property
    def area_m2(self) -> float:
        return float(self.area_local.area)

    def swath_for(self, drone: Drone) -> float:
        """Sweep spacing for ``drone``: the explicit ``swath_m`` or the camera footprint."""
        if self.swath_m is not None:
            return float(self.swath_m)
        return survey_swath_m(drone, self.altitude_m, self.side_overlap)
