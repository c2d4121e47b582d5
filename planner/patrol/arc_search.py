"""Arc routing in plain numbers: units served once either way, sorties limited by length, load or both.

One model for the drone's problem and the literature's. A *unit* is something a
sortie must travel along once, in either direction: a lane chain (``planner.patrol.
arc_routing``) or a required edge of a CARP graph (``bench/carp.py``). Between units
a sortie deadheads. Each depot's sorties end where its ``SortieLimit`` says: their
length (the battery: deadheads plus units, as today's lane patrols) and/or the
demand they serve (CARP's capacity). The objective is the total length.

Model (``planner.routing.model.RouteModel``): one node per depot, then two per unit
(entered at its start, or at its end), the pair in ONE disjunction so each unit is
served once, either way. Arc a → b costs the deadhead from a's exit to b's entry
plus b's own length, as an integer: ``ceil(value × scale)`` (lanes count millimetres,
rounded up so a planned sortie never exceeds its true limit; CARP's costs are
integers already, scale 1). The same figure fills the length dimension where a
length limit applies; a unit's demand sits on both its nodes for the load dimension.

Search: OR-Tools' iterated local search where the budget buys it enough solutions
for the model's size, else PyVRP on the same model (the unit's two nodes a
mutually exclusive client group) with its routes proven and polished by the
OR-Tools model (``planner.routing.engines``). A ``start`` (sorties within every
limit, e.g. a split tour) is where PyVRP begins and a floor: the answer is never
worse than it. CARP (one depot, a load limit alone): HGS-CARP's memetic search
(``planner.patrol.arc_memetic``: giant tours, a split that chooses directions,
crossover, PyVRP's local search on oriented services) on one lane beside PyVRP's
iterated local search on the other, then both from the best (``_search_memetic``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from planner.routing.budget import Budget
from planner.patrol.arc_memetic import memetic_lane
from planner.patrol.carp_split import CarpData
from planner.routing.budget import STOPPED_BY_DEADLINE, STOPPED_BY_ITERATIONS
from planner.routing.engines import (
    RESTART_SHARE, Searched, drop_over_limits, finish, key, search_budget, search_ils, search_lanes, search_pyvrp,
)
from planner.routing.model import ModelVehicle, RouteModel, Search, routes_fit, solve_model
from planner.routing.pyvrp_start import LANE_NEIGHBOURS, PyvrpInstance, needs_start, pyvrp_instance, pyvrp_run

__all__ = [
    "ArcPlan",
    "ArcProblem",
    "ENGINE",
    "ENGINE_MEMETIC",
    "ENGINE_MEMETIC_ORTOOLS",
    "ENGINE_PYVRP",
    "ENGINE_PYVRP_START",
    "ENGINE_START",
    "SortieLimit",
    "UnitSorties",
    "arc_cost_matrix",
    "solve_arcs",
]

ENGINE = "ortools-ils"
ENGINE_PYVRP_START = "pyvrp-start+ortools"
ENGINE_START = "rpp-tour"  # the caller's start itself (the lanes' tour split), when no search beat it
ENGINE_MEMETIC = "memetic"  # CARP: HGS-CARP's scheme (planner.patrol.arc_memetic), checked by arithmetic
ENGINE_MEMETIC_ORTOOLS = "memetic+ortools"  # ... and loaded and polished by OR-Tools
ENGINE_PYVRP = "pyvrp"  # models too large for the dense OR-Tools model (planner.routing.engines.LOAD_MAX_NODES)
_PENALTY_FACTOR = 100  # an unserved unit costs 100 sortie limits (or longest arcs): never worth it while it fits
# When the budget buys ILS too few solutions for the model's size (``needs_start``; e.g.
# helsinki_service_nofly, 310 nodes: ~20 s for a few hundred solutions, still above the
# baseline), PyVRP searches the same model and OR-Tools loads and polishes its routes.
_FIRST = "PARALLEL_CHEAPEST_INSERTION"  # first solution: the best of four tried on the lane models
_PYVRP_START_SHARE = 0.8  # of the budget for PyVRP; the parent spends ~1 s on deadheads, the model, load and polish
# ILS under a deadline on a model below _STALL_MAX_NODES: local search ends after this many solutions a
# node (at least _STALL_MIN) without a shorter plan (``_stall``). Measured with ``python -m bench.ils_stall``
# and ``bench.ils_trace``, renumberings 0-3: the longest run without improvement before the final best was
# 84 on the demo's 53 nodes, up to 91 on 19 nodes and 64 on 29 (so 2 a node alone lost 0.4 % and 3.3 % there),
# and 2 a node kept every length on 89 nodes but lost ~1 % on three of four renumberings at 105 nodes.
_STALL_PER_NODE = 2.0
_STALL_MIN = 150
_STALL_MAX_NODES = 100
# CPU seconds of one PyVRP iteration on a lane model: a fixed part plus a part per node (measured on
# this machine kind: 0.48-0.62 ms at 101 nodes, grid8_r35; 1.0-1.33 ms at 310, helsinki_service_nofly;
# the higher figures under heavy load). The count is a pure function of (size, budget): the same
# budget gives the same sorties anywhere.
_PYVRP_S_PER_ITERATION = 0.2e-3
_PYVRP_S_PER_ITERATION_NODE = 3.0e-6
_MIN_ITERATIONS = 200
# ILS solutions per CPU second × model nodes (measured ~18 000 on the grid, loaded 2-core
# machine); sets the deterministic solution_limit from the budget
_SOLUTIONS_PER_S_X_NODES = 18_000
_MIN_SOLUTIONS = 50
# Sorties a depot may fly under a load limit: this many times the fewest the demand needs, plus two
# (CARP's best plans use at most one route more than the fewest: gdb8, val 1C, egl-s4-C)
_LOAD_FLEET_FACTOR = 1.25
CARP_NEIGHBOURS = 50  # PyVRP's granular neighbourhood on load-limited models (its default)
# ... in the memetic lane's local search (a child's whole plan, exhaustively): measured at 15 CPU s a lane,
# seed 0 (session 4, tuned on egl-s4-C, 10D, C01, E01): 25 ran 1.5-1.8 x the generations of 50 and ended
# 21 136 / 534 / 4 160 / 4 930 against 21 245 / 535 / 4 190 / 4 930
MEMETIC_NEIGHBOURS = 25
# Work mode of the memetic search (a CARP instance with no clock): generations a nominal second buys
_MEMETIC_GENERATIONS_PER_S = 100
_MIN_GENERATIONS = 50

UnitSorties = list[tuple[int, list[tuple[int, bool]]]]  # [(depot, [(unit, reversed?)])] in flight order


@dataclass(frozen=True)
class SortieLimit:
    """What ends one depot's sortie: its length (deadheads plus units), the demand it serves, or both (None: free)."""

    length: float | None = None
    load: int | None = None


