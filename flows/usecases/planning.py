"""Use cases that make drafts: ``plan_draft``, ``replan`` and the read-only ``what_if``.

Each is gather → decide → apply:

    gather  the world (a fresh snapshot; strict in server mode), the rule set,
            the acting user, the intent (extracted, or the recorded one on replan)
    decide  ``drafting.draft_versions``: alternatives over fleets → version rows
    apply   draft files first, then one ledger transaction (``record_versions``)

The grounds (``flows.usecases.grounds``: ledger, world, rules, where plans are
decided), the actor (``Actor``: id, mode, how it was proven) and ``now`` come
in from the authority; nothing here reads the clock or opens the ledger from
the environment. The same request (user, text, area,
world snapshot, ``now``) is the same draft: planning it again returns the
recorded draft, which is what makes a killed ``sortie plan`` safe to rerun.

A request that needs clarification is not forgotten: ``plan_draft`` keeps it
as an open request (``flows.usecases.requests``) and refuses with
``NEEDS_CLARIFICATION`` naming it; answering it plans the same request. The
same request asked again names the same open request (or, once answered, its
draft). What a request becomes before the planner sees it, and how versions
are recorded, is ``flows.usecases.intake``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from shapely.geometry import shape
from shapely.geometry.base import BaseGeometry

from flows.context import resolve_world_dir
from flows.errors import Conflict, Forbidden
from flows.ledger import DraftRecord, Ledger
from flows.usecases import drafting
from flows.usecases.commitments import with_commitments
from flows.usecases.actor import Actor
from flows.usecases.common import (  # the budget lives there: requests plans answered requests with it too
    DEFAULT_PLAN_BUDGET_S,
    PLAN_BUDGET_ENV,
    load_rules,
    load_world_at,
    planning_budget,
    user_of,
)
from flows.usecases.draftfiles import files_of, write_files
from flows.usecases.grounds import Grounds
from flows.usecases.intake import extract_request as _extract
from flows.usecases.intake import record_drafted as _apply
from flows.usecases.intake import with_coverage_target as _with_coverage_target
from flows.usecases.views import DraftSummary, summarize
from planner.errors import InvalidArgument
from planner.plan import Plan, plan_from_dict
from planner.world.model import World

__all__ = ["DEFAULT_PLAN_BUDGET_S", "PLAN_BUDGET_ENV", "planning_budget", "plan_draft", "replan", "what_if",
           "ensure_files", "read_area"]

_SUPERSEDABLE = {"DRAFT", "APPROVED", "WAITING_RESOURCE"}
_REPLANNABLE = _SUPERSEDABLE | {"REJECTED", "EXPIRED", "ABORTED"}  # ABORTED: a failed dispatch is replanned


def read_area(area_geojson: Any) -> BaseGeometry:
    """The area as given: a GeoJSON dict or text, or a path to a GeoJSON file (read here, at the edge)."""
    data = area_geojson
    if isinstance(data, Path) or (isinstance(data, str) and not data.lstrip().startswith("{")):
        if isinstance(data, str) and ("\n" in data or len(data) > 1024):  # text that is no GeoJSON, not a file name
            raise InvalidArgument("the area is not valid GeoJSON (a GeoJSON object, or the path of a file holding one)")
        path = Path(data).expanduser()
        if not path.is_file():
            raise InvalidArgument(f"area file {str(path)!r} does not exist")
        data = path.read_text(encoding="utf-8")
    return drafting.parse_area(data)


def ensure_files(rec: DraftRecord, home: Path, world: World) -> dict[str, str]:
    """A version's files, rewritten from the ledger when missing (say after a crash between commit and write)."""
    files = files_of(rec.draft_id, rec.version, home)
    if "draft" in files and ("map" in files or rec.plan is None):
        return files
    plan = None if rec.plan is None else plan_from_dict(rec.plan)
    return write_files(rec.draft_id, rec.version, plan, world, summarize(rec, files={}).to_dict(), home)


