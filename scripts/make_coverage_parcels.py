"""Derive the survey test parcels in ``tests/planner/parcels/`` from the OSM extracts.

Run once by hand (``uv run python scripts/make_coverage_parcels.py``); the output is
committed, so tests do not depend on this script or on ``../shared/data/osm``.
Each parcel is written in the benchmark's coverage instance format (planar metres,
EPSG:3067 minus a round origin) with the OSM attribution.

* ``industrial_block``: a 560 × 420 m box of city blocks; every building wholly
  inside it (grown by a 3 m margin, touching ones merged) is a no-fly hole.
* ``field_group``: the union of the landuse polygons of a 700 × 600 m window,
  closed over the streets (grown 12 m, shrunk 12 m): a large irregular parcel
  with notches, the shape of a farmland group.
* ``residential_small_hole``: a residential landuse polygon with its smallest
  building as the only hole.
* ``corridor_bends``: a road path through the street graph buffered to an 80 m
  wide corridor, the path chosen with at least five bends of more than 25°.
* ``star7``: a seven-pointed star (not from OSM), 320 m tip radius, 150 m inner.

A second parcel of each class (``*_b``: the best choice away from the first, and a
sharper, turned star) checks that the planner generalises beyond the first five.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import networkx as nx
import numpy as np
import shapely
from pyproj import Transformer
from shapely.geometry import LineString, Polygon, box, shape
from shapely.ops import linemerge

OSM = Path(__file__).resolve().parents[2] / "shared" / "data" / "osm"
OUT = Path(__file__).resolve().parents[1] / "tests" / "planner" / "parcels"
ORIGIN = (385000.0, 6671000.0)
ATTRIBUTION = "© OpenStreetMap contributors, ODbL 1.0, https://www.openstreetmap.org/copyright"
TR = Transformer.from_crs(4326, 3067, always_xy=True)


def _local(geom):
    def f(a: np.ndarray) -> np.ndarray:
        x, y = TR.transform(a[:, 0], a[:, 1])
        return np.column_stack([np.asarray(x) - ORIGIN[0], np.asarray(y) - ORIGIN[1]])

    return shapely.transform(geom, f)


def _load(name: str):
    data = json.loads((OSM / name).read_text(encoding="utf-8"))
    return [(f["properties"], _local(shape(f["geometry"]))) for f in data["features"]]


def _ring(coords) -> list[list[float]]:
    pts = [[round(x, 2), round(y, 2)] for x, y in coords]
    return pts[:-1] if pts[0] == pts[-1] else pts


def _write(name: str, poly: Polygon, swath: float, note: str) -> None:
    poly = shapely.make_valid(shapely.set_precision(poly, 0.01))
    if poly.geom_type != "Polygon":
        poly = max(shapely.get_parts(poly), key=lambda g: g.area)
    doc = {
        "name": name,
        "polygon": _ring(poly.exterior.coords),
        "holes": [_ring(h.coords) for h in poly.interiors],
        "swath_width_m": swath,
        "turn_radius_m": 0.0,
        "free_area_m2": round(poly.area, 1),
        "note": note,
        "meta": {"origin_epsg3067": list(ORIGIN)},
        "attribution": ATTRIBUTION if "OSM" in note else "",
    }
    (OUT / f"{name}.json").write_text(json.dumps(doc, indent=None) + "\n", encoding="utf-8")
    print(name, round(poly.area), "holes", len(poly.interiors))


def _apart(geom, taken, share: float = 0.2) -> bool:
    """Whether ``geom`` shares at most ``share`` of its area with ``taken`` (the first parcel of its class)."""
    return taken is None or geom.intersection(taken).area <= share * geom.area


def industrial(buildings, name: str = "industrial_block", taken=None):
    # the box with the most separate building clusters near 30
    best = None
    for x0 in range(400, 1100, 40):
        for y0 in range(500, 2000, 40):
            b = box(x0, y0, x0 + 560, y0 + 420)
            if not _apart(b, taken, 0.35):  # the dense blocks are few: a second box may share a third
                continue
            inside = [g.buffer(3.0, join_style="mitre") for _, g in buildings if b.buffer(-10).contains(g)]
            if not inside:
                continue
            u = shapely.union_all(inside)
            n = len(shapely.get_parts(u))
            free = b.difference(u)
            score = abs(n - 30) + (0 if free.geom_type == "Polygon" else 100)
            if best is None or score < best[0] or (score == best[0] and u.area < best[2].area):
                best = (score, b, u, n)
    _, b, u, n = best
    _write(name, b.difference(u), 40.0, f"OSM: 560 x 420 m box, {n} building clusters (3 m margin) as holes")
    return b


def field_group(landuse, name: str = "field_group", taken=None):
    best = None
    for x0 in range(300, 1100, 50):
        for y0 in range(400, 2100, 50):
            w = box(x0, y0, x0 + 700, y0 + 600)
            if not _apart(w, taken):
                continue
            parts = [g for _, g in landuse if w.contains(g)]
            if len(parts) < 5:
                continue
            u = shapely.union_all(parts).buffer(12, join_style="mitre").buffer(-12, join_style="mitre")
            big = max(shapely.get_parts(u), key=lambda g: g.area)
            big = Polygon(big.exterior).simplify(2.0)
            if _apart(big, taken) and (best is None or big.area > best.area):
                best = big
    _write(name, best, 40.0, "OSM: landuse polygons of a 700 x 600 m window, closed over the streets")
    return best


def residential(landuse, buildings, name: str = "residential_small_hole", taken=None):
    res = [g for p, g in landuse if p.get("landuse") == "residential" and _apart(g, taken)]
    with_hole = [(g, [b for _, b in buildings if g.buffer(-3).contains(b)]) for g in res]
    poly, inside = max(((g, i) for g, i in with_hole if i), key=lambda t: t[0].area)
    small = min(inside, key=lambda g: g.area)
    which = "largest" if taken is None else "largest other"
    _write(name, poly.difference(small.buffer(2.0, join_style="mitre")), 20.0,
           f"OSM: the {which} residential landuse polygon, its smallest building (2 m margin) as the hole")
    return poly


def corridor(roads, name: str = "corridor_bends", taken=None):
    g = nx.Graph()
    for p, geom in roads:
        c = list(geom.coords)
        for a, b in zip(c, c[1:]):
            a, b = (round(a[0], 1), round(a[1], 1)), (round(b[0], 1), round(b[1], 1))
            if a != b and p.get("highway") in ("primary", "secondary", "tertiary", "residential", "unclassified"):
                g.add_edge(a, b, w=math.dist(a, b))
    comp = max(nx.connected_components(g), key=len)
    nodes = sorted(comp)
    best = None
    for i in range(0, len(nodes), max(1, len(nodes) // 25)):
        for j in range(i + 1, len(nodes), max(1, len(nodes) // 25)):
            a, b = nodes[i], nodes[j]
            if not 900 < math.dist(a, b) < 1400:
                continue
            path = nx.shortest_path(g, a, b, weight="w")
            line = LineString(path).simplify(15.0)
            c = list(line.coords)
            bends = 0
            for p, q, r in zip(c, c[1:], c[2:]):
                h1 = math.atan2(q[1] - p[1], q[0] - p[0])
                h2 = math.atan2(r[1] - q[1], r[0] - q[0])
                turn = abs((math.degrees(h2 - h1) + 180) % 360 - 180)
                if turn > 25 and math.dist(p, q) > 60 and math.dist(q, r) > 60:
                    bends += 1
            poly = line.buffer(40.0, join_style="mitre", mitre_limit=2.0)
            if poly.geom_type != "Polygon" or poly.interiors or not _apart(poly, taken):
                continue
            key = (bends >= 5, -abs(bends - 5), -line.length)
            if best is None or key > best[0]:
                best = (key, poly, bends, line.length)
    _, poly, bends, length = best
    _write(name, poly, 40.0, f"OSM: street path {length:.0f} m with {bends} bends > 25°, buffered to 80 m")
    return poly


def star(name: str = "star7", tip: float = 320.0, inner: float = 150.0, turn_deg: float = 0.0) -> None:
    pts = []
    for k in range(14):
        r = tip if k % 2 == 0 else inner
        a = math.pi / 2 + math.radians(turn_deg) + k * math.pi / 7
        pts.append((r * math.cos(a), r * math.sin(a)))
    turned = f", turned {turn_deg:g}°" if turn_deg else ""
    _write(name, Polygon(pts), 40.0, f"synthetic seven-pointed star, tips {tip:g} m, inner corners {inner:g} m{turned}")


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    landuse = _load("helsinki_landuse.geojson")
    buildings = _load("helsinki_buildings.geojson")
    roads = _load("helsinki_roads.geojson")
    first = industrial(buildings)
    industrial(buildings, "industrial_block_b", first)
    first = field_group(landuse)
    field_group(landuse, "field_group_b", first)
    first = residential(landuse, buildings)
    residential(landuse, buildings, "residential_small_hole_b", first)
    first = corridor(roads)
    corridor(roads, "corridor_bends_b", first)
    star()
    star("star7_b", 380.0, 130.0, 11.0)


if __name__ == "__main__":
    main()
