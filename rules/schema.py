"""The rule file's shape: typed pydantic models, one per rule kind.

A rule set is data (``data/rules.yaml``): adding a rule of an existing kind is
a YAML change. Every rule has an ``id``, a ``kind``, a ``severity`` (``block``
or ``warn``), typed ``params`` for its kind, an optional ``when:`` guard (a
rule-engine expression over the typed context of ``rules.guards``) and optional
message templates in English and Chinese. Unknown keys are errors: a typo in a
safety rule must not pass silently.

Message templates are ``str.format`` strings; the placeholders they may use are
``TEMPLATE_FIELDS`` (checked when the file is loaded).

Example::

    >>> r = AltitudeCeilingRule(id="ceiling-400ft", kind="altitude_ceiling", severity="block",
    ...                         params={"ceiling_ft": 400})
    >>> round(r.params.ceiling_limit_m, 2)
    121.92
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, model_validator

__all__ = [
    "FEET_TO_M",
    "RULE_KINDS",
    "TEMPLATE_FIELDS",
    "AltitudeCeilingParams",
    "AltitudeCeilingRule",
    "BatteryReserveParams",
    "BatteryReserveRule",
    "CapabilityRequiredParams",
    "CapabilityRequiredRule",
    "DockRangeParams",
    "DockRangeRule",
    "DroneAvailableParams",
    "DroneAvailableRule",
    "GeozoneClearanceParams",
    "GeozoneClearanceRule",
    "Messages",
    "Rule",
    "RuleFile",
    "Severity",
    "WeatherParams",
    "WeatherRule",
    "VehicleAtDockParams",
    "VehicleAtDockRule",
    "VehicleFailsafesParams",
    "VehicleFailsafesRule",
    "FailsafeAction",
]

Severity = Literal["block", "warn"]
FEET_TO_M = 0.3048

RULE_KINDS = (
    "geozone_clearance",
    "altitude_ceiling",
    "battery_reserve",
    "capability_required",
    "drone_available",
    "dock_range",
    "weather",
    "vehicle_at_dock",
    "vehicle_failsafes",
)

#: Placeholders a message template may use; every evaluator fills all of them.
TEMPLATE_FIELDS = frozenset(
    {
        "rule_id",
        "kind",
        "sortie",
        "leg",
        "drone_id",
        "dock_id",
        "zone_id",
        "zone_name",
        "zone_message",
        "restriction",
        "measured",
        "limit",
        "unit",
        "quantity",
        "quantity_zh",
        "detail",
        "detail_zh",
    }
)

RuleId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Messages(_Strict):
    """Operator message templates, English and Chinese (both required)."""

    en: Annotated[str, StringConstraints(min_length=1, max_length=500)]
    zh: Annotated[str, StringConstraints(min_length=1, max_length=500)]


# --------------------------------------------------------------------------- params


class GeozoneClearanceParams(_Strict):
    """A leg conflicts with a zone when closer than ``buffer_m`` horizontally (or
    touching it), its altitudes overlap the zone's (touching counts) and its time
    meets the zone's applicability. The planner keeps the largest ``buffer_m`` of
    the block rules as its margin from zones (``rules.derived_limits``). PROHIBITED and unauthorised REQ_AUTHORISATION get the rule's
    severity; CONDITIONAL gets ``conditional_severity``; an authorised
    REQ_AUTHORISATION zone gets ``authorised_severity`` (evidence for the approver)."""

    buffer_m: float = Field(default=0.0, ge=0.0, le=10_000.0)
    conditional_severity: Severity = "warn"
    authorised_severity: Severity = "warn"


class AltitudeCeilingParams(_Strict):
    """Exactly one of ``ceiling_m``/``ceiling_ft``; ``floor_m`` optional.

    The ceiling applies to every waypoint (AGL); the floor to every waypoint that
    is not a TAKEOFF or LAND action (those sit on the dock). Equality passes."""

    ceiling_m: float | None = Field(default=None, gt=0.0, le=10_000.0)
    ceiling_ft: float | None = Field(default=None, gt=0.0, le=30_000.0)
    floor_m: float | None = Field(default=None, ge=0.0, le=10_000.0)

    @model_validator(mode="after")
    def _one_ceiling(self) -> AltitudeCeilingParams:
        if (self.ceiling_m is None) == (self.ceiling_ft is None):
            raise ValueError("give exactly one of ceiling_m or ceiling_ft")
        if self.floor_m is not None and self.floor_m > self.ceiling_limit_m:
            raise ValueError(f"floor_m {self.floor_m} is above the ceiling {self.ceiling_limit_m:.2f} m")
        return self

    @property
    def ceiling_limit_m(self) -> float:
        return self.ceiling_m if self.ceiling_m is not None else float(self.ceiling_ft) * FEET_TO_M  # type: ignore[arg-type]


class BatteryReserveParams(_Strict):
    """energy_wh ≤ (1 − reserve_fraction) × battery_pct/100 × battery_wh × derating.

    ``derating`` is ``cold_derating`` when the coldest forecast hour of the
    sortie is strictly below ``cold_below_c`` (or unknown and
    ``derate_when_temperature_unknown``), else 1."""

    reserve_fraction: float = Field(default=0.25, ge=0.0, lt=1.0)
    cold_below_c: float = Field(default=0.0, ge=-60.0, le=60.0)
    cold_derating: float = Field(default=0.8, gt=0.0, le=1.0)
    derate_when_temperature_unknown: bool = True


class CapabilityRequiredParams(_Strict):
    """The context's required sensors plus ``always_required`` must be on the drone."""

    always_required: tuple[str, ...] = ()


