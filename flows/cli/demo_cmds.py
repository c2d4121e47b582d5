"""``sortie demo``: the whole path on the demo world in a fresh folder, offline, in-process.

the fleet → plan → findings and map → approve → dispatch → launch (pre-flight
checks, then the autopilot's own arm-and-start sequence: the simulators, like
real autopilots, wait on the ground until then) → fly and monitor → report.
It asks the embedded authority (``flows.authority``) on a home of its own,
whatever ``SORTIE_SERVER`` says; every result says ``"mode": "local"``.

The fleet is live, as in ``sortie server``: one simulated vehicle per drone of
the demo's world copy, and a vehicle hub whose state the authority plans,
dispatches, launches and follows by (``flows.cli.demo_fleet``): status,
battery and telemetry time come from the vehicles, never from a rewritten file.
"""

from __future__ import annotations

import os
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from flows.cli.app import AsOpt, JsonOpt, NowOpt, WorldOpt, app, console, err_console, run
from flows.cli.demo_fleet import DemoFleet, start_demo_fleet, vehicle_options
from flows.cli.render import render_dispatch, render_draft, render_launch, render_log
from flows.context import DEMO_WORLD_DIR, resolve_now, resolve_world_dir, sortie_home
from planner.errors import InvalidArgument, SortieError

if TYPE_CHECKING:
    from flows.authority import Authority

__all__ = ["DEMO_TEXT", "DEMO_REGION", "DEMO_NOW"]

DEMO_TEXT = "这块地今天巡一遍消防通道"
DEMO_REGION = "region-1001"
DEMO_NOW = "2026-11-29T07:00:00+02:00"  # the demo world's reference time (data/demo-helsinki/README.md)


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _demo_users(world: Any, tenant: str) -> tuple[str, str]:
    """The demo planner and approver: from users.json, a planner and a different approver+dispatcher."""
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


