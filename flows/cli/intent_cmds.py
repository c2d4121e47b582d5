"""``sortie intent TEXT``: show what a request means before planning it.

Runs the same ``intents.extract_intent`` the planning flow runs, against the
world's timezone (``world.json``) and ``--now``, and prints the resolved Intent
and which extractor made it (the LLM when ``SORTIE_LLM_BASE_URL`` is set, else
the offline grammar; ``--extractor`` forces one). ``--region`` must name a region
of the world; ``--area`` must be a GeoJSON Polygon (a bare geometry, a Feature or
a one-feature FeatureCollection) in WGS84 lon/lat.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli.app import JsonOpt, NowOpt, WorldOpt, app, console, run
from flows.context import resolve_now, resolve_world_dir
from planner.errors import InvalidArgument, NotFound

__all__ = ["DEFAULT_TIMEZONE", "intent_result", "load_selection"]

DEFAULT_TIMEZONE = "Europe/Helsinki"

RegionOpt = Annotated[str | None, typer.Option("--region", help="Region id from the world's regions.geojson.")]
AreaOpt = Annotated[
    Path | None, typer.Option("--area", help="Map selection: a GeoJSON Polygon file (WGS84 lon/lat).", dir_okay=False)
]
ExtractorOpt = Annotated[
    str, typer.Option("--extractor", help="auto (LLM if SORTIE_LLM_BASE_URL is set, else offline), offline or llm.")
]


def load_selection(path: Path) -> dict[str, Any]:
    """Read and check a map selection; return a short description of it.

    Anything but one valid Polygon with lon/lat coordinates is ``INVALID_ARGUMENT``.
    """
    from shapely.geometry import shape
    from shapely.validation import explain_validity

    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidArgument(f"--area file {str(path)!r} does not exist") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidArgument(f"--area file {str(path)!r} is not JSON: {exc}") from None
    if isinstance(doc, dict) and doc.get("type") == "FeatureCollection":
        features = doc.get("features") or []
        if len(features) != 1:
            raise InvalidArgument(f"--area FeatureCollection must hold exactly one Polygon feature, not {len(features)}")
        doc = features[0]
    if isinstance(doc, dict) and doc.get("type") == "Feature":
        doc = doc.get("geometry")
    if not isinstance(doc, dict) or doc.get("type") != "Polygon":
        kind = doc.get("type") if isinstance(doc, dict) else type(doc).__name__
        raise InvalidArgument(f"--area must be a GeoJSON Polygon, got {kind!r}")
    try:
        polygon = shape(doc)
    except Exception as exc:  # noqa: BLE001 - shapely raises several types for malformed rings
        raise InvalidArgument(f"--area Polygon is malformed: {exc}") from None
    if polygon.is_empty or polygon.area == 0:
        raise InvalidArgument("--area Polygon is empty or has no area")
    if not polygon.is_valid:
        raise InvalidArgument(f"--area Polygon is invalid: {explain_validity(polygon)}")
    min_lon, min_lat, max_lon, max_lat = polygon.bounds
    if not (-180 <= min_lon <= max_lon <= 180 and -90 <= min_lat <= max_lat <= 90):
        raise InvalidArgument("--area coordinates must be WGS84 [lon, lat]")
    return {
        "file": str(path),
        "vertices": len(polygon.exterior.coords) - 1,
        "holes": len(polygon.interiors),
        "bounds_wgs84": [round(v, 7) for v in polygon.bounds],
    }


def _world_timezone_and_regions(world: str | None) -> tuple[str, frozenset[str] | None]:
    """The world's timezone and region ids; the default zone if the loader is not there."""
    try:
        from flows.world_folder import load_world
    except ImportError:  # pragma: no cover - only before the world loader existed
        return DEFAULT_TIMEZONE, None
    loaded = load_world(resolve_world_dir(world))
    return loaded.timezone, frozenset(r.id for r in loaded.regions)


def intent_result(
    text: str,
    *,
    region: str | None = None,
    area: Path | None = None,
    world: str | None = None,
    now: str | None = None,
    extractor: str = "auto",
) -> dict[str, Any]:
    """What ``sortie intent`` prints (JSON-able)."""
    from intents import AreaRef, extract_intent  # pydantic models, the grammar and the LLM client: only when used

    if region and area:
        raise InvalidArgument("give --region or --area, not both")
    if extractor not in ("auto", "offline", "llm"):
        raise InvalidArgument(f"--extractor {extractor!r} is not one of auto, offline, llm")
    moment = resolve_now(now)
    selection = load_selection(area) if area else None
    tz, region_ids = _world_timezone_and_regions(world)
    if region and region_ids is not None and region not in region_ids:
        raise NotFound(f"region {region!r} is not in the world (known: {', '.join(sorted(region_ids)) or 'none'})")
    extraction = extract_intent(
        text,
        area=AreaRef(kind="selection") if selection else None,
        region_id=region,
        now=moment,
        timezone=tz,
        extractor=extractor,  # type: ignore[arg-type]
    )
    result = extraction.to_dict()
    result.update({"now": moment.isoformat(), "timezone": tz, "selection": selection})
    return result


def _render(result: dict[str, Any]) -> None:
    intent = result["intent"]
    when = intent["when"]
    relative = " ".join(
        str(v) for v in (when["day"], when["clock"] or when["part_of_day"] or ("ASAP" if when["asap"] else None)) if v
    )
    start = result["start_at"] or f"{result['date']} (no time given)"
    area = intent["area"]
    where = f"region {area['region_id']}" if area["kind"] == "region" else "map selection"
    if result.get("selection"):
        where += f" ({result['selection']['vertices']} vertices, {result['selection']['file']})"

    def listed(values: list[str]) -> str:
        return ", ".join(values) if values else "-"

    rows = [
        ("extractor", result["extractor"]),
        ("mission", intent["mission_type"] or "- (not stated)"),
        ("area", where),
        ("start", f"{start}  [{relative}, {result['timezone']}]"),
        ("sensors", listed(intent["sensors"])),
        ("excluded", listed(intent["excluded_sensors"])),
        ("altitude", f"{intent['altitude_m']:g} m" if intent["altitude_m"] is not None else "- (default)"),
        ("targets", listed(intent["targets"])),
        ("priority", intent["priority"]),
        ("summary", intent["summary"] or "-"),
    ]
    for label, value in rows:
        console.print(f"{label:<10} {value}", markup=False, highlight=False, soft_wrap=True)
    if result["needs_clarification"]:
        console.print("needs clarification:", markup=False, highlight=False, soft_wrap=True)
        for question in intent["clarification_questions"] or [f"missing: {', '.join(intent['missing'])}"]:
            console.print(f"  - {question}", markup=False, highlight=False, soft_wrap=True)


@app.command("intent")
def intent_command(
    text: Annotated[str, typer.Argument(help="The request, e.g. '明天上午9点用热成像巡查消防通道'.")],
    region: RegionOpt = None,
    area: AreaOpt = None,
    world: WorldOpt = None,
    now: NowOpt = None,
    extractor: ExtractorOpt = "auto",
    as_json: JsonOpt = False,
) -> None:
    """Extract the Intent of a request and show how its time resolves."""
    run(
        lambda: intent_result(text, region=region, area=area, world=world, now=now, extractor=extractor),
        as_json,
        _render,
    )
