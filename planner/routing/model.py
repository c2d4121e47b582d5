"""The one OR-Tools RoutingModel of every mission kind: all routing constraints live here.

Point inspections (``planner.routing.vrp``), lane patrols (``planner.patrol.arc_routing``)
and the survey's sweep order (``planner.survey.order``) all reduce their problem to
plain integers and hand it to this module; it is the only place planner/ reaches
OR-Tools through (pinned ``ortools==9.15.6755``: the Python import paths moved in
9.12+, OR-Tools #4553). Build → solve → extract, and the caller gets plain routes
back (``list[list[int]]`` of node ids per vehicle).

Model (``RouteModel``)
    Nodes ``0..n-1``. Each vehicle starts at its ``start`` node and ends at its
    ``end`` node (multi-depot; a dock is both). Arc ``i → j`` costs
    ``costs[profile][i][j]`` in the objective and consumes the same amount of the
    vehicle's ``capacity`` (metres, or energy in integer units; callers fold any
    service at a node into the arcs leaving or entering it). Optional
    ``durations[profile]`` with a per-vehicle ``max_duration`` is a second
    dimension for the job's time window. Visits come in ``groups``: each group
    is ONE disjunction, so at most one of its nodes is served, and leaving the
    whole group out costs ``penalty``. A point is a group of one node; a lane
    piece is a group of two directed nodes (flown once, either way); a survey
    sweep piece likewise (one vehicle, a dummy depot with free arcs for an open
    path). Nodes in ``excluded`` (out of every vehicle's range) are kept out of
    every route. ``capacity_dimension=False`` leaves the capacity out (a survey
    order has no limit to keep; a dimension only slows every move down).
    Optional ``demands`` (one integer a node) with a per-vehicle ``load`` is a
    load dimension: the demand a route serves is at most its vehicle's load
    (arc routing's capacity, CARP's ``CAPACIDAD``; ``None``: no load limit).

Search (``Search``)
    ``"ils"``: iterated local search with ruin-and-recreate, the measured strong
    setup on this machine kind (``../shared/FACTS.md``, "OR-Tools routing"): ruin
    by SISR, random walk or spatially close routes (one at random), recreate by
    local cheapest insertion in random order, simulated-annealing acceptance of
    the reference solution, greedy acceptance of the best. It must be started
    with ``SolveWithIteratedLocalSearch`` (``SolveWithParameters`` silently
    ignores ``use_iterated_local_search``) and takes no initial solution.
    ``"gls"``: guided local search, which does take a start (``start_routes``).

Determinism
    Every search stops on ``solution_limit``; the wall clock is only a safety net
    (OR-Tools #1331: a time-limited search is not reproducible; routing has no
    seed, #1821). The ILS random generator has a fixed seed, so a search is
    diversified by ``permutation``: the nodes are renumbered by a seeded
    permutation before the model is built, which changes every order the
    search visits them in, and numbered back on the way out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from ortools.constraint_solver import (
    pywrapcp,
    routing_enums_pb2,
    routing_heuristic_parameters_pb2,
    routing_ils_pb2,
)

__all__ = ["ModelVehicle", "RouteModel", "Search", "Outcome", "solve_model", "route_fits", "routes_fit"]

SearchKind = Literal["ils", "gls"]

# The ruin-and-recreate recipe of FACTS.md (measured: 0.00 % gap on md_n020/md_n100/md_n200_lines
# at 20 s). SISR removes strings of nearby visits, random walk a connected handful, spatially close
# routes two neighbouring routes whole; one of them per iteration, chosen at random.
_SISR_MAX_SEQUENCE = 10
_SISR_AVG_REMOVED = 10
_SISR_BYPASS = 0.01
_RANDOM_WALK_REMOVED = 10
_CLOSE_ROUTES_RUINED = 2


@dataclass(frozen=True)
class ModelVehicle:
    """One vehicle: start and end node, capacity on its profile's matrix, optional duration limit."""

    start: int
    end: int
    capacity: int
    profile: int = 0
    max_duration: int | None = None
    load: int | None = None  # at most this much of ``RouteModel.demands`` a route (None: no load limit)


