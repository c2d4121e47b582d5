"""The order and direction of survey sweeps: a problem for the one routing model.

In the manner of Fields2Cover's route planner (``route_planner_base.cpp``), the
order is a routing problem on ``planner.routing.model`` (the one OR-Tools model
of every mission kind): every sweep piece is a pair of directed nodes, one per
direction it can be flown in, in ONE disjunction with a penalty dearer than
any tour, so the tour flies every piece exactly once, in one direction or the
other (F2C's start–middle–end nodes force the same traversal with three nodes;
two directed nodes carry the piece's own flight in the arcs and need no
forcing). Arcs between directed nodes cost the shortest inside-area connection
from one's exit to the other's entry, already computed by the caller; a depot
(node 0) whose arcs are priced by the optional start/end points (zero when
absent) makes the tour an open path. One vehicle, no capacity dimension.

Why OR-Tools and not a hand-written search: the neighbourhoods a sweep order
needs (2-opt, or-opt of runs, relocations, exchanges of a piece's direction
within its disjunction) are exactly the routing library's operators, kept and
tested upstream; what the planner adds is only the model.

Determinism: the search starts from a given order (the boustrophedon snake of
the cells or a nearest-neighbour chain, loaded with ``ReadAssignmentFromRoutes``)
and stops after ``solution_limit`` solutions of guided local search, or at the
plan's deadline less what the later phases need (``OrderControl.expired``,
``planner.survey.schedule``; the shell's clock through ``planner.routing.budget``) if that comes first; without a deadline the wall-clock limit is a generous safety
net only (OR-Tools #1331: a time-limited search is not reproducible). Same matrix
and limit → same order. Size: a tour is at most a band of ``planner.survey.bands``
(120 pieces); OR-Tools' candidate neighbourhoods (``ls_operator_min_neighbors`` 16-24,
each variant tried with its nearest only) were measured and not kept: the same
orders on every bench instance and parcel, at 5-9 times the CPU on the parcels
(the neighbour lists are built when each model closes) and no gain on bands.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from planner.routing.model import ModelVehicle, RouteModel, Search, solve_model

__all__ = ["OrderControl", "order_pieces", "solve_open_tour", "tour_cost", "SCALE", "ENGINE"]

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
SAFETY_S = 30.0  # wall-clock net; the solution limit ends every search long before on this machine kind
_CAP = 1e7  # metres: an unreachable connection (1e9) stays an integer the solver can add up


@dataclass
class OrderControl:
    """What bounds and counts the order searches of one plan: its deadline, the solutions searched."""

    expired: Callable[[], bool] | None = None  # the plan's deadline (``planner.survey.schedule.PhaseClock.expired``)
    solutions: int = 0  # guided-local-search solutions over every order search (the engine's work)
    poll: Callable[[], bool] | None = None  # the same for the solver's limit, asked at every decision (cheaper)

    def out_of_time(self) -> bool:
        return self.expired is not None and self.expired()


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
    control: OrderControl | None = None,
) -> list[int]:
    """Visit one variant of every group, as an open path, on the one routing model.

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
    model = RouteModel(
        costs=(C,),
        vehicles=(ModelVehicle(0, 0, 0),),
        groups=tuple(tuple(1 + v for v in g) for g in groups),
        penalty=int(C.max()) * N + 1,  # dearer than any tour: every item is flown
        capacity_dimension=False,
    )
    search = Search("gls", solution_limit, SAFETY_S, first="AUTOMATIC", operators_off=UNUSED_OPERATORS,
                    expired=None if control is None else (control.poll or control.expired))
    out = solve_model(model, search, start_routes=[[1 + v for v in initial]])
    if control is not None:
        control.solutions += out.solutions

    def cost(seq: list[int]) -> int:
        if not seq:
            return 0
        return int(C[0, 1 + seq[0]] + C[1 + seq[-1], 0] + sum(C[1 + u, 1 + v] for u, v in zip(seq, seq[1:])))

    found = [v - 1 for v in out.routes[0]]
    if not out.start_accepted or len(found) != len(groups) or cost(found) > cost(list(initial)):
        return list(initial)  # cannot happen for one variant of every group; keep the given order
    return found


def order_pieces(
    X: np.ndarray, initial: tuple[np.ndarray, np.ndarray], solution_limit: int,
    control: OrderControl | None = None,
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
        solution_limit, control,
    )
    return np.asarray([v // 2 for v in seq]), np.asarray([v % 2 for v in seq])
