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

import textwrap
from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, JsonOpt, NowOpt, WorldOpt, app, console, err_console, run
from planner.errors import InvalidArgument

__all__ = ["fleet_cmd", "render_fleet", "sim_fleet_cmd"]


def render_fleet(d: dict[str, Any]) -> None:
    """One line per drone in a terminal's 80 columns (an operator's laptop, a tmux pane); a fault under the table.
    Where the answer came from is said once, below the table; a drone whose source differs says it in its status."""
    from rich.table import Table

    t = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("drone", "status", "batt", "mode", "armed", "lat lon", "alt", "seen"):
        t.add_column(col, no_wrap=True)
    for x in d["drones"]:
        pos = x.get("position")
        status = x["status"] if x.get("source", d.get("source")) == d.get("source") else f"{x['status']} ({x['source']})"
        t.add_row(
            x["id"], status, "–" if x.get("battery_pct") is None else f"{x['battery_pct']:.0f} %",
            x.get("mode") or "–", "–" if x.get("armed") is None else ("yes" if x["armed"] else "no"),
            "–" if not pos else f"{pos['lat']:.5f} {pos['lon']:.5f}",
            "–" if not pos or pos.get("alt_m") is None else f"{pos['alt_m']:.0f} m",
            _seen(x.get("last_seen"), d.get("server_time")),
        )
    console.print(t)
    width = max(40, min(int(getattr(console, "width", 80) or 80), 200))
    for x in d["drones"]:
        if x.get("fault"):
            text = f"{x['id']}: {x['fault']['code']} {x['fault']['message']}"
            for part in textwrap.wrap(text, width=width - 2, subsequent_indent="  ", break_on_hyphens=False):
                console.print(part, markup=False, highlight=False)
    console.print("live from the vehicles" if d.get("source") == "live" else "from the world's fleet.json",
                  style="dim")


def _seen(last: str | None, now: str | None) -> str:
    """When a drone was last heard: its age by the server's clock (``3 s``, ``4 min``, ``2 h``), else its time
    (``11-28 17:42``) — short, so the table fits 80 columns."""
    from datetime import datetime

    if not last:
        return "never"
    seen = datetime.fromisoformat(last)
    if now:
        age = max(0.0, (datetime.fromisoformat(now) - seen).total_seconds())
        return f"{age:.0f} s" if age < 120 else f"{age / 60:.0f} min" if age < 7200 else f"{age / 3600:.0f} h"
    return seen.strftime("%m-%d %H:%M")


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