@dataclass(frozen=True)
class ArcProblem:
    """Units to serve once either way, the deadheads between their ends and the depots, each depot's limit.

    ``deadhead``: over the units' ends (unit u: its start 2u, its end 2u+1) then the
    depots; ``service``: each unit's own length; ``demand``: the load each puts on its
    sortie (None: no loads). Model integers are ``ceil(value × scale)``; length limits
    are kept ``slack`` inside (geometry round-off). ``fleet``: the sorties a depot may
    fly in the CARP search (HGS-CARP keeps its whole search within CARPLIB's
    ``VEHICULOS + 1``; ``_search_memetic``); None: as many as ``_fleet_per_depot`` gives.
    """

    deadhead: np.ndarray
    service: np.ndarray
    limits: tuple[SortieLimit, ...]
    demand: np.ndarray | None = None
    scale: float = 1.0
    slack: float = 0.0
    fleet: int | None = None

    @property
    def n_units(self) -> int:
        return len(self.service)


@dataclass(frozen=True)
class ArcPlan:
    """Sorties ``(depot, ((unit, reversed?), ...))`` in a fixed order, the engine, its work, what stopped it."""

    sorties: tuple[tuple[int, tuple[tuple[int, bool], ...]], ...]
    engine: str
    cost: int  # in model integers
    work: int = field(default=0, compare=False)
    stopped_by: str = field(default="", compare=False)


