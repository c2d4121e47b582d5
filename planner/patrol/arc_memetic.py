"""A memetic search for load-limited arc problems (CARP): HGS-CARP's scheme on the arc room's model.

Vidal (2017), "Node, edge, arc routing and turn penalties: multiple problems — one
neighborhood extension" (HGS-CARP), solves CARP with a population of giant tours:
each child of an ordered crossover (OX) of two parents is cut into sorties by an
optimal split that also chooses every service's direction, improved by local search
on oriented services, and kept or not by a fitness that rewards both cost and
difference from the rest. This module is that scheme on ``planner.patrol.arc_search``'s
model, with the local search PyVRP's (C++; the same ``pyvrp.ProblemData`` the arc room
already builds: a unit is a mutually exclusive client group of its two directions):

* **split** (``planner.patrol.carp_split.split_tour``): Prins' split with two states a
  unit (entered at its start or its end), exact for the tour's order: the best sorties
  and directions under the load limit, over every cut (~1 ms for egl-s4's 190 units),
  with at most the search's fleet of sorties (the PyVRP instance's vehicles; HGS-CARP's
  split with a limited fleet). Before the local search HGS's soft split: a sortie may
  carry up to half a load more, at the penalty.
* **local search** (``pyvrp.search.LocalSearch``, exhaustive, penalised load): relocate
  one or two services (``Relocate1/2``), relocate with a flip (``RelocateAlternative``),
  flip in place (``ReplaceGroup``), swaps (``Swap11/21/22``), 2-opt* (``SwapTails``);
  then, on a plan good enough to join the population, HGS-CARP's moves priced with the
  best directions of every route they touch (``planner.patrol.carp_moves``: what PyVRP's
  pricing misses where routes are packed to their last unit, gdb23's 233). The
  result's sorties, concatenated, are split again: the split is exact for their order,
  so it only ever shortens them (it re-chooses every direction and cut at once, which
  covers the reversal of a run of services that PyVRP's moves lack).
* **starts**: path scanning (Golden, DeArmon & Baker 1983; its five rules, ties at
  random) and random giant tours, each split and improved.
* **populations** (HGS, Vidal et al. 2012): one of plans within the load limit, one of
  plans over it at their penalised cost (a child over the limit, one in two as in
  HGS-CVRP, gets one more local search at ``REPAIR_FACTOR`` times the penalty, and
  joins the first if that repairs it); the penalty follows the share of local searches ending within the limit. Each
  holds at most ``POP_MIN + POP_LAMBDA``, then drops the worst biased fitness (cost rank
  plus diversity rank, diversity the broken-pairs distance to the closest few) down to
  ``POP_MIN``, clones first. Parents by binary tournament over both.

Pure and seeded: every random choice comes from the lane's seed (numpy's PCG64 and
PyVRP's generator); a run capped by generations (``Budget.iterations``) repeats
exactly, one under a deadline stops between generations.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from planner.patrol.carp_moves import improve_oriented
from planner.patrol.carp_split import CarpData, Sortie, plan_cost, split_tour
from planner.routing.budget import STOPPED_BY_DEADLINE, STOPPED_BY_ITERATIONS, Budget
from planner.routing.pyvrp_start import PyvrpInstance

if TYPE_CHECKING:
    import pyvrp

__all__ = ["Memetic", "memetic_lane", "path_scanning"]

POP_MIN = 25  # HGS's mu: the population after a survivor selection
POP_LAMBDA = 40  # HGS's lambda: children between two selections
ELITE = 4  # HGS's nbElite: the best this many keep their place whatever their diversity
CLOSEST = 5  # HGS's nbClose: diversity is the mean distance to this many nearest
STARTS_PATH_SCANNING = 5  # path-scanning plans in the first population (one a rule)
REPAIR_FACTOR = 10.0  # HGS: a child over the limit gets one more local search at this many times the penalty ...
REPAIR_SHARE = 0.5  # ... with this probability (HGS-CVRP's ``Genetic::run``: one child in two)
ORIENTED_RANK = 25  # POP_MIN: a local search's plan that would rank this high in the feasible population gets the oriented moves
RESTART_AFTER = 3000  # generations without a better plan, then a new population (the best kept)

def path_scanning(data: CarpData, rule: int, rng: np.random.Generator) -> list[Sortie]:
    """Golden, DeArmon & Baker's path scanning: from where the sortie is, the nearest unserved unit that fits.

    Ties among the nearest go by ``rule``: 0 the farthest from the depot, 1 the nearest to
    it, 2 the highest demand, 3 the lowest, 4 the farthest while the sortie is under half
    full, else the nearest; then at random.
    """
    D, dep, cap = np.asarray(data.deadhead), data.depot, data.capacity
    U = data.units
    demand = np.asarray(data.demand, dtype=np.int64)
    entry = np.arange(2 * U)  # option 2u + r: unit u entered at its start (r 0) or its end (r 1)
    exit_ = entry ^ 1
    back = D[exit_, dep]
    dem2 = np.repeat(demand, 2)
    left = np.ones(2 * U, dtype=bool)
    sorties: list[Sortie] = []
    while left.any():
        at, load, sortie = dep, 0, []
        while True:
            ok = left & (load + dem2 <= cap)
            if not ok.any():
                break
            d = np.where(ok, D[at, entry], np.iinfo(np.int64).max)
            ties = np.flatnonzero(d == d.min())
            if rule == 0 or (rule == 4 and load < cap / 2):
                score = -back[ties]
            elif rule in (1, 4):
                score = back[ties]
            elif rule == 2:
                score = -dem2[ties]
            else:
                score = dem2[ties]
            best = ties[score == score.min()]
            k = int(best[rng.integers(len(best))])
            u, r = divmod(k, 2)
            sortie.append((u, bool(r)))
            left[2 * u : 2 * u + 2] = False
            load += int(demand[u])
            at = int(exit_[k])
        sorties.append(sortie)
    return sorties


@dataclass
class _Plan:
    """Sorties and their cost (penalised in the infeasible population)."""

    cost: int
    sorties: list[Sortie]
    succ: np.ndarray  # each unit's successor in flight (units; the depot is ``units``), for the distance


def _successors(n_units: int, sorties: Sequence[Sortie]) -> np.ndarray:
    """The unit flown after each unit (``n_units``: the sortie ends there), for the distance between plans."""
    succ = np.full(n_units, n_units, dtype=np.int64)
    for s in sorties:
        for (a, _), (b, _) in zip(s, s[1:]):
            succ[a] = b
    return succ


class Memetic:
    """One lane's population, the local search and the split (module docstring)."""

    def __init__(self, data: CarpData, inst: PyvrpInstance, seed: int, neighbours: int) -> None:
        import pyvrp
        from pyvrp.search import (
            LocalSearch, PerturbationManager, PerturbationParams, NeighbourhoodParams, compute_neighbours,
        )
        from pyvrp.search import (
            Relocate1, Relocate2, RelocateAlternative, ReplaceGroup, Swap11, Swap21, Swap22, SwapTails,
        )

        self.data, self.inst = data, inst
        self.rng = np.random.default_rng(seed)
        pv = inst.data
        self.ls = LocalSearch(pv, pyvrp.RandomNumberGenerator(seed=seed),
                              compute_neighbours(pv, NeighbourhoodParams(num_neighbours=int(neighbours))),
                              PerturbationManager(PerturbationParams(1, 25)))
        for op in (Relocate1, Relocate2, RelocateAlternative, ReplaceGroup, Swap11, Swap21, Swap22, SwapTails):
            if op.supports(pv):
                self.ls.add_operator(op(pv))
        mean_dh = float(np.mean(data.deadhead[: data.depot, : data.depot]))
        self.penalty = max(1.0, mean_dh / max(float(np.mean(data.demand)), 1.0))
        self.feasible_share: list[bool] = []
        nd = inst.n_depots
        self.client_of = {}  # (unit, reversed) -> PyVRP client index
        for i, node in enumerate(inst.order[nd:]):
            u, r = divmod(node - nd, 2)
            self.client_of[(u, bool(r))] = i
        self.unit_of = {c: ur for ur, c in self.client_of.items()}
        self.fleet = sum(len(m) for m in inst.members)
        self.feasible, self.infeasible = _Population(), _Population()
        self.best: _Plan | None = None

    # -------------------------------------------------------------- one plan
    def _solution(self, sorties: Sequence[Sortie]) -> pyvrp.Solution:
        import pyvrp

        pv = self.inst.data
        return pyvrp.Solution(pv, [pyvrp.Route(pv, [self.client_of[(u, r)] for u, r in s], 0) for s in sorties if s])

    def _sorties(self, sol: pyvrp.Solution) -> list[Sortie]:
        return [[self.unit_of[int(a.idx)] for a in r.schedule() if a.is_client()] for r in sol.routes()]

    def _evaluator(self, factor: float = 1.0) -> pyvrp.CostEvaluator:
        import pyvrp

        return pyvrp.CostEvaluator([self.penalty * factor], 0.0, 0.0)

    def educate(self, tour: Sequence[int]) -> tuple[_Plan | None, _Plan | None]:
        """Split the tour, improve it by local search, split the result again: (within the limit, over it).

        HGS: a plan the local search leaves over the load limit joins the infeasible
        population at its penalised cost, and is repaired (one more local search at
        ``REPAIR_FACTOR`` times the penalty) for the feasible one.
        """
        _, sorties = split_tour(self.data, tour, self.penalty, self.fleet)
        if len(sorties) > self.fleet:  # (the soft split always fits the fleet: a guard)
            return None, None
        found = self._improve(sorties, 1.0)
        excess = self._excess(found)
        self.feasible_share.append(excess == 0)
        self._adapt_penalty()
        over = None
        if excess:
            penalised = plan_cost(self.data, found) + int(math.ceil(self.penalty * excess))
            over = _Plan(penalised, found, _successors(self.data.units, found))
            if self.rng.random() >= REPAIR_SHARE:
                return None, over
            found = self._improve(found, REPAIR_FACTOR)
            if self._excess(found):
                return None, over
        cost, again = split_tour(self.data, [u for s in found for u, _ in s], fleet=self.fleet)
        if len(again) > self.fleet or cost > plan_cost(self.data, found):
            cost, again = plan_cost(self.data, found), found
        return _Plan(cost, again, _successors(self.data.units, again)), over

    def _improve(self, sorties: list[Sortie], factor: float) -> list[Sortie]:
        """PyVRP's local search, then, on a plan near the best, the moves that re-choose whole routes' directions.

        Both at ``factor`` × the penalty. The second search (``carp_moves``) prices every move
        in numpy, ~10 ms a round on egl-s4-A's 190 units where PyVRP's whole local search
        takes ~7 ms, so it runs only on a plan whose penalised cost would rank among the
        feasible population's best ``ORIENTED_RANK`` (gdb23 needs it on that many: with 10,
        235 as without it; with 25, 233).
        """
        sol = self.ls(self._solution(sorties), self._evaluator(factor), exhaustive=True)
        found = self._sorties(sol)
        costs = sorted(p.cost for p in self.feasible.plans)
        if not costs:
            return found
        penalised = plan_cost(self.data, found) + self.penalty * factor * self._excess(found)
        if penalised > costs[min(ORIENTED_RANK, len(costs)) - 1]:
            return found
        return improve_oriented(self.data, found, self.penalty * factor)

    def _excess(self, sorties: Sequence[Sortie]) -> int:
        """Units of load over the limit, summed over the sorties."""
        dem, cap = self.data.demands, self.data.capacity
        return sum(max(0, sum(dem[u] for u, _ in s) - cap) for s in sorties)

    def _adapt_penalty(self) -> None:
        """HGS: the load penalty grows when fewer than ~20 % of local searches end within the limit, shrinks above."""
        if len(self.feasible_share) < 100:
            return
        share = sum(self.feasible_share) / len(self.feasible_share)
        self.feasible_share.clear()
        if share < 0.15:
            self.penalty = min(self.penalty * 1.2, 1e6)
        elif share > 0.25:
            self.penalty = max(self.penalty * 0.85, 0.01)

    def add(self, plans: tuple[_Plan | None, _Plan | None]) -> bool:
        """The feasible plan and the one over the limit into their populations; whether there is a new best."""
        feasible, over = plans
        if over is not None:
            self.infeasible.add(over)
        if feasible is None:
            return False
        self.feasible.add(feasible)
        better = self.best is None or feasible.cost < self.best.cost
        if better:
            self.best = feasible
        return better

    def _parent(self) -> _Plan:
        """HGS's binary tournament over both populations, on each plan's biased fitness in its own."""
        fits = [(pop, pop.fitness()) for pop in (self.feasible, self.infeasible)]
        sizes = [len(pop.plans) for pop, _ in fits]
        picks = []
        for k in self.rng.integers(sum(sizes), size=2):
            pop, fit = fits[0] if k < sizes[0] else fits[1]
            i = int(k) if k < sizes[0] else int(k) - sizes[0]
            picks.append((float(fit[i]), pop.plans[i]))
        return picks[0][1] if picks[0][0] <= picks[1][0] else picks[1][1]

    def _crossover(self, p1: _Plan, p2: _Plan) -> list[int]:
        """OX on the parents' giant tours (their sorties in order, directions dropped)."""
        t1 = [u for s in p1.sorties for u, _ in s]
        t2 = [u for s in p2.sorties for u, _ in s]
        n = len(t1)
        a, b = sorted(int(x) for x in self.rng.integers(n, size=2))
        child = t1[a:b + 1]
        taken = set(child)
        rest = [u for u in t2[b + 1:] + t2[:b + 1] if u not in taken]
        return rest[n - 1 - b:] + child + rest[: n - 1 - b]  # the segment keeps its place

    def initial(self, budget: Budget) -> int:
        """The first population: path scanning's five rules, then random tours; the educations done."""
        done = 0
        for rule in range(STARTS_PATH_SCANNING):
            sorties = path_scanning(self.data, rule, self.rng)
            self.add(self.educate([u for s in sorties for u, _ in s]))
            done += 1
            if budget.timed and budget.expired():
                return done
        while len(self.feasible.plans) < POP_MIN and done < 4 * POP_MIN:
            self.add(self.educate([int(u) for u in self.rng.permutation(self.data.units)]))
            done += 1
            if budget.timed and budget.expired():
                break
        return done

    def generation(self) -> bool:
        """One child: two parents, OX, educate, add; whether it is a new best."""
        if len(self.feasible.plans) + len(self.infeasible.plans) < 2:
            return self.add(self.educate([int(u) for u in self.rng.permutation(self.data.units)]))
        return self.add(self.educate(self._crossover(self._parent(), self._parent())))

    def restart(self) -> None:
        """Fresh populations around the best (HGS restarts after a long run without a better plan)."""
        self.feasible, self.infeasible = _Population(), _Population()
        if self.best is not None:
            self.feasible.add(self.best)


