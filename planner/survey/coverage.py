"""Boustrophedon survey coverage of a free area, in local metres.

Given the free area (the survey area minus the no-fly holes, already grown by
the safety margin) and the swath (camera footprint across track after side
overlap), plan straight camera-on sweeps and the connections between them as one
polyline that never leaves the free area.

The stages, each a small function:

1. **Sweep placement** for a direction θ: rotate the area so sweeps run along x,
   put ``n = ceil(height / swath)`` lines from ``swath/2`` above the lowest point
   to ``swath/2`` below the highest, evenly spaced (spacing <= swath), so the
   strips reach both far edges (Fields2Cover leaves up to half a swath open at
   the far edge; we do not).
2. **Pieces**: each line clipped to the free area, split where it crosses a hole
   or a concave notch; every piece runs from boundary to boundary, because the
   coverage figure counts nothing beyond a sweep's ends.
3. **Distances** between piece ends: straight where the segment stays inside the
   free area (tested for each end's nearest ends), otherwise the shortest path
   inside it through the reflex corners (``planner.geo.transit.InsideGraph``;
   sparse min-plus products over the corner distance matrix, chunked). Parts
   of a MultiPolygon no inside path joins are connected by ``bridge`` (the
   transit graph around the zone between them).
4. **Order**: the pieces form an open travelling-salesman path where each piece
   may be flown either way, solved as one OR-Tools routing problem
   (``planner.survey.order``, in the manner of Fields2Cover's route
   planner): first the boustrophedon cells, each flown as a snake in one of
   four ways, then the pieces themselves from that order; guided local search
   bounded by a solution count, so deterministic.
5. **Direction** θ: candidates are every edge direction of the area and its
   holes plus a 2° grid. A cheap estimate (sweep length + spacing per turn + a
   detour per extra piece) ranks them; the best few and always 0° and 90° are
   built and ordered by construction, the best ``POLISH_DIRECTIONS`` of those
   by the routing model; the shortest plan that reaches the coverage target
   wins (else the shortest close to the best coverage seen).
6. **Edge sweeps**: a connection that runs along the boundary (the turn between
   two sweeps ending on the same edge) keeps the camera on: it images the band
   along a slanted edge that flat-ended sweeps leave as triangles, for no extra
   flight.

Coverage is measured like the benchmark: the union of the sweeps buffered by
half a swath with flat ends, intersected with the free area, over its area.

Every search is bounded (``MAX_*`` and ``*_SOLUTIONS`` constants): candidate
directions, full evaluations, pieces, routing-model solutions. Under a deadline the whole
plan fits in it (``planner.survey.schedule``): the direction the estimate ranks first is
always built, the rest of the work runs while time is left after a reserve for the phases
that must follow (the extra passes, the final measurement).

Measured on ``../shared/bench/coverage`` (swath 40 m, default target 0.99, CPU
seconds on this machine kind under load): 01 rectangle 3 360.0 m (= Fields2Cover,
1.120 × LB), 03 U 5 691.7 m (F2C 5 960.0), 04 two holes 6 100.6 m (F2C 6 847.9),
06 2 km² 51 395.8 m at coverage 0.9946 (F2C 51 558.7 at 0.9898); 0.02–0.4 s CPU.
Stages 3b (a direction per cell) and 7 (extra passes) live in
``planner.survey.cells`` and ``planner.survey.repair``.

This module chooses between directions (stage 5) and holds the result; the stages it
calls live one concept a module: ``planner.survey.sweeps`` (1-2, the estimate, the
coverage figure), ``planner.survey.connector`` (3), ``planner.survey.tour`` (4, the
starting orders for ``planner.survey.order``) and ``planner.survey.direction`` (one
direction in full, with 6).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry import MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

from planner.errors import InvalidArgument
from planner.geo.transit import InsideGraph
from planner.job import DEFAULT_COVERAGE_TARGET
from planner.routing.budget import Budget
from planner.survey.bands import banded, route_banded
from planner.survey.connector import Bridge
from planner.survey.direction import (
    DirectionPlan,
    DirectionRouting,
    camera_on_connections,
    direction_pieces,
    multi_cell_pieces,
    prepare_routing,
    route_direction,
    search_pieces,
)
from planner.survey.order import ENGINE, OrderControl
from planner.survey.repair import MIN_RATE, repair_passes, unimaged_area
from planner.survey.schedule import PhaseClock
from planner.survey.sweeps import (
    MAX_CANDIDATE_ANGLES,
    MAX_LINES,
    MAX_PIECES,
    Segment,
    XY,
    candidate_angles,
    coverage_fraction,
    estimate_lengths,
    polygons_of,
    ring_segments,
)

__all__ = [
    "DEFAULT_COVERAGE_TARGET",
    "CoverageResult",
    "plan_coverage",
    "coverage_fraction",
    "candidate_angles",
    "MAX_CANDIDATE_ANGLES",
    "MAX_FULL_EVALUATIONS",
    "MAX_PIECES",
    "MAX_LINES",
]

MAX_FULL_EVALUATIONS = 5
LARGE_FULL_EVALUATIONS = 3  # directions planned in full on a large (banded) area: the estimate's best three
MAX_COVERAGE_CHECKS = 5
POLISH_DIRECTIONS = 3  # the best few directions (by their construction) get the routing model's search
PIECE_DIRECTIONS = 2  # ... and of those the best two get a search over the pieces
PIECE_SOLUTIONS = 16  # then the pieces: at most this many guided-local-search solutions, in rounds (``search_pieces``)
DARK_PRICE = 2.0 / MIN_RATE  # choosing a plan: dark area priced as extra passes at the least rate flown
CELL_SOLUTIONS = 30  # the cell order: a small model (four variants per cell), cheap to search well
COVERAGE_SLACK = 0.003  # when no plan reaches the target: shortest within this of the best coverage
# Under a deadline (``planner.survey.schedule``): the share of it kept back for the extra passes when the
# best construction is short of the coverage target (their clipping, their connections, their order:
# 0.1-0.35 CPU s on the parcels with building holes, measured on tests/planner/parcels and parcel_blocks_fresh;
# what the first direction took predicted it badly, 3-36 times over)
REPAIR_SHARE = 0.35
FINAL_RESERVE = 2.0  # ... and for the final measurement, in units of one coverage check
SAFETY_SHARE = 0.05  # ... and this share of the deadline: a step already started is not interrupted
# the connections of a plan with extra passes cost about this share of the first direction's per piece (the corners
# its sweeps' ends see are remembered): 0.69-0.77 measured on parcel_blocks_fresh, parcel_held_sw and parcel_held_mid
PASS_ROUTING_SHARE = 0.75


@dataclass(frozen=True)
class CoverageResult:
    """A planned survey: sweeps in flight order and direction, and the whole path.

    ``path`` runs from the first sweep's start to the last sweep's end and
    contains every sweep and connection. ``lower_bound_m`` is free area / swath:
    no path of that swath can image more per metre.
    """

    sweeps: tuple[Segment, ...]
    path: tuple[XY, ...]
    path_length_m: float
    coverage_fraction: float
    angle_deg: float
    swath_m: float
    free_area_m2: float
    lower_bound_m: float
    sweep_length_m: float
    # (angle, path length) of every plan made in full, shortest first
    candidates: tuple[tuple[float, float], ...] = field(default=(), compare=False)
    coverage_target: float = DEFAULT_COVERAGE_TARGET
    # the free area no swath strip reaches (local metres): what the operator must know is left dark
    unimaged_local: BaseGeometry | None = field(default=None, compare=False)
    direction_cells: int = 1  # cells swept in their own direction (1: one direction throughout)
    extra_passes: int = 0  # passes added along edges and over dark patches (``planner.survey.repair``)
    engine: str = ENGINE  # what ordered the sweeps
    solutions: int = 0  # the order searches' work: guided-local-search solutions over all of them
    stopped_by: str = "iterations"  # "iterations" (every search ran to its count) or "deadline"

    @property
    def target_met(self) -> bool:
        """Whether ``coverage_fraction`` reaches the requested ``coverage_target``."""
        return self.coverage_fraction >= self.coverage_target

    @property
    def ratio_to_lower_bound(self) -> float:
        return self.path_length_m / self.lower_bound_m if self.lower_bound_m > 0 else math.inf


def plan_coverage(
    free_area_local: Polygon | MultiPolygon,
    swath_m: float,
    *,
    coverage_target: float = DEFAULT_COVERAGE_TARGET,
    start: XY | None = None,
    end: XY | None = None,
    angles_deg: Sequence[float] | None = None,
    max_candidates: int = MAX_CANDIDATE_ANGLES,
    max_full: int = MAX_FULL_EVALUATIONS,
    edge_sweeps: bool = True,
    polish: bool = True,
    decompose_cells: bool = True,
    repair: bool = True,
    bridge: Bridge | None = None,
    budget: Budget | None = None,
) -> CoverageResult:
    """Plan a boustrophedon survey of ``free_area_local`` with sweeps ``swath_m`` apart.

    ``start``/``end`` (local metres, e.g. the dock) make the order prefer to
    begin and finish near them (straight-line distance; the caller plans the
    real transit). ``angles_deg`` gives the exact directions to try (default:
    edge directions and a grid, with 0° and 90° always planned in full).
    ``edge_sweeps`` keeps the camera on along connections that run along the
    boundary (free extra coverage, see ``camera_on_connections``). ``polish`` re-plans
    the best few directions with a stronger (seeded, bounded) order search.
    ``bridge(a, b) -> polyline`` connects parts of a MultiPolygon free area that
    no inside path joins (e.g. ``TransitGraph.path`` around the zone between
    them); without it such a hop is straight and leaves the free area.

    ``coverage_target`` picks among directions: the shortest plan reaching it
    wins; when none does (a boundary not parallel to the sweeps leaves small
    triangles no straight sweep inside the area can image), the shortest within
    ``COVERAGE_SLACK`` of the best coverage seen. ``coverage_fraction`` in the
    result says what was reached.

    ``budget`` (``planner.routing.budget.Budget``): with a deadline, every phase fits in it
    (``planner.survey.schedule``): the best direction by the estimate is always built and its
    coverage checked; more directions, the order searches and a second repaired candidate run
    while time is left after a reserve for the extra passes (when no plan reaches the target)
    and the final measurement. Without, the fixed work.

    Raises ``InvalidArgument`` for an empty or degenerate area, a swath <= 0 or
    a survey wider than ``MAX_LINES`` sweep lines (or of more than ``MAX_PIECES`` pieces).
    """
    if not isinstance(swath_m, (int, float)) or not math.isfinite(swath_m) or swath_m <= 0:
        raise InvalidArgument(f"swath_m must be > 0 m, got {swath_m!r}")
    if not 0 < coverage_target <= 1:
        raise InvalidArgument(f"coverage_target must be in (0, 1], got {coverage_target}")
    if free_area_local is None or free_area_local.is_empty:
        raise InvalidArgument("the free area is empty: the area is wholly inside no-fly zones or was not given")
    if not isinstance(free_area_local, (Polygon, MultiPolygon)):
        raise InvalidArgument(f"the free area must be a Polygon or MultiPolygon, got {free_area_local.geom_type}")
    if not free_area_local.is_valid:
        free_area_local = shapely.make_valid(free_area_local)
        polys = polygons_of(free_area_local)
        free_area_local = polys[0] if len(polys) == 1 else MultiPolygon(polys)
    area = free_area_local.area
    if area < 1.0:
        raise InvalidArgument(f"the free area is degenerate ({area:.3g} m²)")
    minx, miny, maxx, maxy = free_area_local.bounds
    approx_lines = (math.hypot(maxx - minx, maxy - miny)) / swath_m
    if approx_lines > MAX_LINES:
        raise InvalidArgument(
            f"a swath of {swath_m:g} m needs about {approx_lines:.0f} sweeps side by side across this area, more "
            f"than the {MAX_LINES} one survey plans (a {MAX_LINES * swath_m / 1000:.0f} km wide area at this swath): "
            "split the area into several surveys, or use a wider swath"
        )
    clock = PhaseClock.of(budget)
    control = OrderControl(clock.expired, poll=clock.polled()) if clock.timed else OrderControl()
    # work centred on the centroid for numerical headroom
    cx, cy = free_area_local.centroid.x, free_area_local.centroid.y
    free_c = shapely.transform(free_area_local, lambda a: a - np.array([cx, cy]))
    start_c = (start[0] - cx, start[1] - cy) if start is not None else None
    end_c = (end[0] - cx, end[1] - cy) if end is not None else None
    bridge_c: Bridge | None = None
    if bridge is not None:
        outer = bridge

        def bridge_c(a: XY, b: XY) -> list[XY]:
            pts = outer((a[0] + cx, a[1] + cy), (b[0] + cx, b[1] + cy))
            return [(p[0] - cx, p[1] - cy) for p in pts]

    if angles_deg is None:
        cands = candidate_angles(free_c, max_candidates)
        always = [0.0, 90.0]
    else:
        cands = []
        for a in list(angles_deg)[: max(1, max_candidates)]:
            a = float(a) % 180.0
            if not math.isfinite(a):
                raise InvalidArgument(f"sweep angles must be finite, got {angles_deg!r}")
            if a not in cands:
                cands.append(a)
        if not cands:
            raise InvalidArgument("angles_deg is empty")
        always = []
    segs_c = ring_segments(free_c)
    costs, counts = estimate_lengths(segs_c, cands, swath_m)
    ranked = sorted(zip(costs.tolist(), counts.tolist(), range(len(cands)), cands))
    if banded(int(ranked[0][1])):  # a large area: its estimate ranks well; each full plan costs its size
        max_full, always = min(max_full, LARGE_FULL_EVALUATIONS), []
    full = [a for *_, a in ranked[: max(1, max_full)]]
    for a in always:
        if a not in full:
            full.append(a)
    lazy: list[InsideGraph] = []

    def whole() -> InsideGraph:
        """The whole area's visibility graph, built when first needed (a large area may never need it)."""
        if not lazy:
            lazy.append(InsideGraph(free_c))
        return lazy[0]

    cov_of: dict[int, tuple[float, list[bool], DirectionPlan]] = {}  # id(plan) → (coverage, flags, the plan: kept alive)
    # what a piece set leaves dark: one union of strips per set, shared by every order of it
    dark_of: dict[int, tuple[BaseGeometry, DirectionRouting]] = {}  # id(source) → (dark area, the source: kept alive)

    def coverage_of(p: DirectionPlan) -> float:
        if id(p) not in cov_of:
            src = p.source
            dark = None
            if src is not None:
                if id(src) not in dark_of:
                    segs = [((a[0], a[1]), (b[0], b[1])) for a, b in src.pieces.tolist()]
                    dark_of[id(src)] = (unimaged_area(free_c, segs, swath_m), src)
                dark = dark_of[id(src)][0]
            if edge_sweeps:
                flags, dark = camera_on_connections(free_c, p, swath_m, dark)
            else:
                flags = p.camera
                if dark is None:
                    dark = unimaged_area(free_c, [(p.path[i], p.path[i + 1]) for i, on in enumerate(flags) if on], swath_m)
            cov_of[id(p)] = (1.0 - dark.area / area, flags, p)
        return cov_of[id(p)][0]

    def reserve_for(first: DirectionPlan) -> None:
        """Keep back what must follow the searches: the extra passes when the best construction
        is short of the target, and the final measurement (``planner.survey.schedule``)."""
        assert budget is not None
        t = clock.left_s()
        short_of_target = coverage_of(first) < coverage_target and repair and first.source.conn is not None
        check_s = t - clock.left_s()
        final_s[0] = FINAL_RESERVE * check_s + SAFETY_SHARE * budget.seconds
        checks_s = MAX_COVERAGE_CHECKS * check_s  # the coverage of the best few plans, checked after the searches
        clock.reserve_s = final_s[0] + checks_s + (REPAIR_SHARE * budget.seconds if short_of_target else 0.0)

    final_s = [0.0]

    has_start = start_c is not None
    planned_all: list[DirectionPlan] = []
    large = False
    unit_s = 0.0  # what the first direction's connections and construction took (sizes the reserve)
    unit_pieces = 1  # ... for this many pieces
    for k, a in enumerate(full):  # constructions only: enough to rank directions
        if k > 0 and not clock.affords(unit_s):  # the best by the estimate is always built
            break
        t0 = clock.left_s()
        if k == 0 and not banded(int(ranked[0][1])):
            whole().node_distances()  # the area's graph is built once for every direction: not part of the unit
            t0 = clock.left_s()
        pieces, cells = direction_pieces(free_c, a, swath_m)
        if len(pieces) == 0:
            continue
        if banded(len(pieces)):  # a large area: band by band (planner.survey.bands), linear in the area
            large = True
            planned_all.append(route_banded(free_c, pieces, cells, a, start_c, end_c, whole, bridge_c, swath_m,
                                            control=control))
        else:
            r = prepare_routing(free_c, pieces, cells, start_c, end_c, whole(), bridge_c, control)
            planned_all.append(route_direction(r, a, has_start, 0))
        if len(planned_all) == 1 and clock.timed:
            unit_s, unit_pieces = t0 - clock.left_s(), len(pieces)
            reserve_for(planned_all[0])
    if decompose_cells and angles_deg is None and not large and clock.affords(unit_s):  # a direction per cell
        multi = multi_cell_pieces(free_c, swath_m)
        if multi is not None:
            pieces, cells, a, k = multi
            if banded(len(pieces)):
                planned_all.append(route_banded(free_c, pieces, cells, a, start_c, end_c, whole, bridge_c, swath_m, k,
                                                control))
            else:
                r = prepare_routing(free_c, pieces, cells, start_c, end_c, whole(), bridge_c, control)
                r.n_direction_cells = k
                planned_all.append(route_direction(r, a, has_start, 0))
    if not planned_all:
        raise InvalidArgument("no sweep fits in the free area")
    planned_all.sort(key=lambda p: (p.length, p.angle))

    # the best few directions again, ordered by the routing model
    # (the cell order for the best few, then the pieces of the best of those)
    # (where cells are about one piece each, e.g. between many buildings, the model over pieces is
    # the smaller one: the pieces are searched instead, and not searched twice)
    polished: list[DirectionPlan] = []
    searched: list[DirectionPlan] = []
    for cand in list(planned_all[: POLISH_DIRECTIONS if polish else 0]):
        assert cand.source is not None
        if cand.source.conn is None or control.out_of_time():  # banded, or out of time
            continue
        if 2 * len(cand.source.cells) > len(cand.source.pieces):
            searched.append(search_pieces(cand, has_start, PIECE_SOLUTIONS))
            polished.append(searched[-1])
            continue
        routed = route_direction(cand.source, cand.angle, has_start, 0, CELL_SOLUTIONS)
        polished.append(routed if routed.length < cand.length - 1e-6 else cand)
    for top in sorted(polished, key=lambda p: (p.length, p.angle))[:PIECE_DIRECTIONS]:
        if all(top is not q for q in searched) and not control.out_of_time():
            polished.append(search_pieces(top, has_start, PIECE_SOLUTIONS))
    planned_all += [p for p in polished if all(p is not q for q in planned_all)]
    planned_all.sort(key=lambda p: (p.length, p.angle))
    # the shortest plan that reaches the coverage target; if none does, the shortest
    # within COVERAGE_SLACK of the best coverage seen (a bounded number of coverage checks)
    checked = planned_all[:MAX_COVERAGE_CHECKS]
    checked += [p for p in planned_all[MAX_COVERAGE_CHECKS:] if p.cells > 1]  # the per-cell plan is always a candidate
    if clock.expired():  # past the deadline: only the plans whose coverage is known (the first one built is)
        checked = [p for p in checked if id(p) in cov_of] or checked[:1]
    reach = [p for p in checked if coverage_of(p) >= coverage_target]
    tried = tuple((p.angle, p.length) for p in planned_all)

    def score(p: DirectionPlan) -> tuple[float, float]:
        """Path + the price of the area left dark (what extra passes would have to image)."""
        return (p.length + DARK_PRICE * (1.0 - coverage_of(p)) * area / swath_m, p.angle)

    def with_passes(p: DirectionPlan) -> tuple[DirectionPlan, int]:
        """``p`` with extra passes where its sweeps leave the area dark, ordered again with the sweeps."""
        if not repair or coverage_of(p) >= coverage_target or p.source is None or p.source.conn is None:
            return p, 0  # (a banded plan of a large area is not re-ordered with passes: its shortfall is reported)
        flags = cov_of[id(p)][1]
        segs = [(p.path[i], p.path[i + 1]) for i, on in enumerate(flags) if on]

        def routing_fits(n_passes: int) -> bool:
            """Whether the passes' connections (about the first direction's per piece) fit before the deadline."""
            return clock.affords(PASS_ROUTING_SHARE * unit_s * (len(segs) + n_passes) / unit_pieces)

        # past the deadline, or no time left to connect what the passes would add: the plan so far is the answer
        # (a step once started is not interrupted: the passes stop being chosen when their connections would not fit)
        if clock.expired() or not routing_fits(0):
            return p, 0
        passes = repair_passes(free_c, segs, swath_m, coverage_target, p.path,
                               (lambda: not routing_fits(0)) if clock.timed else None)
        if not passes or not routing_fits(len(passes)):
            return p, 0
        # the camera-on segments flown so far (sweeps and edge runs) in flight order, then the passes
        pieces = np.concatenate([np.asarray(segs, float).reshape(-1, 2, 2), np.asarray(passes, float).reshape(-1, 2, 2)])
        r = prepare_routing(free_c, pieces, [], start_c, end_c, whole(), bridge_c, control)
        r.n_direction_cells = p.source.n_direction_cells
        r.prefix = len(segs)
        repaired = route_direction(r, p.angle, has_start, 0)  # the sweeps' order, the passes inserted
        if polish:
            repaired = search_pieces(repaired, has_start, PIECE_SOLUTIONS)
        return (repaired, len(passes)) if coverage_of(repaired) > coverage_of(p) else (p, 0)

    if reach:
        best, n_passes = reach[0], 0
    else:
        # two candidates: the least path + price of the dark area, and the shortest close to the best
        # coverage; each gets its extra passes, and the better score after them wins
        top_cov = max(coverage_of(p) for p in checked)
        short = next(p for p in checked if coverage_of(p) >= top_cov - COVERAGE_SLACK)
        lead = min(checked, key=score)
        bases = [lead] if lead is short else [lead, short]
        clock.reserve_s = final_s[0]  # the searches are over: the passes may use all but the measurement
        options = [(p, 0) for p in bases]
        repair_s = 0.0
        for p in bases:  # the first candidate always gets its passes; the second when they fit
            if p is not bases[0] and clock.timed and not clock.affords(repair_s):
                break
            t0 = clock.left_s()
            options.append(with_passes(p))
            repair_s = t0 - clock.left_s()
        # none reaches the target with its passes (e.g. parcel_dense_a: the shortest plan's passes stop at 0.982,
        # its dark area beside buildings where no edge pass fits): the other plans, best covered first, while time is left
        rest = [p for p in planned_all if all(p is not q for q in bases)]
        while rest and not any(coverage_of(o[0]) >= coverage_target for o in options) and (not clock.timed or clock.affords(repair_s)):
            p = max(rest, key=lambda q: (coverage_of(q), -q.length))
            rest.remove(p)
            options.append(with_passes(p))
        met = [o for o in options if coverage_of(o[0]) >= coverage_target]  # the target first, then the score
        best, n_passes = min(met, key=lambda o: (o[0].length, o[0].angle)) if met else min(options, key=lambda o: score(o[0]))
    coverage_of(best)
    flags = cov_of[id(best)][1]
    path = tuple((p[0] + cx, p[1] + cy) for p in best.path)
    sweeps = tuple((path[i], path[i + 1]) for i, on in enumerate(flags) if on)
    length = float(np.hypot(*np.diff(np.asarray(path), axis=0).T).sum()) if len(path) > 1 else 0.0
    dark = unimaged_area(free_area_local, sweeps, swath_m)
    cov = 1.0 - dark.area / area  # = coverage_fraction(free_area_local, sweeps, swath_m), one union fewer
    return CoverageResult(
        sweeps=sweeps,
        path=path,
        path_length_m=length,
        coverage_fraction=cov,
        angle_deg=best.angle,
        swath_m=float(swath_m),
        free_area_m2=float(area),
        lower_bound_m=float(area / swath_m),
        sweep_length_m=float(sum(math.dist(a, b) for a, b in sweeps)),
        candidates=tried,
        coverage_target=float(coverage_target),
        unimaged_local=dark,
        direction_cells=best.cells,
        extra_passes=n_passes,
        engine=ENGINE,
        solutions=control.solutions,
        stopped_by="deadline" if clock.cut or control.out_of_time() else "iterations",
    )