def arc_cost_matrix(D: np.ndarray, unit_len: np.ndarray, nd: int, scale: float) -> np.ndarray:
    """The arc model's integer arc costs: depots first, then each unit entered at its start / at its end.

    ``D``: deadheads over the units' ends (2u start, 2u+1 end) then the ``nd`` depots. An
    arc a → b costs the deadhead from a's exit to b's entry plus b's length, times
    ``scale`` rounded up, so a sum of arcs never understates a sortie.
    """
    U = len(unit_len)
    entry = np.concatenate([[2 * u + r for u in range(U) for r in (0, 1)], 2 * U + np.arange(nd)]).astype(np.int64)
    exit_ = np.concatenate([[2 * u + 1 - r for u in range(U) for r in (0, 1)], 2 * U + np.arange(nd)]).astype(np.int64)
    length = np.concatenate([np.repeat(np.asarray(unit_len, float), 2), np.zeros(nd)])
    cost = np.ceil((D[np.ix_(exit_, entry)] + length[None, :]) * scale).astype(np.int64)
    order = np.concatenate([2 * U + np.arange(nd), np.arange(2 * U)])
    cost = cost[np.ix_(order, order)]
    np.fill_diagonal(cost, 0)
    return cost


def _fleet_per_depot(problem: ArcProblem) -> int:
    """Sorties each depot may fly: enough for every unit from one depot, with room to spare.

    Unused sorties cost nothing; too few would force units out. Under a length limit a
    sortie flies at most its limit, at least half of it on units in any sensible plan
    beyond the first few, so 2 × required / limit + 2 is generous. Under a load limit,
    ``_LOAD_FLEET_FACTOR`` times the fewest sorties the demand needs, plus two.
    """
    service, T = problem.service, problem.n_units
    lengths = [l.length for l in problem.limits if l.length is not None]
    need = 2.0 * float(service.sum()) / max(min(lengths), 1.0) if lengths else 0.0
    loads = [l.load for l in problem.limits if l.load is not None]
    if loads and problem.demand is not None:
        need = max(need, _LOAD_FLEET_FACTOR * float(np.sum(problem.demand)) / max(min(loads), 1))
    return max(int(min(T, math.ceil(need) + 2)), min(problem.fleet or 0, T))


def _model(problem: ArcProblem) -> tuple[RouteModel, int]:
    """The problem as one ``RouteModel``, and the sorties each depot may fly."""
    T, nd = problem.n_units, len(problem.limits)
    by_length = any(l.length is not None for l in problem.limits)
    # with no length limit a unit's own length is the same in every plan: it stays out of the arcs (a
    # constant added to the cost), so PyVRP's neighbourhoods rank units by the deadhead between them alone
    cost = arc_cost_matrix(problem.deadhead, problem.service if by_length else np.zeros(T), nd, problem.scale)
    per_depot = _fleet_per_depot(problem)
    loads = problem.demand is not None and any(l.load is not None for l in problem.limits)
    no_length = int(cost.max()) * (2 * T + 2)  # more than any route in the model

    def length_cap(l: SortieLimit) -> int:
        return int(math.floor((l.length - problem.slack) * problem.scale)) if l.length is not None else no_length

    vehicles = tuple(
        ModelVehicle(d, d, length_cap(l), load=(int(l.load) if loads and l.load is not None else None))
        for d, l in enumerate(problem.limits) for _ in range(per_depot)
    )
    groups = tuple((nd + 2 * t, nd + 2 * t + 1) for t in range(T))
    if by_length:  # (the lane models' penalty, as the golden files were made with it)
        penalty = int(_PENALTY_FACTOR * max(v.capacity for v in vehicles))
    else:
        penalty = int(_PENALTY_FACTOR * max(int(cost.max()), 1))
    demands = None
    if loads:
        demands = np.concatenate([np.zeros(nd, dtype=np.int64), np.repeat(np.asarray(problem.demand, dtype=np.int64), 2)])
    model = RouteModel((cost,), vehicles, groups, penalty, capacity_dimension=by_length, demands=demands)
    return model, per_depot


