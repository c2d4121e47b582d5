"""``sortie sim-vehicle`` (the simulated vehicle) and ``sortie read-mission`` (what a vehicle holds).

``sim-vehicle`` answers the MAVLink mission protocol on ``--listen`` (upload and download
of mission, fence and rally, heartbeats) with optional faults, until Ctrl-C or
``--duration`` seconds, then prints what it holds. Point ``sortie dispatch
DRAFT --link udpout:127.0.0.1:PORT`` at it from another terminal.

``read-mission`` asks the authority what a vehicle holds — a drone of its
fleet (bound and signed as its fleet entry says; through the server, at its own
link record and its hub's held link), or, embedded, the vehicle on ``--link`` —
and prints the fence, mission and rally; nothing is uploaded. It is the first
step after an UNCERTAIN dispatch: look at what the vehicle holds, never re-send
blind.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, JsonOpt, app, console, err_console, run
from planner.errors import InvalidArgument

__all__ = ["sim_vehicle_cmd", "sim_summary", "read_mission_cmd", "check_dialect", "open_sim", "serve_sim"]


def sim_summary(sim: Any) -> dict[str, Any]:
    """What the simulator holds and counted: JSON-able, for the command's output."""
    from planner.output.mission_items import held_rows  # pymavlink: only when a command runs

    return {
        "listen": sim.listen,
        "address": sim.address,
        "addresses": sim.addresses,
        "dialect": sim.dialect,
        "stats": dict(vars(sim.stats)),
        "params": sim.params,
        "missions": held_rows(sim.missions),
    }


def check_dialect(dialect: str) -> None:
    """``--dialect`` must be one the simulator speaks."""
    if dialect not in ("ardupilot", "px4"):
        raise InvalidArgument(f"--dialect {dialect!r}: expected ardupilot or px4")


def open_sim(listen: str | list[str], dialect: str, *, as_json: bool, **options: Any) -> Any:
    """A ``SimVehicle`` listening on ``listen`` that logs to stderr (quiet with ``--json``).

    An address that cannot be bound is ``INVALID_ARGUMENT``, not a traceback.
    """
    from flows.sim.vehicle import SimVehicle

    log = None if as_json else (lambda text: err_console.print(f"sim: {text}", markup=False, highlight=False))
    try:
        return SimVehicle(listen, dialect, log=log, **options)  # type: ignore[arg-type]
    except OSError as exc:
        raise InvalidArgument(f"cannot listen on {listen!r}: {exc}") from None


def serve_sim(sim: Any, duration: float | None) -> dict[str, Any]:
    """Serve until ``duration`` seconds have passed (or Ctrl-C), stop, and say what the vehicle holds."""
    try:
        sim.serve(duration)
    except KeyboardInterrupt:
        pass
    finally:
        sim.stop()
    return sim_summary(sim)


