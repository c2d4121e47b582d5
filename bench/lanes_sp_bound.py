"""A sortie-level lower bound: ``python -m bench.lanes_sp_bound INSTANCE [--seconds S]``.

``bench.lanes_cap_bound`` counts the limit through region cuts on one pooled flow of
deadheads. This is the set-covering relaxation over whole sorties instead: choose
sorties (closed walks from the one dock, at most L long, each serving whole lines once)
with weights λ ≥ 0 so that every line is served at least once; the LP optimum is a
lower bound on every plan of such sorties. Columns come from exact pricing: a labelling
search over elementary sorties (every order and direction of the lines, straight
deadheads), labels dominated when another at the same line end is no longer, no dearer
in reduced cost and has served a subset of its lines, and cut off when a fractional
knapsack of the lines still unserved (each at its own length, within the budget left)
cannot bring the reduced cost below zero. When the exact pricing finds no sortie of
negative reduced cost under the master's duals π ≥ 0, Σπ is a lower bound by weak duality
(``converged``; rounded down); when the clock stops it first there is no bound (``null``).
``master_m`` is the last restricted master's value: a mix of real sorties, so the full LP
is no higher — when it is already below a target, this relaxation cannot prove the target
out of reach. ``--ip-seconds`` then picks the cheapest cover from the sorties priced so far
(SCIP): a real plan, the search's answer to "is there a shorter plan of whole lines".

Scope as ``bench.lanes_cap_bound``: one dock, no no-fly zones, sorties that fly each
line they serve from end to end. Bench only.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from ortools.linear_solver import pywraplp

from bench.lanes import _nofly

__all__ = ["sp_bound", "main"]

_EPS = 1e-6


def _master(cols: list[tuple[float, int]], n_lines: int):
    """The set-covering LP over ``cols`` (cost, served-lines mask), by GLOP: value, λ, the lines' duals."""
    s = pywraplp.Solver.CreateSolver("GLOP")
    lam = [s.NumVar(0.0, s.infinity(), "") for _ in cols]
    s.Minimize(sum(cost * v for (cost, _), v in zip(cols, lam)))
    rows = [s.Add(sum(v for (_, m), v in zip(cols, lam) if m >> e & 1) >= 1.0) for e in range(n_lines)]
    if s.Solve() != pywraplp.Solver.OPTIMAL:
        raise RuntimeError("GLOP did not reach an optimum")
    pi = np.asarray([max(0.0, r.dual_value()) for r in rows])
    return s.Objective().Value(), np.asarray([v.solution_value() for v in lam]), pi


def integer_cover(cols: list[tuple[float, int]], n_lines: int, seconds: float,
                  pi: np.ndarray | None = None, keep_rc: float = math.inf) -> tuple[float | None, list[int]]:
    """The cheapest set of priced sorties that serves every line (SCIP, time-limited): a real plan's length.
    With duals ``pi``, only sorties of reduced cost ≤ ``keep_rc`` take part (a search, not a proof)."""
    if pi is not None:
        keep = [k for k, (c, m) in enumerate(cols)
                if c - sum(pi[e] for e in range(n_lines) if m >> e & 1) <= keep_rc]
        best, chosen = integer_cover([cols[k] for k in keep], n_lines, seconds)
        return best, [keep[k] for k in chosen]
    s = pywraplp.Solver.CreateSolver("SCIP")
    use = [s.BoolVar("") for _ in cols]
    s.Minimize(sum(cost * v for (cost, _), v in zip(cols, use)))
    for e in range(n_lines):
        s.Add(sum(v for (_, m), v in zip(cols, use) if m >> e & 1) >= 1)
    s.SetTimeLimit(int(seconds * 1000))
    if s.Solve() not in (pywraplp.Solver.OPTIMAL, pywraplp.Solver.FEASIBLE):
        return None, []
    chosen = [k for k, v in enumerate(use) if v.solution_value() > 0.5]
    return float(sum(cols[k][0] for k in chosen)), chosen