class DroneAvailableParams(_Strict):
    """Status in ``statuses`` and telemetry age ≤ ``max_telemetry_age_s`` at ``context.now``."""

    max_telemetry_age_s: float = Field(default=300.0, gt=0.0, le=86_400.0)
    statuses: tuple[Literal["ONLINE", "OFFLINE", "MAINTENANCE", "IN_FLIGHT"], ...] = ("ONLINE",)


class DockRangeParams(_Strict):
    """Every waypoint within the dock's ``radius_m`` − ``margin_m`` (equality passes)."""

    margin_m: float = Field(default=0.0, ge=0.0, le=100_000.0)


WeatherCheck = Literal["wind", "gust", "precipitation", "temperature"]


class WeatherParams(_Strict):
    """Forecast during the sortie's hours against the aircraft's and dock's limits.

    wind (at the forecast level nearest the flight altitude) ≤ min(drone, dock) −
    ``wind_margin_mps``; gusts ≤ min(drone, dock) − ``gust_margin_mps`` (a negative
    margin tolerates gusts above the sustained limit); precipitation ≤
    ``max_precipitation_mm`` per hour; temperature within the drone's range
    narrowed by ``temperature_margin_c``. ``missing_forecast`` is what a sortie
    without forecast hours gets. Equality passes."""

    checks: tuple[WeatherCheck, ...] = ("wind", "gust", "precipitation", "temperature")
    wind_margin_mps: float = Field(default=2.0, ge=0.0, le=50.0)
    gust_margin_mps: float = Field(default=0.0, ge=-30.0, le=50.0)
    max_precipitation_mm: float = Field(default=0.5, ge=0.0, le=100.0)
    temperature_margin_c: float = Field(default=0.0, ge=0.0, le=50.0)
    missing_forecast: Literal["block", "warn", "ignore"] = "warn"


class VehicleAtDockParams(_Strict):
    """The vehicle's own live position (GLOBAL_POSITION_INT, no older than its freshness limit) within
    ``max_distance_m`` of its sortie's dock (equality passes). ArduCopter sets home where it arms, so a vehicle
    launched elsewhere takes off there and returns there (issue 42). A vehicle whose state comes from its link and
    whose position is not known blocks; a drone known only from the fleet file is judged at launch."""

    max_distance_m: float = Field(default=30.0, gt=0.0, le=10_000.0)


