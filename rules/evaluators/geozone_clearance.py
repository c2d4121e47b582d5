"""geozone_clearance: legs against geozones in three dimensions and in time.

A leg conflicts with a zone volume when all three hold:

* horizontally, some segment of the leg comes closer than ``buffer_m`` to the
  volume's projection, or touches it (distance < buffer, or 0; measured in the
  job's local frame to the millimetre — a path exactly at the buffer is clear,
  as the planner's transit graph keeps paths at its margin);
* vertically, the altitudes flown on the part of that segment within the
  buffer overlap the volume's [lower, upper] in AGL (touching counts; AMSL
  limits minus the dock's ground altitude, see ``rules.spatial``);
* in time, the zone applies at some instant of the leg's window (sortie start
  plus the durations of earlier legs; ``rules.applicability``).

PROHIBITED → the rule's severity. REQ_AUTHORISATION → the rule's severity,
unless ``context.authorisations`` carries a reference for the zone, then
``authorised_severity`` (evidence, default warn). CONDITIONAL →
``conditional_severity`` with the zone's own message. NO_RESTRICTION → nothing.
One finding per (leg, zone): the closest approach, with the altitudes flown there.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from planner.plan import Sortie
from planner.world.model import Restriction
from rules.applicability import zone_applies_during
from rules.evaluators._common import Env, fmt, make_finding
from rules.findings import Finding
from rules.schema import GeozoneClearanceRule
from rules.spatial import segment_circle_range, segment_polygon_range

__all__ = ["evaluate"]

_MM = 0.001  # horizontal distances are measured to the millimetre (equality survives lon/lat round trips)

_MESSAGES = {
    Restriction.PROHIBITED: (
        "Sortie {sortie} leg {leg} enters prohibited zone {zone_id} ({zone_name}) {detail}. {zone_message}",
        "第{sortie}架次第{leg}航段进入禁飞区 {zone_id}（{zone_name}）{detail_zh}。{zone_message}",
    ),
    Restriction.REQ_AUTHORISATION: (
        "Sortie {sortie} leg {leg} enters zone {zone_id} ({zone_name}) that requires authorisation {detail}. {zone_message}",
        "第{sortie}架次第{leg}航段进入需授权空域 {zone_id}（{zone_name}）{detail_zh}。{zone_message}",
    ),
    "authorised": (
        "Sortie {sortie} leg {leg} enters zone {zone_id} ({zone_name}) under authorisation {detail}.",
        "第{sortie}架次第{leg}航段在授权下进入空域 {zone_id}（{zone_name}）{detail_zh}。",
    ),
    Restriction.CONDITIONAL: (
        "Sortie {sortie} leg {leg} enters conditional zone {zone_id} ({zone_name}) {detail}: {zone_message}",
        "第{sortie}架次第{leg}航段进入有条件空域 {zone_id}（{zone_name}）{detail_zh}：{zone_message}",
    ),
}


def evaluate(rule: GeozoneClearanceRule, sortie: Sortie, env: Env) -> list[Finding]:
    seg = env.segments(sortie)
    if len(seg) == 0 or not env.world.zones:
        return []
    buffer_m = rule.params.buffer_m
    index = env.zone_index
    pairs = index.pairs_within(seg, buffer_m)
    if pairs.seg.size == 0:
        return []
    dock = env.dock(sortie)
    ground_alt_m = dock.ground_alt_m if dock is not None else 0.0
    lower_all, upper_all = index.vertical_agl(ground_alt_m)
    a0_all, a1_all = seg.alt_a[pairs.seg], seg.alt_b[pairs.seg]
    seg_lo, seg_hi = np.minimum(a0_all, a1_all), np.maximum(a0_all, a1_all)
    lower, upper = lower_all[pairs.item], upper_all[pairs.item]
    keep = (seg_hi >= lower) & (seg_lo <= upper)  # the whole segment's altitudes meet the band
    # altitudes flown inside the band; exact below for segments that climb across a band edge
    alt_lo = np.maximum(seg_lo, lower)
    alt_hi = np.minimum(seg_hi, upper)
    partial = keep & (a0_all != a1_all) & ((seg_lo < lower) | (seg_hi > upper))
    for k in np.flatnonzero(partial).tolist():
        si, item = int(pairs.seg[k]), int(pairs.item[k])
        a0, a1 = float(a0_all[k]), float(a1_all[k])
        ax, ay = seg.xy_a[si]
        bx, by = seg.xy_b[si]
        if index.is_circle[item]:
            cx, cy, radius_m = index.circle_xyr[item]
            _, t0, t1 = segment_circle_range(ax, ay, bx, by, cx, cy, radius_m + buffer_m + _MM / 2)
        else:
            shape = index.shape_local[item]
            assert shape is not None
            _, t0, t1 = segment_polygon_range(ax, ay, bx, by, shape, buffer_m + _MM / 2)
        lo, hi = sorted((a0 + (a1 - a0) * t0, a0 + (a1 - a0) * t1))
        if hi < lower[k] or lo > upper[k]:
            keep[k] = False
        else:
            alt_lo[k], alt_hi[k] = max(lo, lower[k]), min(hi, upper[k])
    if not keep.any():
        return []
    # one group per (leg, zone): closest approach and the span of altitudes flown in the band
    zone_of_item = index.zone_of_item
    legs = seg.leg[pairs.seg[keep]]
    zis = zone_of_item[pairs.item[keep]]
    keys = legs.astype(np.int64) * (len(index.zones) + 1) + zis
    uniq, inverse = np.unique(keys, return_inverse=True)
    d_min = np.full(uniq.shape, np.inf)
    lo_min = np.full(uniq.shape, np.inf)
    hi_max = np.full(uniq.shape, -np.inf)
    np.minimum.at(d_min, inverse, pairs.distance_m[keep])
    np.minimum.at(lo_min, inverse, alt_lo[keep])
    np.maximum.at(hi_max, inverse, alt_hi[keep])
    windows = env.leg_windows(sortie)
    hits: dict[tuple[int, int], tuple[float, float, float]] = {}
    for g, key in enumerate(uniq.tolist()):
        leg, zi = divmod(key, len(index.zones) + 1)
        zone = index.zones[zi]
        if zone.restriction == Restriction.NO_RESTRICTION or not zone_applies_during(zone, *windows[leg]):
            continue
        hits[(leg, zi)] = (float(d_min[g]), float(lo_min[g]), float(hi_max[g]))

    out: list[Finding] = []
    for (leg, zi), (d, alt_lo, alt_hi) in sorted(hits.items()):
        zone = index.zones[zi]
        out.append(_finding(rule, sortie, leg, zone, d, alt_lo, alt_hi, buffer_m, env))
    return out


def _finding(
    rule: GeozoneClearanceRule, sortie: Sortie, leg: int, zone: Any, d: float, alt_lo: float, alt_hi: float, buffer_m: float, env: Env
) -> Finding:
    alts = fmt(alt_lo) if math.isclose(alt_lo, alt_hi, abs_tol=0.005) else f"{fmt(alt_lo)}–{fmt(alt_hi)}"
    where_en = "inside it" if d <= 0 else f"{fmt(d)} m from it"
    where_zh = "位于其内" if d <= 0 else f"距其 {fmt(d)} 米"
    detail = f"at {alts} m AGL, {where_en} (buffer {fmt(buffer_m)} m)"
    detail_zh = f"（高度 {alts} 米，{where_zh}，缓冲 {fmt(buffer_m)} 米）"
    severity = rule.severity
    key: Any = zone.restriction
    if zone.restriction == Restriction.CONDITIONAL:
        severity = rule.params.conditional_severity
    elif zone.restriction == Restriction.REQ_AUTHORISATION:
        ref = env.context.authorisations.get(zone.id)
        if ref:
            severity = rule.params.authorised_severity
            key = "authorised"
            detail += f", reference {ref}"
            detail_zh += f"（授权编号 {ref}）"
    return make_finding(
        rule,
        _MESSAGES[key],
        sortie=sortie,
        leg=leg,
        measured=max(d, 0.0),
        limit=buffer_m,
        unit="m",
        zone_id=zone.id,
        severity=severity,
        zone_name=zone.name,
        zone_message=zone.message,
        restriction=zone.restriction.value,
        quantity="horizontal distance",
        quantity_zh="水平距离",
        detail=detail,
        detail_zh=detail_zh,
    )
