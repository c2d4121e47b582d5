"""The workflow commands: plan, drafts, show, diff, replan, approve, reject, dispatch, export, log.

Each command parses its options, picks its backend once (``flows.cli.backend``:
the local ledger in-process, or ``sortie server`` when ``SORTIE_SERVER`` is
set), calls one operation and prints a short summary (``--json``: the same
data as JSON). Both backends return the same dicts and raise the same coded
errors, so output and exit codes do not depend on the mode. In local mode
every command is audited in the ledger; behind a server the server audits.
Planning needs no Prefect server.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, RulesOpt, WorldOpt, app, console, err_console, run
from flows.cli.backend import Backend, LocalBackend, backend
from flows.cli.render import render_diff, render_dispatch, render_draft, render_list, render_log
from flows.context import resolve_now
from flows.vehicle.linkspec import parse_links
from planner.errors import InvalidArgument, SortieError

__all__ = ["VersionOpt"]

VersionOpt = Annotated[int | None, typer.Option("--version", "-v", help="Draft version (default: the latest).")]
BudgetOpt = Annotated[float | None, typer.Option(
    "--budget-s", help="The planner's deadline in seconds, from the start of planning (default 20; SORTIE_PLAN_BUDGET_S).")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="The search's seed (SORTIE_PLAN_SEED).")]
IterationsOpt = Annotated[int | None, typer.Option(
    "--iterations", help="Cap the search's work; with --seed a plan that ends on its cap repeats (SORTIE_PLAN_ITERATIONS).")]


def _plan_budget(budget_s: float | None, seed: int | None, iterations: int | None, local: bool = False) -> None:
    """``--budget-s/--seed/--iterations`` for this process (``flows.usecases.planning.planning_budget``).

    Behind ``sortie server`` the server's own budget plans, so they are refused there, never ignored
    (``local``: a what-if, which plans in this process either way).
    """
    import os

    given = {"SORTIE_PLAN_BUDGET_S": budget_s, "SORTIE_PLAN_SEED": seed, "SORTIE_PLAN_ITERATIONS": iterations}
    given = {k: v for k, v in given.items() if v is not None}
    if given and not local and os.environ.get("SORTIE_SERVER", "").strip():
        from planner.errors import OverrideRefused

        raise OverrideRefused("--budget-s/--seed/--iterations with SORTIE_SERVER set: the server plans with its "
                              "own budget (its SORTIE_PLAN_BUDGET_S)", details={"refused": sorted(given)})
    os.environ.update({k: str(v) for k, v in given.items()})


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _spinner(text: str, quiet: bool) -> Any:
    return _null() if quiet else err_console.status(text, spinner="dots")


def _go(command: str, args: dict[str, Any], work: Callable[[Backend], dict[str, Any]], *, as_json: bool,
        render: Callable[[dict[str, Any]], None], as_user: str | None, world: str | None, now: str | None,
        rules: str | None = None) -> None:
    """Pick the backend, run the operation (audited locally), print the result or the coded error."""

    def body() -> dict[str, Any]:
        b = backend(command=command, as_user=as_user, world=world, now=now, rules=rules)
        if isinstance(b, LocalBackend):
            return b.audited(command, args, lambda: work(b))
        return work(b)

    run(body, as_json, render)


def _resume(draft: dict[str, Any], actor: str | None, decision: str, comment: str) -> str | None:
    """Wake a Prefect run waiting on this version (a no-op without ``PREFECT_API_URL``); the ledger decided already
    (in server mode: the server did), so the woken run only re-reads the draft's state."""
    try:
        from flows.orchestration.resume import resume_waiting_run
    except ImportError:
        return None
    run_id = resume_waiting_run(
        draft["draft_id"], draft["version"], plan_hash=draft.get("plan_hash") or "0" * 64, approver=actor or "",
        decision=decision, comment=comment,
    )
    return None if run_id is None else str(run_id)


