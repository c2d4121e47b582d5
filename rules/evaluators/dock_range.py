"""dock_range: every waypoint within the dock's operating radius (minus a margin).

Distances are measured in the job's local frame (the frame the planner used),
to the millimetre (so equality survives the lon/lat round trip).
One finding per leg: the farthest waypoint. A sortie whose dock is unknown
blocks. Equality passes.
"""

from __future__ import annotations

import numpy as np

from planner.plan import Sortie
from rules.evaluators._common import Env, make_finding
from rules.findings import Finding
from rules.schema import DockRangeRule

__all__ = ["evaluate"]

_MSG = (
    "Sortie {sortie} leg {leg} reaches {measured} m from dock {dock_id}, beyond its {limit} m range.",
    "第{sortie}架次第{leg}航段距机场 {dock_id} {measured} 米，超出 {limit} 米作业半径。",
)
_UNKNOWN = (
    "Sortie {sortie}: dock {dock_id} is not in the world.",
    "第{sortie}架次：机场 {dock_id} 不存在。",
)


def evaluate(rule: DockRangeRule, sortie: Sortie, env: Env) -> list[Finding]:
    dock = env.dock(sortie)
    if dock is None:
        return [make_finding(rule, _UNKNOWN, sortie=sortie, measured="UNKNOWN", limit=None, unit="")]
    seg = env.segments(sortie)
    if len(seg) == 0:
        return []
    limit_m = dock.radius_m - rule.params.margin_m
    cx, cy = env.frame.forward(dock.lon, dock.lat)
    dist = np.hypot(seg.xy_b[:, 0] - cx, seg.xy_b[:, 1] - cy)
    out: list[Finding] = []
    for li in sorted(set(seg.leg.tolist())):
        far = round(float(dist[seg.leg == li].max()), 3)  # measured to the millimetre
        if far > limit_m:
            out.append(
                make_finding(
                    rule, _MSG, sortie=sortie, leg=li, measured=far, limit=limit_m, unit="m",
                    quantity="distance from dock", quantity_zh="离机场距离",
                )
            )
    return out