def _price(ends: np.ndarray, length: np.ndarray, D: np.ndarray, dock: int, L: float, pi: np.ndarray,
           max_labels: int | None, deadline: float) -> tuple[list[tuple[float, float, int]], bool]:
    """Sorties of negative reduced cost (rc, cost, mask), most negative first; ``exact`` when nothing was cut short."""
    n_lines = len(length)
    gain = pi - length  # what serving a line adds, before the flight to it
    order = [e for e in np.argsort(-gain / length, kind="stable") if gain[e] > _EPS]

    def hope(mask: int, room: float) -> float:
        """A fractional knapsack: the most the lines still unserved can lower the reduced cost within ``room``."""
        total = 0.0
        for e in order:
            if mask >> e & 1:
                continue
            if length[e] <= room:
                total += gain[e]
                room -= length[e]
            else:
                total += gain[e] * max(room, 0.0) / length[e]
                break
        return total

    # every (line, direction) as one vector entry: enter at s_all, leave at t_all
    line2 = np.concatenate([np.arange(n_lines), np.arange(n_lines)])
    s_all = np.concatenate([ends[:, 0], ends[:, 1]])
    t_all = np.concatenate([ends[:, 1], ends[:, 0]])
    len2, pi2 = length[line2], pi[line2]
    found: dict[int, tuple[float, float]] = {}
    exact = True
    frontier = [(dock, 0.0, 0.0, 0)]  # (node, flown, reduced cost, served mask)
    while frontier:
        if time.monotonic() > deadline:
            return [], False
        buckets: dict[int, list[tuple[float, float, int]]] = {}
        for count, (node, flown, rc, mask) in enumerate(frontier):
            if count % 256 == 0 and time.monotonic() > deadline:
                return [], False
            free = np.asarray([not (mask >> e & 1) for e in range(n_lines)] * 2)
            f2 = flown + D[node, s_all] + len2
            ok = free & (f2 + D[t_all, dock] <= L + 1e-9)
            r2 = rc + D[node, s_all] + len2 - pi2
            close = r2 + D[t_all, dock]
            # a child's unserved lines are a subset of the parent's: the parent's hope bounds the child's
            grow = ok & (r2 - hope(mask, L - flown) < -_EPS)
            for k in np.flatnonzero(ok & (close < -_EPS)):
                m2 = mask | (1 << int(line2[k]))
                if m2 not in found or close[k] < found[m2][0]:
                    found[m2] = (float(close[k]), float(f2[k] + D[t_all[k], dock]))
            for k in np.flatnonzero(grow):
                buckets.setdefault(int(t_all[k]), []).append((float(f2[k]), float(r2[k]), mask | (1 << int(line2[k]))))
        frontier = []
        for t, labs in buckets.items():
            labs.sort()
            kept: list[tuple[float, float, int]] = []
            for count, (f2, r2, m2) in enumerate(labs):  # sorted by flown: a kept label is no longer
                if count % 256 == 0 and time.monotonic() > deadline:
                    return [], False
                if any(r <= r2 + 1e-9 and (m & m2) == m for _, r, m in kept):
                    continue
                kept.append((f2, r2, m2))
            if max_labels is not None and len(kept) > max_labels:
                kept.sort(key=lambda k: k[1])
                kept = kept[:max_labels]
                exact = False
            frontier.extend((t, f2, r2, m2) for f2, r2, m2 in kept)
    cols = sorted((rc, cost, m) for m, (rc, cost) in found.items())
    return cols, exact