def _decide(b: Backend, decision: str, draft_id: str, version: int, comment: str,
            call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Record the decision, then wake the waiting run. A decision that came after the version's deadline is
    refused and the ledger EXPIRED the version: the waiting run is woken too, so it ends EXPIRED at once."""
    try:
        out = call()
    except SortieError as exc:
        if isinstance(exc.details, dict) and exc.details.get("state") == "EXPIRED":
            _resume({"draft_id": draft_id, "version": version}, b.actor_id if isinstance(b, LocalBackend) else None,
                    "reject", f"expired: {exc.message}"[:500])
        raise
    out["resumed_run"] = _resume(out, _decided_by(b, out), decision, comment)
    return out


def _decided_by(b: Backend, out: dict[str, Any]) -> str | None:
    """Who decided: the asserted user locally, the approver the server recorded otherwise."""
    if isinstance(b, LocalBackend):
        return b.actor_id
    approvals = (out.get("notes") or {}).get("approvals") or []
    return approvals[-1]["approver"] if approvals else None


@app.command("plan")
def plan_cmd(
    text: Annotated[str, typer.Argument(help="The request, e.g. '这块地今天巡一遍消防通道'.")],
    region: Annotated[str | None, typer.Option("--region", help="Region id from the world's regions.")] = None,
    area: Annotated[Path | None, typer.Option("--area", help="A GeoJSON file with the selected area.")] = None,
    what_if: Annotated[bool, typer.Option(
        "--what-if", help="Plan on this world and time without recording anything (works with or without a server)."
    )] = False,
    coverage_target: Annotated[float | None, typer.Option(
        "--coverage-target",
        help="Area surveys: the share of the free area the sweeps must image, 0.5-1.0 (default 0.99; e.g. 0.995).",
    )] = None,
    budget_s: BudgetOpt = None,
    seed: SeedOpt = None,
    iterations: IterationsOpt = None,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
    rules: RulesOpt = None,
) -> None:
    """Extract, plan inside the rule set's limits, evaluate and record a draft (no Prefect server needed)."""
    args = {"text": text, "region": region, "area": str(area) if area else None, "world": world, "now": now,
            "rules": rules, "coverage_target": coverage_target}
    if what_if:
        def body() -> dict[str, Any]:
            import os

            from flows.usecases import service

            _plan_budget(budget_s, seed, iterations, local=True)
            who = as_user or os.environ.get("SORTIE_USER")
            if not who:
                raise InvalidArgument("who would plan it? give --as USER (a what-if records nothing)")
            area_doc = None if area is None else Path(area).read_text(encoding="utf-8") if Path(area).is_file() else area
            with _spinner("planning (what-if)…", as_json):
                out = service.what_if(text=text, region_id=region, area_geojson=area_doc, requested_by=who,
                                      world_dir=world, now=resolve_now(now), rules_path=rules,
                                      coverage_target=coverage_target)
            return {**out, "mode": "what-if", "identity": "asserted"}

        run(body, as_json, render_draft)
        return

    def work(b: Backend) -> dict[str, Any]:
        _plan_budget(budget_s, seed, iterations)
        with _spinner("planning…", as_json):
            return b.plan(text, region, None if area is None else _area_doc(area), coverage_target)

    _go("plan", args, work, as_json=as_json, render=render_draft, as_user=as_user, world=world, now=now, rules=rules)


def _area_doc(area: Path) -> str:
    """The area file's text (read here, so a server client sends the GeoJSON, not a path on this machine)."""
    p = Path(area).expanduser()
    if not p.is_file():
        raise InvalidArgument(f"area file {str(p)!r} does not exist")
    return p.read_text(encoding="utf-8")


@app.command("drafts")
def drafts_cmd(
    limit: Annotated[int, typer.Option("--limit", help="At most this many drafts.")] = 50,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """List the latest version of each draft (only your tenants' with --as, or with a server token)."""
    _go("drafts", {"limit": limit}, lambda b: b.drafts(limit), as_json=as_json, render=render_list,
        as_user=as_user, world=world, now=now)


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
    _go("show", {"draft_id": draft_id, "version": version}, lambda b: b.show(draft_id, version), as_json=as_json,
        render=render_draft, as_user=as_user, world=world, now=now)


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
    _go("diff", {"draft_id": draft_id, "v1": v1, "v2": v2}, lambda b: b.diff(draft_id, v1, v2), as_json=as_json,
        render=render_diff, as_user=as_user, world=world, now=now)


@app.command("replan")
def replan_cmd(
    draft_id: DraftArg,
    budget_s: BudgetOpt = None,
    seed: SeedOpt = None,
    iterations: IterationsOpt = None,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
    rules: RulesOpt = None,
) -> None:
    """Plan the draft again on the current world: a new version, the old one SUPERSEDED."""

    def work(b: Backend) -> dict[str, Any]:
        _plan_budget(budget_s, seed, iterations)
        with _spinner("replanning…", as_json):
            return b.replan(draft_id)

    _go("replan", {"draft_id": draft_id, "world": world, "now": now, "rules": rules}, work, as_json=as_json,
        render=render_draft, as_user=as_user, world=world, now=now, rules=rules)


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
    """Approve one version (bound to its plan hash; expires after the policy's window, 30 min by default)."""
    args = {"draft_id": draft_id, "version": version, "plan_hash": plan_hash, "comment": comment, "now": now}

    def work(b: Backend) -> dict[str, Any]:
        return _decide(b, "approve", draft_id, version, comment, lambda: b.approve(draft_id, version, plan_hash, comment))

    _go("approve", args, work, as_json=as_json, render=render_draft, as_user=as_user, world=world, now=now)


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
    args = {"draft_id": draft_id, "version": version, "reason": reason, "now": now}

    def work(b: Backend) -> dict[str, Any]:
        return _decide(b, "reject", draft_id, version, reason, lambda: b.reject(draft_id, version, reason))

    _go("reject", args, work, as_json=as_json, render=render_draft, as_user=as_user, world=world, now=now)


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
    args = {"draft_id": draft_id, "version": version, "dry_run": dry_run, "link": link, "now": now, "rules": rules}
    if link:
        try:
            args["link"] = parse_links(link)  # the audit records which vehicle each drone's mission went to
        except SortieError:
            pass  # recorded as given; the command fails below with the parse error

    def work(b: Backend) -> dict[str, Any]:
        links = parse_links(link)
        with _spinner("dispatching…", as_json or dry_run):
            return b.dispatch(draft_id, version, links, dry_run)

    _go("dispatch", args, work, as_json=as_json, render=render_dispatch, as_user=as_user, world=world, now=now,
        rules=rules)


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
    args = {"draft_id": draft_id, "version": version, "format": fmt, "out": str(out) if out else None, "sortie": sortie}
    _go("export", args, lambda b: b.export(draft_id, version, fmt, out, sortie), as_json=as_json,
        render=lambda d: console.print(f"wrote {d['path']} ({d['bytes']} bytes, {d['format']})", markup=False,
                                       highlight=False),
        as_user=as_user, world=world, now=now)


@app.command("log")
def log_cmd(
    draft_id: DraftArg,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Every state change of a draft, with actor, time and reason."""
    _go("log", {"draft_id": draft_id}, lambda b: b.log(draft_id), as_json=as_json, render=render_log,
        as_user=as_user, world=world, now=now)
