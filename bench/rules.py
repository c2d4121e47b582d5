"""``python -m bench rules bench/rules_instance.json``: rule evaluation time against many zones.

The instance is a small JSON of parameters; everything else is generated
deterministically from its seed: ``zones`` geozones (circles and rotated
rectangles of random size, mixed restrictions, altitude bands and schedules)
spread over ``extent_m`` around a dock, and a lawnmower sweep plan of
``waypoints`` waypoints (legs of ``waypoints_per_leg``) inside ``sweep_extent_m``.
The default rule set (``data/rules.yaml``) is evaluated.

Reported (median of ``repeats`` runs, milliseconds):

* ``index_build_ms`` — projecting the zones and building the STRtrees (once per
  world and frame; memoised);
* ``evaluate_ms`` — ``rules.evaluate`` with the index warm, the figure the
  ≤ ``budget_ms`` target is about; ``cold_evaluate_ms`` includes the build;
* ``growth`` — evaluate_ms at each of ``growth_waypoints``, with the time per
  waypoint, and ``growth_exponent`` — the least-squares slope of log(time) over
  log(waypoints) (1.0 = linear).
"""

from __future__ import annotations

import json
import math
import random
import statistics
import time
from datetime import datetime, timedelta, timezone
from datetime import time as dtime
from pathlib import Path
from typing import Any

import numpy as np
from shapely.geometry import Polygon, box

from flows.context import RULES_FILE
from planner.plan import Leg, Plan, Sortie, Waypoint
from planner.geo.projection import LocalFrame
from planner.world.model import (
    Applicability,
    CircleArea,
    Dock,
    Drone,
    Geozone,
    Restriction,
    VerticalReference,
    Weather,
    WeatherHour,
    WeeklySlot,
    World,
    WorldDefaults,
    ZoneVolume,
)
from flows.rule_file import load_rules
from rules.context import EvaluationContext
from rules.evaluate import evaluate
from rules.spatial import ZoneIndex

__all__ = ["make_plan", "make_world", "run"]

START = datetime(2026, 12, 4, 15, 0, tzinfo=timezone.utc)


def make_world(p: dict[str, Any]) -> World:
    """Dock, drone, calm weather and ``p['zones']`` random zones (seeded)."""
    rng = random.Random(p["seed"])
    lon0, lat0 = p["dock_lonlat"]
    frame = LocalFrame.for_point(lon0, lat0)
    x0, y0 = frame.forward(lon0, lat0)
    half = p["extent_m"] / 2
    r_lo, r_hi = p["zone_radius_m"]
    restrictions = [Restriction.PROHIBITED, Restriction.REQ_AUTHORISATION, Restriction.CONDITIONAL]
    centres = np.array([[x0 + rng.uniform(-half, half), y0 + rng.uniform(-half, half)] for _ in range(p["zones"])])
    centres_ll = frame.inverse_many(centres)
    zones = []
    for i in range(p["zones"]):
        radius = rng.uniform(r_lo, r_hi)
        cx, cy = centres[i]
        if rng.random() < p["circle_fraction"]:
            horizontal: Polygon | CircleArea = CircleArea(float(centres_ll[i, 0]), float(centres_ll[i, 1]), radius)
        else:
            a = rng.uniform(0, math.pi)
            w, h = radius, rng.uniform(0.3, 1.0) * radius
            corners = [(cx + dx * math.cos(a) - dy * math.sin(a), cy + dx * math.sin(a) + dy * math.cos(a))
                       for dx, dy in ((-w, -h), (w, -h), (w, h), (-w, h))]
            horizontal = Polygon(frame.inverse_many(np.array(corners)))
        lower = rng.choice([None, 0.0, 30.0, 60.0])
        upper = rng.choice([None, 90.0, 120.0, 150.0])
        if lower is not None and upper is not None and upper <= lower:
            upper = lower + 30.0
        app: tuple[Applicability, ...] = (Applicability(permanent=True),)
        if rng.random() < p["scheduled_fraction"]:
            days = frozenset(rng.sample(range(7), rng.randint(1, 3)))
            start_h = rng.randint(0, 20)
            app = (Applicability(permanent=False, schedule=(WeeklySlot(days, dtime(start_h), dtime(start_h + 3)),)),)
        vol = ZoneVolume(horizontal, lower, VerticalReference.AGL, upper, VerticalReference.AGL)
        zones.append(Geozone(f"Z{i:05d}", f"zone {i}", rng.choice(restrictions), (vol,), app, "synthetic", "bench"))
    drone = Drone(
        id="D1", model="bench", dock_id="DOCK", tenant="t", capabilities=frozenset({"RGB_CAMERA"}),
        battery_wh=263.2, battery_pct=100.0, flight_time_s=2460.0, hover_time_s=2160.0, cruise_speed_mps=12.0,
        inspection_speed_mps=7.0, max_wind_mps=12.0, min_temp_c=-20.0, max_temp_c=50.0, ip_rating=None, camera=None,
        status="ONLINE", last_telemetry_at=START - timedelta(seconds=30), autopilot="ardupilot", link="udp:127.0.0.1:14550",
    )
    dock = Dock("DOCK", "bench dock", "t", lon0, lat0, 10.0, 10_000.0, 12.0)
    hours = tuple(
        WeatherHour(START.replace(hour=0) + timedelta(hours=h), 3.0, 4.0, 5.0, 200.0, 6.0, 0.0, 5.0) for h in range(24)
    )
    return World(
        name="bench", timezone="Europe/Helsinki", defaults=WorldDefaults(), attribution="", drones=(drone,),
        docks=(dock,), zones=tuple(zones), lanes=(), regions=(), pois=(), weather=Weather(hours), users=(),
    )


