"""The rural postman tour over lane pieces (lines or chains): an Euler circuit flying every piece once.

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
   (``planner.patrol.line_tour``, ``planner.patrol.tour_split``); the bench baseline splits
   it its own way (``bench/rpp_baseline.py``).

Deterministic (networkx's matching and circuit on nodes numbered in a fixed
order). Pure: plain numbers in, ``[(depot, [(piece, reversed?)])]`` out.
"""

from __future__ import annotations

from collections.abc import Sequence

import networkx as nx
import numpy as np

__all__ = ["tour_orders"]

_KEY_DECIMALS = 3
_MATCH_NEIGHBOURS = 10


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
