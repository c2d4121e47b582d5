"""capability_required: the intent's sensors (and any always-required ones) are on the drone."""

from __future__ import annotations

from planner.plan import Sortie
from rules.evaluators._common import Env, make_finding
from rules.findings import Finding
from rules.schema import CapabilityRequiredRule

__all__ = ["evaluate"]

_MSG = (
    "Sortie {sortie}: drone {drone_id} lacks {measured}.",
    "第{sortie}架次：无人机 {drone_id} 缺少 {measured}。",
)


def evaluate(rule: CapabilityRequiredRule, sortie: Sortie, env: Env) -> list[Finding]:
    drone = env.drone(sortie)
    if drone is None:
        return []  # drone_available reports an unknown drone
    needed = set(env.context.required_sensors) | set(rule.params.always_required)
    missing = sorted(needed - set(drone.capabilities))
    if not missing:
        return []
    return [
        make_finding(
            rule, _MSG, sortie=sortie, measured=", ".join(missing), limit=", ".join(sorted(needed)), unit="sensors",
            quantity="sensors", quantity_zh="传感器",
        )
    ]
