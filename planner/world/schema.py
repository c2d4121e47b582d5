"""The world folder's files as pydantic models: the shape each file must have (``../shared/WORLD.md``).

``extra="forbid"`` everywhere except under an ``"extensions"`` key, so a typo never
passes silently; ``strict=True``, so ``"12"`` is not a number. Semantic checks a schema
cannot express (valid polygons, unique ids, a drone's dock exists, coordinates that look
like swapped lat/lon) are ``planner.world.files``'s; this module is only the shapes.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from planner.world.model import CAPABILITIES, DRONE_STATUSES, LANE_KINDS, POI_KINDS, ROLES

__all__ = [
    "DefaultsModel",
    "WorldFileModel",
    "CameraModel",
    "DroneModel",
    "FleetFileModel",
    "DockModel",
    "DocksFileModel",
    "UserModel",
    "UsersFileModel",
    "LaneProps",
    "RegionProps",
    "PoiProps",
    "LaneFeature",
    "RegionFeature",
    "PoiFeature",
    "LanesFileModel",
    "RegionsFileModel",
    "PoisFileModel",
    "HourlyModel",
    "WeatherFileModel",
]


def _member_of(known: frozenset[str], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if value not in known:
            raise ValueError(f"unknown {what} {value!r}; known: {', '.join(sorted(known))}")
        return value

    return AfterValidator(check)


NonEmpty = Annotated[str, Field(min_length=1)]
Capability = Annotated[str, _member_of(CAPABILITIES, "capability")]
Status = Annotated[str, _member_of(DRONE_STATUSES, "drone status")]
Role = Annotated[str, _member_of(ROLES, "role")]
LaneKind = Annotated[str, _member_of(LANE_KINDS, "lane kind")]
PoiKind = Annotated[str, _member_of(POI_KINDS, "POI kind")]
_LINK = re.compile(r"^(udp|udpin|udpout|udpbcast|tcp|tcpin):[^:\s]+:\d{1,5}$|^(/dev/|COM)\S+$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    extensions: dict[str, Any] | None = None


class DefaultsModel(_Model):
    altitude_m: float = Field(50.0, gt=0, le=500)
    ceiling_m: float | None = Field(None, gt=0, le=500)  # a site limit: only tightens the rule set's
    reserve_fraction: float | None = Field(None, ge=0, lt=1)  # a site limit: only tightens the rule set's


class WorldFileModel(_Model):
    name: NonEmpty
    timezone: NonEmpty
    defaults: DefaultsModel = DefaultsModel()
    attribution: str = ""

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown IANA time zone {value!r} (for example Europe/Helsinki)") from None
        return value


class CameraModel(_Model):
    hfov_deg: float = Field(gt=0, lt=180)
    vfov_deg: float = Field(gt=0, lt=180)


class DroneModel(_Model):
    id: NonEmpty
    model: NonEmpty
    dock: NonEmpty
    tenant: NonEmpty
    capabilities: list[Capability]
    battery_wh: float = Field(gt=0)
    battery_pct: float = Field(ge=0, le=100)
    flight_time_s: float = Field(gt=0)
    hover_time_s: float = Field(gt=0)
    cruise_speed_mps: float = Field(gt=0, le=60)
    inspection_speed_mps: float = Field(gt=0, le=60)
    max_wind_mps: float = Field(ge=0, le=60)
    min_temp_c: float
    max_temp_c: float
    ip_rating: str | None = None
    camera: CameraModel | None = None
    status: Status
    last_telemetry_at: AwareDatetime
    autopilot: Literal["ardupilot", "px4"]
    link: NonEmpty
    # optional binding (fleet.json without them loads as before): the vehicle's MAVLink ids and a
    # reference to its MAVLink 2 signing key in the secret store (never the key itself)
    mavlink_system_id: int | None = Field(default=None, ge=1, le=255)
    mavlink_component_id: int | None = Field(default=None, ge=1, le=255)
    signing_key: str | None = Field(default=None, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
    # the vehicle's waypoint-navigation parameters by the autopilot's names and units (planner.world.nav_params)
    nav_params: dict[NonEmpty, float] | None = None

    @field_validator("link")
    @classmethod
    def _pymavlink_link(cls, value: str) -> str:
        if not _LINK.match(value):
            raise ValueError(f"not a pymavlink connection string: {value!r} (for example udpout:127.0.0.1:14550)")
        return value


class FleetFileModel(_Model):
    drones: list[DroneModel]


class DockModel(_Model):
    id: NonEmpty
    name: NonEmpty
    tenant: NonEmpty
    lon: float = Field(ge=-180, le=180)
    lat: float = Field(ge=-90, le=90)
    ground_alt_m: float = Field(ge=-500, le=9000)
    radius_m: float = Field(gt=0)
    max_wind_mps: float = Field(ge=0, le=60)
    # seconds from a landing to the next take-off (battery swap or charge); absent: the planner's default
    turnaround_s: float | None = Field(default=None, ge=0, le=86400)


class DocksFileModel(_Model):
    docks: list[DockModel]


class UserModel(_Model):
    id: NonEmpty
    name: NonEmpty
    roles: Annotated[list[Role], Field(min_length=1)]
    tenants: Annotated[list[NonEmpty], Field(min_length=1)]
    regions: Annotated[list[NonEmpty], Field(min_length=1)] = ["*"]


class UsersFileModel(_Model):
    users: list[UserModel]


class LaneProps(_Model):
    id: NonEmpty
    kind: LaneKind
    name: str = ""


class RegionProps(_Model):
    id: NonEmpty
    name: NonEmpty
    tenant: NonEmpty


class PoiProps(_Model):
    id: NonEmpty
    kind: PoiKind
    name: str = ""


class _Feature(_Model):
    type: Literal["Feature"]
    id: str | int | None = None
    geometry: dict[str, Any]
    bbox: list[float] | None = None


class LaneFeature(_Feature):
    properties: LaneProps


class RegionFeature(_Feature):
    properties: RegionProps


class PoiFeature(_Feature):
    properties: PoiProps


class _Collection(_Model):
    type: Literal["FeatureCollection"]
    name: str | None = None
    description: str | None = None
    attribution: str | None = None
    source: str | None = None
    bbox: list[float] | None = None


class LanesFileModel(_Collection):
    features: list[LaneFeature]


class RegionsFileModel(_Collection):
    features: list[RegionFeature]


class PoisFileModel(_Collection):
    features: list[PoiFeature]


class HourlyModel(BaseModel):
    """Open-Meteo ``hourly``: ``time`` plus one list per requested variable (any Open-Meteo name)."""

    model_config = ConfigDict(extra="allow", frozen=True, strict=True)
    time: list[str]


class WeatherFileModel(_Model):
    """The Open-Meteo /v1/forecast response shape, as is."""

    latitude: float = Field(ge=-90, le=90)
    longitude: float = Field(ge=-180, le=180)
    generationtime_ms: float | None = None
    utc_offset_seconds: int = 0
    timezone: str | None = None
    timezone_abbreviation: str | None = None
    elevation: float | None = None
    hourly_units: dict[str, str] = {}
    hourly: HourlyModel
    current: dict[str, Any] | None = None
    current_units: dict[str, str] | None = None
    daily: dict[str, Any] | None = None
    daily_units: dict[str, str] | None = None
