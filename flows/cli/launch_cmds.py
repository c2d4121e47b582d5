"""``sortie launch DRAFT``: a dispatched mission takes off, as its own step (``flows.usecases.launching``).

Nothing flies until it is launched: a real autopilot (and the simulator) waits
on the ground with the mission it accepted. ``sortie launch`` checks the
vehicle's own state first (heartbeat, disarmed, pre-arm checks, EKF, GPS fix,
battery against the plan's need, home at the dock, the mission read back with
the approved count and hash) and then runs the autopilot's own sequence
(ArduPilot: GUIDED → arm → AUTO → MISSION_START; PX4: MISSION_START), each step
acknowledged; the ledger records LAUNCHED with the vehicle's answers. A failed
check or a refused step is ``PREFLIGHT_FAILED`` (exit 2) naming it, and the
vehicle is left disarmed. Dispatcher role; only a DISPATCHED version whose
approval covers now.

With ``SORTIE_SERVER`` set the command is a client of the authority
(``POST /v1/drafts/{id}/launch``): the token says who acts and
``--as``/``--world``/``--now``/``--link`` are refused, as for every workflow
command.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, WorldOpt, app, console, run

__all__ = ["launch_cmd"]

VersionOpt = Annotated[int | None, typer.Option("--version", "-v", help="Draft version (default: the latest).")]
LinkOpt = Annotated[str | None, typer.Option("--link", help="pymavlink connection string (default: the dispatch's).")]


def _render(d: dict[str, Any]) -> None:
    console.print(f"{d['draft_id']} v{d['version']}: {d['state']} — {d['message']}", markup=False, highlight=False)
    for v in d.get("vehicles", []):
        console.print(f"  {v['drone_id']}: {v['status']}", markup=False, highlight=False)
        for c in v.get("checks", []):
            console.print(f"    {'ok ' if c['ok'] else 'NO '} {c['name']}: {c['detail']}", markup=False, highlight=False)
        for s in v.get("steps", []):
            console.print(f"    step {s['name']}: {s['outcome']} ({s.get('result') or '-'})", markup=False,
                          highlight=False)


@app.command("launch")
def launch_cmd(
    draft_id: DraftArg,
    version: VersionOpt = None,
    link: LinkOpt = None,
    prearm_wait: Annotated[
        float, typer.Option("--prearm-wait", help="How long to wait for the vehicle's pre-arm checks to pass (s).")
    ] = 90.0,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Launch a dispatched mission (dispatcher): pre-flight checks from the vehicle, then its arm-and-start sequence."""

    def body() -> dict[str, Any]:
        from flows.cli.backend import backend, server_url

        if server_url() is not None:
            from planner.errors import OverrideRefused

            if link:
                raise OverrideRefused("`sortie launch --link` with SORTIE_SERVER set: the server reaches each vehicle "
                                      "at its own record of the link address", details={"refused": ["--link"]})
            b = backend(command="launch", as_user=as_user, world=world, now=now)
            return b.client.request("POST", f"/v1/drafts/{draft_id}/launch",
                                    body={"version": version, "prearm_wait_s": prearm_wait})
        from flows.context import resolve_now
        from flows.ledger import open_ledger
        from flows.usecases.launching import launch
        from flows.vehicle.launch import LaunchOptions

        actor = as_user or os.environ.get("SORTIE_USER") or ""
        out = launch(draft_id, version, actor=actor, now=resolve_now(now), ledger=open_ledger(), link=link,
                     world_dir=world, options=LaunchOptions(prearm_wait_s=prearm_wait))
        return out.to_dict() | {"mode": "local", "identity": "asserted"}

    run(body, as_json, _render)
