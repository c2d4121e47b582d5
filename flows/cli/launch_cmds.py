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

It asks the authority (``flows.authority``: ``Authority.launch``): embedded,
the launch use case in this process (role-checked and audited there); with
``SORTIE_SERVER`` set, the server's ``POST /v1/drafts/{id}/launch``: the token
says who acts and ``--as``/``--world``/``--now``/``--link`` are refused, as
for every workflow command (the server reaches each vehicle at its own record).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, WorldOpt, app, run
from flows.cli.control_cmds import LinkOpt, VersionOpt
from flows.cli.render import render_launch

__all__ = ["launch_cmd"]

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
        from flows.authority.choice import authority

        a = authority("sortie launch", as_user=as_user, world=world, now=now)
        return a.launch(draft_id, version, link=link, prearm_wait_s=prearm_wait)

    run(body, as_json, render_launch)
