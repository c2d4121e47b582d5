"""Use cases that read: drafts of a user's tenants, one version, a diff, the log, an export.

Visibility is by tenant: a user sees only drafts of their tenants. In local
mode a draft of another tenant is ``Forbidden`` (the operator asserted who
they are and is told why); behind the server it is ``NotFound``, so a token
of one tenant cannot even learn which draft ids another tenant has.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from flows.ledger import DraftRecord, Ledger
from flows.usecases import drafting
from flows.usecases.actor import Actor
from flows.usecases.common import user_of
from flows.usecases.grounds import Grounds
from flows.usecases.draftfiles import draft_dir, files_of
from flows.usecases.views import DraftSummary, summarize
from flows.errors import Conflict, Forbidden
from planner.errors import InvalidArgument, NotFound
from planner.plan import plan_from_dict, plan_to_geojson
from planner.world.model import User, World

__all__ = ["EXPORT_FORMATS", "seen_by", "check_visible", "list_drafts", "show_draft", "diff_versions", "draft_log",
           "export", "export_bytes"]

EXPORT_FORMATS = ("geojson", "qgc", "waypoints", "kml")


def seen_by(world: World, actor: Actor, tenant: str, kind: str, ident: str) -> User:
    """The one visibility rule: ``actor`` (a user of ``world``) sees the ``kind`` (draft, request) ``ident`` of
    ``tenant`` only if it is one of theirs. Behind a server another tenant's is ``NotFound`` — not even its id
    leaks; locally ``Forbidden`` (the operator asserted who they are and is told why)."""
    u = user_of(world, actor.id, f"see {kind}s")
    if tenant not in u.tenants and "*" not in u.tenants:
        if actor.mode == "server":
            raise NotFound(f"{kind} {ident!r} is not in the ledger")
        raise Forbidden(f"{u.id} does not see {kind}s of tenant {tenant}")
    return u


def check_visible(draft_id: str, user: str | Actor, *, grounds: Grounds) -> DraftRecord:
    """The draft (latest version), unless ``user`` may not see it (``seen_by``)."""
    actor = user if isinstance(user, Actor) else Actor(user)
    rec = grounds.ledger.get_draft(draft_id)
    seen_by(grounds.world(rec.world_dir), actor, rec.tenant, "draft", draft_id)
    return rec


def list_drafts(*, user: str | Actor | None = None, limit: int = 200, grounds: Grounds) -> list[DraftSummary]:
    """The latest version of each draft, newest first; only the user's tenants when ``user`` is given."""
    tenants: list[str] | None = None
    if user:
        actor = user if isinstance(user, Actor) else Actor(user)
        u = user_of(grounds.world(), actor.id, "see drafts")
        tenants = None if "*" in u.tenants else sorted(u.tenants)
    ledger, home = grounds.ledger, grounds.home
    return [summarize(r, files=files_of(r.draft_id, r.version, home)) for r in ledger.list_drafts(tenants=tenants, limit=limit)]


def show_draft(draft_id: str, version: int | None = None, *, ledger: Ledger) -> DraftSummary:
    """One version (the latest by default) with its files, approvals, refused decision attempts and dispatch
    in ``notes``."""
    rec = ledger.get_draft(draft_id, version)
    versions = ledger.version_numbers(draft_id)
    approvals = [asdict(a) for a in ledger.approvals(draft_id, rec.version)]
    dispatches = [
        {"idempotency_key": d.idempotency_key, "status": d.status, "attempts": d.attempts, "result": d.result}
        for d in ledger.dispatches(draft_id)
        if d.version == rec.version
    ]
    refused = [
        {"actor": r.actor, "command": r.command, "identity": r.args_redacted.get("identity"),
         "via": r.args_redacted.get("via"), "time": r.started_time, "code": r.result_code, "why": r.result_message}
        for r in ledger.refusals(draft_id, rec.version)
    ]
    s = summarize(rec, files=files_of(rec.draft_id, rec.version, ledger.path.parent), versions=versions)
    return replace(s, notes={**s.notes, "approvals": approvals, "dispatches": dispatches, "refused": refused})


def diff_versions(draft_id: str, v1: int, v2: int, *, ledger: Ledger) -> dict[str, Any]:
    """What changed between two versions: state, hash, verdict, sorties and findings."""
    a, b = ledger.get_draft(draft_id, v1), ledger.get_draft(draft_id, v2)
    return drafting.diff(a, b, summarize(a, files={}), summarize(b, files={}))


def draft_log(draft_id: str, *, ledger: Ledger) -> dict[str, Any]:
    """Every event, approval and dispatch of a draft, in order."""
    ledger.get_draft(draft_id)  # NotFound for an unknown id
    return {
        "draft_id": draft_id,
        "events": [asdict(e) for e in ledger.events(draft_id)],
        "approvals": [asdict(a) for a in ledger.approvals(draft_id)],
        "dispatches": [
            {k: v for k, v in asdict(d).items() if k not in ("attempt_log",)} for d in ledger.dispatches(draft_id)
        ],
    }


def export_bytes(draft_id: str, version: int | None, fmt: str, *, sortie: int = 0,
                 grounds: Grounds) -> tuple[int, bytes, str]:
    """A version's plan as geojson | qgc | waypoints | kml: (version, bytes, file suffix); nothing written."""
    if fmt not in EXPORT_FORMATS:
        raise InvalidArgument(f"format {fmt!r}: expected one of {', '.join(EXPORT_FORMATS)}")
    rec = grounds.ledger.get_draft(draft_id, version)
    if rec.plan is None:
        raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state} and has no plan to export")
    plan = plan_from_dict(rec.plan)
    suffix = {"geojson": ".geojson", "qgc": ".plan", "waypoints": ".waypoints", "kml": ".kml"}[fmt]
    from planner.output import export_files as files

    if fmt == "geojson":
        data: Any = (json.dumps(plan_to_geojson(plan), ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode()
    elif fmt == "kml":
        data = files.plan_kml(plan)
    else:
        world = grounds.world(rec.world_dir)
        if sortie < 0 or sortie >= len(plan.sorties):
            raise InvalidArgument(f"sortie {sortie} is not in the plan (it has {len(plan.sorties)})")
        maker = files.qgc_plan if fmt == "qgc" else files.mission_planner_waypoints
        data = maker(plan, world, sortie)
    return rec.version, data if isinstance(data, bytes) else str(data).encode("utf-8"), suffix


def write_export(target: Path, data: bytes) -> None:
    """Write an export atomically (a temporary file renamed into place)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)


def export(draft_id: str, version: int | None, fmt: str, *, out: str | Path | None = None, sortie: int = 0,
           grounds: Grounds) -> dict[str, Any]:
    """Write a version's plan as geojson | qgc | waypoints | kml (``planner.output.export_files``); returns the path.

    QGroundControl ``.plan`` and Mission Planner ``.waypoints`` hold one vehicle's
    mission: ``sortie`` picks which (default the first).
    """
    ver, data, suffix = export_bytes(draft_id, version, fmt, sortie=sortie, grounds=grounds)
    target = Path(out) if out else draft_dir(draft_id, ver, grounds.home) / f"mission{suffix}"
    write_export(target, data)
    return {"draft_id": draft_id, "version": ver, "format": fmt, "path": str(target), "bytes": target.stat().st_size}
