"""What a request becomes before the planner sees it, and how drafted versions are recorded: shared by the use
cases that make drafts (``planning``: plan, what-if, replan) and the one that plans an answered open request
(``requests``).

    extract       the request read in the world's zone inside the rule set's altitude limits (the places the
                  world names, an open request's answers applied)
    coverage      the operator's coverage target on the intent (agreeing with the text's)
    record        files first (atomically, per version), then the versions in one ledger transaction
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from flows.ledger import DraftRecord, Ledger, NewVersion, kill_point
from flows.usecases.actor import Actor
from flows.usecases.common import load_rules
from flows.usecases.draftfiles import write_files
from flows.usecases.views import summarize
from planner.errors import InvalidArgument
from planner.plan import Plan
from planner.world.model import World

__all__ = ["intent_limits", "extract_request", "with_coverage_target", "record_drafted"]


def intent_limits(world: World, rules_path: str | Path | None) -> Any:
    """The altitudes a request may state: the planning limits of the rule set and the site (``rules.derived_limits``)."""
    from intents.stated_limits import Limits
    from rules.derived_limits import planning_limits

    limits = planning_limits(load_rules(rules_path), world)
    default = Limits()  # 10 m minimum safe height, 120 m when neither the rules nor the site set a ceiling
    ceiling = default.max_altitude_m if limits.ceiling_m is None else float(limits.ceiling_m)
    return Limits(min_altitude_m=max(default.min_altitude_m, float(limits.floor_m)), max_altitude_m=ceiling)


def extract_request(
    text: str, *, region_id: str | None, now: datetime, world: World, llm_settings: Any | None,
    rules_path: str | Path | None = None, answers: Mapping[str, str] | None = None,
) -> Any:
    """The request read in the world's zone inside the rule set's limits, with an open request's ``answers``."""
    from intents.extract import extract_intent

    places = {name: r.id for r in world.regions for name in (r.id, r.name)}
    return extract_intent(text, region_id=region_id, now=now, timezone=world.timezone, settings=llm_settings,
                          limits=intent_limits(world, rules_path), places=places, answers=answers)


def with_coverage_target(extraction: Any, target: float | None) -> Any:
    """The operator's coverage target (``--coverage-target``, the plan body's ``coverage_target``) on the intent.

    Carried by the intent, so the draft records it and a replan keeps it. A request
    text that states another target is a contradiction, not an override; a target
    for anything but an area survey has nothing to apply to.
    """
    if target is None:
        return extraction
    intent = extraction.intent
    said = intent.coverage_target
    if said is not None and abs(said - target) > 1e-9:
        raise InvalidArgument(f"the request asks for {said:.1%} coverage and the coverage target option for {target:.1%}; give one")
    if intent.mission_type is not None and intent.mission_type.value != "AREA_SURVEY":
        raise InvalidArgument(f"a coverage target applies to area surveys, and this request is a {intent.mission_type.value}")
    return replace(extraction, intent=intent.model_copy(update={"coverage_target": target}))


def record_drafted(
    ledger: Ledger, rows: list[NewVersion], reasons: list[str], plans: list[Plan | None], world: World, *,
    actor: Actor, now: datetime, supersede: DraftRecord | None,
    record: Callable[[], list[DraftRecord]] | None = None,
) -> list[DraftRecord]:
    """Files first (atomically, per version), then the versions in one ledger transaction (``record``: another
    transaction that records them, say with the open request they answer)."""
    home = ledger.path.parent
    for row, plan in zip(rows, plans):
        pre = DraftRecord(
            draft_id=row.draft_id, version=row.version, state=row.state, row_version=1, request_key=row.request_key,
            tenant=row.tenant, region_id=row.region_id, requested_by=row.requested_by, request_text=row.request_text,
            intent=row.intent, plan=row.plan, plan_hash=row.plan_hash, findings=row.findings, verdict=row.verdict,
            missing=row.missing, notes=row.notes, world_name=row.world_name, world_dir=row.world_dir,
            world_hash=row.world_hash, created_time=now.isoformat(), updated_time=now.isoformat(),
        )
        write_files(row.draft_id, row.version, plan, world, summarize(pre, files={}).to_dict(), home)
    kill_point("plan:after_files")
    if record is not None:
        recs = record()
    else:
        recs = ledger.record_versions(rows, actor=actor.id, now=now, supersede=supersede, reasons=reasons[:-1])
    kill_point("plan:after_commit")
    return recs