def _gather_request(
    *, text: str, region_id: str | None, area_geojson: Any, actor: Actor, world: World, now: datetime,
    llm_settings: Any | None, rules_path: str | Path | None, coverage_target: float | None = None,
    relayed_by: str | None = None,
) -> tuple[Any, BaseGeometry, str | None, str, dict[str, Any] | None]:
    """Validate the request, extract the intent, settle the area, region and tenant, check the planner role (and,
    for a request relayed by a service token, that the tenant and region are within the relaying user's)."""
    if coverage_target is not None:
        from planner.job import check_coverage_target

        coverage_target = check_coverage_target(coverage_target)  # refused before anything is read or planned
    if not text or not text.strip():
        raise InvalidArgument("the request text is empty")
    if region_id is not None and area_geojson is not None:
        raise InvalidArgument("give either --region or --area, not both")
    if now.tzinfo is None:
        raise InvalidArgument("now needs a timezone offset")
    user = user_of(world, actor.id, "plan")
    area: BaseGeometry | None = None
    area_doc = None
    if area_geojson is not None:
        area = read_area(area_geojson)
        area_doc = drafting.area_dict(area)
    extraction = _extract(text, region_id=region_id, now=now, world=world, llm_settings=llm_settings,
                          rules_path=rules_path)
    extraction = _with_coverage_target(extraction, coverage_target)
    intent = extraction.intent if hasattr(extraction, "intent") else extraction
    if region_id is None and area is None and intent.area.kind == "region" and intent.area.region_id:
        region_id = intent.area.region_id
    if region_id is not None:
        area = world.region(region_id).area
    if area is None:
        raise InvalidArgument("where? give --region ID or --area FILE.geojson")
    tenant = drafting.tenant_for(world, user, region_id, area)
    if not user.may("planner", tenant, region_id):
        raise Forbidden(
            f"{user.id} may not plan for tenant {tenant}" + ("" if region_id is None else f" in region {region_id}")
        )
    if relayed_by is not None:
        _within_reach(world, relayed_by, tenant, region_id)
    return extraction, area, region_id, tenant, area_doc


def _within_reach(world: World, relayed_by: str, tenant: str, region_id: str | None) -> None:
    """A service token acts for others only inside its own user's tenants and regions (issue 28: a city-fire
    worker's token recorded a draft in port-authority under a port planner's name)."""
    svc = user_of(world, relayed_by, "plan on behalf of others")
    if (tenant not in svc.tenants and "*" not in svc.tenants) or (
            region_id is not None and region_id not in svc.regions and "*" not in svc.regions):
        raise Forbidden(f"the service token of {svc.id} may not plan for tenant {tenant}"
                        + ("" if region_id is None else f" in region {region_id}")
                        + f": a service acts only within its own user's tenants ({', '.join(sorted(svc.tenants))})")


def _coverage_key(target: float | None) -> list[float]:
    """The request key's part for the coverage option: nothing when absent, so older keys stay the same."""
    return [] if target is None else [float(target)]


def _intent_doc(extraction: Any) -> dict[str, Any]:
    return extraction.to_dict() if hasattr(extraction, "to_dict") else {"intent": extraction.model_dump(mode="json")}


