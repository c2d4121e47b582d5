"""``sortie cancel``, ``pause``, ``resume``, ``recall``: stopping a mission before take-off or in flight.

- ``sortie cancel DRAFT --reason TEXT`` withdraws a DRAFT or APPROVED version
  (CANCELLED); a Prefect run waiting on it ends; a later dispatch is refused.
- ``sortie pause DRAFT`` / ``sortie resume DRAFT`` hold and continue the
  mission's vehicles (COMMAND_ACK required, a lost ACK settled by the
  vehicle's state, never re-sent blind).
- ``sortie recall DRAFT [--land-here]`` brings them home (RTL) or down where
  they are, and by default follows them to the landing (``--wait``): the
  draft ends RECALLED, or ABORTED with the vehicle's reason.

Each calls ``flows.usecases.control`` (role-checked and audited there, so the
Prefect flow and a server are audited the same way). With ``SORTIE_SERVER``
set the command is a client of the authority (``POST
/v1/drafts/{id}/cancel|pause|resume|recall``): the token says who acts and
``--as``/``--world``/``--now`` are refused, as for every workflow command.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, WorldOpt, app, console, run

__all__ = ["cancel_cmd", "pause_cmd", "resume_cmd", "recall_cmd"]

VersionOpt = Annotated[int | None, typer.Option("--version", "-v", help="Draft version (default: the latest).")]
LinkOpt = Annotated[str | None, typer.Option("--link", help="pymavlink connection string (default: the dispatch's).")]
ReasonOpt = Annotated[str, typer.Option("--reason", help="Why (kept in the event and the audit row).")]


def _actor(as_user: str | None) -> str:
    return as_user or os.environ.get("SORTIE_USER") or ""


def _render(d: dict[str, Any]) -> None:
    console.print(f"{d['draft_id']} v{d['version']}: {d['state']} — {d['message']}", markup=False, highlight=False)
    for v in d.get("vehicles", []):
        veh = v.get("vehicle") or {}
        console.print(f"  {v['drone_id']}: {v.get('outcome')} ({v.get('detail', '')}); mode {veh.get('mode')}, "
                      f"item {veh.get('seq')}, attempts {v.get('attempts', 0)}", markup=False, highlight=False)
        if v.get("landed"):
            console.print(f"    landed: {v['landed']}", markup=False, highlight=False)
    if d.get("run_id"):
        console.print(f"  woke Prefect run {d['run_id']}", markup=False, highlight=False)


def _call(action: str, **kw: Any) -> dict[str, Any]:
    from flows.cli.backend import backend, server_url

    if server_url() is not None:
        return _remote(action, backend(command=action, as_user=kw["actor"] if kw.get("as_user") else None,
                                       world=kw.get("world_dir"), now=kw.get("now")), kw)
    from flows.context import resolve_now
    from flows.ledger import open_ledger
    from flows.usecases import control

    kw.pop("as_user", None)
    now = resolve_now(kw.pop("now"))
    return getattr(control, action)(open_ledger(), now=now, **kw).to_dict()


def _remote(action: str, b: Any, kw: dict[str, Any]) -> dict[str, Any]:
    """The same action through ``sortie server``; a cancelled draft's waiting Prefect run is woken from here."""
    body: dict[str, Any] = {"version": kw.get("version")}
    if action == "cancel":
        body["reason"] = kw.get("reason", "")
    else:
        body.update(reason=kw.get("reason", ""), link=kw.get("link"))
    if action == "pause" and kw.get("force"):
        body["force"] = True
    if action == "recall":
        body.update(land_here=kw.get("land_here", False), wait_s=min(float(kw.get("wait_s", 0.0)), 120.0))
    out = b.client.request("POST", f"/v1/drafts/{kw['draft_id']}/{action}", body=body)
    if action == "cancel" and out.get("changed") and kw.get("wake_run") is not None:
        from types import SimpleNamespace

        rec = SimpleNamespace(draft_id=out["draft_id"], version=out["version"], plan_hash=None)
        out["run_id"] = kw["wake_run"](rec, "sortie-server", kw.get("reason", ""))
    return out


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
    def wake(rec: Any, actor: str, why: str) -> str | None:
        from flows.orchestration.resume import wake_cancelled_run  # a no-op without PREFECT_API_URL

        return wake_cancelled_run(rec, actor, why)

    run(lambda: _call("cancel", draft_id=draft_id, version=version, actor=_actor(as_user), as_user=as_user, reason=reason,
                      world_dir=world, now=now, wake_run=wake), as_json, _render)


def _hold_command(action: str, doc: str) -> Callable[..., None]:
    """Register ``sortie pause`` or ``sortie resume``: the same options and call, only the action differs.

    One definition so the two cannot drift apart (a flag added to one and not the other).
    """

    def command(
        draft_id: DraftArg,
        reason: ReasonOpt = "",
        version: VersionOpt = None,
        link: LinkOpt = None,
        as_json: JsonOpt = False,
        world: WorldOpt = None,
        now: NowOpt = None,
        as_user: AsOpt = None,
    ) -> None:
        run(lambda: _call(action, draft_id=draft_id, version=version, actor=_actor(as_user), as_user=as_user, reason=reason,
                          link=link, world_dir=world, now=now), as_json, _render)

    command.__doc__ = doc
    command.__name__ = f"{action}_cmd"
    return app.command(action)(command)


resume_cmd = _hold_command("resume", "Continue a held mission (dispatcher); never once a recall is recorded.")


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
    run(lambda: _call("pause", draft_id=draft_id, version=version, actor=_actor(as_user), as_user=as_user,
                      reason=reason, link=link, world_dir=world, now=now, force=force), as_json, _render)


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
    run(lambda: _call("recall", draft_id=draft_id, version=version, actor=_actor(as_user), as_user=as_user, land_here=land_here,
                      reason=reason, link=link, world_dir=world, now=now, wait_s=timeout if wait else 0.0),
        as_json, _render)
