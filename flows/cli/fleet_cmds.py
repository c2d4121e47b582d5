"""``sortie fleet``: the drones as the authority knows them, and ``sortie sim-fleet``: a simulated fleet.

``sortie fleet [--json]`` asks the authority (``Authority.fleet``): through
``sortie server`` each drone's status, battery, position, mode and last
heartbeat come from its vehicle over the link the server holds (``live``),
with the link's fault named; embedded, they are the world file's (``file``).

``sortie sim-fleet --world DIR`` runs one simulated vehicle per drone on its
link (``flows.sim.fleet``) until Ctrl-C, so a control room runs on the
server's real clock with vehicles that talk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, JsonOpt, NowOpt, WorldOpt, app, console, err_console, run
from planner.errors import InvalidArgument

__all__ = ["fleet_cmd", "render_fleet", "sim_fleet_cmd"]


def render_fleet(d: dict[str, Any]) -> None:
    """One line per drone; a fault under its drone."""
    from rich.table import Table

    t = Table(show_edge=False, header_style="bold")
    for col in ("drone", "status", "battery", "mode", "armed", "position", "last seen", "source"):
        t.add_column(col)
    for x in d["drones"]:
        pos = x.get("position")
        t.add_row(
            x["id"], x["status"], "–" if x.get("battery_pct") is None else f"{x['battery_pct']:.0f} %",
            x.get("mode") or "–", "–" if x.get("armed") is None else ("yes" if x["armed"] else "no"),
            "–" if not pos else f"{pos['lat']:.5f}, {pos['lon']:.5f}, {pos['alt_m']} m",
            x.get("last_seen") or "never", x["source"],
        )
        if x.get("fault"):
            t.add_row("", f"[red]{x['fault']['code']}[/]", x["fault"]["message"], "", "", "", "", "")
    console.print(t)


@app.command("fleet")
def fleet_cmd(
    publish: Annotated[bool, typer.Option("--publish", help="Also publish the Prefect table artifact fleet.")] = False,
    as_json: JsonOpt = False, world: WorldOpt = None, now: NowOpt = None, as_user: AsOpt = None,
) -> None:
    """The drones of your tenants: status, battery, position, mode, last seen — live from the vehicles through a
    server, from the world file when embedded."""

    def body() -> dict[str, Any]:
        from flows.authority.choice import authority

        out = authority("sortie fleet", as_user=as_user, world=world, now=now).fleet()
        if publish:
            from flows.authority.prefect_api import prefect_api_url
            from flows.orchestration.fleet_board import publish_fleet_board

            if not prefect_api_url():
                raise InvalidArgument("--publish needs PREFECT_API_URL (environment or Prefect profile)")
            out["artifact_key"] = publish_fleet_board(out)
        return out

    run(body, as_json, render_fleet)


def _wall_clock() -> str:
    """The wall clock (UTC, milliseconds) each simulator log line starts with: when a vehicle got a command, to set
    against when a person sent it (the operations page's stop is measured that way)."""
    from datetime import datetime, timezone

    return datetime.now(timezone.utc).strftime("%H:%M:%S.%f")[:-3]


@app.command("sim-fleet")
def sim_fleet_cmd(
    world: WorldOpt = None,
    only: Annotated[list[str] | None, typer.Option("--only", help="Simulate only this drone (repeatable).")] = None,
    home: Annotated[Path | None, typer.Option(
        "--home", help="The server's home: its links.json and signing keys (default: $SORTIE_HOME)."
    )] = None,
    duration: Annotated[float | None, typer.Option(
        "--duration", help="Stop after this many seconds (default: until Ctrl-C).")] = None,
    speedup: Annotated[float, typer.Option(
        "--speedup", help="The vehicles' clock against the wall clock, as SITL's --speedup (1: real time).")] = 1.0,
    failsafes: Annotated[str, typer.Option(
        "--failsafes", help="sortie: each vehicle configured for sorties (battery RTL/LAND, GCS failsafe after 30 s, "
                            "RTL_ALT 120 m); sitl: SITL's defaults (no battery or GCS action).")] = "sortie",
    as_json: JsonOpt = False,
) -> None:
    """Run one simulated vehicle per drone of the world on its link (ArduPilot or PX4 as its fleet entry says),
    standing on its dock, until Ctrl-C: a control room with live vehicles on the server's real clock."""

    def body() -> dict[str, Any]:
        import time

        from flows.context import resolve_world_dir, sortie_home
        from flows.server.links import LinkStore
        from flows.sim.fleet import sim_fleet
        from flows.world_folder import load_world

        if duration is not None and duration <= 0:
            raise InvalidArgument("--duration must be > 0")
        where = Path(home).expanduser() if home else sortie_home()
        w = load_world(resolve_world_dir(world))
        log = None if as_json else (lambda text: err_console.print(f"sim: {_wall_clock()} {text}", markup=False,
                                                                   highlight=False))
        sims = sim_fleet(w, where / "keys", only=only or (), links=LinkStore(where).all(), log=log, speedup=speedup,
                         failsafes=failsafes)
        if not as_json:
            for drone_id, sim in sims.items():
                console.print(f"{drone_id}: {sim.dialect} vehicle on {', '.join(sim.listen)} (ground station: "
                              f"{w.drone(drone_id).link})", markup=False, highlight=False)
            console.print("Ctrl-C stops the fleet", style="dim")
        end = None if duration is None else time.monotonic() + duration
        try:
            while end is None or time.monotonic() < end:
                time.sleep(0.2 if end is None else max(0.0, min(0.2, end - time.monotonic())))
        except KeyboardInterrupt:
            pass
        finally:
            for sim in sims.values():
                sim.stop()
        return {"world": w.name, "vehicles": {d: {"dialect": s.dialect, "listen": s.listen, "stats": dict(vars(s.stats))}
                                              for d, s in sims.items()}}

    run(body, as_json, lambda d: console.print(f"sim-fleet stopped: {len(d['vehicles'])} vehicles", markup=False,
                                               highlight=False))