def plan_draft(
    *,
    text: str,
    region_id: str | None = None,
    area_geojson: Any = None,
    requested_by: str | Actor,
    now: datetime,
    grounds: Grounds,
    llm_settings: Any | None = None,
    coverage_target: float | None = None,
    relayed_by: str | None = None,
) -> DraftSummary:
    """Extract, plan, evaluate and record a new draft; return its current version.

    ``relayed_by``: the user of the service token that relays the request for ``requested_by`` (the server's
    ``on_behalf_of``); the draft's tenant and region must then be that user's too.

    ``coverage_target`` (area surveys, 0.5–1.0) is the operator's: it must agree
    with a target the text states, and is recorded on the draft's intent.

    ``area_geojson`` is a GeoJSON geometry/Feature/FeatureCollection (dict, text
    or file path); exactly one of it and ``region_id`` is needed (a region the
    request names itself also works). The requester needs the planner role for
    the tenant and region. The same request at the same ``now`` on the same
    world returns the already recorded draft (``created=False``).
    """
    actor = requested_by if isinstance(requested_by, Actor) else Actor(requested_by)
    ledger = grounds.ledger
    wdir = grounds.world_folder()
    world = grounds.world()
    extraction, area, region_id, tenant, area_doc = _gather_request(
        text=text, region_id=region_id, area_geojson=area_geojson, actor=actor, world=world, now=now,
        llm_settings=llm_settings, rules_path=grounds.rules, coverage_target=coverage_target, relayed_by=relayed_by,
    )
    rule_set = grounds.rule_set()
    # The rule set is part of the request: the same words planned under other rules are another draft.
    key = drafting.request_key("plan", actor.id, text, region_id, area_doc, now.isoformat(), world.snapshot_hash,
                               rule_set.sha256, *_coverage_key(coverage_target))
    draft_id = "d-" + key[:12]
    existing = ledger.find_by_request_key(key)  # an existing file is opened (and migrated) by this read
    if existing is not None:
        return _existing(ledger, existing.draft_id, world)
    if not ledger.path.exists():
        ledger.ensure()  # created before any file of the draft is written beside it
    if extraction.needs_clarification:
        # Kept as an open request (flows.usecases.requests): NEEDS_CLARIFICATION names it; the answers plan it.
        from flows.usecases import requests

        planned = requests.ask(key=key, actor=actor, text=text, region_id=region_id, area=area, tenant=tenant,
                               world=world, world_dir=wdir, rules_sha256=rule_set.sha256,
                               coverage_target=coverage_target, extraction=extraction, now=now, ledger=ledger)
        return _existing(ledger, str(planned.draft_id), world)
    req = drafting.Request(
        draft_id=draft_id, request_key=key, tenant=tenant, region_id=region_id, requested_by=actor.id, text=text,
        intent_doc=_intent_doc(extraction), area=drafting.area_dict(area), world_dir=str(wdir),
    )
    rows, reasons, plans = drafting.draft_versions(req, extraction, area, with_commitments(world, ledger), rule_set, now,
                                                   1, planning_budget(), decide=grounds.decide)
    try:
        recs = _apply(ledger, rows, reasons, plans, world, actor=actor, now=now, supersede=None)
    except Conflict:
        # The same request recorded concurrently: the first one is the draft.
        if ledger.find_by_request_key(key) is None:
            raise
        return _existing(ledger, draft_id, world)
    last = recs[-1]
    home = ledger.path.parent
    return summarize(last, files=files_of(last.draft_id, last.version, home), versions=[r.version for r in recs])


