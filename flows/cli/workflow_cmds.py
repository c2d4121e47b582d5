"""The workflow commands: plan, drafts, show, diff, replan, approve, reject, dispatch, export, log, demo.

Each command parses its options, calls the ``flows.usecases.service`` function the
Prefect flows call too, and prints a short summary (``--json``: the same data
as JSON). Every command is audited in the ledger (who, what, a hash and a
redacted copy of the arguments, the result code, how long it took). Planning
needs no Prefect server.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, WorldOpt, app, console, err_console, run
from flows.context import DEMO_WORLD_DIR, resolve_now, resolve_world_dir, sortie_home
from planner.errors import InvalidArgument, SortieError

__all__ = ["DEMO_TEXT", "DEMO_REGION", "DEMO_NOW"]

DEMO_TEXT = "这块地今天巡一遍消防通道"
DEMO_REGION = "region-1001"
DEMO_NOW = "2026-11-29T07:00:00+02:00"  # the demo world's reference time (data/demo-helsinki/README.md)

VersionOpt = Annotated[int | None, typer.Option("--version", "-v", help="Draft version (default: the latest).")]


def _service() -> ModuleType:
    """``flows.usecases.service``, imported on first use: it loads DuckDB, shapely and the planner, which
    ``sortie --help`` and every command's own option parsing do not need."""
    from flows.usecases import service

    return service


def _actor(as_user: str | None) -> str | None:
    return as_user or os.environ.get("SORTIE_USER") or None


def _audited(command: str, actor: str | None, args: dict[str, Any], work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run one command body and write its audit row, whatever the outcome."""
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    code = "OK"
    try:
        result = work()
        return result
    except SortieError as exc:
        code = exc.code
        raise
    except BaseException as exc:
        code = "INTERNAL" if isinstance(exc, Exception) else type(exc).__name__
        raise
    finally:
        if code != "LEDGER_UNAVAILABLE":
            from flows.ledger import LedgerUnavailable, open_ledger

            try:
                open_ledger().audit(
                    actor=actor,
                    command=command,
                    args=args,
                    result_code=code,
                    duration_s=time.perf_counter() - t0,
                    started=started,
                    draft_id=args.get("draft_id"),
                )
            except (LedgerUnavailable, SortieError):
                pass  # the ledger itself is the problem; the command's own error is what the user needs


def _seen(draft_id: str, actor: str | None, world: str | None) -> None:
    """With ``--as``/``SORTIE_USER``, only drafts of the user's tenants are shown."""
    if actor:
        _service().check_visible(draft_id, actor, world_dir=world)


def _need_actor(actor: str | None) -> str:
    if not actor:
        raise InvalidArgument("who is acting? give --as USER or set SORTIE_USER")
    return actor


def _run_on_draft(
    command: str,
    draft_id: str,
    args: dict[str, Any],
    read: Callable[[], dict[str, Any]],
    render: Callable[[dict[str, Any]], None],
    *,
    as_json: bool,
    world: str | None,
    as_user: str | None,
) -> None:
    """A command that reads one draft: audited, and with ``--as`` only a draft of the user's tenants."""
    actor = _actor(as_user)

    def work() -> dict[str, Any]:
        _seen(draft_id, actor, world)
        return read()

    run(lambda: _audited(command, actor, {"draft_id": draft_id, **args}, work), as_json, render)


# --------------------------------------------------------------------------- rendering


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100.0 * float(x):.0f} %"


