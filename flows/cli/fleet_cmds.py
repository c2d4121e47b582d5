"""``sortie fleet``: the drones as the authority knows them, and ``sortie sim-fleet``: a simulated fleet.

``sortie fleet [--json]`` asks the authority (``Authority.fleet``): through
``sortie server`` each drone's status, battery, position, mode and last
heartbeat come from its vehicle over the link the server holds (``live``),
with the link's fault named; embedded, they are the world file's (``file``).
"""

from __future__ import annotations

from typing import Any

from flows.cli.app import AsOpt, JsonOpt, NowOpt, WorldOpt, app, console, run

__all__ = ["fleet_cmd", "render_fleet"]


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
def fleet_cmd(as_json: JsonOpt = False, world: WorldOpt = None, now: NowOpt = None, as_user: AsOpt = None) -> None:
    """The drones of your tenants: status, battery, position, mode, last seen — live from the vehicles through a
    server, from the world file when embedded."""

    def body() -> dict[str, Any]:
        from flows.authority.choice import authority

        return authority("sortie fleet", as_user=as_user, world=world, now=now).fleet()

    run(body, as_json, render_fleet)
