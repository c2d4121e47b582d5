"""The workflow commands: plan (and plan --continue), request, drafts, show, diff, replan, approve, reject, dispatch,
export, log.

Each command parses its options, asks for its authority once
(``flows.authority.choice.authority``: the embedded one on the local ledger, or
``sortie server`` when ``SORTIE_SERVER`` is set), calls one action and prints a
short summary (``--json``: the same data as JSON). Both authorities return the
same dicts and raise the same coded errors, so output and exit codes do not
depend on the mode. In the embedded mode every command is audited in the
ledger; behind a server the server audits. An approval or a rejection wakes
the Prefect run waiting on the version — the authority does it, whoever
decided. Planning needs no Prefect server.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from flows.authority.interface import parse_links
from flows.cli.app import AsOpt, DraftArg, JsonOpt, NowOpt, RulesOpt, WorldOpt, app, console, err_console, run
from flows.cli.render import render_diff, render_dispatch, render_draft, render_list, render_log, render_request
from flows.context import resolve_now
from planner.errors import InvalidArgument

if TYPE_CHECKING:
    from flows.authority import Authority

__all__ = ["VersionOpt"]

VersionOpt = Annotated[int | None, typer.Option("--version", "-v", help="Draft version (default: the latest).")]
BudgetOpt = Annotated[float | None, typer.Option(
    "--budget-s", help="The planner's deadline in seconds, from the start of planning (default 20; SORTIE_PLAN_BUDGET_S).")]
SeedOpt = Annotated[int | None, typer.Option("--seed", help="The search's seed (SORTIE_PLAN_SEED).")]
IterationsOpt = Annotated[int | None, typer.Option(
    "--iterations", help="Cap the search's work; with --seed a plan that ends on its cap repeats (SORTIE_PLAN_ITERATIONS).")]


def _plan_budget(budget_s: float | None, seed: int | None, iterations: int | None, local: bool = False) -> None:
    """``--budget-s/--seed/--iterations`` for this process (``flows.usecases.common.planning_budget``).

    Behind ``sortie server`` the server's own budget plans, so they are refused there, never ignored
    (``local``: a what-if, which plans in this process either way).
    """
    import os

    given = {"SORTIE_PLAN_BUDGET_S": budget_s, "SORTIE_PLAN_SEED": seed, "SORTIE_PLAN_ITERATIONS": iterations}
    given = {k: v for k, v in given.items() if v is not None}
    if given and not local and os.environ.get("SORTIE_SERVER", "").strip():
        from flows.errors import OverrideRefused

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


def _go(command: str, work: Callable[[Authority], dict[str, Any]], *, as_json: bool,
        render: Callable[[dict[str, Any]], None], as_user: str | None, world: str | None, now: str | None,
        rules: str | None = None) -> None:
    """Ask for the authority, run the action, print the result or the coded error."""

    def body() -> dict[str, Any]:
        from flows.authority.choice import authority

        return work(authority(f"sortie {command}", as_user=as_user, world=world, now=now, rules=rules))

    run(body, as_json, render)


@app.command("plan")
def plan_cmd(
    text: Annotated[str | None, typer.Argument(
        help="The request, e.g. '这块地今天巡一遍消防通道' (none with --continue).")] = None,
    region: Annotated[str | None, typer.Option("--region", help="Region id from the world's regions.")] = None,
    area: Annotated[Path | None, typer.Option("--area", help="A GeoJSON file with the selected area.")] = None,
    what_if: Annotated[bool, typer.Option(
        "--what-if", help="Plan on this world and time without recording anything (works with or without a server)."
    )] = False,
    coverage_target: Annotated[float | None, typer.Option(
        "--coverage-target",
        help="Area surveys: the share of the free area the sweeps must image, 0.5-1.0 (default 0.99; e.g. 0.995).",
    )] = None,
    continue_id: Annotated[str | None, typer.Option(
        "--continue", help="Answer the open request ID (printed when a request needs clarification) and plan it.",
    )] = None,
    answers: Annotated[list[str] | None, typer.Option(
        "--answer", help="With --continue: one answer per open question, in order; or QUESTION_ID=TEXT. Repeatable.",
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
    """Extract, plan inside the rule set's limits, evaluate and record a draft (no Prefect server needed).

    A request that needs clarification is kept open: its id and questions are printed (exit 2,
    NEEDS_CLARIFICATION); `sortie plan --continue ID --answer TEXT …` answers them and plans it."""
    if continue_id is not None or answers:
        _continue(continue_id, answers or [], text=text, region=region, area=area, what_if=what_if,
                  coverage_target=coverage_target, as_json=as_json, world=world, now=now, as_user=as_user, rules=rules,
                  budget=(budget_s, seed, iterations))
        return
    if not text:
        def refused() -> dict[str, Any]:
            raise InvalidArgument("give the request text, or answer an open request: --continue ID --answer TEXT")

        run(refused, as_json)
        return
    if what_if:
        def body() -> dict[str, Any]:
            import os

            from flows.authority.whatif import what_if as plan_what_if

            _plan_budget(budget_s, seed, iterations, local=True)
            who = as_user or os.environ.get("SORTIE_USER")
            if not who:
                raise InvalidArgument("who would plan it? give --as USER (a what-if records nothing)")
            area_doc = None if area is None else _area_doc(area)
            with _spinner("planning (what-if)…", as_json):
                return plan_what_if(text=text, region_id=region, area=area_doc, requested_by=who, world=world,
                                    now=resolve_now(now), rules=rules, coverage_target=coverage_target)

        run(body, as_json, render_draft)
        return

    def work(a: Authority) -> dict[str, Any]:
        _plan_budget(budget_s, seed, iterations)
        with _spinner("planning…", as_json):
            return a.plan(text, region_id=region, area=None if area is None else _area_doc(area),
                          coverage_target=coverage_target)

    _go("plan", work, as_json=as_json, render=render_draft, as_user=as_user, world=world, now=now, rules=rules)


def _continue(request_id: str | None, answers: list[str], *, text: str | None, region: str | None,
              area: Path | None, what_if: bool, coverage_target: float | None, as_json: bool, world: str | None,
              now: str | None, as_user: str | None, rules: str | None,
              budget: tuple[float | None, int | None, int | None] = (None, None, None)) -> None:
    """``--continue ID --answer …``: the open request's answers, then the same request planned (or its follow-ups)."""
    def work(a: Authority) -> dict[str, Any]:
        _plan_budget(*budget)
        given = {"TEXT": text, "--region": region, "--area": area, "--what-if": what_if or None,
                 "--coverage-target": coverage_target}
        extra = sorted(k for k, v in given.items() if v is not None)
        if request_id is None or extra:
            raise InvalidArgument("--continue ID --answer TEXT [--answer TEXT …] answers an open request; it takes no "
                                  + (", ".join(extra) if extra else "request without --continue"))
        with _spinner("planning…", as_json):
            return a.answer(request_id, answers)

    _go("plan --continue", work, as_json=as_json, render=render_draft, as_user=as_user, world=world, now=now,
        rules=rules)


