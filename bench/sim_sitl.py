"""``python -m bench.sim_sitl FLIGHT.json|DIR …``: the simulator's ArduCopter against flights of a real one (SITL).

Each flight is a record of ArduCopter 4.6.3 SITL flying a mission (the ``sitl`` engineer's corpus format:
``mission``, ``params`` read from the vehicle, ``summary``, ``statustext`` with the vehicle's clock, ``track``). The
simulator flies the same mission with the same parameters (``flows.sim.offline.fly_mission``; SIM_SPEED_MAX the
speed SITL's "+" frame reaches at the flight's ANGLE_MAX, 10 m/s at 30°, unless ``--speed-max``) and this prints, as one JSON
object: per flight the real and simulated time from MISSION_START to the disarm, the ratio, the time per item
reached (median and worst absolute difference), the median airborne ground speed of each; and over all flights
the median and worst relative error. Pure CPU, no timing of the machine: figures do not depend on its load.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

from flows.sim.offline import fly_mission
from planner.output.mission_items import MissionItem

__all__ = ["compare", "main"]

SITL_FRAME_SPEED_MAX = 10.0
SITL_REF_SPEED, SITL_REF_ANGLE = 15.08, 45.0  # SIM_Frame's "+" model: refSpd at refAngle (libraries/SITL/SIM_Frame.h)


def sitl_frame_speed_max(angle_max_cd: float) -> float:
    """The top speed of SITL's "+" frame at lean limit ANGLE_MAX (centidegrees): its drag is fitted so that 45° holds
    15.08 m/s (``SIM_Frame::init``), and at 30° the recorded flights plateau at 10.0 m/s; between and beyond, the
    horizontal force tan(angle) against drag ∝ v^1.337, the exponent those two points give."""
    exponent = math.log(math.tan(math.radians(SITL_REF_ANGLE)) / math.tan(math.radians(30.0))) / math.log(
        SITL_REF_SPEED / SITL_FRAME_SPEED_MAX)
    ratio = math.tan(math.radians(angle_max_cd / 100.0)) / math.tan(math.radians(SITL_REF_ANGLE))
    return SITL_REF_SPEED * ratio ** (1.0 / exponent)


def _items(rows: list[dict[str, Any]]) -> list[MissionItem]:
    return [MissionItem(seq=r["seq"], command=r["command"], frame=r["frame"], lat=r["lat"], lon=r["lon"],
                        alt_m=r["alt_m"], param1=r["params"][0], param2=r["params"][1], param3=r["params"][2],
                        param4=r["params"][3], autocontinue=r.get("autocontinue", 1)) for r in rows]


def _reached(texts: list[tuple[float, str]], start: float) -> dict[str, float]:
    return {s: t - start for t, s in texts if s.startswith("Reached command #")}


def compare(flight: dict[str, Any], speed_max: float | None = None) -> dict[str, Any]:
    """One flight against the simulator (``speed_max`` None: SITL's frame at the flight's ANGLE_MAX)."""
    params = {k: float(v) for k, v in flight.get("params", {}).items() if isinstance(v, (int, float))}
    params.setdefault("SIM_SPEED_MAX", speed_max if speed_max else sitl_frame_speed_max(params.get("ANGLE_MAX", 3000.0)))
    run = fly_mission(_items(flight["mission"]), params=params)
    s = flight["summary"]
    real = s["disarm_t_s"] - s["mission_start_t_s"]
    out: dict[str, Any] = {"name": flight.get("name"), "set": flight.get("set"), "real_s": round(real, 1),
                           "sim_s": None if run.disarm_t is None else round(run.disarm_t, 1)}
    if run.disarm_t is None:
        out["error"] = "the simulated flight did not disarm"
        return out
    out["ratio"] = round(run.disarm_t / real, 4)
    texts = [(float(t), str(text)) for t, _, text in flight["statustext"]]
    r = _reached(texts, s["mission_start_t_s"])
    m = _reached(run.texts, 0.0)
    steps: list[float] = []
    prev_r = prev_m = 0.0
    for key in sorted(set(r) & set(m), key=lambda k: r[k]):
        steps.append(abs((m[key] - prev_m) - (r[key] - prev_r)))
        prev_r, prev_m = r[key], m[key]
    out["items"] = len(steps)
    out["items_missing"] = sorted(set(r) ^ set(m))
    if steps:
        out["item_abs_s_median"] = round(statistics.median(steps), 3)
        out["item_abs_s_max"] = round(max(steps), 3)
    speeds = [row[4] for row in flight["track"] if len(row) > 4 and row[3] > 0.5]
    if speeds:
        out["median_speed_real"] = round(statistics.median(speeds), 2)
    sim_speeds = run.ground_speeds()
    if sim_speeds:
        out["median_speed_sim"] = round(statistics.median(sim_speeds), 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sim_sitl", description=__doc__)
    parser.add_argument("paths", nargs="+", help="flight files or folders of them")
    parser.add_argument("--speed-max", type=float, default=None,
                        help="SIM_SPEED_MAX (m/s); default: SITL's frame at each flight's ANGLE_MAX")
    args = parser.parse_args(argv)
    files: list[Path] = []
    for p in map(Path, args.paths):
        files += sorted(p.glob("*.json")) if p.is_dir() else [p]
    rows = [compare(json.loads(f.read_text(encoding="utf-8")), args.speed_max) for f in files]
    errors = [abs(r["ratio"] - 1.0) for r in rows if "ratio" in r]
    summary = {"flights": len(rows), "compared": len(errors)}
    if errors:
        summary.update(median_abs_rel_error=round(statistics.median(errors), 4), max_abs_rel_error=round(max(errors), 4),
                       within_5pct=sum(e <= 0.05 for e in errors), within_10pct=sum(e <= 0.10 for e in errors))
    json.dump({"summary": summary, "flights": rows}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
