"""Make the extra bench instances under ``bench/instances/`` (lanes and coverage from real map data).

    uv run python -m bench.make_instances lanes NAME --highway residential,unclassified \\
        [--window X0,Y0,X1,Y1] [--depots X,Y;X,Y] [--max-sortie-m 10000] [--nofly X,Y,R]
    uv run python -m bench.make_instances parcel NAME --window X0,Y0,X1,Y1 [--swath-m 40] [--margin-m 3]
    uv run python -m bench.make_instances field NAME --km2 45 [--holes 30] [--seed 1] [--swath-m 40]

Lanes: every ``highway=*`` way of ``../shared/data/osm/helsinki_roads.geojson`` projected to
ETRS-TM35FIN (EPSG:3067) minus the round origin of the public lane instances, split at
shared vertices (the format of section 3 of ``../shared/bench/README.md``); a line is
required when its class is listed (``all``: every class) and it lies in ``--window``
(local metres), and not when it comes within 2 m of the no-fly circle (a 64-gon).

Parcel: the window minus every building of ``helsinki_buildings.geojson`` it touches
(grown by ``--margin-m``, merged where they touch) as holes: the coverage format of
section 1.

Field: a synthetic farm field of ``--km2`` (an irregular outline: a 3:2 ellipse-like ring of
120 vertices with a seeded radial wiggle of ±8 %) and ``--holes`` seeded tree islands
(12-gons of 40-160 m radius, kept apart and inside), for the large-field scaling
figures. The commands that made each committed instance are in
``bench/instances/README.md``. Map data © OpenStreetMap contributors, ODbL 1.0.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import shapely
from pyproj import Transformer
from shapely.geometry import LineString, Point, Polygon, box, shape

__all__ = ["main"]

OSM = Path(__file__).resolve().parents[2] / "shared" / "data" / "osm"
ORIGIN = (385410.0, 6671450.0)  # the public lane instances' origin (EPSG:3067)
ATTRIBUTION = "(c) OpenStreetMap contributors, ODbL 1.0, https://www.openstreetmap.org/copyright"


def _osm_dir() -> Path:
    for base in [Path(__file__).resolve(), *Path(__file__).resolve().parents]:
        cand = base / "shared" / "data" / "osm"
        if cand.is_dir():
            return cand
    return OSM


def _project():
    tr = Transformer.from_crs("EPSG:4326", "EPSG:3067", always_xy=True)

    def f(lon: float, lat: float) -> tuple[float, float]:
        x, y = tr.transform(lon, lat)
        return round(x - ORIGIN[0], 2), round(y - ORIGIN[1], 2)

    return f


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def lanes(args: argparse.Namespace) -> dict:
    roads = json.loads((_osm_dir() / "helsinki_roads.geojson").read_text(encoding="utf-8"))
    proj = _project()
    ways = []
    for f in roads["features"]:
        coords = [proj(lon, lat) for lon, lat in f["geometry"]["coordinates"]]
        ways.append((f["properties"].get("highway"), f["properties"].get("osm_id"), coords))
    uses: dict[tuple[float, float], int] = {}
    for _, _, c in ways:
        for k, p in enumerate(c):
            uses[p] = uses.get(p, 0) + (2 if k in (0, len(c) - 1) else 1)
    classes = set(args.highway.split(","))
    window = box(*_floats(args.window)) if args.window else None
    nofly = None
    if args.nofly:
        x, y, r = _floats(args.nofly)
        nofly = [[round(x + r * math.cos(2 * math.pi * k / 64), 2), round(y + r * math.sin(2 * math.pi * k / 64), 2)] for k in range(65)]
    near_nofly = Polygon(nofly).buffer(2.0) if nofly else None
    features = []
    for hw, osm_id, c in ways:
        cut = [0] + [k for k in range(1, len(c) - 1) if uses[c[k]] > 1] + [len(c) - 1]
        for a, b in zip(cut[:-1], cut[1:]):
            piece = c[a : b + 1]
            if len(piece) < 2 or LineString(piece).length < 0.01:
                continue
            line = LineString(piece)
            required = ("all" in classes or hw in classes) and (window is None or window.covers(line))
            if near_nofly is not None and line.intersects(near_nofly):
                required = False
            features.append({"type": "Feature", "id": f"e{len(features) + 1:04d}",
                             "geometry": {"type": "LineString", "coordinates": [list(p) for p in piece]},
                             "properties": {"highway": hw, "osm_id": osm_id, "required": required}})
    depots = [{"id": f"D{k + 1}", "x": x, "y": y} for k, (x, y) in enumerate(
        tuple(_floats(p)) for p in args.depots.split(";"))]
    req = [f for f in features if f["properties"]["required"]]
    out = {"type": "FeatureCollection", "name": args.name, "depots": depots, "max_sortie_m": args.max_sortie_m,
           "features": features, "attribution": ATTRIBUTION,
           "meta": {"source": "../shared/data/osm/helsinki_roads.geojson, ways split at shared vertices",
                    "crs": "EPSG:3067 minus origin", "origin_epsg3067": list(ORIGIN),
                    "required_rule": f"highway in {sorted(classes)}" + (f" inside {args.window}" if args.window else ""),
                    "n_lines": len(features), "n_required": len(req),
                    "required_length_m": round(sum(LineString(f["geometry"]["coordinates"]).length for f in req), 1)}}
    if nofly:
        out["nofly"] = [nofly]
    return out


def parcel(args: argparse.Namespace) -> dict:
    buildings = json.loads((_osm_dir() / "helsinki_buildings.geojson").read_text(encoding="utf-8"))
    proj = _project()
    win = box(*_floats(args.window))
    polys = []
    for f in buildings["features"]:
        g = shape(f["geometry"])
        g = shapely.transform(g, lambda a: __import__("numpy").asarray([proj(x, y) for x, y in a]))
        if g.intersects(win):
            polys.append(g.buffer(args.margin_m, join_style="mitre"))
    holes_union = shapely.union_all(polys).intersection(win.buffer(-1.0)) if polys else Polygon()
    free = win.difference(holes_union)
    free = max(getattr(free, "geoms", [free]), key=lambda g: g.area)
    return {"name": args.name, "polygon": [list(p) for p in free.exterior.coords],
            "holes": [[list(p) for p in r.coords] for r in free.interiors],
            "swath_width_m": args.swath_m, "turn_radius_m": 0.0, "attribution": ATTRIBUTION,
            "meta": {"source": "../shared/data/osm/helsinki_buildings.geojson", "window": args.window,
                     "margin_m": args.margin_m, "holes": len(free.interiors), "free_area_m2": round(free.area, 1),
                     "origin_epsg3067": list(ORIGIN)}}


def field(args: argparse.Namespace) -> dict:
    import numpy as np

    rng = np.random.default_rng(args.seed)
    area = args.km2 * 1e6
    a = math.sqrt(area / math.pi * 1.5)  # semi-axes 3:2 for an ellipse of that area
    b = a / 1.5
    t = np.linspace(0, 2 * math.pi, 120, endpoint=False)
    wiggle = 1.0 + 0.08 * np.sin(3 * t + rng.uniform(0, 6)) * rng.uniform(0.5, 1.0) + rng.uniform(-0.03, 0.03, len(t))
    ring = np.column_stack([a * np.cos(t) * wiggle, b * np.sin(t) * wiggle])
    outer = Polygon(ring)
    scale = math.sqrt(area / outer.area)
    outer = Polygon(ring * scale)
    holes: list[Polygon] = []
    tries = 0
    while len(holes) < args.holes and tries < 100 * max(1, args.holes):
        tries += 1
        x, y = rng.uniform(*outer.bounds[0::2]), rng.uniform(*outer.bounds[1::2])
        r = rng.uniform(40, 160)
        k = np.linspace(0, 2 * math.pi, 12, endpoint=False)
        h = Polygon(np.column_stack([x + r * np.cos(k) * rng.uniform(0.7, 1.0, 12), y + r * np.sin(k) * rng.uniform(0.7, 1.0, 12)]))
        if outer.buffer(-2 * args.swath_m).contains(h) and all(h.distance(o) > 2 * args.swath_m for o in holes):
            holes.append(h)
    free = Polygon(outer.exterior.coords, [h.exterior.coords for h in holes])
    r2 = lambda c: [[round(float(x), 2), round(float(y), 2)] for x, y in c]  # noqa: E731
    return {"name": args.name, "polygon": r2(free.exterior.coords), "holes": [r2(r.coords) for r in free.interiors],
            "swath_width_m": args.swath_m, "turn_radius_m": 0.0,
            "meta": {"generator": "bench/make_instances.py field", "km2": args.km2, "seed": args.seed,
                     "holes": len(holes), "free_area_m2": round(free.area, 1)}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.make_instances", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=("lanes", "parcel", "field"))
    ap.add_argument("name")
    ap.add_argument("--highway", default="all")
    ap.add_argument("--window", default=None)
    ap.add_argument("--depots", default="790,1050")
    ap.add_argument("--max-sortie-m", type=float, default=10000.0)
    ap.add_argument("--nofly", default=None)
    ap.add_argument("--swath-m", type=float, default=40.0)
    ap.add_argument("--margin-m", type=float, default=3.0)
    ap.add_argument("--km2", type=float, default=45.0)
    ap.add_argument("--holes", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(Path(__file__).parent / "instances"))
    args = ap.parse_args(argv)
    doc = {"lanes": lanes, "parcel": parcel, "field": field}[args.kind](args)
    path = Path(args.out) / f"{args.name}.json"
    path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    meta = doc["meta"]
    print(f"{path}: {json.dumps(meta)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
