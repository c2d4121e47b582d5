"""drone_available: the assigned drone exists, has an allowed status (ONLINE) and fresh telemetry.

Freshness is ``context.now − last_telemetry_at ≤ max_telemetry_age_s`` (equality
passes). At plan time ``now`` is the planning time; dispatch evaluates again
with its own ``now`` and a fresh world, so a drone that went quiet in between
blocks the dispatch.
"""

from __future__ import annotations

from planner.plan import Sortie
from rules.evaluators._common import Env, make_finding
from rules.findings import Finding
from rules.schema import DroneAvailableRule

__all__ = ["evaluate"]

_UNKNOWN = (
    "Sortie {sortie}: drone {drone_id} is not in the fleet.",
    "第{sortie}架次：无人机 {drone_id} 不在机队中。",
)
_STATUS = (
    "Sortie {sortie}: drone {drone_id} is {measured} (needs {limit}){detail}.",
    "第{sortie}架次：无人机 {drone_id} 状态为 {measured}（需要 {limit}）{detail_zh}。",
)
_STALE = (
    "Sortie {sortie}: drone {drone_id} last reported {measured} s ago (limit {limit} s).",
    "第{sortie}架次：无人机 {drone_id} 最近一次遥测在 {measured} 秒前（上限 {limit} 秒）。",
)


def evaluate(rule: DroneAvailableRule, sortie: Sortie, env: Env) -> list[Finding]:
    drone = env.drone(sortie)
    if drone is None:
        return [make_finding(rule, _UNKNOWN, sortie=sortie, measured="UNKNOWN", limit=None, unit="")]
    out: list[Finding] = []
    p = rule.params
    if drone.status not in p.statuses:
        since = drone.last_telemetry_at.isoformat()
        out.append(
            make_finding(
                rule, _STATUS, sortie=sortie, measured=drone.status, limit="|".join(p.statuses), unit="status",
                quantity="status", quantity_zh="状态", detail=f" since {since}", detail_zh=f"，自 {since}",
            )
        )
    age_s = (env.context.now - drone.last_telemetry_at).total_seconds()
    if age_s > p.max_telemetry_age_s:
        out.append(
            make_finding(
                rule, _STALE, sortie=sortie, measured=age_s, limit=p.max_telemetry_age_s, unit="s",
                quantity="telemetry age", quantity_zh="遥测时长",
            )
        )
    return out