def _as_routes(model: RouteModel, sorties: UnitSorties, per_depot: int) -> list[list[int]] | None:
    """Sorties ``[(depot, [(unit, reversed?)])]`` as one route per model vehicle, if they fit the model."""
    nd = len(model.vehicles) // per_depot
    routes: list[list[int]] = [[] for _ in model.vehicles]
    used = [0] * nd
    for d, seq in sorties:
        if used[d] >= per_depot:
            return None
        routes[d * per_depot + used[d]] = [nd + 2 * t + (1 if r else 0) for t, r in seq]
        used[d] += 1
    return routes if sorties and routes_fit(model, routes) else None


def _stall(model: RouteModel, budget: Budget) -> int:
    """Solutions without a shorter plan after which a deadline's ILS stops searching locally (0: never).

    Under a deadline a small patrol finds its best early and then spends CPU on nothing (the demo's
    53-node patrol: its best at solution 141 of 497, the longest run without improvement before it 84; 150
    stop it at 291, the same plan, ~0.6 of the search's CPU). Work mode (the golden files, a seed with an
    iteration cap) and models of 100 nodes or more (still improving late; the bench's grid8_r35 has 101) search in
    full. ``model.Search.stall``: how it stops.
    """
    if not budget.timed or budget.iterations is not None or model.n_nodes >= _STALL_MAX_NODES:
        return 0
    return max(int(math.ceil(_STALL_PER_NODE * model.n_nodes)), _STALL_MIN)


def _fits(model: RouteModel, routes: list[list[int]]) -> bool:
    return routes_fit(model, routes) and len({n for r in routes for n in r}) == sum(len(r) for r in routes)


def solve_arcs(problem: ArcProblem, budget: Budget, lanes: int = 1, start: UnitSorties | None = None) -> ArcPlan:
    """Sorties serving every unit once (module docstring), never worse than ``start`` where it fits the model.

    ``lanes`` independent searches (PyVRP seed / ILS node renumbering ``k`` for lane
    ``k``) of the whole budget each, the best kept: the lane search is trapped by its
    start more than it is short of iterations (helsinki: one seed ends with three
    sorties, another with two and 2 % less flight).
    """
    model, per_depot = _model(problem)
    nd = len(problem.limits)
    # (work mode: the exact expressions the golden files were made with)
    limit = max(_MIN_SOLUTIONS, int(budget.seconds * _SOLUTIONS_PER_S_X_NODES / model.n_nodes))
    first = _as_routes(model, start, per_depot) if start else None
    if model.demands is not None:  # load-limited: PyVRP searches (measured: far more per CPU second than ILS)
        routes, engine, out = _search_loads(problem, model, budget, lanes, first)
    elif needs_start(limit, model.n_nodes):
        per_iteration = _PYVRP_S_PER_ITERATION + _PYVRP_S_PER_ITERATION_NODE * model.n_nodes
        iterations = max(_MIN_ITERATIONS, int(budget.seconds * _PYVRP_START_SHARE / per_iteration))
        out = search_pyvrp(model, budget, lanes, nominal_iterations=iterations, pool=True,
                           neighbours=LANE_NEIGHBOURS, start=first)
        routes, loaded = finish(model, out.routes, budget)
        if not loaded and not _fits(model, routes):  # PyVRP kept every limit; else the model's own search
            routes = solve_model(model, Search("ils", _MIN_SOLUTIONS, max(budget.remaining_s(), 1.0), first=_FIRST)).routes
        engine = ENGINE_PYVRP_START if loaded else ENGINE_PYVRP
    else:
        out = search_ils(model, budget, lanes, limit, first=_FIRST, stall=_stall(model, budget))
        routes, engine = out.routes, ENGINE
    if first is not None and key(model, first) < key(model, routes):  # never worse than the start
        routes, engine = first, ENGINE_START
    sorties = []
    for v, route in zip(model.vehicles, routes):
        if route:
            sorties.append((v.start, tuple((int(t), bool(r)) for t, r in (divmod(q - nd, 2) for q in route))))
    constant = 0 if model.capacity_dimension else int(np.ceil(np.asarray(problem.service, float) * problem.scale).sum())
    return ArcPlan(tuple(sorties), engine, key(model, routes)[2] + constant, out.work, out.stopped_by)


