"""The order and direction of survey sweeps: one OR-Tools routing problem.

In the manner of Fields2Cover's route planner (``route_planner_base.cpp``):
every sweep piece ``p`` becomes three nodes, its two ends and a middle node
between them. The middle node may only follow and precede one of its own ends
(its ``NextVar`` domain is the two ends, and no other node may point at it), so
the tour must fly the piece from end to end in one direction or the other; the
arcs end → middle → end cost nothing. Arcs between ends of different pieces
cost the shortest inside-area connection, already computed by the caller. A
depot (node 0) with arcs priced by the optional start/end points (zero when
absent) makes the tour an open path.

Why OR-Tools and not a hand-written search: the neighbourhoods a sweep order
needs (2-opt, or-opt of runs, relocations, reversals of pieces) are exactly
the routing library's operators, kept and tested upstream; what the planner
must add is only the model.

Determinism: the search starts from a given order (the boustrophedon snake of
the cells, loaded with ``ReadAssignmentFromRoutes``) and stops after
``solution_limit`` solutions of guided local search; the wall-clock limit is a
generous safety net only (OR-Tools #1331: a time-limited search is not
reproducible). Same matrix and limit → same order.
"""

from __future__ import annotations

import numpy as np
from ortools.constraint_solver import pywrapcp, routing_enums_pb2

__all__ = ["order_pieces", "solve_open_tour", "tour_cost", "SCALE", "ENGINE"]

ENGINE = "ortools-gls"
SCALE = 100.0  # arc costs in centimetres (integers for the solver)
# operators for several vehicles, pickup pairs or optional visits: nothing to find here, only time spent
UNUSED_OPERATORS = (
    "use_relocate_pair", "use_cross", "use_make_inactive", "use_make_chain_inactive", "use_exchange_pair",
    "use_light_relocate_pair", "use_relocate_subtrip", "use_exchange_subtrip",
    "use_global_cheapest_insertion_path_lns", "use_local_cheapest_insertion_path_lns",
    "use_relocate_path_global_cheapest_insertion_insert_unperformed",
    "use_global_cheapest_insertion_visit_types_lns", "use_local_cheapest_insertion_visit_types_lns",
    "use_shortest_path_swap_active", "use_shortest_path_two_opt", "use_swap_active_chain",
)
SAFETY_S = 30.0
_CAP = 1e7  # metres: an unreachable connection (1e9) stays an integer the solver can add up  # wall-clock net; the solution limit ends every search long before on this machine kind


def tour_cost(order: np.ndarray, dirs: np.ndarray, X: np.ndarray) -> float:
    """Connection length of an order over the augmented matrix (row/column ``m`` start, ``m+1`` end)."""
    m = len(X) - 2
    s = 2 * order + dirs
    e = 2 * order + 1 - dirs
    E = np.concatenate([[m], e])
    S = np.concatenate([s, [m + 1]])
    return float(X[E, S].sum())


def solve_open_tour(
    arc: np.ndarray,
    from_start: np.ndarray,
    to_end: np.ndarray,
    groups: list[list[int]],
    initial: list[int],
    solution_limit: int,
) -> list[int]:
    """Visit one variant of every group, as an open path: the routing model.

    ``arc[u, v]`` is the cost (metres) of flying variant ``v`` right after
    variant ``u`` (the variant's own flight folded in), ``from_start[v]`` /
    ``to_end[v]`` the cost of beginning / finishing with it. ``groups`` lists
    the variants of each item (a piece flown either way; a cell flown from
    either end, starting left or right): one disjunction each, with a penalty
    dearer than any tour, so every item is flown exactly once. ``initial`` (one
    variant per group, in order) is the first solution. Returns the variants
    in flight order, never costlier than ``initial``.
    """
    V = len(arc)
    N = V + 1  # node 0 is the depot, node 1 + v is variant v
    C = np.zeros((N, N), dtype=np.int64)
    C[1:, 1:] = np.rint(np.minimum(arc, _CAP) * SCALE)
    C[0, 1:] = np.rint(np.minimum(from_start, _CAP) * SCALE)
    C[1:, 0] = np.rint(np.minimum(to_end, _CAP) * SCALE)
    manager = pywrapcp.RoutingIndexManager(N, 1, 0)
    routing = pywrapcp.RoutingModel(manager)
    routing.SetArcCostEvaluatorOfAllVehicles(routing.RegisterTransitMatrix(C.tolist()))
    penalty = int(C.max()) * N + 1  # dearer than any tour: every item is flown
    for g in groups:
        routing.AddDisjunction([manager.NodeToIndex(1 + v) for v in g], penalty, 1)
    params = pywrapcp.DefaultRoutingSearchParameters()
    params.local_search_metaheuristic = routing_enums_pb2.LocalSearchMetaheuristic.GUIDED_LOCAL_SEARCH
    params.solution_limit = max(1, int(solution_limit))
    params.time_limit.FromMilliseconds(int(SAFETY_S * 1000))
    for name in UNUSED_OPERATORS:
        setattr(params.local_search_operators, name, 3)  # BOOL_FALSE
    routing.CloseModelWithParameters(params)

    def cost(seq: list[int]) -> int:
        if not seq:
            return 0
        return int(C[0, 1 + seq[0]] + C[1 + seq[-1], 0] + sum(C[1 + u, 1 + v] for u, v in zip(seq, seq[1:])))

    start = routing.ReadAssignmentFromRoutes([[1 + v for v in initial]], True)
    sol = routing.SolveFromAssignmentWithParameters(start, params) if start is not None else None
    if sol is None:  # cannot happen for one variant of every group; keep the given order
        return list(initial)
    out: list[int] = []
    i = sol.Value(routing.NextVar(routing.Start(0)))
    while not routing.IsEnd(i):
        out.append(manager.IndexToNode(i) - 1)
        i = sol.Value(routing.NextVar(i))
    if len(out) != len(groups) or cost(out) > cost(list(initial)):
        return list(initial)
    return out


def order_pieces(
    X: np.ndarray, initial: tuple[np.ndarray, np.ndarray], solution_limit: int
) -> tuple[np.ndarray, np.ndarray]:
    """Order and orient ``n`` pieces over the augmented matrix ``X`` ((2n+2)², as ``tour_cost``).

    Variant ``2p + d`` flies piece ``p`` from its end ``2p + d`` to its end
    ``2p + 1 - d``. ``initial`` (order, directions) is the first solution.
    """
    m = len(X) - 2
    n = m // 2
    init_o, init_d = initial
    if n <= 1:
        return init_o, init_d
    k = np.arange(m)
    first = 2 * (k // 2) + k % 2  # where variant k starts ...
    last = 2 * (k // 2) + 1 - k % 2  # ... and ends
    arc = X[np.ix_(last, first)]
    groups = [[2 * p, 2 * p + 1] for p in range(n)]
    seq = solve_open_tour(
        arc, X[m, first], X[last, m + 1], groups, [2 * p + d for p, d in zip(init_o.tolist(), init_d.tolist())],
        solution_limit,
    )
    return np.asarray([v // 2 for v in seq]), np.asarray([v % 2 for v in seq])