def _render_draft(d: dict[str, Any]) -> None:
    head = f"[bold]{d['draft_id']}[/] v{d['version']}  [bold]{d['status']}[/]  verdict {d['verdict']}"
    if d.get("plan_hash"):
        head += f"  plan {d['plan_hash'][:12]}…"
    if d.get("created") is False:
        head += "  [dim](already recorded)[/]"
    console.print(head, highlight=False)
    console.print(
        f"{d.get('mission_type') or '?'} for {d.get('region_id') or 'the selected area'} "
        f"({d['tenant']}), requested by {d['requested_by']}; planned for {d.get('planned_for') or '–'}",
        highlight=False,
        markup=False,
    )
    if d.get("sorties"):
        from rich.table import Table

        t = Table(show_edge=False, header_style="bold")
        for col in ("#", "drone", "dock", "distance", "duration", "energy", "battery"):
            t.add_column(col, justify="right" if col not in ("drone", "dock") else "left")
        for s in d["sorties"]:
            t.add_row(
                str(s["index"]),
                s["drone"],
                s["dock"],
                f"{s['distance_m'] / 1000:.2f} km",
                f"{s['duration_s'] / 60:.1f} min",
                f"{s['energy_wh']:.1f} Wh",
                _pct(s["battery_fraction"]),
            )
        console.print(t)
    for f in d.get("findings") or []:
        colour = "red" if f.get("severity") == "block" else "yellow"
        where = "" if f.get("sortie_index") is None else f" (sortie {f['sortie_index']})"
        console.print(f"[{colour}]{f.get('severity', '?').upper()}[/] {f.get('rule_id')}{where}: ", end="", highlight=False)
        console.print(f.get("message_en", ""), markup=False, highlight=False)
    for m in d.get("missing") or []:
        console.print(f"[red]missing[/] {m}", highlight=False)
    for name, path in (d.get("files") or {}).items():
        console.print(f"  {name}: {path}", markup=False, highlight=False)
    if len(d.get("versions") or []) > 1:
        console.print(f"versions: {', '.join(str(v) for v in d['versions'])}", highlight=False)
    notes = d.get("notes") or {}
    for a in notes.get("approvals") or []:
        console.print(
            f"  {a['decision'].lower()} by {a['approver']} at {a['created_time']}"
            + (f", expires {a['expires_time']}" if a.get("expires_time") else "")
            + (f": {a['comment']}" if a.get("comment") else ""),
            markup=False,
            highlight=False,
        )
    for x in notes.get("dispatches") or []:
        console.print(f"  dispatch {x['idempotency_key'][:12]}… {x['status']}", markup=False, highlight=False)
    if d["status"] == "DRAFT" and d["verdict"] != "block":
        console.print(f"[dim]next: sortie approve {d['draft_id']} --version {d['version']} --as APPROVER[/]")


def _render_list(d: dict[str, Any]) -> None:
    drafts = d["drafts"]
    if not drafts:
        console.print("no drafts yet: sortie plan TEXT --region ID")
        return
    from rich.table import Table

    t = Table(show_edge=False, header_style="bold")
    for col in ("draft", "v", "status", "verdict", "mission", "region", "by", "created"):
        t.add_column(col)
    for x in drafts:
        t.add_row(
            x["draft_id"], str(x["version"]), x["status"], x["verdict"], x.get("mission_type") or "–",
            x.get("region_id") or "area", x["requested_by"], x["created_time"],
        )
    console.print(t)


def _render_dispatch(d: dict[str, Any]) -> None:
    console.print(
        f"[bold]{d['draft_id']}[/] v{d['version']} dispatch [bold]{d['status']}[/] "
        f"(key {d['idempotency_key'][:12]}…){'' if d['first'] else ' [dim](earlier outcome)[/]'}",
        highlight=False,
    )
    for c in d.get("checks") or []:
        console.print(f"  ✓ {c}", markup=False, highlight=False)
    console.print(d["message"], markup=False, highlight=False)
    console.print(f"draft is {d['draft_status']}", highlight=False)


def _render_log(d: dict[str, Any]) -> None:
    for e in d["events"]:
        console.print(
            f"{e['event_time']}  v{e['version']}  {e['from_state'] or '∅'} → {e['to_state']}  by {e['actor']}: {e['reason']}",
            markup=False,
            highlight=False,
        )
    for x in d["dispatches"]:
        console.print(
            f"dispatch v{x['version']} {x['status']} key {x['idempotency_key'][:12]}… attempts {x['attempts']}",
            markup=False,
            highlight=False,
        )