def _search_loads(problem: ArcProblem, model: RouteModel, budget: Budget, lanes: int, first: list[list[int]] | None
                  ) -> tuple[list[list[int]], str, Searched]:
    """A load-limited model (CARP): the memetic search or PyVRP's, then OR-Tools' proof and polish.

    One depot, a load limit alone and every unit within it (CARP): HGS-CARP's memetic search
    (``_search_memetic``). Otherwise PyVRP's iterated local search on every lane
    (``_search_pyvrp_loads``). OR-Tools then proves and polishes the routes (``engines.finish``).
    Measured on CARP instances (gdb10, val 2C; loaded machine): PyVRP reached the best-known in
    30 000 iterations, ~12 CPU s, where OR-Tools' ILS had not finished 20 000 solutions in five
    minutes of CPU.
    """
    load = model.vehicles[0].load
    carp = (len({v.start for v in model.vehicles}) == 1 and not model.capacity_dimension and load is not None
            and int(np.max(problem.demand)) <= int(load))
    out = _search_memetic(problem, model, budget, lanes) if carp else _search_pyvrp_loads(model, budget, lanes, first)
    routes, loaded = finish(model, out.routes, budget)
    if not _fits(model, routes):
        routes, _ = drop_over_limits(model, routes)
    if carp:
        return routes, ENGINE_MEMETIC_ORTOOLS if loaded else ENGINE_MEMETIC, out
    return routes, ENGINE_PYVRP_START if loaded else ENGINE_PYVRP, out


def _search_pyvrp_loads(model: RouteModel, budget: Budget, lanes: int, first: list[list[int]] | None) -> Searched:
    """PyVRP's iterated local search on every lane, restarts from the best (several depots, or a length limit too)."""
    n = model.n_nodes
    per_iteration = _PYVRP_S_PER_ITERATION + _PYVRP_S_PER_ITERATION_NODE * n
    iterations = max(_MIN_ITERATIONS, int(budget.seconds * _PYVRP_START_SHARE / per_iteration))
    loads = [v.load for v in model.vehicles if v.load is not None]
    fits_alone = not model.capacity_dimension and bool(loads) and int(np.max(model.demands)) <= max(loads)
    return search_pyvrp(model, budget, lanes, nominal_iterations=iterations, pool=True, neighbours=CARP_NEIGHBOURS,
                        start=first, required=fits_alone)