def sp_bound(lines: list[np.ndarray], dock_xy: np.ndarray, max_sortie_m: float, seconds: float = 600.0,
             heuristic_labels: int = 60, per_round: int = 500, log: bool = False,
             ip_seconds: float = 0.0) -> dict[str, object]:
    """``sp_bound_m``: the set-covering LP bound over whole-line sorties from one dock (module docstring)."""
    t0 = time.monotonic()
    deadline = t0 + seconds
    dock_xy = np.asarray(dock_xy, float).reshape(-1, 2)
    if len(dock_xy) != 1:
        raise ValueError("written for one dock")
    keys: dict[tuple[float, float], int] = {}
    pts, ends = [], []
    for a in lines:
        pair = []
        for p in (a[0], a[-1]):
            k = (round(float(p[0]), 3), round(float(p[1]), 3))
            if k not in keys:
                keys[k] = len(keys)
                pts.append(np.asarray(p[:2], float))
            pair.append(keys[k])
        ends.append(pair)
    xy = np.vstack(pts + [dock_xy[0]])
    dock = len(pts)
    D = np.hypot(*(xy[:, None, :] - xy[None, :, :]).transpose(2, 0, 1))
    ends_a = np.asarray(ends)
    length = np.asarray([float(np.hypot(*np.diff(a, axis=0).T).sum()) for a in lines])
    cols: list[tuple[float, int]] = []
    for e, (u, v) in enumerate(ends):
        cost = min(D[dock, u] + D[v, dock], D[dock, v] + D[u, dock]) + length[e]
        if cost > max_sortie_m + 1e-9:
            raise ValueError(f"line {e} cannot be served by one sortie within {max_sortie_m} m")
        cols.append((float(cost), 1 << e))
    seen = {m: k for k, (_, m) in enumerate(cols)}
    rounds, value, converged, dual = 0, math.nan, False, math.nan
    phase_labels: int | None = heuristic_labels
    while time.monotonic() < deadline:
        rounds += 1
        value, lam, pi = _master(cols, len(lines))
        new, exact = _price(ends_a, length, D, dock, max_sortie_m, pi, phase_labels, deadline)
        if log:
            print(f"round {rounds}: master {value:.1f}, {len(new)} priced (exact {exact}, labels {phase_labels}), "
                  f"best rc {new[0][0] if new else 0.0:.1f}, {time.monotonic() - t0:.0f} s", file=sys.stderr)
        if not exact and not new and time.monotonic() >= deadline:
            break
        # a new lines-set, or a cheaper sortie for a known one (it replaces the dearer column)
        fresh = [(rc, cost, m) for rc, cost, m in new if m not in seen or cost < cols[seen[m]][0] - 1e-6]
        if phase_labels is None and exact and not new:
            # π ≥ 0 prices every sortie at a reduced cost ≥ 0: by weak duality Σπ bounds the full LP
            converged, dual = True, float(pi.sum())
            break
        if not fresh:
            if phase_labels is None:
                break  # exact pricing returned only known columns: numerical stall
            phase_labels = None  # the heuristic found nothing: price exactly
            continue
        for rc, cost, m in fresh[:per_round]:
            if m in seen:
                cols[seen[m]] = (cost, m)
            else:
                seen[m] = len(cols)
                cols.append((cost, m))
    out = {"required_m": round(float(length.sum()), 1), "sp_bound_m": round(dual - 0.05, 1) if converged else None,
           "master_m": None if math.isnan(value) else round(value, 1), "columns": len(cols), "rounds": rounds,
           "converged": converged, "seconds": round(time.monotonic() - t0, 1)}
    if ip_seconds > 0 and rounds:
        # sorties far above the duals' price rarely belong to a short plan: keep the 5 % band
        best, chosen = integer_cover(cols, len(lines), ip_seconds, pi, 0.05 * value)
        out["integer_plan_m"] = None if best is None else round(best, 1)
        out["integer_sorties"] = len(chosen)
    return out


def main(argv: list[str] | None = None) -> int:
    """The set-covering bound of a one-dock lanes instance without no-fly zones, as one JSON object."""
    ap = argparse.ArgumentParser(prog="python -m bench.lanes_sp_bound", description=__doc__)
    ap.add_argument("instance")
    ap.add_argument("--seconds", type=float, default=600.0, help="give up after this long (wall); no bound then")
    ap.add_argument("--ip-seconds", type=float, default=0.0,
                    help="then choose the cheapest cover from the priced sorties (SCIP) for this long")
    a = ap.parse_args(argv)
    inst = json.loads(Path(a.instance).read_text(encoding="utf-8"))
    if _nofly(inst):
        raise SystemExit("lanes_sp_bound: no-fly zones bend deadheads; the sorties here fly straight")
    req = [f for f in inst["features"] if (f.get("properties") or {}).get("required")]
    lines = [np.asarray(f["geometry"]["coordinates"], float)[:, :2] for f in req]
    depots = np.asarray([(d["x"], d["y"]) for d in inst["depots"]], float)
    print(json.dumps({"instance": inst.get("name"), **sp_bound(lines, depots, float(inst["max_sortie_m"]), a.seconds, log=True,
                                                          ip_seconds=a.ip_seconds)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
