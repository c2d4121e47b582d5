"""The rural postman tour over lane pieces (lines or chains), and the baseline's split of it.

On a dense network (every road of a district) the good plans fly long runs of
consecutive lanes with no deadhead between them, which a local search started
from scratch finds slowly: on ``bench/instances/hel_roads_south.json`` (941 lines)
it ended above the simple tour-and-split baseline within 4 s. So the search starts
from that tour instead, and can only improve it:

1. ``tour_orders``: the pieces' end points are the nodes of a graph whose edges are
   the pieces. Its components are joined by a minimum spanning tree of the nearest
   deadheads between them, and its odd nodes get a minimum-weight matching of deadheads —
   over each node's ``_MATCH_NEIGHBOURS`` nearest odd nodes (sparse: 0.2 s instead of
   3.5 s at 200 odd nodes, the same matching there), doubled while the sparse graph
   has no perfect matching. An Euler circuit of the result flies every piece once.
2. The planner splits that circuit exactly at its best rotation
   (``planner.patrol.line_tour``, ``planner.patrol.tour_split``). ``rpp_split`` here is
   the bench baseline's own split (``bench/rpp_baseline.py``: metres, every rotation one
   dynamic programme at a time, the exact matching): kept as it is, so the baseline's
   figures stay what they were.

Deterministic (networkx's matching and circuit on nodes numbered in a fixed
order). Pure: plain numbers in, ``[(depot, [(piece, reversed?)])]`` out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import networkx as nx
import numpy as np

__all__ = ["rpp_split", "split_tour", "tour_orders"]

_KEY_DECIMALS = 3
_MATCH_NEIGHBOURS = 10
_ROTATIONS = 16


def _nodes(points: np.ndarray, T: int) -> tuple[np.ndarray, int]:
    """Node id of each chain end (2t start, 2t+1 end): ends at the same place are one node."""
    keys: dict[tuple[float, float], int] = {}
    ids = np.empty(2 * T, dtype=np.int64)
    for i in range(2 * T):
        k = (round(float(points[i][0]), _KEY_DECIMALS), round(float(points[i][1]), _KEY_DECIMALS))
        ids[i] = keys.setdefault(k, len(keys))
    return ids, len(keys)


def _euler(T: int, ids: np.ndarray, n_nodes: int, D: np.ndarray, rep: np.ndarray,
           match_neighbours: int | None, sources: Sequence[int] = (0,)) -> list[list[tuple[int, bool]]]:
    """Chains in the order and direction an Euler circuit flies them (D over chain ends; rep: node → an end)."""
    G = nx.MultiGraph()
    G.add_nodes_from(range(n_nodes))
    for t in range(T):
        G.add_edge(int(ids[2 * t]), int(ids[2 * t + 1]), chain=t)
    comps = [sorted(c) for c in nx.connected_components(G)]
    comps.sort()
    if len(comps) > 1:
        H = nx.Graph()
        for i in range(len(comps)):
            a = rep[comps[i]]
            for j in range(i + 1, len(comps)):
                sub = D[np.ix_(a, rep[comps[j]])]
                u, v = np.unravel_index(int(np.argmin(sub)), sub.shape)
                H.add_edge(i, j, weight=float(sub[u, v]), ends=(comps[i][u], comps[j][v]))
        for _, _, data in sorted(nx.minimum_spanning_edges(H, data=True), key=lambda e: (e[0], e[1])):
            G.add_edge(*data["ends"], chain=None)
    odd = [n for n in sorted(G.nodes) if G.degree(n) % 2]
    for u, v in _matching(odd, D, rep, match_neighbours):
        G.add_edge(u, v, chain=None)
    orders = []
    for source in sources:
        order: list[tuple[int, bool]] = []
        for u, v, k in nx.eulerian_circuit(G, source=source, keys=True):
            t = G.edges[u, v, k]["chain"]
            if t is not None:
                order.append((t, int(ids[2 * t]) != u))
        orders.append(order)
    return orders


def _matching(odd: list[int], D: np.ndarray, rep: np.ndarray, neighbours: int | None) -> list[tuple[int, int]]:
    """A minimum-weight matching of the odd nodes over each one's ``neighbours`` nearest (None: every pair).

    When the sparse graph has no perfect matching its neighbourhoods are doubled until it
    has (hel_all_core: 10 left nodes to a greedy pairing 411 m longer than exact; 20 is exact).
    """
    if not odd:
        return []
    d = D[np.ix_(rep[odd], rep[odd])]
    k = len(odd) - 1 if neighbours is None else min(len(odd) - 1, neighbours)
    while True:
        M = nx.Graph()
        M.add_nodes_from(range(len(odd)))
        for i in range(len(odd)):
            for j in np.argsort(d[i], kind="stable")[: k + 1].tolist():
                if j != i:
                    M.add_edge(i, int(j), weight=float(d[i, j]))
        pairs = [tuple(sorted(p)) for p in nx.min_weight_matching(M)]
        if 2 * len(pairs) == len(odd) or k >= len(odd) - 1:
            break
        k = min(len(odd) - 1, 2 * k)
    left = sorted(set(range(len(odd))) - {i for p in pairs for i in p})
    while left:  # an odd count (cannot happen in a graph) or no perfect matching: pair the rest nearest first
        i = left.pop(0)
        j = min(left, key=lambda j: (d[i, j], j))
        left.remove(j)
        pairs.append((i, j))
    return [(odd[i], odd[j]) for i, j in sorted(pairs)]


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


def tour_orders(D: np.ndarray, points: np.ndarray, T: int, match_neighbours: int | None = _MATCH_NEIGHBOURS,
                circuits: int = 1) -> list[list[tuple[int, bool]]]:
    """Closed rural-postman tours over ``T`` chains, [(chain, reversed?)] in flight order (step 1 above).

    One multigraph, ``circuits`` Euler circuits of it (Hierholzer from evenly spaced nodes):
    all equally long, but a split cuts each at different places.
    """
    ids, n_nodes = _nodes(points, T)
    rep = np.zeros(n_nodes, dtype=np.int64)
    for i in range(2 * T - 1, -1, -1):
        rep[ids[i]] = i
    sources = sorted({(i * n_nodes) // circuits for i in range(circuits)})
    return _euler(T, ids, n_nodes, D, rep, match_neighbours, sources)


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
