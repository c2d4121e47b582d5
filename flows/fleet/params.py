"""The vehicle parameters the authority reads from each vehicle, and how they are asked for (PARAM_REQUEST_READ).

Why the vehicle's own and not the fleet file's: what a vehicle does alone when
its link or its battery fails, and how fast it flies a mission, are its
parameters (FACTS.md, "Failsafes are parameters"; issue 43: ArduCopter's
waypoint navigation slows for corners by WPNAV_ACCEL and WPNAV_JERK). The hub
reads them on every new session of the vehicle into its live state
(``VehicleView.params``), where pre-flight checks and the time model read them.

Names, by autopilot (each is the vehicle's own parameter name):

- ArduCopter failsafes — ``FS_GCS_ENABLE``, ``FS_GCS_TIMEOUT``
  (ArduCopter/Parameters.cpp), ``BATT_FS_LOW_ACT``, ``BATT_FS_CRT_ACT``,
  ``BATT_LOW_VOLT``, ``BATT_LOW_MAH``, ``BATT_CRT_VOLT``, ``BATT_CRT_MAH``
  (libraries/AP_BattMonitor/AP_BattMonitor_Params.cpp), ``RTL_ALT``;
- navigation (both autopilots) — every name the planner's flight model reads,
  ``planner.world.nav_params.NAV_PARAM_NAMES``: ArduCopter ``WPNAV_*``, ``ATC_*``
  limits, ``PSC_JERK_Z``, ``LAND_*``, ``RTL_*``; PX4 ``MPC_*``, ``NAV_ACC_RAD``.
  ``flows.fleet.overlay`` lays them over the drone's ``nav_params`` so a live plan
  is timed with the vehicle's own values;
- PX4 failsafes — ``NAV_DLL_ACT``, ``COM_DL_LOSS_T``, ``COM_LOW_BAT_ACT``,
  ``BAT_LOW_THR``, ``BAT_CRIT_THR``, ``BAT_EMERGEN_THR``, ``RTL_RETURN_ALT``
  (src/modules/commander, src/modules/navigator).

``ParamReads`` asks for the names not yet answered this session, one round at a
time ``ROUND_S`` apart and at most ``ROUNDS`` rounds per session (a name the
vehicle does not have is never answered: ArduPilot's
``GCS_MAVLINK::handle_param_request_read`` finds nothing and sends nothing).
"""

from __future__ import annotations

from collections.abc import Mapping

from flows.vehicle.param_read import request_read  # one PARAM_REQUEST_READ for the hub and the launch

from planner.world.nav_params import NAV_PARAM_NAMES

__all__ = ["FAILSAFE_PARAMS", "NAV_PARAMS", "wanted", "ParamReads", "request_read", "ROUND_S", "ROUNDS"]

FAILSAFE_PARAMS: Mapping[str, tuple[str, ...]] = {
    "ardupilot": ("FS_GCS_ENABLE", "FS_GCS_TIMEOUT", "BATT_FS_LOW_ACT", "BATT_FS_CRT_ACT", "BATT_LOW_VOLT",
                  "BATT_LOW_MAH", "BATT_CRT_VOLT", "BATT_CRT_MAH", "RTL_ALT"),
    "px4": ("NAV_DLL_ACT", "COM_DL_LOSS_T", "COM_LOW_BAT_ACT", "BAT_LOW_THR", "BAT_CRIT_THR", "BAT_EMERGEN_THR",
            "RTL_RETURN_ALT"),
}
NAV_PARAMS: Mapping[str, tuple[str, ...]] = NAV_PARAM_NAMES
#: Seconds between two rounds of requests for the names still unanswered.
ROUND_S = 3.0
#: Rounds per vehicle session: a name still unanswered after them is one the vehicle does not have.
ROUNDS = 4


def wanted(dialect: str) -> tuple[str, ...]:
    """Every parameter the authority reads from a vehicle of ``dialect`` (failsafes first)."""
    failsafes = FAILSAFE_PARAMS.get(dialect, ())
    return failsafes + tuple(n for n in NAV_PARAMS.get(dialect, ()) if n not in failsafes)


class ParamReads:
    """The parameter requests of one held link: which session they are for and how many rounds were sent."""

    def __init__(self) -> None:
        self.session: int | None = None
        self.rounds = 0
        self.last_round = 0.0

    def due(self, session: int, have: Mapping[str, float], dialect: str, now: float) -> tuple[str, ...]:
        """The names to ask for now (empty: nothing to ask this turn)."""
        if session != self.session:
            self.session, self.rounds, self.last_round = session, 0, 0.0
        missing = tuple(n for n in wanted(dialect) if n not in have)
        if not missing or self.rounds >= ROUNDS or now - self.last_round < ROUND_S:
            return ()
        self.rounds += 1
        self.last_round = now
        return missing

    def restart(self) -> None:
        """A new link to the vehicle: ask again from the first round."""
        self.session, self.rounds, self.last_round = None, 0, 0.0