def _search_memetic(problem: ArcProblem, model: RouteModel, budget: Budget, lanes: int) -> Searched:
    """CARP: HGS-CARP's memetic search (``planner.patrol.arc_memetic``) beside PyVRP's iterated local search.

    Lane 0 is the memetic search, lane 1 PyVRP's ILS (more lanes alternate): measured at 10 CPU s a
    lane, neither wins everywhere (val 10D: ILS 530, memetic 537; Beullens C01: ILS 4235, memetic
    4150, the best known). Then, as ``search_pyvrp`` does, every lane again from the best so far
    (``RESTART_SHARE`` of the search) — under a deadline alone. Work mode, or a deadline capped by
    ``budget.iterations``: one phase, each lane ``budget.iterations`` or what ``budget.seconds`` buys
    (generations, iterations), so a capped run repeats.
    """
    lanes = search_lanes(budget, lanes)
    # the search's fleet (HGS-CARP's: VEHICULOS + 1) is the PyVRP instance's: the split and both lanes' local
    # searches stay within it; the model keeps its own (``_fleet_per_depot``: the answer is never forced into it)
    fleet = min(problem.fleet or len(model.vehicles), len(model.vehicles))
    inst = pyvrp_instance(replace(model, vehicles=model.vehicles[:fleet]), True, None, True)  # once, before the fork
    data = CarpData(problem.deadhead, np.asarray(problem.demand, dtype=np.int64), int(model.vehicles[0].load or 0))
    kinds = [_MEMETIC if k % 2 == 0 else _ILS for k in range(lanes)]
    per_iteration = _PYVRP_S_PER_ITERATION + _PYVRP_S_PER_ITERATION_NODE * model.n_nodes
    nominal = {_MEMETIC: max(_MIN_GENERATIONS, int(budget.seconds * _MEMETIC_GENERATIONS_PER_S)),
               _ILS: max(_MIN_ITERATIONS, int(budget.seconds * _PYVRP_START_SHARE / per_iteration))}

    def work(kind: str) -> int | None:
        if budget.iterations is not None:
            return int(budget.iterations)
        return None if budget.timed else nominal[kind]

    b = search_budget(budget)
    restart = b.timed and budget.iterations is None
    phase1 = b.share(1.0 - RESTART_SHARE) if restart else b
    jobs = [(kind, data, inst, model, phase1, budget.seed * lanes + k, work(kind), None)
            for k, kind in enumerate(kinds)]
    outs = budget.map_lanes(_carp_lane, jobs)
    best = min((key(model, r), k, r) for k, (r, _, _) in enumerate(outs))[2]
    again: list[tuple[list[list[int]], int, str]] = []
    if restart:
        again = budget.map_lanes(_carp_lane, [(kind, data, inst, model, b.share(1.0), budget.seed * lanes + lanes + k,
                                               None, best) for k, kind in enumerate(kinds)])
        best = min([(key(model, best), -1, best)] + [(key(model, r), k, r) for k, (r, _, _) in enumerate(again)])[2]
    stopped = STOPPED_BY_DEADLINE if any(o[2] == STOPPED_BY_DEADLINE for o in outs + again) else STOPPED_BY_ITERATIONS
    return Searched(best, sum(o[1] for o in outs + again), stopped)


_MEMETIC, _ILS = "memetic", "ils"


def _carp_lane(kind: str, data: CarpData, inst: PyvrpInstance, model: RouteModel, budget: Budget, seed: int,
               work: int | None, start: list[list[int]] | None) -> tuple[list[list[int]], int, str]:
    """One CARP search lane (module-level: a forked worker runs it): (routes a model vehicle, work, what stopped it)."""
    nd = len({v.start for v in model.vehicles})
    if kind == _ILS:
        fleet = sum(len(m) for m in inst.members)
        flown = [r for r in start if r] if start else []
        first = flown + [[] for _ in range(fleet - len(flown))] if start and len(flown) <= fleet else None
        found, done, stopped, _ = pyvrp_run(inst, budget, work, seed, CARP_NEIGHBOURS, first)
        return found + [[] for _ in range(len(model.vehicles) - len(found))], done, stopped
    first = [[divmod(q - nd, 2) for q in r] for r in start if r] if start else None
    sorties, _, done, stopped = memetic_lane(data, inst, budget, seed, work, MEMETIC_NEIGHBOURS,
                                             [[(t, bool(r)) for t, r in s] for s in first] if first else None)
    routes: list[list[int]] = [[] for _ in model.vehicles]
    for i, sortie in enumerate(sorties):
        routes[i] = [nd + 2 * t + (1 if r else 0) for t, r in sortie]
    return routes, done, stopped
