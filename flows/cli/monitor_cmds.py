"""``sortie monitor`` and ``sortie report``: follow a flight, report it.

- ``sortie monitor DRAFT [--version N] [--link CONN] [--timeout S]`` follows a
  dispatched version through the authority (embedded: over MAVLink here, with
  a progress bar by items reached; with ``SORTIE_SERVER``: the server follows
  it and this waits for the end), then prints the outcome and the report's path.
  Until the vehicle takes off it says what it waits for every 10 s (on the
  ground, disarmed, its mode; nothing flies until ``sortie launch``) and ends
  NOT_STARTED (exit 2) when it never does.
- ``sortie report DRAFT [--version N] [--out FILE]`` writes and prints the
  Markdown report (the authority's: ``flows.usecases.report``).
- ``sortie sim-flight`` is ``sortie sim-vehicle`` (``flows.cli.vehicle_cmds``): every simulated vehicle flies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer


from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, app, console, err_console, run  # noqa: E402
from planner.errors import InvalidArgument

__all__ = ["monitor_cmd", "report_cmd"]

VersionOpt = Annotated[int | None, typer.Option("--version", help="Draft version (default: the latest).")]


@app.command("monitor")
def monitor_cmd(
    draft_id: DraftArg,
    version: VersionOpt = None,
    link: Annotated[
        str | None, typer.Option("--link", help="pymavlink connection string (default: the link the dispatch used).")
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Stop following after this many seconds.")] = 600.0,
    link_lost_s: Annotated[float, typer.Option("--link-lost-s", help="Silence that counts as a lost link (s).")] = 5.0,
    battery_margin: Annotated[
        float, typer.Option("--battery-margin", help="Alert when battery use exceeds the plan by this many %.")
    ] = 10.0,
    now: NowOpt = None,
    as_user: AsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Follow a dispatched mission: state in the ledger, progress, alerts; telemetry is never obeyed."""

    def body() -> dict[str, Any]:
        from flows.authority import MonitorRequest
        from flows.authority.choice import authority

        if timeout <= 0 or link_lost_s <= 0:
            raise InvalidArgument("--timeout and --link-lost-s must be > 0")
        a = authority("sortie monitor", as_user=as_user, now=now)
        request = MonitorRequest(timeout_s=timeout, link_lost_s=link_lost_s, battery_margin_pct=battery_margin)
        if as_json:
            out = a.monitor(draft_id, version, request=request, link=link)
        else:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=err_console.real, transient=False) as progress:
                tasks: dict[str, Any] = {}

                def on_update(flight: Any, what: str, data: dict[str, Any]) -> None:
                    task = tasks.get(flight.drone_id)
                    if task is None:
                        task = tasks[flight.drone_id] = progress.add_task(flight.drone_id, total=flight.nav_total or None)
                    reached = len(set(flight.reached))
                    desc = f"{flight.drone_id} {flight.mode or '…'} item {flight.current_seq}"
                    if flight.battery_pct is not None:
                        desc += f" battery {flight.battery_pct:.0f}%"
                    progress.update(task, completed=reached, description=desc)
                    if what == "alert":
                        progress.console.print(f"ALERT {data['kind']}: {data['message']}", markup=False, highlight=False)
                    elif what == "waiting":  # before take-off, every MonitorOptions.waiting_every_s: never silent
                        progress.console.print(f"{flight.drone_id}: {data['message']}", markup=False, highlight=False)
                    elif what == "text":
                        progress.console.print(f"vehicle says (logged, not acted on): {data['text']!r}",
                                               markup=False, highlight=False)

                out = a.monitor(draft_id, version, request=request, link=link, on_update=on_update)
        if out["state"] in ("SUCCEEDED", "ABORTED"):
            out["report_files"] = a.report(draft_id, out["version"])["files"]
        return out

    def render(r: dict[str, Any]) -> None:
        console.print(f"{r['draft_id']} v{r['version']}: {r['outcome']} (state {r['state']})", markup=False,
                      highlight=False)
        if r["reason"]:
            console.print(r["reason"], markup=False, highlight=False)
        for f in r["flights"]:
            console.print(
                f"  {f['drone_id']}: {f['status']}, {len(set(f['reached']))} of {f['nav_total']} items, "
                f"{f['flown_distance_m']:.0f} m, alerts {len(f['alerts'])}, vehicle messages {len(f['texts'])}",
                markup=False, highlight=False,
            )
        if r.get("report_files"):
            console.print(f"report: {r['report_files']['report']}", markup=False, highlight=False)

    # 0 only when the flight ended as the operators meant it to: flown (SUCCEEDED) or brought
    # home on their order (RECALLED); ABORTED or still flying when the watch ended exits 2
    run(body, as_json, render, succeeded=lambda r: r["state"] in ("SUCCEEDED", "RECALLED"))


@app.command("report")
def report_cmd(
    draft_id: DraftArg,
    version: VersionOpt = None,
    out: Annotated[str | None, typer.Option("--out", help="Write the Markdown here (the map PNG goes beside it).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The report of a draft version: planned vs flown, findings, approvals, alerts, map with the flown track."""

    def body() -> dict[str, Any]:
        from flows.authority.choice import authority

        report = authority("sortie report").report(draft_id, version, out=None if out is None else Path(out))
        report.pop("map_png_b64", None)
        return report

    def render(r: dict[str, Any]) -> None:
        console.print(r["markdown"], markup=False, highlight=False, soft_wrap=True)
        console.print(f"written: {r['files'].get('report')}", markup=False, highlight=False)

    run(body, as_json, render)