def _demo_fly(a: Authority, draft: dict[str, Any], fleet: DemoFleet, actor: str, say: Any,
              as_json: bool, recall_at: int | None = None) -> dict[str, Any]:
    """Steps 5 and 6 of the demo, asked of the authority ``a``: the launch (``sortie launch``'s use case:
    pre-flight checks from each vehicle, then its arm-and-start sequence), then the flight in simulated time
    while the monitor follows it through the same link, and the report; with ``recall_at`` the mission is
    recalled (``sortie recall``'s use case) once that many items were reached."""
    from flows.sim.fly import attach_flights
    from flows.sim.recall_at import RecallAt

    say(f"[bold]5. launch[/] as {actor}: pre-flight checks from each vehicle, then its own arm-and-start sequence",
        highlight=False)
    recaller = None if not recall_at else RecallAt(recall_at, lambda why: a.recall(draft["draft_id"], reason=why),
                                                  say=lambda text: say(text, markup=False, highlight=False))

    def launched(result: dict[str, Any]) -> None:
        if not as_json:
            if "error" in result:
                say(f"launch refused: {result['error']['code']}: {result['error']['message']}", markup=False,
                    highlight=False)
            else:
                render_launch(result)
        say("[bold]6. fly and monitor[/] (simulated time, 100× faster)", highlight=False)

    flying = {s["drone"]: fleet.sims[s["drone"]] for s in draft["sorties"] if s["drone"] in fleet.sims}
    # they wait on the ground for the launch, each from the charge its vehicle reports
    attach_flights(flying, fleet.world, speedup=100.0, charge_pct=fleet.charges())
    with err_console.status("launching and flying…", spinner="dots") if not as_json else _null():
        mon = a.monitor(draft["draft_id"], draft["version"], launch_as=actor, on_update=recaller,
                        on_launched=launched)
        report = a.report(draft["draft_id"], draft["version"])
    flown = {"launch": mon.pop("launch", None), "monitor": mon, "report": report}
    if recaller is not None:
        flown["recall"] = recaller.result()
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
    vehicle_battery: Annotated[list[str] | None, typer.Option(
        "--vehicle-battery", metavar="DRONE=PCT",
        help="The simulated vehicle of DRONE reports PCT % instead of fleet.json's battery (repeatable).")] = None,
    vehicle_off: Annotated[list[str] | None, typer.Option(
        "--vehicle-off", metavar="DRONE", help="The simulated vehicle of DRONE is switched off (repeatable).")] = None,
) -> None:
    """The whole path on the demo world in a fresh folder, its fleet live from simulated vehicles: fleet → plan →
    findings and map → approve → dispatch → launch → fly and monitor → log → report."""

    demo_home: list[Path] = []  # the demo's own home, once made: its ledger records the demo command too

    def body() -> dict[str, Any]:
        from flows.world_folder import load_world  # the world model: only when the demo runs (not for --help)

        source = resolve_world_dir(world) if world else DEMO_WORLD_DIR
        when = resolve_now(now or os.environ.get("SORTIE_NOW") or DEMO_NOW)
        charges, off = vehicle_options(vehicle_battery, vehicle_off, load_world(source))
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
        home = sortie_home() / "demo" / f"{stamp}-{os.getpid()}"
        home.mkdir(parents=True, exist_ok=False)
        demo_home.append(home)
        world_dir = home / "world"  # a private copy: the demo's ledger names it; nothing rewrites it
        shutil.copytree(source, world_dir)
        the_world = load_world(world_dir)
        planner, approver = _demo_users(the_world, the_world.region(DEMO_REGION).tenant)
        say = (lambda *a, **k: None) if as_json else console.print
        # the fleet first: one simulated vehicle per drone, one held link per drone, on the authority's clock
        # (the demo's fixed time: its weather and airspace samples are for it), never the wall clock
        fleet = start_demo_fleet(the_world, home, now=lambda: when, battery_pct=charges, off=off)
        try:
            return _demo_steps(fleet, home, world_dir, when, planner, approver, say)
        finally:
            fleet.stop()

    def _demo_steps(fleet: DemoFleet, home: Path, world_dir: Path, when: datetime, planner: str, approver: str,
                    say: Any) -> dict[str, Any]:
        from flows.authority.choice import authority
        from flows.cli.fleet_cmds import render_fleet

        # the embedded authority on the demo's own home, whatever SORTIE_SERVER says: one per person acting, both
        # judging the fleet by the one hub
        as_planner, as_approver = (authority("sortie demo", as_user=who, world=world_dir, now=when, home=home,
                                             hub=fleet.hub) for who in (planner, approver))
        steps: list[dict[str, Any]] = []

        say(f"[bold]1. the fleet[/] as {planner} sees it: one simulated vehicle per drone, live over MAVLink on "
            "127.0.0.1", highlight=False)
        with err_console.status("waiting for the vehicles…", spinner="dots") if not as_json else _null():
            fleet.ready()
        seen = as_planner.fleet()
        steps.append({"step": "fleet", "result": seen})
        if not as_json:
            render_fleet(seen)

        say(f"[bold]2. plan[/] as {planner}: {DEMO_TEXT} ({DEMO_REGION}, now {when.isoformat()})", highlight=False)
        with err_console.status("planning…", spinner="dots") if not as_json else _null():
            draft = as_planner.plan(DEMO_TEXT, region_id=DEMO_REGION)
        steps.append({"step": "plan", "draft": draft})
        if not as_json:
            render_draft(draft)
        if draft["status"] != "DRAFT" or draft["verdict"] == "block":
            say(f"the draft is {draft['status']} ({draft['verdict']}): nothing to approve", highlight=False)
            return {"home": str(home), "steps": steps, "outcome": draft["status"], "mode": "local",
                    "identity": "asserted"}
        say(f"map picture: {draft['files'].get('map', '–')}", markup=False, highlight=False)

        say(f"[bold]3. approve[/] as {approver}", highlight=False)
        approved = as_approver.approve(draft["draft_id"], draft["version"], plan_hash=draft["plan_hash"],
                                       comment="demo approval")
        steps.append({"step": "approve", "status": approved["status"]})
        say(f"draft is {approved['status']}", highlight=False)

        say("[bold]4. dispatch[/]", highlight=False)
        links = {d: fleet.links[d] for d in sorted({s["drone"] for s in draft["sorties"]})}
        if dry_run:
            result = as_approver.dispatch(draft["draft_id"], draft["version"], dry_run=True,
                                          link=links if len(links) > 1 else next(iter(links.values())))
            steps.append({"step": "dispatch", "result": result})
            if not as_json:
                render_dispatch(result)
        else:
            say(f"to the simulated vehicles, through the links the hub holds: "
                f"{', '.join(f'{k} {v}' for k, v in links.items())}", markup=False, highlight=False)
            with err_console.status("uploading…", spinner="dots") if not as_json else _null():
                result = as_approver.dispatch(draft["draft_id"], draft["version"],
                                              link=links if len(links) > 1 else next(iter(links.values())))
            if not as_json:
                render_dispatch(result)
            steps.append({"step": "dispatch", "result": result})
            if result["status"] == "ACKED":
                flown = _demo_fly(as_approver, draft, fleet, approver, say, as_json, recall_at)
                steps.append({"step": "launch", "result": flown.get("launch")})
                if flown.get("recall") is not None:
                    steps.append({"step": "recall", "result": flown["recall"]})
                steps.append({"step": "monitor", "result": flown["monitor"]})
                steps.append({"step": "report", "files": flown["report"]["files"]})

        log = as_approver.log(draft["draft_id"])
        steps.append({"step": "log", "events": log["events"]})
        if not as_json:
            say("[bold]7. what happened[/]", highlight=False)
            render_log(log)
            report = next((st for st in steps if st["step"] == "report"), None)
            if report is not None:
                say("[bold]8. report[/]", highlight=False)
                console.print(Path(report["files"]["report"]).read_text(encoding="utf-8"), markup=False, highlight=False)
            say(f"ledger and files: {home}", markup=False, highlight=False)
        monitored = next((st["result"] for st in steps if st["step"] == "monitor"), None)
        outcome = monitored["state"] if monitored else result["status"]  # SUCCEEDED/ABORTED once flown
        return {"home": str(home), "draft_id": draft["draft_id"], "steps": steps, "outcome": outcome,
                "mode": "local", "identity": "asserted", "fleet_source": seen["source"]}

    def audited() -> dict[str, Any]:
        started, t0, code = datetime.now(timezone.utc), time.perf_counter(), "OK"
        try:
            return body()
        except SortieError as exc:
            code = exc.code
            raise
        finally:
            try:
                from flows.authority.host import audit_command

                audit_command(demo_home[0] if demo_home else sortie_home(), actor=as_user or os.environ.get("SORTIE_USER") or None, command="demo",
                              args={"world": world, "now": now, "dry_run": dry_run, "recall_at": recall_at,
                                    "vehicle_battery": vehicle_battery, "vehicle_off": vehicle_off},
                              code=code, started=started, duration_s=time.perf_counter() - t0)
            except SortieError:
                pass

    run(audited, as_json, lambda d: None)
