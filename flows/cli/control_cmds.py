"""``sortie cancel``, ``pause``, ``resume``, ``recall``: stopping a mission before take-off or in flight.

- ``sortie cancel DRAFT --reason TEXT`` withdraws a DRAFT or APPROVED version
  (CANCELLED); a Prefect run waiting on it ends; a later dispatch is refused.
- ``sortie pause DRAFT [--force]`` / ``sortie resume DRAFT`` hold and continue the
  mission's vehicles (COMMAND_ACK required, a lost ACK settled by the
  vehicle's state, never re-sent blind). A pause the autopilot refuses
  (ArduCopter during take-off) is reported as refused; ``--force`` holds it in
  BRAKE instead, which holds by itself, and says so.
- ``sortie recall DRAFT [--land-here]`` brings them home (RTL) or down where
  they are, and by default follows them to the landing (``--wait``): the
  draft ends RECALLED, or ABORTED with the vehicle's reason. A mission that
  never took off has nothing to recall: outcome NOT_STARTED, nothing sent,
  the draft ABORTED before take-off (it will not be launched), exit code 2.

Each asks the authority (``flows.authority``): embedded, the use cases of
``flows.usecases.control`` (role-checked and audited there, so the Prefect
flow and a server are audited the same way); with ``SORTIE_SERVER`` set, the
server's API (``POST /v1/drafts/{id}/cancel|pause|resume|recall``): the token
says who acts and ``--as``/``--world``/``--now`` are refused, as for every
workflow command. A cancel wakes the Prefect run waiting on the version —
the authority does it, whoever cancelled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

import typer

from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, WorldOpt, app, console, run

if TYPE_CHECKING:
    from flows.authority import Authority

__all__ = ["cancel_cmd", "pause_cmd", "resume_cmd", "recall_cmd"]

VersionOpt = Annotated[int | None, typer.Option("--version", "-v", help="Draft version (default: the latest).")]
LinkOpt = Annotated[str | None, typer.Option("--link", help="pymavlink connection string (default: the dispatch's).")]
ReasonOpt = Annotated[str, typer.Option("--reason", help="Why (kept in the event and the audit row).")]


def _render(d: dict[str, Any]) -> None:
    said = f"{d['outcome']} ({d['state']})" if d.get("outcome") else d["state"]
    console.print(f"{d['draft_id']} v{d['version']}: {said} — {d['message']}", markup=False, highlight=False)
    for v in d.get("vehicles", []):
        veh = v.get("vehicle") or {}
        console.print(f"  {v['drone_id']}: {v.get('outcome')} ({v.get('detail', '')}); mode {veh.get('mode')}, "
                      f"item {veh.get('seq')}, attempts {v.get('attempts', 0)}", markup=False, highlight=False)
        if v.get("landed"):
            console.print(f"    landed: {v['landed']}", markup=False, highlight=False)
    if d.get("run_id"):
        console.print(f"  woke Prefect run {d['run_id']}", markup=False, highlight=False)


def _act(action: str, work: Callable[[Authority], dict[str, Any]], *, as_user: str | None, world: str | None,
         now: str | None, as_json: bool) -> None:
    def body() -> dict[str, Any]:
        from flows.authority.choice import authority

        return work(authority(f"sortie {action}", as_user=as_user, world=world, now=now))

    # a named end other than the action done (NOT_STARTED: nothing to recall) is reported in full, then exits
    # non-zero: a script never reads "recalled" into a mission that never took off
    run(body, as_json, _render, succeeded=lambda d: not d.get("outcome"))


@app.command("cancel")
def cancel_cmd(
    draft_id: DraftArg,
    reason: ReasonOpt = "",
    version: VersionOpt = None,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Withdraw a draft or its approval before dispatch (approver or dispatcher)."""
    _act("cancel", lambda a: a.cancel(draft_id, reason=reason, version=version), as_user=as_user, world=world, now=now,
         as_json=as_json)


@app.command("pause")
def pause_cmd(
    draft_id: DraftArg,
    reason: ReasonOpt = "",
    version: VersionOpt = None,
    link: LinkOpt = None,
    force: Annotated[bool, typer.Option(
        "--force", help="If the autopilot refuses the pause (ArduCopter during take-off or at a waypoint), hold it in "
                        "BRAKE instead, which holds by itself (never LOITER: without a pilot it descends).")] = False,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Hold a flying mission where it is (dispatcher); the vehicle must confirm, a refusal is reported as one."""
    _act("pause", lambda a: a.pause(draft_id, version, reason=reason, link=link, force=force), as_user=as_user,
         world=world, now=now, as_json=as_json)


@app.command("resume")
def resume_cmd(
    draft_id: DraftArg,
    reason: ReasonOpt = "",
    version: VersionOpt = None,
    link: LinkOpt = None,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Continue a held mission (dispatcher); never once a recall is recorded."""
    _act("resume", lambda a: a.resume(draft_id, version, reason=reason, link=link), as_user=as_user, world=world,
         now=now, as_json=as_json)


@app.command("recall")
def recall_cmd(
    draft_id: DraftArg,
    land_here: Annotated[bool, typer.Option("--land-here", help="Land where it is instead of returning home.")] = False,
    reason: ReasonOpt = "",
    version: VersionOpt = None,
    link: LinkOpt = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Follow the vehicle to its landing.")] = True,
    timeout: Annotated[float, typer.Option("--timeout", help="How long --wait follows (s).")] = 600.0,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Bring a flying mission home (RTL) or land it in place (dispatcher)."""
    _act("recall", lambda a: a.recall(draft_id, version, land_here=land_here, reason=reason, link=link,
                                      wait_s=timeout if wait else 0.0), as_user=as_user, world=world, now=now,
         as_json=as_json)
