"""battery_reserve: a sortie's energy, return to the dock included, leaves the reserve.

    energy_wh ≤ (1 − reserve_fraction) × battery_pct/100 × battery_wh × derating

The energy is the sortie's as its vehicle flies its mission (``Env.flown``: the
drone's waypoint controller and power over the flown speeds, ``planner.output.sortie_flight``),
the flight back to the dock included (the planner closes every sortie at its dock). ``derating`` is
``cold_derating`` when the coldest forecast hour during the sortie is strictly
below ``cold_below_c`` (lithium cells give less energy in the cold), or when the
forecast has no temperature and ``derate_when_temperature_unknown``. Equality passes.
Usable energy and derating are ``planner.energy``'s, the figures the planner routes within.
"""

from __future__ import annotations

from planner.energy import cold_derating, usable_energy_wh
from planner.plan import Sortie
from rules.evaluators._common import Env, fmt, make_finding
from rules.findings import Finding
from rules.schema import BatteryReserveRule

__all__ = ["evaluate"]

_MSG = (
    "Sortie {sortie} ({drone_id}) needs {measured} Wh but only {limit} Wh may be used{detail}.",
    "第{sortie}架次（{drone_id}）需要 {measured} Wh，可用电量仅 {limit} Wh{detail_zh}。",
)


def evaluate(rule: BatteryReserveRule, sortie: Sortie, env: Env) -> list[Finding]:
    drone = env.drone(sortie)
    if drone is None:
        return []  # drone_available reports an unknown drone
    p = rule.params
    temps = [h.temperature_2m_c for h in env.forecast(sortie) if h.temperature_2m_c is not None]
    coldest = min(temps) if temps else None
    derating = cold_derating(
        temps, cold_below_c=p.cold_below_c, derating=p.cold_derating, when_unknown=p.derate_when_temperature_unknown
    )
    cold = derating < 1.0
    limit = usable_energy_wh(drone.battery_wh, drone.battery_pct, p.reserve_fraction, derating)
    needed = env.flown(sortie)[1]
    if needed <= limit:
        return []
    parts_en = [f"{fmt(p.reserve_fraction * 100)} % reserve", f"battery at {fmt(drone.battery_pct)} %"]
    parts_zh = [f"保留 {fmt(p.reserve_fraction * 100)}%", f"电量 {fmt(drone.battery_pct)}%"]
    if cold:
        t = "unknown" if coldest is None else f"{fmt(coldest)} °C"
        parts_en.append(f"cold derating ×{fmt(p.cold_derating)} at {t}")
        parts_zh.append(f"低温折减 ×{fmt(p.cold_derating)}（{'未知' if coldest is None else fmt(coldest) + ' °C'}）")
    return [
        make_finding(
            rule, _MSG, sortie=sortie, measured=needed, limit=limit, unit="Wh",
            quantity="energy", quantity_zh="能量",
            detail=" (" + ", ".join(parts_en) + ")", detail_zh="（" + "，".join(parts_zh) + "）",
        )
    ]
