"""The world snapshot: fleet, docks, geozones, lanes, regions, POIs, weather, users.

A ``World`` is built once at the edge (``flows.world_folder.load_world`` reads the folder,
``planner.world.files.parse_world`` builds it) and
never changes; a test derives a variant with ``dataclasses.replace``. Inside the
core everything is a frozen dataclass or a Shapely geometry in WGS84 lon/lat;
metric work happens in a per-job local frame (``planner.geo.projection``).

Times are timezone-aware ``datetime``s. "Now" is never read here: callers pass it.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta, timezone
from typing import Literal

from shapely.geometry import LineString, Point, Polygon
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument, NotFound
from planner.world.nav_params import NavParams

__all__ = [
    "CAPABILITIES",
    "DRONE_STATUSES",
    "LANE_KINDS",
    "POI_KINDS",
    "ROLES",
    "Restriction",
    "VerticalReference",
    "Camera",
    "RefusedDrone",
    "Drone",
    "Dock",
    "CircleArea",
    "ZoneVolume",
    "WeeklySlot",
    "Applicability",
    "Geozone",
    "Lane",
    "Region",
    "Poi",
    "WeatherHour",
    "Weather",
    "User",
    "WorldDefaults",
    "World",
]

CAPABILITIES = frozenset(
    {
        "RGB_CAMERA",
        "ZOOM_CAMERA",
        "THERMAL_CAMERA",
        "LIDAR",
        "LASER_RANGEFINDER",
        "SPOTLIGHT",
        "SPEAKER",
    }
)
DRONE_STATUSES = frozenset({"ONLINE", "OFFLINE", "MAINTENANCE", "IN_FLIGHT"})
LANE_KINDS = frozenset({"fire_lane", "road", "power_line", "pipeline", "fence_line"})
POI_KINDS = frozenset({"hydrant", "roof", "mast", "gate", "asset"})
ROLES = frozenset({"planner", "approver", "dispatcher", "admin"})


class Restriction(str, enum.Enum):
    """Geozone restriction, normalised from ED-269 and ED-318 spellings."""

    PROHIBITED = "PROHIBITED"
    REQ_AUTHORISATION = "REQ_AUTHORISATION"
    CONDITIONAL = "CONDITIONAL"
    NO_RESTRICTION = "NO_RESTRICTION"


class VerticalReference(str, enum.Enum):
    """What an altitude limit is measured from."""

    AGL = "AGL"  # above ground level
    AMSL = "AMSL"  # above mean sea level
    WGS84 = "WGS84"  # above the ellipsoid (treated as AMSL: geoid ~17-20 m here, noted)


@dataclass(frozen=True)
class Camera:
    """Camera field of view, used for the survey footprint."""

    hfov_deg: float
    vfov_deg: float


@dataclass(frozen=True)
class Drone:
    """One drone of the fleet, as last reported."""

    id: str
    model: str
    dock_id: str
    tenant: str
    capabilities: frozenset[str]
    battery_wh: float
    battery_pct: float
    flight_time_s: float
    hover_time_s: float
    cruise_speed_mps: float
    inspection_speed_mps: float
    max_wind_mps: float
    min_temp_c: float
    max_temp_c: float
    ip_rating: str | None
    camera: Camera | None
    status: str
    last_telemetry_at: datetime
    autopilot: Literal["ardupilot", "px4"]
    link: str
    # The vehicle's identity on its link (optional: an older fleet.json has none). With a system id
    # the dispatcher refuses a heartbeat from any other system; with a signing key reference it
    # signs every message and ignores unsigned replies (the key itself lives in a secret store).
    mavlink_system_id: int | None = None
    mavlink_component_id: int | None = None
    signing_key: str | None = None
    # The vehicle's waypoint-navigation parameters (planner.world.nav_params): what fleet.json gave,
    # overlaid by what the hub read from the vehicle; missing names take the autopilot's defaults.
    nav_params: NavParams = NavParams()
    # What the vehicle itself reports, when the drone's state comes from its link (``live``: the authority's hub,
    # or the launch reading the vehicle): its position now (lat, lon; None when not reported or older than its
    # freshness limit) and the parameters read from it (failsafes, navigation). A drone known only from the fleet
    # file has neither; rules on them judge it when it is live (rules.evaluators.vehicle_*).
    live: bool = False
    position: tuple[float, float] | None = None
    vehicle_params: Mapping[str, float] = field(default_factory=dict, hash=False, compare=False)
    # The draft whose dispatch holds it ("draft d-… v1 (DISPATCHED)", flows.usecases.commitments): not eligible.
    committed_to: str | None = None

    @property
    def cruise_power_w(self) -> float:
        """Power at cruise from the spec: battery energy over flight endurance."""
        return self.battery_wh * 3600.0 / self.flight_time_s

    @property
    def hover_power_w(self) -> float:
        """Power in hover from the spec: battery energy over hover endurance."""
        return self.battery_wh * 3600.0 / self.hover_time_s


@dataclass(frozen=True)
class RefusedDrone:
    """A fleet.json entry refused alone (not in the world; listed with why): ``id``/``tenant`` as it wrote them,
    ``problems`` located (``fleet.json $.drones[2].colour: unknown key 'colour' …``)."""

    id: str
    tenant: str | None
    problems: tuple[str, ...]

    @property
    def reason(self) -> str:
        return f"its fleet.json entry is refused: {'; '.join(self.problems)}"


@dataclass(frozen=True)
class Dock:
    """A drone dock: where sorties start and end."""

    id: str
    name: str
    tenant: str
    lon: float
    lat: float
    ground_alt_m: float
    radius_m: float
    max_wind_mps: float
    # Seconds from a landing to the next take-off of a drone at this dock: the battery swap or the
    # charge (DJI Dock 2: about 32 min from 20 % to 90 %); each later sortie of a drone starts that long
    # after its previous one lands. ``None``: the world does not say (the planner's default applies).
    turnaround_s: float | None = None

    @property
    def point(self) -> Point:
        return Point(self.lon, self.lat)


@dataclass(frozen=True)
class CircleArea:
    """A circular horizontal projection, kept as centre + radius (metres)."""

    lon: float
    lat: float
    radius_m: float


@dataclass(frozen=True)
class ZoneVolume:
    """One stacked volume of a geozone.

    ``lower_m``/``upper_m`` are metres relative to their reference; ``None``
    means unbounded (ground for the lower limit, sky for the upper).
    ``horizontal`` is a lon/lat Polygon or a ``CircleArea``.
    """

    horizontal: Polygon | CircleArea
    lower_m: float | None
    lower_ref: VerticalReference
    upper_m: float | None
    upper_ref: VerticalReference


@dataclass(frozen=True)
class WeeklySlot:
    """A recurring window: on ``days`` (0=Mon..6=Sun) from ``start`` to ``end`` in UTC.

    A slot covers ``[start, end)`` on each listed day. A slot whose ``end`` is
    not after its ``start`` (22:00–02:00, or 18:00–00:00 for "until midnight")
    runs past midnight into the next day; ``start == end`` is a whole 24 h from
    ``start``. The loader (``planner.world.geozones``) already splits overnight
    schedules into two same-day slots; a hand-built slot is read the safe way
    (the zone applies longer, never shorter).
    """

    days: frozenset[int]
    start: time
    end: time

    @property
    def crosses_midnight(self) -> bool:
        """Whether an occurrence ends on the day after it starts (``end <= start``)."""
        return self.end <= self.start

    def contains(self, when: datetime) -> bool:
        """Whether an occurrence of the slot covers ``when`` (timezone-aware; compared in UTC)."""
        utc = when.astimezone(timezone.utc)
        t, day = utc.time().replace(tzinfo=None), utc.weekday()
        if not self.crosses_midnight:
            return day in self.days and self.start <= t < self.end
        return (day in self.days and t >= self.start) or ((day - 1) % 7 in self.days and t < self.end)

    def occurrences(self, lo: datetime, hi: datetime) -> Iterator[tuple[datetime, datetime]]:
        """Each occurrence ``[s, e)`` (UTC) that starts at or before ``hi`` and ends after ``lo``, in order.

        Days are walked from the day before ``lo`` (an overnight occurrence that
        began then) to the day of ``hi``: at most a few more than the window's days.
        """
        lo_utc, hi_utc = lo.astimezone(timezone.utc), hi.astimezone(timezone.utc)
        day = lo_utc.date() - timedelta(days=1)
        while day <= hi_utc.date():
            if day.weekday() in self.days:
                s = datetime.combine(day, self.start.replace(tzinfo=None), timezone.utc)
                e = datetime.combine(day, self.end.replace(tzinfo=None), timezone.utc)
                if self.crosses_midnight:
                    e += timedelta(days=1)
                if s <= hi_utc and e > lo_utc:
                    yield s, e
            day += timedelta(days=1)


@dataclass(frozen=True)
class Applicability:
    """When a zone applies: always, between dates, and/or on a weekly schedule.

    The dates bound a half-open ``[start, end)``; within them the entry applies
    whenever a weekly slot does (always, without a schedule). A zone with
    several applicability entries applies when any entry does.

    ``applies_at`` answers for one instant, ``applies_during`` for a closed
    window ``[start, end]`` (a flight leg, a sortie, a job's flight window):
    the planner and the rules both ask the second, so they agree on which
    zones a flight must respect. It is exact interval arithmetic, not sampling::

        >>> fri = Applicability(False, schedule=(WeeklySlot(frozenset({4}), time(14), time(22)),))
        >>> utc = timezone.utc
        >>> fri.applies_during(datetime(2026, 12, 4, 13, 50, tzinfo=utc), datetime(2026, 12, 4, 14, 0, tzinfo=utc))
        True
        >>> fri.applies_during(datetime(2026, 12, 4, 13, 0, tzinfo=utc), datetime(2026, 12, 4, 13, 59, tzinfo=utc))
        False
    """

    permanent: bool
    start: datetime | None = None
    end: datetime | None = None
    schedule: tuple[WeeklySlot, ...] = ()

    def applies_at(self, when: datetime) -> bool:
        """Whether this entry applies at ``when`` (timezone-aware)."""
        if self.permanent:
            return True
        if self.start is not None and when < self.start:
            return False
        if self.end is not None and when >= self.end:
            return False
        if not self.schedule:
            return True
        return any(slot.contains(when) for slot in self.schedule)

    def applies_during(self, start: datetime, end: datetime) -> bool:
        """Whether this entry applies at some instant of the closed window ``[start, end]``.

        Both ends must be timezone-aware; a reversed window is read as
        ``[end, start]``. ``applies_during(t, t) == applies_at(t)``.
        """
        lo, hi = _window(start, end)
        if self.permanent:
            return True
        if self.start is not None:
            if hi < self.start:
                return False
            lo = max(lo, self.start)
        if self.end is not None and lo >= self.end:  # the dates are half-open: [start, end)
            return False
        if not self.schedule:
            return True
        for slot in self.schedule:
            for s, e in slot.occurrences(lo, hi):
                if self.end is not None:
                    e = min(e, self.end)
                # the occurrence [s, e), clipped to the dates, is not empty (a slot that starts
                # when the dates end adds nothing) and meets [lo, hi] (lo already inside the dates)
                if s < e and s <= hi and lo < e:
                    return True
        return False


@dataclass(frozen=True)
class Geozone:
    """A UAS geographical zone normalised from ED-269 or ED-318."""

    id: str
    name: str
    restriction: Restriction
    volumes: tuple[ZoneVolume, ...]
    applicability: tuple[Applicability, ...]
    message: str
    source: str  # file name it came from

    def applies_at(self, when: datetime) -> bool:
        """Whether the zone applies at ``when`` (a zone without applicability entries always does)."""
        return any(a.applies_at(when) for a in self.applicability) if self.applicability else True

    def applies_during(self, start: datetime, end: datetime) -> bool:
        """Whether the zone applies at some instant of ``[start, end]`` (see ``Applicability.applies_during``)."""
        if not self.applicability:
            _window(start, end)
            return True
        return any(a.applies_during(start, end) for a in self.applicability)


def _window(start: datetime, end: datetime) -> tuple[datetime, datetime]:
    """``(start, end)`` ordered; both must be timezone-aware (a naive time has no defined UTC instant)."""
    if start.tzinfo is None or end.tzinfo is None:
        raise InvalidArgument("a time window needs timezone-aware start and end")
    return (start, end) if start <= end else (end, start)


@dataclass(frozen=True)
class Lane:
    """A linear feature to patrol, as a lon/lat LineString."""

    id: str
    kind: str
    name: str
    line: LineString


@dataclass(frozen=True)
class Region:
    """A named area a request may refer to (lon/lat Polygon or MultiPolygon)."""

    id: str
    name: str
    tenant: str
    area: BaseGeometry


@dataclass(frozen=True)
class Poi:
    """An inspection point (hydrant, roof, mast, gate, asset)."""

    id: str
    kind: str
    name: str
    lon: float
    lat: float


@dataclass(frozen=True)
class WeatherHour:
    """One hour of forecast. Wind in m/s, direction in degrees FROM, temperature in °C.

    ``wind_speed_120m_mps`` and friends are ``None`` when the forecast lacks them.
    """

    time: datetime
    wind_speed_10m_mps: float | None
    wind_speed_80m_mps: float | None
    wind_speed_120m_mps: float | None
    wind_direction_10m_deg: float | None
    wind_gusts_10m_mps: float | None
    precipitation_mm: float | None
    temperature_2m_c: float | None


@dataclass(frozen=True)
class Weather:
    """An hourly forecast; ``hour_at`` picks the hour that contains a time."""

    hours: tuple[WeatherHour, ...]

    def hour_at(self, when: datetime) -> WeatherHour | None:
        """The forecast hour covering ``when`` (the latest hour starting at or before it)."""
        best: WeatherHour | None = None
        for h in self.hours:
            if h.time <= when:
                best = h
            else:
                break
        if best is not None and (when - best.time).total_seconds() >= 3600:
            return None
        return best

    def hours_between(self, start: datetime, end: datetime) -> tuple[WeatherHour, ...]:
        """Every forecast hour overlapping [start, end]."""
        out = [h for h in self.hours if h.time <= end and (start - h.time).total_seconds() < 3600]
        return tuple(out)


@dataclass(frozen=True)
class User:
    """Who may plan, approve and dispatch, for which tenants and regions ('*' = all)."""

    id: str
    name: str
    roles: frozenset[str]
    tenants: frozenset[str]
    regions: frozenset[str]

    def may(self, role: str, tenant: str, region: str | None = None) -> bool:
        """Whether this user holds ``role`` (or admin) for ``tenant`` and ``region``."""
        if role not in self.roles and "admin" not in self.roles:
            return False
        if tenant not in self.tenants and "*" not in self.tenants:
            return False
        if region is not None and region not in self.regions and "*" not in self.regions:
            return False
        return True


@dataclass(frozen=True)
class WorldDefaults:
    """The flight altitude when a request names none, and optional SITE limits.

    ``ceiling_m``/``reserve_fraction`` (``None``: none) can only tighten the rule
    set's limits (``rules.derived_limits.planning_limits``); the rule set is where the
    limits are written, and what judges every plan.
    """

    altitude_m: float = 50.0
    ceiling_m: float | None = None
    reserve_fraction: float | None = None


@dataclass(frozen=True)
class World:
    """One immutable snapshot of everything the planner and rules look at.

    Collections are tuples sorted by id so iteration order is deterministic.
    ``snapshot_hash`` is the sha256 of the folder's files (set by the loader),
    recorded with every draft.
    """

    name: str
    timezone: str
    defaults: WorldDefaults
    attribution: str
    drones: tuple[Drone, ...]
    docks: tuple[Dock, ...]
    zones: tuple[Geozone, ...]
    lanes: tuple[Lane, ...]
    regions: tuple[Region, ...]
    pois: tuple[Poi, ...]
    weather: Weather
    users: tuple[User, ...]
    snapshot_hash: str = ""
    root: str = field(default="", compare=False)
    refused_drones: tuple[RefusedDrone, ...] = ()

    def drone(self, drone_id: str) -> Drone:
        for d in self.drones:
            if d.id == drone_id:
                return d
        refused = next((r for r in self.refused_drones if r.id == drone_id), None)
        if refused is not None:
            raise NotFound(f"drone {drone_id!r} is not usable in world {self.name!r}: {refused.reason}")
        raise NotFound(f"drone {drone_id!r} is not in the fleet of world {self.name!r}")

    def dock(self, dock_id: str) -> Dock:
        for d in self.docks:
            if d.id == dock_id:
                return d
        raise NotFound(f"dock {dock_id!r} is not in world {self.name!r}")

    def region(self, region_id: str) -> Region:
        for r in self.regions:
            if r.id == region_id:
                return r
        raise NotFound(f"region {region_id!r} is not in world {self.name!r}")

    def user(self, user_id: str) -> User:
        for u in self.users:
            if u.id == user_id:
                return u
        raise NotFound(f"user {user_id!r} is not in world {self.name!r}")

    def zones_active_at(self, when: datetime) -> tuple[Geozone, ...]:
        return tuple(z for z in self.zones if z.applies_at(when))

    def zones_active_during(self, start: datetime, end: datetime) -> tuple[Geozone, ...]:
        """Zones that apply at some instant of ``[start, end]``, in id order."""
        return tuple(z for z in self.zones if z.applies_during(start, end))
