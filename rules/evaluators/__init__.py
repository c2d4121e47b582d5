"""One evaluator per rule kind, registered in a plain mapping (kind → function).

Each evaluator is ``evaluate(rule, sortie, env) -> list[Finding]``: the findings
of one rule for one sortie, empty when it passes. It never raises for a
violation. Adding a kind means a schema model, a module here and one line below.
"""

from __future__ import annotations

from rules.evaluators import (
    altitude_ceiling,
    battery_reserve,
    capability_required,
    dock_range,
    drone_available,
    geozone_clearance,
    vehicle_at_dock,
    vehicle_failsafes,
    weather,
)
from rules.evaluators._common import Env, Evaluator

__all__ = ["EVALUATORS", "Env", "Evaluator"]

EVALUATORS: dict[str, Evaluator] = {
    "geozone_clearance": geozone_clearance.evaluate,
    "altitude_ceiling": altitude_ceiling.evaluate,
    "battery_reserve": battery_reserve.evaluate,
    "capability_required": capability_required.evaluate,
    "drone_available": drone_available.evaluate,
    "dock_range": dock_range.evaluate,
    "weather": weather.evaluate,
    "vehicle_at_dock": vehicle_at_dock.evaluate,
    "vehicle_failsafes": vehicle_failsafes.evaluate,
}
