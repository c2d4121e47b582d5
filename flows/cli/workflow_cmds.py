"""The workflow commands: plan, drafts, show, diff, replan, approve, reject, dispatch, export, log.

Each command parses its options, calls the ``flows.usecases.service`` function the
Prefect flows call too, and prints a short summary (``--json``: the same data
as JSON). Every command is audited in the ledger (who, what, a hash and a
redacted copy of the arguments, the result code, how long it took). Planning
needs no Prefect server.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, RulesOpt, WorldOpt, app, console, err_console, run
from flows.context import resolve_now
from flows.vehicle.linkspec import parse_links
from planner.errors import InvalidArgument, SortieError

__all__: list[str] = []  # commands register themselves on ``flows.cli.app.app``; ``flows.cli.demo_cmds`` reuses the helpers

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
            from flows.ledger import open_ledger
            from planner.errors import LedgerUnavailable

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
    rules: RulesOpt = None,
) -> None:
    """Extract, plan inside the rule set's limits, evaluate and record a draft (no Prefect server needed)."""
    actor = _actor(as_user)
    args = {"text": text, "region": region, "area": str(area) if area else None, "world": world, "now": now,
            "rules": rules}

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
                    rules_path=rules,
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
    rules: RulesOpt = None,
) -> None:
    """Plan the draft again on the current world: a new version, the old one SUPERSEDED."""
    actor = _actor(as_user)

    def work() -> dict[str, Any]:
        with err_console.status("replanning…", spinner="dots") if not as_json else _null():
            return _service().replan(
                draft_id, requested_by=_need_actor(actor), world_dir=world, now=resolve_now(now), rules_path=rules
            ).to_dict()

    args = {"draft_id": draft_id, "world": world, "now": now, "rules": rules}
    run(lambda: _audited("replan", actor, args, work), as_json, _render_draft)


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
        list[str] | None,
        typer.Option(
            "--link",
            help="Override a drone's link: DRONE=CONN (repeat per drone), or one pymavlink CONN for a one-drone plan.",
        ),
    ] = None,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
    rules: RulesOpt = None,
) -> None:
    """Dispatch an approved version: re-check on a fresh world, claim once, upload over MAVLink."""
    actor = _actor(as_user)
    links = None
    args = {"draft_id": draft_id, "version": version, "dry_run": dry_run, "link": link, "now": now, "rules": rules}

    def work() -> dict[str, Any]:
        with err_console.status("dispatching…", spinner="dots") if not (as_json or dry_run) else _null():
            return _service().dispatch(
                draft_id, version, actor=_need_actor(actor), now=resolve_now(now), link=links, dry_run=dry_run,
                world_dir=world, rules_path=rules,
            ).to_dict()

    def parsed() -> dict[str, Any]:
        nonlocal links
        links = parse_links(link)
        return work()

    if link:
        try:
            args["link"] = parse_links(link)  # the audit records which vehicle each drone's mission went to
        except SortieError:
            pass  # recorded as given; the command fails below with the parse error
    run(lambda: _audited("dispatch", actor, args, parsed), as_json, _render_dispatch)



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
