"""The lanes reference baseline of ``../shared/bench/README.md`` section 5, for instances it has no figure for.

    uv run python -m bench.rpp_baseline INSTANCE.json

A Rural Postman tour over the required lines — their components joined by a minimum
spanning tree of the nearest deadheads, the odd nodes given a minimum-weight perfect
matching (every pair: exact), an Euler tour — split optimally into depot-to-depot
sorties within ``max_sortie_m`` (route first, cluster second, from every starting line
of the tour). Deadheads are straight, or around the no-fly polygons. It is the
planner's own rural postman tour (``planner.patrol.rpp_start``) over single lines, with
the exact matching, split here in metres from every rotation, one dynamic programme at
a time (kept as it was, so the baseline's figures stay what they were). On the public
instances it gives grid8_r35 38 312.9 m (the README's figure exactly) and
helsinki_service_nofly 20 159.0 m (README: 20 040.7 m; its Euler tour differs), so the
baseline of the extra instances is the same kind of plan, if anything a little longer.
Bench only.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from planner.geo.deadheads import Deadheads
from planner.patrol.rpp_start import tour_orders

__all__ = ["rpp_split", "rpp_split_total", "main"]

_MATCH_NEIGHBOURS = 10
_ROTATIONS = 16


def split_tour(seq: list[tuple[int, bool]], chain_len: np.ndarray, D: np.ndarray, T: int, caps: Sequence[float]
               ) -> tuple[float, list[tuple[int, list[tuple[int, bool]]]]]:
    """The cheapest split of ``seq`` (chains in flight order) into depot sorties: (total metres, sorties)."""
    n, nd = len(seq), len(caps)
    entry = np.asarray([2 * t + (1 if r else 0) for t, r in seq])
    exit_ = np.asarray([2 * t + (0 if r else 1) for t, r in seq])
    work = chain_len[[t for t, _ in seq]]
    hop = np.concatenate([D[exit_[:-1], entry[1:]], [0.0]])
    inner = np.concatenate([[0.0], np.cumsum(work + hop)])
    out = D[2 * T + np.arange(nd)][:, entry]  # depot → entry of chain i
    back = D[exit_][:, 2 * T + np.arange(nd)]  # exit of chain j → depot
    cap = np.asarray(caps, float)[:, None]
    best = np.full(n + 1, np.inf)
    prev = np.full(n + 1, -1, dtype=np.int64)
    depot = np.full(n + 1, -1, dtype=np.int64)
    best[0] = 0.0
    for i in range(n):
        if not math.isfinite(best[i]):
            continue
        j = np.arange(i, n)
        body = inner[j + 1] - inner[i] - hop[j]
        each = out[:, i][:, None] + back[j].T + body[None, :]  # (depot, j)
        each = np.where(each <= cap, each, np.inf)
        d = np.argmin(each, axis=0)
        cand = best[i] + each[d, np.arange(len(j))]
        better = cand < best[j + 1]
        best[j + 1] = np.where(better, cand, best[j + 1])
        prev[j + 1] = np.where(better, i, prev[j + 1])
        depot[j + 1] = np.where(better, d, depot[j + 1])
    if not math.isfinite(best[n]):
        return math.inf, []
    sorties, j = [], n
    while j > 0:
        i = int(prev[j])
        sorties.append((int(depot[j]), list(seq[i:j])))
        j = i
    return float(best[n]), sorties[::-1]


def rpp_split(D: np.ndarray, points: np.ndarray, chain_len: np.ndarray, caps: Sequence[float],
              match_neighbours: int | None = _MATCH_NEIGHBOURS, rotations: int | None = _ROTATIONS,
              ) -> list[tuple[int, list[tuple[int, bool]]]]:
    """Sorties ``[(depot, [(chain, reversed?)])]`` of the split tour, or [] when some chain fits no sortie.

    ``D``: deadheads over the chain ends (2t start, 2t+1 end) then the depots;
    ``points``: their positions; ``caps``: each depot's sortie limit (metres).
    ``match_neighbours`` None: the exact matching over every pair of odd nodes;
    ``rotations`` None: the split from every starting chain (the bench's baseline).
    """
    T = len(chain_len)
    if T == 0:
        return []
    order = tour_orders(D, points, T, match_neighbours)[0]
    best: tuple[float, list] = (math.inf, [])
    n = len(order)
    starts = range(n) if rotations is None else sorted({(i * n) // rotations for i in range(rotations)})
    for r in starts:
        got = split_tour(order[r:] + order[:r], chain_len, D, T, caps)
        if got[0] < best[0]:
            best = got
    return best[1]


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