#: What a vehicle does alone when a failsafe triggers, by class: return to its home, land where it is, nothing.
FailsafeAction = Literal["RTL", "LAND", "NONE", "TERMINATE"]


class VehicleFailsafesParams(_Strict):
    """The vehicle's own failsafe parameters (read from it) meet the mission's needs, each named when not:

    - ``battery_actions``: the class of the low-battery action (ArduPilot BATT_FS_LOW_ACT, PX4 COM_LOW_BAT_ACT),
      with a trigger set (BATT_LOW_VOLT or BATT_LOW_MAH above 0; PX4 BAT_LOW_THR);
    - ``critical_actions``: the class of the critical-battery action (BATT_FS_CRT_ACT; PX4: COM_LOW_BAT_ACT);
    - ``gcs_failsafe``: a ground-station (data link) failsafe is enabled (FS_GCS_ENABLE; PX4 NAV_DLL_ACT);
    - ``rtl_alt_margin_m``: the return altitude (RTL_ALT in cm; PX4 RTL_RETURN_ALT in m) at least the sortie's
      highest waypoint above ground plus this margin — the plan flies above the obstacles on its way, and a
      vehicle returning lower may meet them.

    A parameter the vehicle did not report blocks (named) when its state comes from its link; a drone known only
    from the fleet file is judged at launch."""

    battery_actions: tuple[FailsafeAction, ...] = ("RTL", "LAND")
    critical_actions: tuple[FailsafeAction, ...] = ("RTL", "LAND")
    gcs_failsafe: bool = True
    rtl_alt_margin_m: float | None = Field(default=0.0, ge=-1000.0, le=1000.0)


# --------------------------------------------------------------------------- rules


class _RuleBase(_Strict):
    id: RuleId
    severity: Severity
    description: Annotated[str, StringConstraints(max_length=500)] = ""
    when: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = None
    message: Messages | None = None


class GeozoneClearanceRule(_RuleBase):
    kind: Literal["geozone_clearance"]
    params: GeozoneClearanceParams = Field(default_factory=GeozoneClearanceParams)


class AltitudeCeilingRule(_RuleBase):
    kind: Literal["altitude_ceiling"]
    params: AltitudeCeilingParams


class BatteryReserveRule(_RuleBase):
    kind: Literal["battery_reserve"]
    params: BatteryReserveParams = Field(default_factory=BatteryReserveParams)


class CapabilityRequiredRule(_RuleBase):
    kind: Literal["capability_required"]
    params: CapabilityRequiredParams = Field(default_factory=CapabilityRequiredParams)


class DroneAvailableRule(_RuleBase):
    kind: Literal["drone_available"]
    params: DroneAvailableParams = Field(default_factory=DroneAvailableParams)


class DockRangeRule(_RuleBase):
    kind: Literal["dock_range"]
    params: DockRangeParams = Field(default_factory=DockRangeParams)


class WeatherRule(_RuleBase):
    kind: Literal["weather"]
    params: WeatherParams = Field(default_factory=WeatherParams)


class VehicleAtDockRule(_RuleBase):
    kind: Literal["vehicle_at_dock"]
    params: VehicleAtDockParams = Field(default_factory=VehicleAtDockParams)


class VehicleFailsafesRule(_RuleBase):
    kind: Literal["vehicle_failsafes"]
    params: VehicleFailsafesParams = Field(default_factory=VehicleFailsafesParams)


Rule = Annotated[
    Union[
        GeozoneClearanceRule,
        AltitudeCeilingRule,
        BatteryReserveRule,
        CapabilityRequiredRule,
        DroneAvailableRule,
        DockRangeRule,
        WeatherRule,
        VehicleAtDockRule,
        VehicleFailsafesRule,
    ],
    Field(discriminator="kind"),
]


class RuleFile(_Strict):
    """The whole file: ``version: 1`` and a list of rules (ids unique, checked by the loader)."""

    version: Literal[1]
    rules: list[Rule] = Field(min_length=1)