def _render_diff(d: dict[str, Any]) -> None:
    console.print(f"[bold]{d['draft_id']}[/] v{d['from']} → v{d['to']}", highlight=False)
    for k, ch in d["changes"].items():
        console.print(f"  {k}: {ch['from']} → {ch['to']}", markup=False, highlight=False)
    for s in d["sorties_added"]:
        console.print(f"  + sortie {s['index']} {s['drone']} {s['distance_m']:.0f} m", markup=False, highlight=False)
    for s in d["sorties_removed"]:
        console.print(f"  - sortie {s['index']} {s['drone']} {s['distance_m']:.0f} m", markup=False, highlight=False)
    for s in d["sorties_changed"]:
        console.print(
            f"  ~ sortie {s['sortie']}: {s['from']['distance_m']:.0f} m → {s['to']['distance_m']:.0f} m",
            markup=False,
            highlight=False,
        )
    for f in d["findings_added"]:
        console.print(f"  + finding {f[0]}", markup=False, highlight=False)
    for f in d["findings_removed"]:
        console.print(f"  - finding {f[0]}", markup=False, highlight=False)


def _resume(draft: dict[str, Any], actor: str | None, decision: str, comment: str) -> str | None:
    """Wake a Prefect run waiting on this version (a no-op without ``PREFECT_API_URL``); the ledger decided already."""
    try:
        from flows.orchestration.resume import resume_waiting_run
    except ImportError:
        return None
    run_id = resume_waiting_run(
        draft["draft_id"], draft["version"], plan_hash=draft.get("plan_hash") or "0" * 64, approver=actor or "",
        decision=decision, comment=comment,
    )
    return None if run_id is None else str(run_id)


# --------------------------------------------------------------------------- commands


