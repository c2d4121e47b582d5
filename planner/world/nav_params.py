"""A drone's waypoint-navigation parameters, by the autopilot's own names, units and defaults.

How long a mission takes is decided by the vehicle's waypoint controller, and that controller is
configured by parameters the vehicle holds (ArduPilot's ``WPNAV_*``, PX4's ``MPC_*``/``NAV_*``). A
drone of the world carries them as ``Drone.nav_params`` (a ``NavParams``): fleet.json may give any of
them (``"nav_params": {"WPNAV_SPEED": 1200}``), the hub overlays what it read from the vehicle
(PARAM_REQUEST_READ of ``NAV_PARAM_NAMES[autopilot]``, then ``NavParams.merged``), and a name nobody
gave falls back to the autopilot's default below. Values stay in the autopilot's units (cm/s, cm/s²,
m/s³, centidegrees…) so a PARAM_VALUE is copied in as is; ``planner.flight.params`` turns them into SI
limits.

Defaults and where they come from (ArduPilot Copter-4.6: ``libraries/AC_WPNav/AC_WPNav.cpp`` /
``AC_WPNav.h`` ``var_info`` and ``WPNAV_*`` defines, ``AC_AttitudeControl.cpp`` /
``AC_AttitudeControl_Multi.cpp`` ``var_info``, ``AC_PosControl.cpp`` ``var_info``,
``ArduCopter/Parameters.cpp`` and ``config.h`` for ``LAND_*`` and ``RTL_*``; PX4 v1.14: the ``module.yaml``/``*_params.c`` of
``mc_pos_control`` and ``navigator``).

Example::

    >>> p = NavParams.of({"WPNAV_SPEED": 1200})
    >>> p.value("WPNAV_SPEED", "ardupilot"), p.value("WPNAV_ACCEL", "ardupilot")
    (1200.0, 250.0)
    >>> p.merged({"WPNAV_ACCEL": 100.0}).value("WPNAV_ACCEL", "ardupilot")
    100.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from planner.errors import InvalidArgument

__all__ = ["ARDUPILOT_DEFAULTS", "PX4_DEFAULTS", "NAV_PARAM_DEFAULTS", "NAV_PARAM_NAMES", "NavParams"]

#: ArduCopter 4.6 defaults (units as the parameter: cm, cm/s, cm/s², m/s³, s, cdeg/s², deg/s).
ARDUPILOT_DEFAULTS: dict[str, float] = {
    "WPNAV_SPEED": 1000.0,  # cm/s, AC_WPNav WPNAV_WP_SPEED
    "WPNAV_SPEED_UP": 250.0,  # cm/s, WPNAV_WP_SPEED_UP
    "WPNAV_SPEED_DN": 150.0,  # cm/s, WPNAV_WP_SPEED_DOWN
    "WPNAV_ACCEL": 250.0,  # cm/s², WPNAV_ACCELERATION
    "WPNAV_ACCEL_Z": 100.0,  # cm/s², WPNAV_WP_ACCEL_Z_DEFAULT
    "WPNAV_ACCEL_C": 0.0,  # cm/s², 0: twice WPNAV_ACCEL (AC_WPNav::get_corner_acceleration)
    "WPNAV_JERK": 1.0,  # m/s³
    "WPNAV_RADIUS": 200.0,  # cm, WPNAV_WP_RADIUS
    "ATC_INPUT_TC": 0.15,  # s, AC_ATTITUDE_CONTROL_INPUT_TC_DEFAULT: the snap of the S-curves
    "ATC_ACCEL_R_MAX": 110000.0,  # cdeg/s², AC_ATTITUDE_CONTROL_MAX_ACCEL_RP_DEFAULT_CDSS
    "ATC_ACCEL_P_MAX": 110000.0,  # cdeg/s²
    "ATC_RATE_R_MAX": 0.0,  # deg/s, 0: unlimited (then WPNAV_JERK alone bounds the jerk)
    "ATC_RATE_P_MAX": 0.0,  # deg/s
    "PSC_JERK_Z": 5.0,  # m/s³, the take-off and landing's vertical jerk
    "LAND_SPEED": 50.0,  # cm/s, final descent below LAND_ALT_LOW
    "LAND_SPEED_HIGH": 0.0,  # cm/s, 0: WPNAV_SPEED_DN
    "LAND_ALT_LOW": 1000.0,  # cm
    "RTL_ALT": 1500.0,  # cm, ArduCopter config.h RTL_ALT: the return altitude (at least the current one)
    "RTL_SPEED": 0.0,  # cm/s, 0: WPNAV_SPEED (ModeRTL: wp_and_spline_init(RTL_SPEED))
    "RTL_CONE_SLOPE": 3.0,  # near home the return altitude is at most this × the distance home
    "RTL_LOIT_TIME": 5000.0,  # ms over home before the descent
}

#: PX4 v1.14 multicopter defaults (SI units, as PX4 stores them).
PX4_DEFAULTS: dict[str, float] = {
    "MPC_XY_CRUISE": 5.0,  # m/s, mission speed when the mission sets none
    "MPC_XY_VEL_MAX": 12.0,  # m/s
    "MPC_ACC_HOR": 3.0,  # m/s²
    "MPC_JERK_AUTO": 4.0,  # m/s³
    "MPC_XY_TRAJ_P": 0.5,  # share of MPC_ACC_HOR used in turns (FlightTaskAutoLineSmoothVel)
    "NAV_ACC_RAD": 10.0,  # m, acceptance radius: the corner's size
    "MPC_Z_V_AUTO_UP": 3.0,  # m/s
    "MPC_Z_V_AUTO_DN": 1.5,  # m/s
    "MPC_ACC_UP_MAX": 4.0,  # m/s²
    "MPC_ACC_DOWN_MAX": 3.0,  # m/s²
    "MPC_TKO_SPEED": 1.5,  # m/s
    "MPC_LAND_SPEED": 0.7,  # m/s, below MPC_LAND_ALT2
    "MPC_LAND_ALT2": 5.0,  # m
}

NAV_PARAM_DEFAULTS: dict[str, dict[str, float]] = {"ardupilot": ARDUPILOT_DEFAULTS, "px4": PX4_DEFAULTS}
#: What the hub asks a vehicle for (PARAM_REQUEST_READ), per autopilot.
NAV_PARAM_NAMES: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in NAV_PARAM_DEFAULTS.items()}


@dataclass(frozen=True)
class NavParams:
    """Navigation parameters given for one drone (name → value, autopilot units); hashable and ordered.

    Only what was given is held; ``value`` falls back to the autopilot's default.
    """

    items: tuple[tuple[str, float], ...] = ()

    @classmethod
    def of(cls, values: Mapping[str, float] | Iterable[tuple[str, float]]) -> NavParams:
        pairs = values.items() if isinstance(values, Mapping) else values
        out: dict[str, float] = {}
        for name, value in pairs:
            if not isinstance(name, str) or not name:
                raise InvalidArgument(f"a navigation parameter needs a name, got {name!r}")
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise InvalidArgument(f"navigation parameter {name} must be a finite number, got {value!r}")
            out[name] = float(value)
        return cls(tuple(sorted(out.items())))

    def merged(self, values: Mapping[str, float] | Iterable[tuple[str, float]]) -> NavParams:
        """These parameters with ``values`` laid over them (what a vehicle reported wins)."""
        return NavParams.of({**dict(self.items), **dict(NavParams.of(values).items)})

    def as_dict(self) -> dict[str, float]:
        return dict(self.items)

    def given(self, name: str) -> float | None:
        """The value given for ``name``, or ``None``."""
        return dict(self.items).get(name)

    def value(self, name: str, autopilot: str) -> float:
        """The value for ``name``: the one given, else ``autopilot``'s default."""
        given = self.given(name)
        if given is not None:
            return given
        try:
            return NAV_PARAM_DEFAULTS[autopilot][name]
        except KeyError:
            raise InvalidArgument(f"{name} is not a navigation parameter of {autopilot}") from None

    def check(self, autopilot: str) -> None:
        """Raise ``InvalidArgument`` naming any parameter ``autopilot`` does not have (a typo must not pass)."""
        known = NAV_PARAM_DEFAULTS.get(autopilot)
        if known is None:
            raise InvalidArgument(f"unknown autopilot {autopilot!r}; expected ardupilot or px4")
        unknown = sorted(k for k, _ in self.items if k not in known)
        if unknown:
            raise InvalidArgument(
                f"nav_params {unknown} are not {autopilot} navigation parameters; known: {', '.join(sorted(known))}"
            )
