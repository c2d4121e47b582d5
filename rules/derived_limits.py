"""The planner's limits, derived from the loaded rule set: plan inside the rules that will judge the plan.

``planning_limits(rule_set, world)`` reads the ``block`` rules of each kind
that has a planning figure and takes the strictest value among them:

=====================  ==========================================  ===========================
rule kind              parameter                                   ``PlanningLimits`` field
=====================  ==========================================  ===========================
geozone_clearance      ``buffer_m`` (largest)                      ``safety_margin_m``
altitude_ceiling       ceiling (lowest), ``floor_m`` (highest)     ``ceiling_m``, ``floor_m``
battery_reserve        every rule's reserve and cold derating      ``reserves`` (least energy wins)
weather (``wind``)     ``wind_margin_mps`` (largest)               ``wind_margin_mps``
weather (``gust``)     ``gust_margin_mps`` (largest)               ``gust_margin_mps``
=====================  ==========================================  ===========================

``warn`` rules never block a plan, so they set no limit. A ``when:`` guard is
not evaluated here (its context — duration, altitude, the sortie's hours — is
known only once there is a plan): a guarded block rule counts as if it always
applied, which can only make the plan stricter than the verdict needs.

The world's ``defaults`` may carry site limits (``ceiling_m``,
``reserve_fraction``; WORLD.md). They can only tighten the rule set's: the
lower ceiling, an extra reserve. The bundled demo world leaves them out, so its
rule file is the one place the figures are written.

Example::

    >>> from rules.loading import parse_rules
    >>> rs = parse_rules(
    ...     "version: 1\\nrules:\\n"
    ...     "- {id: a, kind: geozone_clearance, severity: block, params: {buffer_m: 35}}\\n"
    ...     "- {id: c, kind: altitude_ceiling, severity: block, params: {ceiling_ft: 400}}\\n"
    ...     "- {id: w, kind: altitude_ceiling, severity: warn, params: {ceiling_m: 60}}\\n")
    >>> lim = planning_limits(rs)
    >>> lim.safety_margin_m, round(lim.ceiling_m, 2), lim.reserves
    (35.0, 121.92, ())
"""

from __future__ import annotations

from planner.planning_limits import EnergyReserve, PlanningLimits
from planner.world.model import World
from rules.loading import RuleSet
from rules.schema import AltitudeCeilingRule, BatteryReserveRule, GeozoneClearanceRule, WeatherRule

__all__ = ["planning_limits"]


def planning_limits(rule_set: RuleSet, world: World | None = None) -> PlanningLimits:
    """The strictest planning figure of each kind among ``rule_set``'s block rules (module docstring)."""
    block = [r for r in rule_set.rules if r.severity == "block"]
    margins = [float(r.params.buffer_m) for r in block if isinstance(r, GeozoneClearanceRule)]
    ceilings = [r.params for r in block if isinstance(r, AltitudeCeilingRule)]
    reserves = [
        EnergyReserve(
            reserve_fraction=float(r.params.reserve_fraction),
            cold_below_c=float(r.params.cold_below_c),
            cold_derating=float(r.params.cold_derating),
            derate_when_temperature_unknown=bool(r.params.derate_when_temperature_unknown),
        )
        for r in block
        if isinstance(r, BatteryReserveRule)
    ]
    weather = [r.params for r in block if isinstance(r, WeatherRule)]
    wind = [float(p.wind_margin_mps) for p in weather if "wind" in p.checks]
    gust = [float(p.gust_margin_mps) for p in weather if "gust" in p.checks]
    ceiling = min((p.ceiling_limit_m for p in ceilings), default=None)
    floor = max((float(p.floor_m) for p in ceilings if p.floor_m is not None), default=0.0)
    site = world.defaults if world is not None else None
    if site is not None and site.ceiling_m is not None:
        ceiling = float(site.ceiling_m) if ceiling is None else min(ceiling, float(site.ceiling_m))
    if site is not None and site.reserve_fraction is not None:
        reserves.append(EnergyReserve(reserve_fraction=float(site.reserve_fraction)))
    return PlanningLimits(
        safety_margin_m=max(margins, default=0.0),
        ceiling_m=ceiling,
        floor_m=floor,
        reserves=tuple(reserves),
        wind_margin_mps=max(wind, default=None),
        gust_margin_mps=max(gust, default=None),
    )
