"""``sortie monitor``, ``sortie report`` and ``sortie sim-flight``: follow a flight, report it, fly one.

- ``sortie monitor DRAFT [--version N] [--link CONN] [--timeout S]`` follows a
  dispatched version through the authority (embedded: over MAVLink here, with
  a progress bar by items reached; with ``SORTIE_SERVER``: the server follows
  it and this waits for the end), then prints the outcome and the report's path.
  Until the vehicle takes off it says what it waits for every 10 s (on the
  ground, disarmed, its mode; nothing flies until ``sortie launch``) and ends
  NOT_STARTED (exit 2) when it never does.
- ``sortie report DRAFT [--version N] [--out FILE]`` writes and prints the
  Markdown report (the authority's: ``flows.usecases.report``).
- ``sortie sim-flight --listen udpin:127.0.0.1:PORT [--speedup X] [--drain F]
  [--link-loss-after S] [--abort-at N] [--inject-text T]`` runs the vehicle
  simulator with a flight: it answers the mission protocol like ``sortie
  sim-vehicle`` and, like a real autopilot, waits on the ground with what it
  was sent until a ground station launches it (``sortie launch``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer


from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, app, console, err_console, run  # noqa: E402
from planner.errors import InvalidArgument  # noqa: E402

__all__ = ["monitor_cmd", "report_cmd", "sim_flight_cmd"]

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


@app.command("sim-flight")
def sim_flight_cmd(
    listen: Annotated[
        list[str] | None,
        typer.Option("--listen", help="A port to listen on (udpin:…, tcpin:…); repeat for more, the first is SERIAL0."),
    ] = None,
    prearm_s: Annotated[float, typer.Option("--prearm-s", help="Seconds after boot until the pre-arm checks pass.")] = 0.0,
    dialect: Annotated[str, typer.Option("--dialect", help="ardupilot or px4.")] = "ardupilot",
    speedup: Annotated[float, typer.Option("--speedup", help="Simulated seconds per wall second (1–10000).")] = 100.0,
    drain: Annotated[float, typer.Option("--drain", help="Battery drains this many times faster than the model.")] = 1.0,
    link_loss_after: Annotated[
        float | None, typer.Option("--link-loss-after", help="Stop sending after this many simulated seconds of flight.")
    ] = None,
    abort_at: Annotated[int | None, typer.Option("--abort-at", help="Switch to RTL when the mission reaches this item.")] = None,
    inject_text: Annotated[
        str | None, typer.Option("--inject-text", help="Send this STATUSTEXT in flight (e.g. one that reads like a command).")
    ] = None,
    battery_wh: Annotated[float, typer.Option("--battery-wh", help="Battery capacity (Wh).")] = 263.2,
    battery_pct: Annotated[float, typer.Option("--battery-pct", help="Battery charge at take-off (%).")] = 96.0,
    duration: Annotated[float | None, typer.Option("--duration", help="Stop after this many seconds.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a simulated vehicle that flies the mission it is sent, streaming telemetry, with flight faults."""

    def body() -> dict[str, Any]:
        from flows.cli.vehicle_cmds import check_dialect, open_sim, serve_sim
        from flows.sim.flight import FlightFaults, FlightOptions, SimFlight

        check_dialect(dialect)
        faults = FlightFaults(drain_factor=drain, link_loss_after_s=link_loss_after, abort_at_seq=abort_at,
                              inject_text=inject_text)
        flight = SimFlight(FlightOptions(speedup=speedup, battery_wh=battery_wh, battery_pct=battery_pct, faults=faults))
        ports = listen or ["udpin:127.0.0.1:14560"]
        sim = open_sim(ports, dialect, as_json=as_json, flight=flight, prearm_s=prearm_s)
        if not as_json:
            err_console.print(f"sim-flight ({dialect}, {speedup:g}×) on {', '.join(ports)}; dispatch, launch and monitor "
                              f"with --link "
                              f"{sim.address}; faults: {', '.join(faults.describe()) or 'none'}", markup=False,
                              highlight=False)
        out = serve_sim(sim, duration)
        out["flight"] = {"phase": flight.phase, "mode": flight.mode, "reached": flight.reached,
                         "battery_pct": round(flight.battery_pct, 1), "sim_t_s": round(flight.sim_t, 1),
                         "texts": flight.texts_sent}
        return out

    run(body, as_json, lambda r: console.print(f"flight: {r['flight']}", markup=False, highlight=False))