def make_plan(p: dict[str, Any], n_waypoints: int) -> Plan:
    """One sortie: takeoff, a lawnmower sweep of ``n_waypoints`` waypoints in legs, landing."""
    lon0, lat0 = p["dock_lonlat"]
    frame = LocalFrame.for_point(lon0, lat0)
    x0, y0 = frame.forward(lon0, lat0)
    n_sweep = max(2, n_waypoints - 4)
    rows = (n_sweep + 1) // 2
    extent = p["sweep_extent_m"]
    spacing = extent / max(rows, 1)
    pts = []
    for r in range(rows):
        y = y0 - extent / 2 + r * spacing
        xs = (x0 - extent / 2, x0 + extent / 2) if r % 2 == 0 else (x0 + extent / 2, x0 - extent / 2)
        pts.extend((x, y) for x in xs)
    pts = pts[:n_sweep]
    ll = frame.inverse_many(np.array(pts))
    sweep_wps = [Waypoint(float(lon), float(lat), 60.0) for lon, lat in ll]
    per = p["waypoints_per_leg"]
    legs = [Leg("takeoff", (Waypoint(lon0, lat0, 0.0, "TAKEOFF"), Waypoint(lon0, lat0, 60.0)), 60.0, 30.0, 2.0)]
    for i in range(0, len(sweep_wps), per):
        chunk = tuple(sweep_wps[i : i + per])
        legs.append(Leg("sweep", chunk, 0.0, 60.0, 1.0))
    legs.append(Leg("landing", (Waypoint(lon0, lat0, 60.0), Waypoint(lon0, lat0, 0.0, "LAND")), 60.0, 30.0, 2.0))
    sortie = Sortie(0, "D1", "DOCK", START, tuple(legs), 0.0, sum(l.duration_s for l in legs), 50.0, 0.2)
    lo = frame.inverse(x0 - extent / 2, y0 - extent / 2)
    hi = frame.inverse(x0 + extent / 2, y0 + extent / 2)
    return Plan("AREA_SURVEY", START, box(*lo, *hi), 60.0, (sortie,))


def _median_ms(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000.0)
    return statistics.median(times)


def run(instance_path: str, args: Any = None) -> dict[str, Any]:
    t_all = time.perf_counter()
    p = json.loads(Path(instance_path).read_text(encoding="utf-8"))
    world = make_world(p)
    rules = load_rules(RULES_FILE)
    ctx = EvaluationContext(now=START, required_sensors=frozenset({"RGB_CAMERA"}))
    plan = make_plan(p, p["waypoints"])
    frame = LocalFrame.for_geometry(plan.area_wgs84)
    repeats = int(p.get("repeats", 5))

    build_ms = _median_ms(lambda: ZoneIndex.build(world.zones, frame), max(1, repeats // 2))
    fresh = World(**{**world.__dict__, "zones": tuple(world.zones)})  # a new tuple: the memo misses once
    t = time.perf_counter()
    verdict = evaluate(plan, fresh, rules, context=ctx)
    cold_ms = (time.perf_counter() - t) * 1000.0
    evaluate_ms = _median_ms(lambda: evaluate(plan, fresh, rules, context=ctx), repeats)

    growth = []
    for n in p["growth_waypoints"]:
        pn = make_plan(p, n)
        evaluate(pn, fresh, rules, context=ctx)  # warm
        ms = _median_ms(lambda pn=pn: evaluate(pn, fresh, rules, context=ctx), repeats)
        growth.append({"waypoints": n, "evaluate_ms": round(ms, 3), "us_per_waypoint": round(1000.0 * ms / n, 3)})
    xs = np.log([g["waypoints"] for g in growth])
    ys = np.log([g["evaluate_ms"] for g in growth])
    exponent = round(float(np.polyfit(xs, ys, 1)[0]), 3) if len(growth) >= 2 else None
    n_wp = sum(len(leg.waypoints) for s in plan.sorties for leg in s.legs)
    return {
        "instance": p["name"],
        "zones": len(world.zones),
        "waypoints": n_wp,
        "index_build_ms": round(build_ms, 3),
        "cold_evaluate_ms": round(cold_ms, 3),
        "evaluate_ms": round(evaluate_ms, 3),
        "budget_ms": p["budget_ms"],
        "within_budget": evaluate_ms <= p["budget_ms"],
        "findings": len(verdict.findings),
        "blocking_findings": len(verdict.blocking),
        "zones_in_findings": len({f.zone_id for f in verdict.findings if f.zone_id}),
        "growth": growth,
        "growth_exponent": exponent,
        "seconds": round(time.perf_counter() - t_all, 3),
    }
