"""weather: wind, gusts, precipitation and temperature during the sortie's forecast hours.

* wind: the forecast level nearest the sortie's highest waypoint (10, 80 or
  120 m; the nearest level the forecast has), worst hour, against
  min(drone.max_wind_mps, dock.max_wind_mps) − wind_margin_mps;
* gust: ``wind_gusts_10m`` against the same min − gust_margin_mps;
* precipitation: mm in an hour against ``max_precipitation_mm``;
* temperature: coldest and warmest hour against the drone's range narrowed by
  ``temperature_margin_c`` on both sides.

Equality passes. A sortie without forecast hours gets ``missing_forecast``
(block, warn or ignore); a quantity the forecast lacks is skipped.
"""

from __future__ import annotations

from planner.energy import wind_level_mps
from planner.plan import Sortie
from planner.world.model import WeatherHour
from rules.evaluators._common import Env, make_finding
from rules.findings import Finding
from rules.schema import WeatherRule

__all__ = ["evaluate", "wind_at_altitude"]

#: (wind m/s, level m) at the level nearest an altitude, ties up: the planner's own choice of level.
wind_at_altitude = wind_level_mps

_ABOVE = (
    "Sortie {sortie}: {quantity} {measured} {unit} exceeds the limit {limit} {unit}{detail}.",
    "第{sortie}架次：{quantity_zh} {measured} {unit} 超过上限 {limit} {unit}{detail_zh}。",
)
_BELOW = (
    "Sortie {sortie}: {quantity} {measured} {unit} is below the limit {limit} {unit}{detail}.",
    "第{sortie}架次：{quantity_zh} {measured} {unit} 低于下限 {limit} {unit}{detail_zh}。",
)
_MISSING = (
    "Sortie {sortie}: no weather forecast covers the flight time.",
    "第{sortie}架次：没有覆盖飞行时段的天气预报。",
)


def evaluate(rule: WeatherRule, sortie: Sortie, env: Env) -> list[Finding]:
    p = rule.params
    hours = env.forecast(sortie)
    if not hours:
        if p.missing_forecast == "ignore":
            return []
        return [make_finding(rule, _MISSING, sortie=sortie, measured="none", limit=None, unit="", severity=p.missing_forecast)]
    drone = env.drone(sortie)
    dock = env.dock(sortie)
    wind_cap = min(
        [x.max_wind_mps for x in (drone, dock) if x is not None] or [float("inf")]
    )
    altitude_m = max((wp.alt_m for leg in sortie.legs for wp in leg.waypoints), default=0.0)
    out: list[Finding] = []

    def above(quantity: str, quantity_zh: str, value: float, limit: float, unit: str, at: WeatherHour, extra: str = "", extra_zh: str = "") -> None:
        if value > limit:
            when = at.time.isoformat()
            out.append(
                make_finding(
                    rule, _ABOVE, sortie=sortie, measured=value, limit=limit, unit=unit,
                    quantity=quantity, quantity_zh=quantity_zh,
                    detail=f" at {when}{extra}", detail_zh=f"（{when}{extra_zh}）",
                )
            )

    if "wind" in p.checks:
        winds = [(w, h) for h in hours if (w := wind_at_altitude(h, altitude_m)) is not None]
        if winds:
            (speed, lvl), hour = max(winds, key=lambda x: (x[0][0], x[1].time))
            above("wind", "风速", speed, wind_cap - p.wind_margin_mps, "m/s", hour, f", {lvl:g} m level", f"，{lvl:g} 米高度")
    if "gust" in p.checks:
        gusts = [(h.wind_gusts_10m_mps, h) for h in hours if h.wind_gusts_10m_mps is not None]
        if gusts:
            g, hour = max(gusts, key=lambda x: (x[0], x[1].time))
            above("gusts", "阵风", g, wind_cap - p.gust_margin_mps, "m/s", hour)
    if "precipitation" in p.checks:
        rain = [(h.precipitation_mm, h) for h in hours if h.precipitation_mm is not None]
        if rain:
            r, hour = max(rain, key=lambda x: (x[0], x[1].time))
            above("precipitation", "降水", r, p.max_precipitation_mm, "mm/h", hour)
    if "temperature" in p.checks and drone is not None:
        temps = [(h.temperature_2m_c, h) for h in hours if h.temperature_2m_c is not None]
        if temps:
            hot, hour = max(temps, key=lambda x: (x[0], x[1].time))
            above("temperature", "气温", hot, drone.max_temp_c - p.temperature_margin_c, "°C", hour)
            cold, hour = min(temps, key=lambda x: (x[0], x[1].time))
            low = drone.min_temp_c + p.temperature_margin_c
            if cold < low:
                when = hour.time.isoformat()
                out.append(
                    make_finding(
                        rule, _BELOW, sortie=sortie, measured=cold, limit=low, unit="°C",
                        quantity="temperature", quantity_zh="气温", detail=f" at {when}", detail_zh=f"（{when}）",
                    )
                )
    return out