@dataclass(frozen=True)
class RouteModel:
    """A routing problem in plain integers (see the module docstring)."""

    costs: tuple[np.ndarray, ...]
    vehicles: tuple[ModelVehicle, ...]
    groups: tuple[tuple[int, ...], ...]
    penalty: int
    durations: tuple[np.ndarray, ...] | None = None
    excluded: tuple[int, ...] = ()
    capacity_dimension: bool = True
    demands: np.ndarray | None = None  # load of each node (the load dimension; None: no loads)

    @property
    def n_nodes(self) -> int:
        return int(self.costs[0].shape[0])


@dataclass(frozen=True)
class Search:
    """How to search: ``kind``, the deterministic stop, the safety net, the node renumbering."""

    kind: SearchKind
    solution_limit: int
    time_limit_s: float
    permutation: int = 0  # 0: nodes as given; k > 0: renumbered by a permutation seeded with k
    first: str = "LOCAL_CHEAPEST_INSERTION"  # first-solution strategy (an insertion: always ends with a solution)
    # local-search operators switched off (``RoutingSearchParameters.local_search_operators`` field
    # names): moves for several vehicles or optional visits find nothing in a one-vehicle tour
    operators_off: tuple[str, ...] = ()
    # a deadline on the caller's clock (``planner.routing.budget.Budget.expired``), checked by the
    # search itself (a CustomLimit monitor); OR-Tools' ILS runs nested searches that no monitor
    # reaches, so it stops on ``time_limit_s`` (wall time) alone
    expired: Callable[[], bool] | None = field(default=None, compare=False)
    # ILS: after this many solutions without a cheaper one (0: never), every further local search ends at
    # its first solution (``Solver.FinishCurrentSearch``). A monitor's limit cannot end OR-Tools' ILS (its
    # nested searches would fail until the wall-clock net), so the remaining iterations run as bare
    # ruin-and-recreate: the count still reaches ``solution_limit`` (the annealing keeps its pace, the
    # search up to the stall is the unstalled one's prefix) at a fraction of the CPU.
    stall: int = 0


@dataclass(frozen=True)
class Outcome:
    """Routes per vehicle (node ids in order, [] when unused), objective, and how the search ended."""

    routes: list[list[int]]
    objective: int
    status: str
    start_accepted: bool | None  # start_routes given: did they load (feasible under every dimension)?
    solutions: int = 0  # solutions the search went through (its work, as OR-Tools counts it)


def route_fits(model: RouteModel, v: ModelVehicle, route: list[int]) -> bool:
    """Whether one route keeps its vehicle within capacity and duration (plain arithmetic)."""
    if not route:
        return True
    walk = np.asarray([v.start, *route, v.end])
    if model.capacity_dimension and int(model.costs[v.profile][walk[:-1], walk[1:]].astype(np.int64).sum()) > v.capacity:
        return False
    if v.max_duration is not None and model.durations is not None:
        if int(model.durations[v.profile][walk[:-1], walk[1:]].astype(np.int64).sum()) > v.max_duration:
            return False
    if v.load is not None and model.demands is not None:
        if int(np.asarray(model.demands, dtype=np.int64)[np.asarray(route)].sum()) > v.load:
            return False
    return True


def routes_fit(model: RouteModel, routes: list[list[int]]) -> bool:
    """Whether routes keep every vehicle within its capacity and duration (plain arithmetic)."""
    return all(route_fits(model, v, r) for v, r in zip(model.vehicles, routes))


def _permutation(n: int, seed: int) -> np.ndarray:
    """perm[new] = old. Seed 0 is the identity (the nodes as the caller numbered them)."""
    if seed == 0:
        return np.arange(n)
    rng = np.random.default_rng(seed)  # seeded: the same renumbering every run
    return rng.permutation(n)


