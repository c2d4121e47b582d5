"""The lanes reference baseline of ``../shared/bench/README.md`` section 5, for instances it has no figure for.

    uv run python -m bench.rpp_baseline INSTANCE.json

A Rural Postman tour over the required lines — their components joined by a minimum
spanning tree of the nearest deadheads, the odd nodes given a minimum-weight perfect
matching (every pair: exact), an Euler tour — split optimally into depot-to-depot
sorties within ``max_sortie_m`` (route first, cluster second, from every starting line
of the tour). Deadheads are straight, or around the no-fly polygons. It is the
planner's own tour-and-split start (``planner.patrol.rpp_start``) run on single lines
instead of chains, with the exact matching and every rotation. On the public
instances it gives grid8_r35 38 312.9 m (the README's figure exactly) and
helsinki_service_nofly 20 159.0 m (README: 20 040.7 m; its Euler tour differs), so the
baseline of the extra instances is the same kind of plan, if anything a little longer.
Bench only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from planner.geo.deadheads import Deadheads
from planner.patrol.rpp_start import rpp_split

__all__ = ["rpp_split_total", "main"]


def rpp_split_total(lines: list[np.ndarray], depots_xy: np.ndarray, max_sortie_m: float, transit) -> tuple[float, int]:
    """(total flown metres, sorties) of the baseline; ``inf`` when a line fits no sortie."""
    lines = [np.asarray(l, float)[:, :2] for l in lines]
    lengths = np.asarray([float(np.hypot(*np.diff(a, axis=0).T).sum()) for a in lines])
    points = np.vstack([np.asarray([[a[0], a[-1]] for a in lines]).reshape(-1, 2), depots_xy])
    D = Deadheads(points, transit).D
    sorties = rpp_split(D, points, lengths, [max_sortie_m] * len(depots_xy), match_neighbours=None, rotations=None)
    if not sorties:
        return float("inf"), 0
    T = len(lines)
    total = 0.0
    for d, seq in sorties:
        walk = [2 * T + d] + [p for t, r in seq for p in ((2 * t + 1, 2 * t) if r else (2 * t, 2 * t + 1))] + [2 * T + d]
        total += float(sum(D[a, b] for a, b in zip(walk[:-1], walk[1:]) if not (a // 2 == b // 2 and a < 2 * T and b < 2 * T)))
        total += float(sum(lengths[t] for t, _ in seq))
    return total, len(sorties)


def main(argv: list[str] | None = None) -> int:
    """The baseline total and sorties of a lanes instance, as one JSON object."""
    from bench.lanes import _nofly
    from planner.geo.transit import TransitGraph

    ap = argparse.ArgumentParser(prog="python -m bench.rpp_baseline", description=__doc__)
    ap.add_argument("instance")
    inst = json.loads(Path(ap.parse_args(argv).instance).read_text(encoding="utf-8"))
    req = [f for f in inst["features"] if (f.get("properties") or {}).get("required")]
    lines = [np.asarray(f["geometry"]["coordinates"], float) for f in req]
    polys = _nofly(inst)
    transit = TransitGraph(polys, 0.0) if polys else None
    depots = np.asarray([(d["x"], d["y"]) for d in inst["depots"]], float)
    total, sorties = rpp_split_total(lines, depots, float(inst["max_sortie_m"]), transit)
    print(json.dumps({"instance": inst.get("name"), "baseline_m": round(total, 1), "sorties": sorties}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
