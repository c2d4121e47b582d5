"""``sortie world show`` and ``sortie world validate``: look at a world folder before planning on it.

``show`` loads the snapshot once and reports counts, which geozones apply at
"now" (``--now`` / ``SORTIE_NOW``, else the clock) and each drone's status and
telemetry age. ``validate`` reports *every* located problem of a folder and
exits 2 when there is any, so it can gate a CI job over an operator's world.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from flows.cli.app import JsonOpt, NowOpt, WorldOpt, app, console, run
from flows.cli.app import markup_escape as escape
from flows.context import resolve_now, resolve_world_dir
from planner.errors import InvalidArgument

if TYPE_CHECKING:  # the world model pulls in shapely/numpy: load it only when a command runs
    from datetime import datetime

    from planner.world.model import World

__all__ = ["world_app", "world_summary", "world_problems"]

world_app = typer.Typer(name="world", help="Inspect and validate world folders.", no_args_is_help=True)
app.add_typer(world_app, name="world")


def _age(seconds: float) -> str:
    s = int(round(seconds))
    sign, s = ("-", -s) if s < 0 else ("", s)
    if s < 120:
        return f"{sign}{s} s"
    if s < 7200:
        return f"{sign}{s // 60} min"
    if s < 172800:
        return f"{sign}{s // 3600} h {s % 3600 // 60} min"
    return f"{sign}{s // 86400} d {s % 86400 // 3600} h"


def world_summary(world: World, now: datetime) -> dict[str, Any]:
    """A JSON-able overview of ``world`` at ``now`` (what ``world show`` prints)."""
    from planner.world.model import CircleArea

    hour = world.weather.hour_at(now)
    zones = []
    for z in world.zones:
        vols = []
        for v in z.volumes:
            shape = f"circle r={v.horizontal.radius_m:g} m" if isinstance(v.horizontal, CircleArea) else "polygon"
            vols.append({
                "shape": shape,
                "lower_m": v.lower_m, "lower_ref": v.lower_ref.value,
                "upper_m": v.upper_m, "upper_ref": v.upper_ref.value,
            })
        zones.append({"id": z.id, "name": z.name, "restriction": z.restriction.value,
                      "applies_now": z.applies_at(now), "volumes": vols, "source": z.source})
    return {
        "world": world.name,
        "root": world.root,
        "snapshot_hash": world.snapshot_hash,
        "timezone": world.timezone,
        "now": now.isoformat(),
        "counts": {
            "drones": len(world.drones), "docks": len(world.docks), "zones": len(world.zones),
            "lanes": len(world.lanes), "regions": len(world.regions), "pois": len(world.pois),
            "users": len(world.users), "weather_hours": len(world.weather.hours),
        },
        "zones": zones,
        "drones": [
            {"id": d.id, "model": d.model, "dock": d.dock_id, "tenant": d.tenant, "status": d.status,
             "battery_pct": d.battery_pct, "capabilities": sorted(d.capabilities),
             "last_telemetry_at": d.last_telemetry_at.isoformat(),
             "telemetry_age_s": round((now - d.last_telemetry_at).total_seconds(), 1)}
            for d in world.drones
        ],
        "docks": [{"id": k.id, "name": k.name, "tenant": k.tenant, "lon": k.lon, "lat": k.lat} for k in world.docks],
        "regions": [{"id": r.id, "name": r.name, "tenant": r.tenant} for r in world.regions],
        "weather": {
            "first_hour": world.weather.hours[0].time.isoformat() if world.weather.hours else None,
            "last_hour": world.weather.hours[-1].time.isoformat() if world.weather.hours else None,
            "now": None if hour is None else {
                "time": hour.time.isoformat(), "wind_speed_10m_mps": hour.wind_speed_10m_mps,
                "wind_gusts_10m_mps": hour.wind_gusts_10m_mps, "temperature_2m_c": hour.temperature_2m_c,
                "precipitation_mm": hour.precipitation_mm,
            },
        },
        "attribution": world.attribution,
    }


def _limit(value: float | None, unbounded: str) -> str:
    return unbounded if value is None else f"{value:g}"


def _render_show(r: dict[str, Any]) -> None:
    from rich.table import Table

    c = r["counts"]
    console.print(f"[bold]{escape(r['world'])}[/] ({escape(r['root'])}) at {r['now']}  snapshot {r['snapshot_hash'][:12]}")
    console.print(", ".join(f"{v} {k.replace('_', ' ')}" for k, v in c.items()), highlight=False)
    zt = Table(title="Geozones")
    for col in ("id", "restriction", "applies now", "volumes", "name"):
        zt.add_column(col)
    for z in r["zones"]:
        vols = "; ".join(f"{v['shape']} {_limit(v['lower_m'], 'GND')}–{_limit(v['upper_m'], 'UNL')} m {v['upper_ref']}"
                         for v in z["volumes"])
        zt.add_row(escape(z["id"]), z["restriction"], "yes" if z["applies_now"] else "no", vols, escape(z["name"]))
    console.print(zt)
    dt = Table(title="Drones")
    for col in ("id", "model", "dock", "tenant", "status", "battery %", "telemetry age"):
        dt.add_column(col)
    for d in r["drones"]:
        dt.add_row(escape(d["id"]), escape(d["model"]), escape(d["dock"]), escape(d["tenant"]), d["status"], f"{d['battery_pct']:g}",
                   _age(d["telemetry_age_s"]))
    console.print(dt)
    w = r["weather"]["now"]
    if w is None:
        console.print(f"Weather: no forecast hour at now (forecast covers {r['weather']['first_hour']} – "
                      f"{r['weather']['last_hour']})", highlight=False)
    else:
        console.print(f"Weather now: wind {w['wind_speed_10m_mps']} m/s, gusts {w['wind_gusts_10m_mps']} m/s, "
                      f"{w['temperature_2m_c']} °C, precipitation {w['precipitation_mm']} mm", highlight=False)
    if r["attribution"]:
        console.print(escape(r["attribution"]), style="dim", highlight=False)


@world_app.command("show")
def show(world: WorldOpt = None, now: NowOpt = None, as_json: JsonOpt = False) -> None:
    """Counts, geozones (and whether they apply now), drones with status and telemetry age."""

    def body() -> dict[str, Any]:
        from flows.world_folder import load_world

        when = resolve_now(now)
        return world_summary(load_world(resolve_world_dir(world)), when)

    run(body, as_json, _render_show)


def world_problems(folder: str) -> dict[str, Any]:
    """Validate ``folder``: a summary when clean, else ``InvalidArgument`` listing every problem."""
    from flows.world_folder import load_world, validate_world

    root = resolve_world_dir(folder)
    problems = validate_world(root)
    if problems:
        lines = "\n".join(f"  {p.file} {p.path}: {p.message}" for p in problems)
        raise InvalidArgument(f"world {str(root)!r} has {len(problems)} problem(s):\n{lines}",
                              details=[p.to_dict() for p in problems])
    w = load_world(root)
    return {"world": w.name, "root": str(root), "ok": True, "problems": [], "snapshot_hash": w.snapshot_hash,
            "counts": {"drones": len(w.drones), "docks": len(w.docks), "zones": len(w.zones),
                       "lanes": len(w.lanes), "regions": len(w.regions), "pois": len(w.pois),
                       "users": len(w.users)}}


def _render_validate(r: dict[str, Any]) -> None:
    counts = ", ".join(f"{v} {k}" for k, v in r["counts"].items())
    console.print(f"OK: world {escape(r['world'])} ({escape(r['root'])}) is valid: {counts}", highlight=False,
                  soft_wrap=True)


@world_app.command("validate")
def validate(
    folder: Annotated[str, typer.Argument(help="The world folder to check.")],
    as_json: JsonOpt = False,
) -> None:
    """Every problem in a world folder, each with file and JSON path; exit 2 when there is any."""
    run(lambda: world_problems(folder), as_json, _render_validate)