class _Population:
    """One of HGS's two populations: plans, their broken-pairs distances, the survivor selection."""

    def __init__(self) -> None:
        self.plans: list[_Plan] = []
        self.dist = np.zeros((0, 0))
        self.succs = np.zeros((0, 0), dtype=np.int64)  # each plan's successors (``_Plan.succ``), a row a plan
        self._fitness: np.ndarray | None = None  # until the plans change (two tournaments a child read it)

    def add(self, plan: _Plan) -> None:
        """Put ``plan`` in; when full (``POP_MIN + POP_LAMBDA``), drop the worst fitness down to ``POP_MIN``."""
        # broken pairs: the share of units followed by another unit (or the depot) in the other plan
        row = (self.succs != plan.succ).mean(axis=1) if self.plans else np.zeros(0)
        self.dist = np.block([[self.dist, row[:, None]], [row[None, :], np.zeros((1, 1))]])
        self.plans.append(plan)
        self.succs = np.vstack([self.succs, plan.succ[None, :]]) if len(self.succs) else plan.succ[None, :].copy()
        self._fitness = None
        if len(self.plans) >= POP_MIN + POP_LAMBDA:
            while len(self.plans) > POP_MIN:
                w = self._worst()
                self.plans.pop(w)
                self.succs = np.delete(self.succs, w, axis=0)
                self.dist = np.delete(np.delete(self.dist, w, axis=0), w, axis=1)
                self._fitness = None

    def fitness(self) -> np.ndarray:
        """HGS's biased fitness: cost rank plus (1 - elite share) × diversity rank (lower is better)."""
        if self._fitness is None:
            self._fitness = self._biased_fitness()
        return self._fitness

    def _biased_fitness(self) -> np.ndarray:
        n = len(self.plans)
        if n <= 1:
            return np.zeros(n)
        dist = self.dist + np.diag(np.full(n, np.inf))
        close = min(CLOSEST, n - 1)
        diversity = np.sort(dist, axis=1)[:, :close].mean(axis=1)
        cost_rank = np.argsort(np.argsort([p.cost for p in self.plans], kind="stable"), kind="stable") / (n - 1)
        div_rank = np.argsort(np.argsort(-diversity, kind="stable"), kind="stable") / (n - 1)
        return cost_rank + (1.0 - ELITE / n) * div_rank

    def _worst(self) -> int:
        seen: set[bytes] = set()
        for i, p in enumerate(self.plans):  # a clone (same cost and successors) goes first: the later copy
            sig = p.cost.to_bytes(8, "little", signed=True) + p.succ.tobytes()
            if sig in seen:
                return i
            seen.add(sig)
        return int(np.argmax(self.fitness()))


