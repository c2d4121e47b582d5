"""Cheapest insertion over every gap of every route at once: a complete city plan in seconds.

At city scale the first plan that serves every site must be cheap, or a deadline
passes before there is anything to fly. The search (``planner.routing.regions``)
then only improves a plan that is already complete, and stops at its deadline.

Routes are held as a pool of arcs (from, to, vehicle): a vehicle with no visit is one
arc start → end; putting visit ``n`` into arc a → b turns it into a → n and n → b.
The added cost of ``n`` in every arc of every route is then one vectorised NumPy
expression (``c[a, n] + c[n, b] − c[a, b]``, the vehicle's load and limit gathered
alongside), where the loop it replaces tried the vehicles one by one in Python
(measured on ``city_n5000``: 6.6 CPU s for the few hundred sites the regions left
out). One insertion costs O(arcs) = O(sites + vehicles) array work, so a plan of
n sites costs O(n (n + vehicles)) NumPy element operations and n Python steps:
~1 s of one core at 5 000 sites and 560 drones.

Order (``farthest_first``): the sites whose there-and-back to the nearest dock with
a drone that reaches them is longest go first, while every drone still has room —
the order of ``../shared/bench/gen_vrp.py``'s feasibility witness ("sequential
cheapest insertion (farthest-first)"), whose routes prove such instances feasible.
Capacity (the profile's matrix) and duration limits are both kept; ties go to the
lowest arc index, so the result is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from planner.routing.model import RouteModel, route_fits

__all__ = ["ArcPool", "EJECT_OPTIONS", "MAX_EJECTIONS", "farthest_first", "insert_leftovers"]

EJECT_OPTIONS = 8  # drones tried for a site that fits nowhere (the nearest, there and back)
MAX_EJECTIONS = 64  # such sites handled by ejection per call; the rest wait for the search

_NO_LIMIT = np.iinfo(np.int64).max // 4


class ArcPool:
    """``routes`` (one node list per vehicle of ``model``) as arcs, for vectorised cheapest insertion."""

    def __init__(self, model: RouteModel, routes: list[list[int]]) -> None:
        self.model = model
        vs = model.vehicles
        size = len(vs) + model.n_nodes + 1
        self.frm = np.zeros(size, dtype=np.int64)
        self.to = np.zeros(size, dtype=np.int64)
        self.veh = np.zeros(size, dtype=np.int64)
        self.m = 0
        self.profile = np.asarray([v.profile for v in vs], dtype=np.int64)
        self.cap = np.asarray([v.capacity if model.capacity_dimension else _NO_LIMIT for v in vs], dtype=np.int64)
        timed = model.durations is not None
        self.max_dur = np.asarray([v.max_duration if (timed and v.max_duration is not None) else _NO_LIMIT for v in vs],
                                  dtype=np.int64)
        self.timed = timed and bool((self.max_dur < _NO_LIMIT).any())
        self.profiles = sorted(set(self.profile.tolist())) or [0]
        for k, (v, r) in enumerate(zip(vs, routes)):
            walk = [v.start, *r, v.end]
            for a, b in zip(walk[:-1], walk[1:]):
                self.frm[self.m], self.to[self.m], self.veh[self.m] = a, b, k
                self.m += 1
        self.load = np.zeros(len(vs), dtype=np.int64)
        self.dur = np.zeros(len(vs), dtype=np.int64)
        m = self.m
        self.arc_cost = np.zeros(size, dtype=np.int64)
        self.arc_cost[:m] = self._gather(model.costs, self.frm[:m], self.to[:m], self.veh[:m])
        np.add.at(self.load, self.veh[:m], self.arc_cost[:m])
        self.arc_dur = np.zeros(size, dtype=np.int64)
        if self.timed:
            assert model.durations is not None
            self.arc_dur[:m] = self._gather(model.durations, self.frm[:m], self.to[:m], self.veh[:m])
            np.add.at(self.dur, self.veh[:m], self.arc_dur[:m])

    def _gather(self, mats: tuple[np.ndarray, ...], a: np.ndarray, b: np.ndarray, veh: np.ndarray) -> np.ndarray:
        """``mats[profile of the arc's vehicle][a, b]`` for every arc, int64."""
        if len(self.profiles) <= 1:
            return mats[self.profiles[0]][a, b].astype(np.int64)
        out = np.zeros(len(a), dtype=np.int64)
        prof = self.profile[veh]
        for p in sorted(set(prof.tolist())):
            sel = prof == p
            out[sel] = mats[p][a[sel], b[sel]]
        return out

    def _added(self, mats: tuple[np.ndarray, ...], n: int, own: np.ndarray) -> np.ndarray:
        m = self.m
        a, b = self.frm[:m], self.to[:m]
        if len(self.profiles) <= 1:
            c = mats[self.profiles[0]]
            return c[a, n].astype(np.int64) + c[n, b] - own
        out = np.zeros(m, dtype=np.int64)
        prof = self.profile[self.veh[:m]]
        for p in self.profiles:
            sel = prof == p
            out[sel] = mats[p][a[sel], n].astype(np.int64) + mats[p][n, b[sel]] - own[sel]
        return out

    def insert(self, n: int, skip: int = -1) -> bool:
        """Put visit ``n`` where it adds least within every limit (never in vehicle ``skip``); whether it went in."""
        m = self.m
        if m == 0:
            return False
        veh = self.veh[:m]
        delta = self._added(self.model.costs, n, self.arc_cost[:m])
        ok = self.load[veh] + delta <= self.cap[veh]
        if self.timed:
            assert self.model.durations is not None
            ddelta = self._added(self.model.durations, n, self.arc_dur[:m])
            ok &= self.dur[veh] + ddelta <= self.max_dur[veh]
        if skip >= 0:
            ok &= veh != skip
        if not ok.any():
            return False
        e = int(np.argmin(np.where(ok, delta, _NO_LIMIT)))
        k, a, b = int(veh[e]), int(self.frm[e]), int(self.to[e])
        self.load[k] += int(delta[e])
        self.to[e], self.frm[m], self.to[m], self.veh[m] = n, n, b, k
        c = self.model.costs[int(self.profile[k])]
        self.arc_cost[e], self.arc_cost[m] = int(c[a, n]), int(c[n, b])
        if self.timed:
            assert self.model.durations is not None
            d = self.model.durations[int(self.profile[k])]
            self.dur[k] += int(d[a, n]) + int(d[n, b]) - int(self.arc_dur[e])
            self.arc_dur[e], self.arc_dur[m] = int(d[a, n]), int(d[n, b])
        self.m += 1
        return True

    def routes(self) -> list[list[int]]:
        """One node list per vehicle, in flying order."""
        out: list[list[int]] = []
        m = self.m
        order = np.argsort(self.veh[:m], kind="stable")
        bounds = np.searchsorted(self.veh[:m][order], np.arange(len(self.model.vehicles) + 1))
        for k, v in enumerate(self.model.vehicles):
            arcs = order[bounds[k] : bounds[k + 1]]
            nxt = {int(self.frm[e]): int(self.to[e]) for e in arcs}
            route, node = [], nxt.get(v.start, v.end)
            for _ in range(len(arcs) - 1):
                route.append(node)
                node = nxt[node]
            out.append(route)
        return out


def farthest_first(model: RouteModel, nodes: list[int]) -> list[int]:
    """``nodes`` by their least there-and-back to a dock whose drones reach them, longest first (ties: node)."""
    if not nodes:
        return []
    idx = np.asarray(nodes, dtype=np.int64)
    best = np.full(len(idx), _NO_LIMIT, dtype=np.int64)
    fallback = np.full(len(idx), _NO_LIMIT, dtype=np.int64)
    for profile, start, end, capacity in sorted({(v.profile, v.start, v.end, v.capacity) for v in model.vehicles}):
        c = model.costs[profile]
        there_back = c[start, idx].astype(np.int64) + c[idx, end]
        fallback = np.minimum(fallback, there_back)
        best = np.minimum(best, np.where(there_back <= capacity, there_back, _NO_LIMIT))
    best = np.where(best < _NO_LIMIT, best, fallback)
    return idx[np.lexsort((idx, -best))].tolist()


# ---------------------------------------------------------------- the sites that fit nowhere
def insert_leftovers(model: RouteModel, routes: list[list[int]], options: int = 0,
                     expired: Callable[[], bool] | None = None) -> list[list[int]]:
    """``routes`` with the visits no route serves put in where they add least, within every limit.

    Cheapest feasible insertion (``ArcPool``; an idle drone counts), farthest first. A site
    that fits nowhere is given to one of the ``options`` drones nearest to it that reach it
    (``EJECT_OPTIONS`` by default), and the sites that drone must drop to keep its limits are
    inserted elsewhere (one ejection; dropped when they do not all fit): at most
    ``MAX_EJECTIONS`` such sites, and none once ``expired()`` says the deadline has passed.
    What still fits nowhere stays out for the search. Deterministic.
    """
    pool = ArcPool(model, routes)
    served = {n for r in routes for n in r}
    todo = farthest_first(model, [g[0] for g in model.groups if not any(n in served for n in g)])
    failed = [n for n in todo if not pool.insert(n)]
    for n in failed[:MAX_EJECTIONS]:
        if expired is not None and expired():
            break
        pool = _eject(model, pool, n, options or EJECT_OPTIONS, expired) or pool
    return pool.routes()


def _eject(model: RouteModel, pool: ArcPool, n: int, options: int,
           expired: Callable[[], bool] | None) -> ArcPool | None:
    """Give ``n`` to the drone that reaches it where the change costs least, re-placing what that drone drops.

    Only the ``options`` drones nearest to it (there and back) are tried, each on a fresh
    ``ArcPool`` (O(arcs)); the tries stop when ``expired()``.
    """
    reach = []
    for k, v in enumerate(model.vehicles):
        c = model.costs[v.profile]
        there_back = int(c[v.start, n]) + int(c[n, v.end])
        if there_back <= v.capacity:
            reach.append((there_back, k))
    routes = pool.routes()
    base = int(pool.load.sum())
    best: tuple[int, int, ArcPool] | None = None
    for _, k in sorted(reach)[:options]:
        if expired is not None and expired():
            break
        v = model.vehicles[k]
        c = model.costs[v.profile]
        walk = np.asarray([v.start, *routes[k], v.end], dtype=np.int64)
        delta = c[walk[:-1], n].astype(np.int64) + c[n, walk[1:]] - c[walk[:-1], walk[1:]]
        route = list(routes[k])
        route.insert(int(np.argmin(delta)), n)
        dropped = []
        while not route_fits(model, v, route):
            w = [v.start, *route, v.end]
            saving = [(int(c[w[i], w[i + 1]]) + int(c[w[i + 1], w[i + 2]]) - int(c[w[i], w[i + 2]]), -i)
                      for i in range(len(route)) if route[i] != n]
            if not saving:
                break
            dropped.append(route.pop(-max(saving)[1]))
        if not route_fits(model, v, route):
            continue
        trial = ArcPool(model, [route if j == k else r for j, r in enumerate(routes)])
        if not all(trial.insert(m, skip=k) for m in dropped):
            continue
        added = int(trial.load.sum()) - base
        if best is None or (added, k) < best[:2]:
            best = (added, k, trial)
    return None if best is None else best[2]
