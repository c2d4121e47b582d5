"""``sortie sim-vehicle`` (the simulated vehicle) and ``sortie read-mission`` (what a vehicle holds).

``sim-vehicle`` is a simulated ArduCopter or PX4 vehicle on ``--listen`` (``flows.sim.vehicle``):
it boots (uploads refused while it does), passes its pre-arm checks after a while, answers
the mission protocol, and flies what it was sent once a ground station launches it
(``sortie launch``), in accelerated time with ``--speedup``; faults on the link, the
battery and the flight, parameters with ``--param``. It runs until Ctrl-C or ``--duration``
seconds, then prints what it holds and what it flew (``sim-flight`` is the same command).

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

__all__ = ["sim_vehicle_cmd", "sim_summary", "read_mission_cmd", "check_dialect", "open_sim", "serve_sim",
           "parse_params"]


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


DEFAULT_LISTEN = {"ardupilot": "tcpin:127.0.0.1:5760", "px4": "udpin:127.0.0.1:14560"}  # as their SITLs: TCP / UDP


def parse_params(pairs: list[str] | None) -> dict[str, float]:
    """``--param NAME=VALUE`` → {NAME: VALUE} (the vehicle's own names and units)."""
    out: dict[str, float] = {}
    for pair in pairs or []:
        name, sep, value = pair.partition("=")
        try:
            out[name.strip().upper()] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name.strip():
            raise InvalidArgument(f"--param {pair!r}: expected NAME=VALUE, e.g. FS_GCS_ENABLE=1")
    return out


@app.command("sim-vehicle")
def sim_vehicle_cmd(
    listen: Annotated[
        list[str] | None,
        typer.Option("--listen", help="A port to listen on; repeat for more, the first is SERIAL0. Default: "
                                      "tcpin:127.0.0.1:5760 (ArduPilot, as SITL) or udpin:127.0.0.1:14560 (PX4)."),
    ] = None,
    dialect: Annotated[str, typer.Option("--dialect", help="ardupilot (seq 0 = home) or px4.")] = "ardupilot",
    speedup: Annotated[float, typer.Option("--speedup", help="The vehicle's clock against the wall clock, as "
                                                             "SITL's --speedup (1–10000).")] = 1.0,
    boot_s: Annotated[float, typer.Option("--boot-s", help="Seconds (vehicle clock) after boot during which an upload "
                                                           "is refused with NO_SPACE.")] = 10.0,
    prearm_s: Annotated[float, typer.Option("--prearm-s", help="Seconds after boot until the pre-arm checks pass "
                                                               "(negative: never).")] = 35.0,
    prearm_reason: Annotated[str, typer.Option("--prearm-reason", help="What \"PreArm: …\" says while they fail.")
                             ] = "AHRS: waiting for home",
    home: Annotated[str | None, typer.Option("--home", help="LAT,LON,ALT_AMSL of the vehicle at boot.")] = None,
    battery_pct: Annotated[float, typer.Option("--battery-pct", help="The pack's charge at boot (%).")] = 96.0,
    battery_wh: Annotated[float, typer.Option("--battery-wh", help="The pack's energy (Wh).")] = 263.2,
    param: Annotated[list[str] | None, typer.Option("--param", help="NAME=VALUE of the vehicle's own parameters, "
                                                                   "e.g. FS_GCS_ENABLE=1, BATT_FS_LOW_ACT=2 "
                                                                   "(repeatable).")] = None,
    drain: Annotated[float, typer.Option("--drain", help="The pack drains this many times faster than the power "
                                                         "drawn.")] = 1.0,
    link_loss_after: Annotated[float | None, typer.Option("--link-loss-after", help="The link is gone for good after "
                                                                                   "this many seconds of flight.")] = None,
    stall_after: Annotated[float | None, typer.Option("--stall-after", help="The link stalls after this many seconds "
                                                                           "of flight (the vehicle flies on).")] = None,
    stall_s: Annotated[float, typer.Option("--stall-s", help="How long the stall lasts (wall seconds).")] = 8.0,
    abort_at: Annotated[int | None, typer.Option("--abort-at", help="Switch to RTL when the mission reaches this "
                                                                    "item.")] = None,
    inject_text: Annotated[str | None, typer.Option("--inject-text", help="A STATUSTEXT to send in flight (e.g. one "
                                                                          "that reads like a command).")] = None,
    reboot_after: Annotated[float | None, typer.Option("--reboot-after", help="Reboot this many seconds after "
                                                                             "landing (a new session).")] = None,
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
    heartbeat_s: Annotated[float, typer.Option("--heartbeat-s", help="Heartbeat period (vehicle clock).")] = 1.0,
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
    """Run a simulated vehicle that boots, answers the mission protocol, flies what it is sent once a ground station
    launches it, as ArduPilot (ArduCopter 4.6.3) or PX4 does, with faults."""

    def body() -> dict[str, Any]:
        from flows.sim.flight import FlightFaults, FlightOptions, SimFlight

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
        faults = FlightFaults(drain_factor=drain, link_loss_after_s=link_loss_after, stall_after_s=stall_after,
                              stall_s=stall_s, abort_at_seq=abort_at, inject_text=inject_text,
                              reboot_after_s=reboot_after)
        flight = SimFlight(FlightOptions(battery_wh=battery_wh, battery_pct=battery_pct, faults=faults))
        ports = listen or [DEFAULT_LISTEN[dialect]]
        sim = open_sim(
            ports, dialect, as_json=as_json, drop=drop, lose_final_ack=lose_final_ack,
            reject=reject_result if reject else None, seed=seed, heartbeat_s=heartbeat_s,
            lose=tuple(lose or ()), system_id=system_id, signing_key=key, boot_s=boot_s,
            prearm_s=None if prearm_s < 0 else prearm_s, prearm_reason=prearm_reason, speedup=speedup,
            home=_home(home), battery_pct=battery_pct, params=parse_params(param), flight=flight,
        )
        if not as_json:
            err_console.print(
                f"sim-vehicle ({dialect}, {speedup:g}×) on {', '.join(ports)}; dispatch and launch with --link "
                f"{sim.address}; faults: {', '.join(faults.describe()) or 'none'}"
                + (" (Ctrl-C to stop)" if duration is None else f" for {duration:g} s"),
                markup=False,
                highlight=False,
            )
        out = serve_sim(sim, duration)
        out["flight"] = {"phase": flight.phase, "mode": flight.mode, "reached": flight.reached,
                         "battery_pct": round(flight.battery_pct, 1), "flown_s": round(flight.sim_t, 1),
                         "texts": flight.texts_sent, "reboots": sim.reboots}
        return out

    def render(result: dict[str, Any]) -> None:
        counts = ", ".join(f"{k} {len(v)}" for k, v in result["missions"].items())
        console.print(f"held: {counts}; stats: {result['stats']}; flight: {result['flight']}", markup=False,
                      highlight=False)

    run(body, as_json, render)


app.command("sim-flight", help="The same as sim-vehicle (every simulated vehicle flies).")(sim_vehicle_cmd)


def _home(text: str | None) -> tuple[float, float, float] | None:
    if text is None:
        return None
    try:
        lat, lon, alt = (float(x) for x in text.split(","))
    except ValueError:
        raise InvalidArgument(f"--home {text!r}: expected LAT,LON,ALT_AMSL") from None
    return lat, lon, alt


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