def _build(model: RouteModel, perm: np.ndarray):
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm))
    n = model.n_nodes
    starts = [int(inv[v.start]) for v in model.vehicles]
    ends = [int(inv[v.end]) for v in model.vehicles]
    manager = pywrapcp.RoutingIndexManager(n, len(model.vehicles), starts, ends)
    routing = pywrapcp.RoutingModel(manager)
    ix = np.ix_(perm, perm)
    cost_cb = [routing.RegisterTransitMatrix(np.asarray(m, dtype=np.int64)[ix].tolist()) for m in model.costs]
    per_vehicle = [cost_cb[v.profile] for v in model.vehicles]
    for k, cb in enumerate(per_vehicle):
        routing.SetArcCostEvaluatorOfVehicle(cb, k)
    if model.capacity_dimension:
        routing.AddDimensionWithVehicleTransitAndCapacity(
            per_vehicle, 0, [int(v.capacity) for v in model.vehicles], True, "capacity"
        )
    if model.durations is not None:
        dur_cb = [routing.RegisterTransitMatrix(np.asarray(m, dtype=np.int64)[ix].tolist()) for m in model.durations]
        horizon = max(int(v.max_duration or 0) for v in model.vehicles)
        if horizon <= 0:
            horizon = int(max(int(np.asarray(m).sum()) for m in model.durations))
        limits = [int(v.max_duration) if v.max_duration is not None else horizon for v in model.vehicles]
        routing.AddDimensionWithVehicleTransitAndCapacity(
            [dur_cb[v.profile] for v in model.vehicles], 0, limits, True, "duration"
        )
    if model.demands is not None:
        demand = np.asarray(model.demands, dtype=np.int64)[perm].tolist()
        load_cb = routing.RegisterUnaryTransitVector(demand)
        no_limit = int(sum(max(d, 0) for d in demand))
        routing.AddDimensionWithVehicleCapacity(
            load_cb, 0, [int(v.load) if v.load is not None else no_limit for v in model.vehicles], True, "load"
        )
    for group in model.groups:
        routing.AddDisjunction([manager.NodeToIndex(int(inv[g])) for g in group], int(model.penalty), 1)
    for node in model.excluded:
        index = manager.NodeToIndex(int(inv[node]))
        routing.AddDisjunction([index], 0)
        routing.ActiveVar(index).SetValue(0)
    return manager, routing


def _ils_parameters(params) -> None:
    """Fill ``params`` with the ruin-and-recreate ILS recipe (field names checked on 9.15)."""

    params.use_iterated_local_search = True
    ils = params.iterated_local_search_parameters
    ils.perturbation_strategy = routing_ils_pb2.PerturbationStrategy.RUIN_AND_RECREATE
    rr = ils.ruin_recreate_parameters
    sisr = rr.ruin_strategies.add().sisr
    sisr.max_removed_sequence_size = _SISR_MAX_SEQUENCE
    sisr.avg_num_removed_visits = _SISR_AVG_REMOVED
    sisr.bypass_factor = _SISR_BYPASS
    rr.ruin_strategies.add().random_walk.num_removed_visits = _RANDOM_WALK_REMOVED
    rr.ruin_strategies.add().spatially_close_routes.num_ruined_routes = _CLOSE_ROUTES_RUINED
    rr.ruin_composition_strategy = routing_ils_pb2.RuinCompositionStrategy.RUN_ONE_RANDOMLY
    rr.recreate_strategy.heuristic = routing_enums_pb2.FirstSolutionStrategy.LOCAL_CHEAPEST_INSERTION
    lci = rr.recreate_strategy.parameters.local_cheapest_insertion
    # with the deterministic insertion order SISR recreates one solution over and over
    lci.insertion_sorting_properties.append(
        routing_heuristic_parameters_pb2.LocalCheapestInsertionParameters.SORTING_PROPERTY_RANDOM
    )
    # without it the solution count never grows (only improving local-search moves count), so
    # solution_limit would never stop the search and the clock would: not reproducible
    ils.improve_perturbed_solution = True
    sa = ils.reference_solution_acceptance_strategy.simulated_annealing
    sa.cooling_schedule_strategy = routing_ils_pb2.CoolingScheduleStrategy.EXPONENTIAL
    sa.automatic_temperatures = True
    ils.best_solution_acceptance_strategy.greedy_descent.SetInParent()