def what_if(
    *,
    text: str,
    region_id: str | None = None,
    area_geojson: Any = None,
    requested_by: str | Actor,
    world_dir: str | Path | None = None,
    now: datetime,
    rules_path: str | Path | None = None,
    llm_settings: Any | None = None,
    coverage_target: float | None = None,
) -> dict[str, Any]:
    """Plan without recording anything: gather and decide, no apply (``sortie plan --what-if``).

    This is the one place a caller's own world and time are fine: nothing it
    returns can be approved or dispatched.
    """
    actor = requested_by if isinstance(requested_by, Actor) else Actor(requested_by)
    wdir = resolve_world_dir(world_dir)
    world = load_world_at(wdir)
    extraction, area, region_id, tenant, area_doc = _gather_request(
        text=text, region_id=region_id, area_geojson=area_geojson, actor=actor, world=world, now=now,
        llm_settings=llm_settings, rules_path=rules_path, coverage_target=coverage_target,
    )
    rule_set = load_rules(rules_path)
    key = drafting.request_key("what-if", actor.id, text, region_id, area_doc, now.isoformat(), world.snapshot_hash,
                               rule_set.sha256, *_coverage_key(coverage_target))
    req = drafting.Request(
        draft_id="what-if-" + key[:8], request_key=key, tenant=tenant, region_id=region_id, requested_by=actor.id,
        text=text, intent_doc=_intent_doc(extraction), area=drafting.area_dict(area), world_dir=str(wdir),
    )
    rows, reasons, _plans = drafting.draft_versions(req, extraction, area, world, rule_set, now, 1, planning_budget())
    last = rows[-1]
    stamp = now.isoformat()
    rec = DraftRecord(
        draft_id=last.draft_id, version=last.version, state="WHAT_IF", row_version=0, request_key=key,
        tenant=last.tenant, region_id=last.region_id, requested_by=last.requested_by, request_text=text,
        intent=last.intent, plan=last.plan, plan_hash=last.plan_hash, findings=last.findings, verdict=last.verdict,
        missing=last.missing, notes={**last.notes, "would_be": last.state, "alternatives": reasons},
        world_name=last.world_name, world_dir=last.world_dir, world_hash=last.world_hash, created_time=stamp,
        updated_time=stamp,
    )
    out = summarize(rec, files={}, versions=[r.version for r in rows]).to_dict()
    out["what_if"] = True
    return out


def _existing(ledger: Ledger, draft_id: str, world: World) -> DraftSummary:
    versions = ledger.versions(draft_id)
    latest = versions[-1]
    home = ledger.path.parent
    for v in versions:
        ensure_files(v, home, world)
    return summarize(latest, files=files_of(latest.draft_id, latest.version, home),
                     versions=[v.version for v in versions], created=False)


def replan(
    draft_id: str,
    *,
    requested_by: str | Actor,
    now: datetime,
    grounds: Grounds,
) -> DraftSummary:
    """Plan the draft's request again on a fresh world at ``now``: a new version; the old one SUPERSEDED.

    The intent recorded with the draft is reused (no second extraction); the
    area is the one recorded. Two concurrent replans: one wins, the other gets
    ``Conflict``.
    """
    actor = requested_by if isinstance(requested_by, Actor) else Actor(requested_by)
    ledger = grounds.ledger
    latest = ledger.get_draft(draft_id)
    if latest.state not in _REPLANNABLE:
        raise Conflict(f"draft {draft_id} v{latest.version} is {latest.state}; it can no longer be replanned")
    wdir = grounds.world_folder(latest.world_dir)
    world = grounds.world(latest.world_dir)
    user = user_of(world, actor.id, "replan")
    if not user.may("planner", latest.tenant, latest.region_id):
        raise Forbidden(f"{user.id} may not plan for tenant {latest.tenant}")
    from intents.extract import Extraction
    from intents.intent import Intent

    doc = latest.intent or {}
    intent = Intent.model_validate(doc.get("intent", doc))
    extraction = Extraction.resolve(intent, str(doc.get("extractor", "ledger")), now=now, timezone=world.timezone)
    area = shape(latest.notes["area"]) if latest.notes.get("area") else world.region(str(latest.region_id)).area
    req = drafting.Request(
        draft_id=draft_id, request_key=latest.request_key, tenant=latest.tenant, region_id=latest.region_id,
        requested_by=latest.requested_by, text=latest.request_text, intent_doc=_intent_doc(extraction),
        area=drafting.area_dict(area), world_dir=str(wdir),
    )
    rows, reasons, plans = drafting.draft_versions(
        req, extraction, area, with_commitments(world, ledger, draft_id=draft_id), grounds.rule_set(), now,
        latest.version + 1, planning_budget(), decide=grounds.decide,
    )
    supersede = latest if latest.state in _SUPERSEDABLE else None
    recs = _apply(ledger, rows, reasons, plans, world, actor=actor, now=now, supersede=supersede)
    last = recs[-1]
    home = ledger.path.parent
    return summarize(last, files=files_of(last.draft_id, last.version, home),
                     versions=[v.version for v in ledger.versions(draft_id)])