@app.command("plan")
def plan_cmd(
    text: Annotated[str, typer.Argument(help="The request, e.g. '这块地今天巡一遍消防通道'.")],
    region: Annotated[str | None, typer.Option("--region", help="Region id from the world's regions.")] = None,
    area: Annotated[Path | None, typer.Option("--area", help="A GeoJSON file with the selected area.")] = None,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Extract, plan, evaluate and record a draft (no Prefect server needed)."""
    actor = _actor(as_user)
    args = {"text": text, "region": region, "area": str(area) if area else None, "world": world, "now": now}

    def body() -> dict[str, Any]:
        def work() -> dict[str, Any]:
            with err_console.status("planning…", spinner="dots") if not as_json else _null():
                summary = _service().plan_draft(
                    text=text,
                    region_id=region,
                    area_geojson=area,
                    requested_by=_need_actor(actor),
                    world_dir=world,
                    now=resolve_now(now),
                )
            return summary.to_dict()

        return _audited("plan", actor, args, work)

    run(body, as_json, _render_draft)


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


@app.command("drafts")
def drafts_cmd(
    limit: Annotated[int, typer.Option("--limit", help="At most this many drafts.")] = 50,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """List the latest version of each draft (only your tenants' with --as)."""
    actor = _actor(as_user)

    def body() -> dict[str, Any]:
        return _audited(
            "drafts",
            actor,
            {"limit": limit},
            lambda: {"drafts": [d.to_dict() for d in _service().list_drafts(user=actor, world_dir=world, limit=limit)]},
        )

    run(body, as_json, _render_list)


@app.command("show")
def show_cmd(
    draft_id: DraftArg,
    version: VersionOpt = None,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Show one draft version: sorties, findings, files, approvals, dispatch."""
    _run_on_draft(
        "show", draft_id, {"version": version}, lambda: _service().show_draft(draft_id, version).to_dict(), _render_draft,
        as_json=as_json, world=world, as_user=as_user,
    )


@app.command("diff")
def diff_cmd(
    draft_id: DraftArg,
    v1: Annotated[int, typer.Argument(help="From version.")],
    v2: Annotated[int, typer.Argument(help="To version.")],
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """What changed between two versions of a draft."""
    _run_on_draft(
        "diff", draft_id, {"v1": v1, "v2": v2}, lambda: _service().diff_versions(draft_id, v1, v2), _render_diff,
        as_json=as_json, world=world, as_user=as_user,
    )


@app.command("replan")
def replan_cmd(
    draft_id: DraftArg,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Plan the draft again on the current world: a new version, the old one SUPERSEDED."""
    actor = _actor(as_user)

    def work() -> dict[str, Any]:
        with err_console.status("replanning…", spinner="dots") if not as_json else _null():
            return _service().replan(
                draft_id, requested_by=_need_actor(actor), world_dir=world, now=resolve_now(now)
            ).to_dict()

    run(lambda: _audited("replan", actor, {"draft_id": draft_id, "world": world, "now": now}, work), as_json, _render_draft)


@app.command("approve")
def approve_cmd(
    draft_id: DraftArg,
    version: Annotated[int, typer.Option("--version", "-v", help="The version you reviewed.")],
    plan_hash: Annotated[str | None, typer.Option("--plan-hash", help="The plan hash you reviewed.")] = None,
    comment: Annotated[str, typer.Option("--comment", help="Why.")] = "",
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Approve one version (bound to its plan hash; expires after 30 min)."""
    actor = _actor(as_user)
    args = {"draft_id": draft_id, "version": version, "plan_hash": plan_hash, "comment": comment, "now": now}

    def work() -> dict[str, Any]:
        out = _service().approve(
            draft_id, version, approver=_need_actor(actor), plan_hash=plan_hash, comment=comment,
            now=resolve_now(now), world_dir=world,
        ).to_dict()
        out["resumed_run"] = _resume(out, actor, "approve", comment)
        return out

    run(lambda: _audited("approve", actor, args, work), as_json, _render_draft)


@app.command("reject")
def reject_cmd(
    draft_id: DraftArg,
    version: Annotated[int, typer.Option("--version", "-v", help="The version you reviewed.")],
    reason: Annotated[str, typer.Option("--reason", help="Why it is rejected.")],
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Reject one version, with a reason."""
    actor = _actor(as_user)
    args = {"draft_id": draft_id, "version": version, "reason": reason, "now": now}

    def work() -> dict[str, Any]:
        out = _service().reject(
            draft_id, version, approver=_need_actor(actor), reason=reason, now=resolve_now(now), world_dir=world
        ).to_dict()
        out["resumed_run"] = _resume(out, actor, "reject", reason)
        return out

    run(lambda: _audited("reject", actor, args, work), as_json, _render_draft)


@app.command("dispatch")
def dispatch_cmd(
    draft_id: DraftArg,
    version: VersionOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Run every check; claim and send nothing.")] = False,
    link: Annotated[
        str | None, typer.Option("--link", help="pymavlink connection string overriding the drone's link.")
    ] = None,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Dispatch an approved version: re-check on a fresh world, claim once, upload over MAVLink."""
    actor = _actor(as_user)
    args = {"draft_id": draft_id, "version": version, "dry_run": dry_run, "link": link, "now": now}

    def work() -> dict[str, Any]:
        with err_console.status("dispatching…", spinner="dots") if not (as_json or dry_run) else _null():
            return _service().dispatch(
                draft_id, version, actor=_need_actor(actor), now=resolve_now(now), link=link, dry_run=dry_run,
                world_dir=world,
            ).to_dict()

    run(lambda: _audited("dispatch", actor, args, work), as_json, _render_dispatch)


@app.command("export")
def export_cmd(
    draft_id: DraftArg,
    fmt: Annotated[str, typer.Option("--format", "-f", help="geojson | qgc | waypoints | kml")],
    version: VersionOpt = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Output file (default: next to the draft).")] = None,
    sortie: Annotated[int, typer.Option("--sortie", help="Which sortie for .plan/.waypoints (one vehicle each).")] = 0,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Write a version's mission for a ground station (QGC .plan, .waypoints, GeoJSON, KML)."""
    _run_on_draft(
        "export", draft_id, {"version": version, "format": fmt, "out": str(out) if out else None, "sortie": sortie},
        lambda: _service().export(draft_id, version, fmt, out=out, world_dir=world, sortie=sortie),
        lambda d: console.print(f"wrote {d['path']} ({d['bytes']} bytes, {d['format']})", markup=False, highlight=False),
        as_json=as_json, world=world, as_user=as_user,
    )


@app.command("log")
def log_cmd(
    draft_id: DraftArg,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Every state change of a draft, with actor, time and reason."""
    _run_on_draft(
        "log", draft_id, {}, lambda: _service().draft_log(draft_id), _render_log, as_json=as_json, world=world,
        as_user=as_user,
    )


# --------------------------------------------------------------------------- demo


def _demo_users(world_dir: Path, tenant: str) -> tuple[str, str]:
    """The demo planner and approver: from users.json, a planner and a different approver+dispatcher."""
    world = _service().load_world_at(world_dir)
    planner = next((u.id for u in world.users if "planner" in u.roles and tenant in u.tenants and "*" in u.regions), None)
    approver = next(
        (
            u.id
            for u in world.users
            if {"approver", "dispatcher"} <= u.roles and tenant in u.tenants and u.id != planner
        ),
        None,
    )
    if planner is None or approver is None:
        raise InvalidArgument(f"the world's users.json needs a planner and an approver+dispatcher of {tenant}")
    return planner, approver


def _report_in(world_dir: Path, draft: dict[str, Any], when: datetime) -> list[str]:
    """The demo's vehicles are live: stamp their telemetry time in the demo's own copy of the world.

    Dispatch re-checks telemetry freshness on a fresh snapshot; in the field the
    fleet feed does this, in the demo the simulated vehicles stand in for it.
    """
    path = world_dir / "fleet.json"
    fleet = json.loads(path.read_text(encoding="utf-8"))
    drones = sorted({s["drone"] for s in draft["sorties"]})
    for d in fleet["drones"]:
        if d["id"] in drones:
            d["last_telemetry_at"] = when.isoformat()
    path.write_text(json.dumps(fleet, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return drones


def _start_simulators(summary: dict[str, Any], world_dir: Path) -> tuple[list[Any], dict[str, str]]:
    """One simulated vehicle per drone of the plan (first sorties), each on a loopback port the OS picks."""
    from flows.sim.vehicle import SimVehicle

    world = _service().load_world_at(world_dir)
    sims: list[Any] = []
    links: dict[str, str] = {}
    for drone_id in sorted({s["drone"] for s in summary["sorties"]}):
        drone = world.drone(drone_id)
        dock = world.dock(drone.dock_id)
        sim = SimVehicle("udpin:127.0.0.1:0", drone.autopilot, home=(dock.lat, dock.lon, dock.ground_alt_m))
        sims.append(sim.start())
        links[drone_id] = sim.address  # bound by the simulator itself: no pick-then-bind race
    return sims, links


def _demo_fly(draft: dict[str, Any], sims: list[Any], actor: str, when: datetime, say: Any, as_json: bool,
              recall_at: int | None = None) -> dict[str, Any]:
    """Steps 4 and 5 of the demo: the simulators fly what they hold, the monitor follows, the report is written."""
    from flows.sim.fly import fly_and_report
    from flows.sim.recall_at import RecallAt

    say("[bold]4. fly and monitor[/] (simulated time, 100× faster)", highlight=False)
    recaller = None if not recall_at else RecallAt(draft["draft_id"], recall_at, actor=actor, now=when,
                                                  say=lambda text: say(text, markup=False, highlight=False))
    with err_console.status("flying…", spinner="dots") if not as_json else _null():
        flown = fly_and_report(draft["draft_id"], draft["version"], sims, actor=actor, now=when, speedup=100.0,
                               on_update=recaller)
    if recaller is not None:
        flown["recall"] = recaller.result()
    mon = flown["monitor"]
    say(f"mission {mon.get('state', '?')}: {mon.get('reason') or ''}", markup=False, highlight=False)
    return flown


@app.command("demo")
def demo_cmd(
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check the dispatch but send nothing.")] = False,
    recall_at: Annotated[
        int | None, typer.Option("--recall-at", min=1, help="Recall the mission (RTL) once N items were reached.")
    ] = None,
) -> None:
    """The whole path on the demo world in a fresh folder: plan → findings and map → approve → dispatch → log."""

    def body() -> dict[str, Any]:
        service = _service()
        base = sortie_home()
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        home = base / "demo" / f"{stamp}-{os.getpid()}"
        home.mkdir(parents=True, exist_ok=False)
        os.environ["SORTIE_HOME"] = str(home)
        world_dir = home / "world"  # a private copy: the demo's vehicles update their telemetry in it
        shutil.copytree(resolve_world_dir(world) if world else DEMO_WORLD_DIR, world_dir)
        when = resolve_now(now or os.environ.get("SORTIE_NOW") or DEMO_NOW)
        region_tenant = service.load_world_at(world_dir).region(DEMO_REGION).tenant
        planner, approver = _demo_users(world_dir, region_tenant)
        steps: list[dict[str, Any]] = []
        say = (lambda *a, **k: None) if as_json else console.print

        say(f"[bold]1. plan[/] as {planner}: {DEMO_TEXT} ({DEMO_REGION}, now {when.isoformat()})", highlight=False)
        with err_console.status("planning…", spinner="dots") if not as_json else _null():
            draft = service.plan_draft(
                text=DEMO_TEXT, region_id=DEMO_REGION, requested_by=planner, world_dir=world_dir, now=when
            ).to_dict()
        steps.append({"step": "plan", "draft": draft})
        if not as_json:
            _render_draft(draft)
        if draft["status"] != "DRAFT" or draft["verdict"] == "block":
            say(f"the draft is {draft['status']} ({draft['verdict']}): nothing to approve", highlight=False)
            return {"home": str(home), "steps": steps, "outcome": draft["status"]}
        say(f"map picture: {draft['files'].get('map', '–')}", markup=False, highlight=False)

        say(f"[bold]2. approve[/] as {approver}", highlight=False)
        approved = service.approve(
            draft["draft_id"], draft["version"], approver=approver, plan_hash=draft["plan_hash"],
            comment="demo approval", now=when, world_dir=world_dir,
        ).to_dict()
        steps.append({"step": "approve", "status": approved["status"]})
        say(f"draft is {approved['status']}", highlight=False)

        say("[bold]3. dispatch[/]", highlight=False)
        sims = None if dry_run else _start_simulators(draft, world_dir)
        fresh = _report_in(world_dir, draft, when)
        say(f"the demo's vehicles report in: telemetry of {', '.join(fresh)} at {when.isoformat()}", markup=False,
            highlight=False)
        try:
            if sims is None:
                if not dry_run:
                    say("(no vehicle simulator in this build: dry run)", highlight=False)
                result = service.dispatch(
                    draft["draft_id"], draft["version"], actor=approver, now=when, dry_run=True, world_dir=world_dir
                ).to_dict()
            else:
                links = sims[1]
                say(f"to the built-in vehicle simulator: {', '.join(f'{k} {v}' for k, v in links.items())}",
                    highlight=False)
                with err_console.status("uploading…", spinner="dots") if not as_json else _null():
                    result = service.dispatch(
                        draft["draft_id"], draft["version"], actor=approver, now=when,
                        link=links if len(links) > 1 else next(iter(links.values())), world_dir=world_dir,
                        timeout_s=20.0,
                    ).to_dict()
                if not as_json:
                    _render_dispatch(result)
                if result["status"] == "ACKED":
                    flown = _demo_fly(draft, sims[0], approver, when, say, as_json, recall_at)
                    steps.append({"step": "dispatch", "result": result})
                    if flown.get("recall") is not None:
                        steps.append({"step": "recall", "result": flown["recall"]})
                    steps.append({"step": "monitor", "result": flown["monitor"]})
                    steps.append({"step": "report", "files": flown["report"]["files"]})
        finally:
            if sims is not None:
                for sim in sims[0]:
                    sim.stop()
        if not any(st["step"] == "dispatch" for st in steps):
            steps.append({"step": "dispatch", "result": result})
            if not as_json and sims is None:
                _render_dispatch(result)

        log = service.draft_log(draft["draft_id"])
        steps.append({"step": "log", "events": log["events"]})
        if not as_json:
            say("[bold]5. what happened[/]", highlight=False)
            _render_log(log)
            report = next((st for st in steps if st["step"] == "report"), None)
            if report is not None:
                say("[bold]6. report[/]", highlight=False)
                console.print(Path(report["files"]["report"]).read_text(encoding="utf-8"), markup=False, highlight=False)
            say(f"ledger and files: {home}", markup=False, highlight=False)
        monitored = next((st["result"] for st in steps if st["step"] == "monitor"), None)
        outcome = monitored["state"] if monitored else result["status"]  # SUCCEEDED/ABORTED once flown
        return {"home": str(home), "draft_id": draft["draft_id"], "steps": steps, "outcome": outcome}

    run(lambda: _audited("demo", _actor(as_user), {"world": world, "now": now, "dry_run": dry_run, "recall_at": recall_at},
                         body), as_json,
        lambda d: None)