@app.command("request")
def request_cmd(
    request_id: Annotated[str, typer.Argument(help="Open request id (r-…).")],
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """Show an open request: its questions, every answer with who gave it and when, the draft it planned."""
    _go("request", lambda a: a.request(request_id), as_json=as_json, render=render_request, as_user=as_user,
        world=world, now=now)


def _area_doc(area: Path) -> dict[str, Any]:
    """The area file's GeoJSON object (read here, so a server client sends the GeoJSON, not a path on this machine);
    a file that is not JSON is named as such, never taken for the name of another file."""
    import json

    p = Path(area).expanduser()
    if not p.is_file():
        raise InvalidArgument(f"area file {str(p)!r} does not exist")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidArgument(f"area file {str(p)!r} is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise InvalidArgument(f"area file {str(p)!r} holds a JSON {type(doc).__name__}, not a GeoJSON object")
    return doc


@app.command("drafts")
def drafts_cmd(
    limit: Annotated[int, typer.Option("--limit", help="At most this many drafts.")] = 50,
    as_json: JsonOpt = False,
    world: WorldOpt = None,
    now: NowOpt = None,
    as_user: AsOpt = None,
) -> None:
    """List the latest version of each draft (only your tenants' with --as, or with a server token)."""
    _go("drafts", lambda a: a.drafts(limit), as_json=as_json, render=render_list,
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
    _go("show", lambda a: a.show(draft_id, version), as_json=as_json,
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
    _go("diff", lambda a: a.diff(draft_id, v1, v2), as_json=as_json,
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

    def work(a: Authority) -> dict[str, Any]:
        _plan_budget(budget_s, seed, iterations)
        with _spinner("replanning…", as_json):
            return a.replan(draft_id)

    _go("replan", work, as_json=as_json,
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
    _go("approve", lambda a: a.approve(draft_id, version, plan_hash=plan_hash, comment=comment), as_json=as_json, render=render_draft, as_user=as_user, world=world, now=now)


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
    _go("reject", lambda a: a.reject(draft_id, version, reason=reason), as_json=as_json, render=render_draft, as_user=as_user, world=world, now=now)


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

    def work(a: Authority) -> dict[str, Any]:
        links = parse_links(link)  # the audit records which vehicle each drone's mission went to
        with _spinner("dispatching…", as_json or dry_run):
            return a.dispatch(draft_id, version, link=links, dry_run=dry_run)

    _go("dispatch", work, as_json=as_json, render=render_dispatch, as_user=as_user, world=world, now=now,
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
    _go("export", lambda a: a.export(draft_id, fmt, version=version, out=out, sortie=sortie), as_json=as_json,
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
    _go("log", lambda a: a.log(draft_id), as_json=as_json, render=render_log,
        as_user=as_user, world=world, now=now)