def memetic_lane(data: CarpData, inst: PyvrpInstance, budget: Budget, seed: int, generations: int | None,
                 neighbours: int, start: list[Sortie] | None = None) -> tuple[list[Sortie], int, int, str]:
    """One lane to the deadline or ``generations`` children: (best sorties, cost, generations, what stopped it).

    ``start`` (sorties within the limit, e.g. another lane's best) joins the first population.
    """
    m = Memetic(data, inst, seed, neighbours)
    if start:
        m.add((_Plan(plan_cost(data, start), [list(s) for s in start], _successors(data.units, start)), None))
    m.initial(budget)
    if m.best is None:  # a deadline within the first local searches: path scanning's plan as it is
        first = path_scanning(data, 0, m.rng)
        m.add((_Plan(plan_cost(data, first), first, _successors(data.units, first)), None))
    since = 0
    gens = 0
    stopped = STOPPED_BY_ITERATIONS
    while True:
        if generations is not None and gens >= generations:
            break
        if budget.timed and budget.expired():
            stopped = STOPPED_BY_DEADLINE
            break
        since = 0 if m.generation() else since + 1
        gens += 1
        if since >= RESTART_AFTER:
            m.restart()
            m.initial(budget)
            since = 0
    assert m.best is not None
    return m.best.sorties, m.best.cost, gens, stopped