@app.command("sim-vehicle")
def sim_vehicle_cmd(
    listen: Annotated[
        list[str] | None,
        typer.Option("--listen", help="A port to listen on (udpin:127.0.0.1:14560, tcpin:127.0.0.1:5760); repeat "
                                      "for more ports, the first is SERIAL0."),
    ] = None,
    boot_s: Annotated[
        float, typer.Option("--boot-s", help="Seconds after boot during which an upload is refused with NO_SPACE.")
    ] = 0.0,
    prearm_s: Annotated[
        float, typer.Option("--prearm-s", help="Seconds after boot until the pre-arm checks pass (negative: never).")
    ] = 0.0,
    dialect: Annotated[str, typer.Option("--dialect", help="ardupilot (seq 0 = home) or px4.")] = "ardupilot",
    drop: Annotated[float, typer.Option("--drop", help="Fraction of incoming and outgoing messages to drop (0–0.9).")] = 0.0,
    lose_final_ack: Annotated[
        bool, typer.Option("--lose-final-ack", help="Store uploads but never deliver the final ACCEPTED ack.")
    ] = False,
    reject: Annotated[bool, typer.Option("--reject", help="Refuse every mission upload.")] = False,
    reject_result: Annotated[
        str, typer.Option("--reject-result", help="The MAV_MISSION_RESULT a --reject answers with.")
    ] = "MAV_MISSION_DENIED",
    seed: Annotated[int, typer.Option("--seed", help="Seed of the drop RNG.")] = 0,
    duration: Annotated[
        float | None, typer.Option("--duration", help="Stop after this many seconds (default: until Ctrl-C).")
    ] = None,
    heartbeat_s: Annotated[float, typer.Option("--heartbeat-s", help="Heartbeat period in seconds.")] = 1.0,
    lose: Annotated[
        list[str] | None,
        typer.Option("--lose", help="Lose one message once per mission type: count:TYPE, item:TYPE:SEQ, request:TYPE:SEQ, "
                                    "ack:TYPE (TYPE mission|fence|rally|*); repeatable."),
    ] = None,
    system_id: Annotated[int, typer.Option("--system-id", help="The vehicle's MAVLink system id.")] = 1,
    signing_key: Annotated[
        str | None, typer.Option("--signing-key", help="Sign with this key of the key store (SORTIE_HOME/keys/NAME.key).")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Run a simulated vehicle that answers the MAVLink mission protocol as ArduPilot or PX4 does, with faults."""

    def body() -> dict[str, Any]:
        check_dialect(dialect)
        if not 0.0 <= drop <= 0.9:
            raise InvalidArgument(f"--drop {drop} must be between 0 and 0.9")
        if duration is not None and duration <= 0:
            raise InvalidArgument("--duration must be > 0")
        key = None
        if signing_key:
            from flows.context import sortie_home
            from flows.vehicle.keys import load_signing_key

            key = load_signing_key(sortie_home() / "keys", signing_key)
        if not 1 <= system_id <= 255:
            raise InvalidArgument("--system-id must be 1–255")
        ports = listen or ["udpin:127.0.0.1:14560"]
        sim = open_sim(
            ports, dialect, as_json=as_json, drop=drop, lose_final_ack=lose_final_ack,
            reject=reject_result if reject else None, seed=seed, heartbeat_s=heartbeat_s,
            lose=tuple(lose or ()), system_id=system_id, signing_key=key, boot_s=boot_s,
            prearm_s=None if prearm_s < 0 else prearm_s,
        )
        if not as_json:
            err_console.print(
                f"sim-vehicle ({dialect}) listening on {', '.join(ports)}; dispatch with --link {sim.address}"
                + (" (Ctrl-C to stop)" if duration is None else f" for {duration:g} s"),
                markup=False,
                highlight=False,
            )
        return serve_sim(sim, duration)

    def render(result: dict[str, Any]) -> None:
        counts = ", ".join(f"{k} {len(v)}" for k, v in result["missions"].items())
        console.print(f"held: {counts}; stats: {result['stats']}", markup=False, highlight=False)

    run(body, as_json, render)


@app.command("read-mission")
def read_mission_cmd(
    drone: Annotated[str | None, typer.Argument(help="A drone of the fleet (its link and binding are the fleet's).")] = None,
    link: Annotated[str | None, typer.Option(
        "--link", help="pymavlink connection string of the vehicle, e.g. udpout:127.0.0.1:14560.")] = None,
    timeout_s: Annotated[float, typer.Option("--timeout", help="Seconds for the whole read-back.")] = 30.0,
    as_json: JsonOpt = False,
    as_user: AsOpt = None,
) -> None:
    """Download and print the fence, mission and rally a vehicle holds (uploads nothing)."""

    def body() -> dict[str, Any]:
        from flows.authority.choice import authority

        if timeout_s <= 0:
            raise InvalidArgument("--timeout must be > 0")
        return authority("sortie read-mission", as_user=as_user).read_vehicle(drone, link=link, timeout_s=timeout_s)

    def render(result: dict[str, Any]) -> None:
        from rich.table import Table

        v = result["vehicle"]
        console.print(
            f"vehicle {v['system']}/{v['component']} ({v['dialect'] or 'autopilot ' + str(v['autopilot'])}) on {result['link']}",
            markup=False, highlight=False,
        )
        for kind, rows in result["missions"].items():
            table = Table(title=f"{kind}: {len(rows)} items", show_lines=False)
            for col in ("seq", "command", "frame", "lat", "lon", "alt_m", "param1"):
                table.add_column(col)
            for r in rows:
                table.add_row(str(r["seq"]), r["command"].removeprefix("MAV_CMD_"), str(r["frame"]), f"{r['lat']:.7f}",
                              f"{r['lon']:.7f}", f"{r['alt_m']:.2f}", f"{r['params'][0]:g}")
            console.print(table)

    run(body, as_json, render)