def _parameters(search: Search):

    params = pywrapcp.DefaultRoutingSearchParameters()
    # insertion, not PATH_CHEAPEST_ARC: with every visit droppable and a tight fleet it always
    # ends with a solution (a plain model found none on md_n500 in 20 s)
    params.first_solution_strategy = getattr(routing_enums_pb2.FirstSolutionStrategy, search.first)
    if search.kind == "ils":
        _ils_parameters(params)
    else:
        params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    for name in search.operators_off:
        setattr(params.local_search_operators, name, 3)  # OptionalBoolean BOOL_FALSE
    params.solution_limit = max(1, int(search.solution_limit))
    params.time_limit.FromMilliseconds(max(1, int(search.time_limit_s * 1000)))
    return params


def _extract(manager, routing, assignment, perm: np.ndarray) -> list[list[int]]:
    routes: list[list[int]] = []
    for k in range(routing.vehicles()):
        route: list[int] = []
        if assignment is not None:
            index = assignment.Value(routing.NextVar(routing.Start(k)))
            while not routing.IsEnd(index):
                route.append(int(perm[manager.IndexToNode(index)]))
                index = assignment.Value(routing.NextVar(index))
        routes.append(route)
    return routes


def solve_model(model: RouteModel, search: Search, start_routes: list[list[int]] | None = None) -> Outcome:
    """Build the model, search it, return the best routes found (node ids of ``model``).

    With ``start_routes`` (one list per vehicle) the search continues from them
    when they load into the model — ``ReadAssignmentFromRoutes`` rejects routes
    that break any dimension, so loading is also a feasibility proof; when they
    do not load the search starts from scratch and ``start_accepted`` says so.
    ILS takes no start: a start is searched on with ``"gls"``.
    """

    perm = _permutation(model.n_nodes, search.permutation)
    inv = np.empty_like(perm)
    inv[perm] = np.arange(len(perm))
    manager, routing = _build(model, perm)
    params = _parameters(search)
    found = [0]  # solutions the search went through: the count its solution_limit stops at
    routing.AddAtSolutionCallback(lambda: found.__setitem__(0, found[0] + 1))
    if search.stall > 0:
        routing.AddAtSolutionCallback(_stall_stop(routing, search.stall))
    limit = routing.solver().CustomLimit(search.expired) if search.expired is not None else None
    if limit is not None:  # kept referenced until the search ends
        routing.AddSearchMonitor(limit)
    accepted: bool | None = None
    if start_routes is not None:
        routing.CloseModelWithParameters(params)
        local = [[int(inv[n]) for n in r] for r in start_routes]
        start = routing.ReadAssignmentFromRoutes(local, True)
        accepted = start is not None
        if start is not None:
            if search.kind == "ils":
                raise ValueError("iterated local search takes no start; search a start with 'gls'")
            assignment = routing.SolveFromAssignmentWithParameters(start, params)
            if assignment is None:  # the start itself is a solution
                assignment = start
        else:
            assignment = _solve(routing, params, search)
    else:
        assignment = _solve(routing, params, search)
    status = routing_enums_pb2.RoutingSearchStatus.Value.Name(routing.status())
    routes = _extract(manager, routing, assignment, perm)
    objective = int(assignment.ObjectiveValue()) if assignment is not None else -1
    del limit
    return Outcome(routes, objective, status, accepted, found[0])


def _stall_stop(routing, stall: int) -> Callable[[], None]:
    """A solution callback ending each local search once ``stall`` solutions in a row found nothing cheaper."""
    best = [None, 0, 0]  # lowest cost, solutions seen, the solution it came at

    def seen() -> None:
        cost = routing.CostVar().Max()
        best[1] += 1
        if best[0] is None or cost < best[0]:
            best[0], best[2] = cost, best[1]
        elif best[1] - best[2] >= stall:
            routing.solver().FinishCurrentSearch()

    return seen


def _solve(routing, params, search: Search):
    if search.kind == "ils":
        return routing.SolveWithIteratedLocalSearch(params)
    return routing.SolveWithParameters(params)
