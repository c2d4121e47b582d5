"""Drafting, the pure part of the use cases: alternatives over fleets, version rows, the dispatch recheck, diffs.

Every function here takes the world, the rule set, the intent and ``now`` as
values and returns values: no ledger, no files, no clock, no environment. The
use cases (``planning``, ``dispatching``, ``reading``) *gather* their inputs,
call these to *decide*, and then *apply* the decision to the ledger and the
draft files. That split is what makes the decisions testable on their own and
the same in-process and behind ``sortie server``.

The search over alternatives::

    fleets = rules.eligibility.candidate_fleets(...)       ordered alternatives
    for fleet in fleets[:MAX_ALTERNATIVES]:
        plan    = planner.mission.plan_mission(world, job, fleet)
        verdict = rules.evaluate.evaluate(plan, world, rules, context=...)
        stop unless blocked for lack of capacity         (a hard rule is never weakened)
    none left → WAITING_RESOURCE with what is missing
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any

from shapely.geometry import mapping, shape
from shapely.geometry.base import BaseGeometry

from flows.errors import DeviceUnavailable
from flows.ledger import DraftRecord, NewVersion
from flows.usecases.views import DraftSummary
from planner.errors import AirspaceBlocked, InvalidArgument, NotFound, PlanInfeasible, SortieError
from planner.plan import Plan, plan_from_dict, plan_hash, plan_to_dict
from planner.world.model import Drone, User, World

__all__ = [
    "MAX_ALTERNATIVES",
    "drone_choice",
    "Attempt",
    "parse_area",
    "area_dict",
    "request_key",
    "build_job",
    "start_at",
    "tenant_for",
    "attempts",
    "version_rows",
    "Request",
    "draft_versions",
    "recheck",
    "diff",
]

#: At most this many fleets are tried for one request before it waits for resources.
MAX_ALTERNATIVES = 3
_AIRSPACE_KINDS = {"geozone_clearance", "altitude_ceiling"}


@dataclass(frozen=True)
class Attempt:
    """One fleet tried: its plan and verdict (if it planned at all) and a line saying how it went."""

    fleet: tuple[Drone, ...]
    plan: Plan | None
    verdict: Any | None
    note: str
    ok: bool = False  # this attempt is the draft's current version


# --------------------------------------------------------------------------- request


def parse_area(data: Any) -> BaseGeometry:
    """A GeoJSON geometry, Feature or FeatureCollection (dict or JSON text) → one Polygon/MultiPolygon."""
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise InvalidArgument(f"the area is not valid GeoJSON: {exc}") from None
    if not isinstance(data, Mapping):
        raise InvalidArgument("the area must be a GeoJSON object")
    kind = data.get("type")
    try:
        if kind == "FeatureCollection":
            geoms = [shape(f["geometry"]) for f in data.get("features", []) if f.get("geometry")]
            if not geoms:
                raise InvalidArgument("the area FeatureCollection has no geometry")
            from shapely.ops import unary_union

            geom = unary_union(geoms)
        elif kind == "Feature":
            geom = shape(data["geometry"])
        else:
            geom = shape(data)
    except SortieError:
        raise
    except Exception as exc:  # noqa: BLE001 - shapely's errors are many and untyped
        raise InvalidArgument(f"the area is not a usable GeoJSON geometry: {exc}") from None
    if geom.geom_type not in ("Polygon", "MultiPolygon"):
        raise InvalidArgument(f"the area must be a Polygon or MultiPolygon, got {geom.geom_type}")
    minx, miny, maxx, maxy = geom.bounds
    if not (-180 <= minx <= maxx <= 180 and -90 <= miny <= maxy <= 90):
        raise InvalidArgument("the area's coordinates are out of range: GeoJSON is [lon, lat]")
    return geom


def area_dict(geom: BaseGeometry) -> dict[str, Any]:
    """A geometry as plain GeoJSON (lists, not tuples), as stored with the draft."""
    return json.loads(json.dumps(mapping(geom)))


def request_key(*parts: Any) -> str:
    """sha256 of the request's parts: the same request is the same draft."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def start_at(extraction: Any, world: World) -> datetime:
    """When the mission starts: ``intents.time.resolve`` is the one definition (a day without a time starts at its default)."""
    from intents.time.resolve import day_start

    start = getattr(extraction, "start_at", None)
    return start if start is not None else day_start(extraction.date, world.timezone)


def tenant_for(world: World, user: User, region_id: str | None, area: BaseGeometry) -> str:
    """The tenant that owns the draft: the region's, else the region under the area the user plans for."""
    if region_id is not None:
        return world.region(region_id).tenant
    centre = area.representative_point()
    for r in world.regions:
        if r.area.contains(centre) and user.may("planner", r.tenant):
            return r.tenant
    tenants = sorted(t for t in user.tenants if t != "*")
    if not tenants:
        raise InvalidArgument(f"{user.id} belongs to every tenant; give --region so the draft has an owner")
    return tenants[0]


def build_job(world: World, intent: Any, start: datetime, area: BaseGeometry, limits: Any) -> Any:
    """The planner's job from the intent: geometry, time, altitude (inside the rule set's band), sensors, targets,
    and the coverage target a survey must reach."""
    from planner.job import Job

    mission = intent.mission_type.value if intent.mission_type is not None else None
    kinds = {"HYDRANTS": "hydrant", "ROOFS": "roof", "MASTS": "mast", "GATES": "gate", "ASSETS": "asset"}
    poi_kinds = frozenset(kinds[t.value] for t in intent.targets if t.value in kinds) or frozenset({"hydrant"})
    target = getattr(intent, "coverage_target", None)  # the operator's, else the planner's documented default
    return Job(
        mission_type=mission,
        area_wgs84=area,
        start_at=start,
        altitude_m=limits.altitude_m(intent.altitude_m or None, world.defaults.altitude_m),
        sensors=frozenset(s.value for s in intent.sensors),
        poi_kinds=poi_kinds,
        **({} if target is None else {"coverage_target": target}),
    )


# --------------------------------------------------------------------------- rules


def _context(now: datetime, sensors: frozenset[str], phase: str) -> Any:
    from rules.context import EvaluationContext

    return EvaluationContext(now=now, required_sensors=sensors, authorisations={}, phase=phase)  # type: ignore[arg-type]


def _evaluate(plan: Plan, world: World, rules: Any, context: Any) -> Any:
    from rules.evaluate import evaluate

    return evaluate(plan, world, rules, context=context)


def _verdict_of(verdict: Any) -> tuple[str, list[dict[str, Any]]]:
    findings = [f.to_dict() for f in getattr(verdict, "findings", ())]
    if getattr(verdict, "blocked", False):
        return "block", findings
    if findings:
        return "warn", findings
    return "pass", findings


# --------------------------------------------------------------------------- alternatives


def drone_choice(eligibility: Any) -> dict[str, Any]:
    """Which of the tenant's drones could fly the request and, for each other one, the rules' reasons why not.

    Read off the eligibility the planner already judged (``rules.eligibility.fleet_eligibility``), never judged
    again; drones of other tenants are left out (an approver sees only their own fleet). Stored in the version's
    notes as ``drones``: the draft artifact and ``sortie show`` print it (``flows.drone_choice``)."""
    return {
        "eligible": [d.id for d in eligibility.eligible],
        "not_eligible": [{"drone_id": drone_id, "reasons": [r.to_dict() for r in reasons]}
                         for drone_id, reasons in eligibility.rejected
                         if not any(r.code == "TENANT" for r in reasons)],
    }


def _candidate_fleets(world: World, job: Any, rules: Any, now: datetime,
                      tenant: str) -> tuple[list[tuple[Drone, ...]], list[str], dict[str, Any]]:
    """Ordered alternative fleets (``rules.eligibility``), when there are none what is missing, and the tenant's
    drones that could fly it and why the others could not (``drone_choice``)."""
    from rules import eligibility as elig

    req = elig.JobRequirements(
        sensors=frozenset(job.sensors),
        area_wgs84=job.area_wgs84,
        start_at=job.start_at,
        tenants=frozenset({tenant}),
        altitude_m=job.altitude_m,
    )
    eligibility = elig.fleet_eligibility(world, req, now, rules=rules)
    fleets = [tuple(c.drones) for c in elig.candidate_fleets(world, req, now, rules=rules, eligibility=eligibility)]
    missing: list[str] = []
    if not fleets:
        missing = [r.message_en for r in elig.waiting_resource_reasons(world, req, now, rules=rules, eligibility=eligibility)]
    return fleets, missing, drone_choice(eligibility)


def attempts(world: World, job: Any, rules: Any, now: datetime, tenant: str,
             budget: Any = None) -> tuple[list[Attempt], list[str], dict[str, Any]]:
    """Try the candidate fleets in order until one is neither blocked for lack of capacity nor short.

    Short: targets left unserved, or no sortie at all. A plan blocked by
    airspace, altitude or weather ends the search (another dock would not fix
    a hard rule; the approver sees the findings). When every fleet falls
    short, the last plan that has sorties and is not blocked is kept as a
    partial DRAFT (its ``unserved`` says what is left); otherwise the request
    waits for resources. ``budget`` (``planner.routing.budget.Budget``, the shell's
    deadline) bounds every search of every attempt; None: the planner's fixed work. Also returns the tenant's
    drones that could fly it and why the others could not (``drone_choice``).
    """
    from planner.mission import plan_mission
    from rules.derived_limits import planning_limits

    limits = planning_limits(rules, world)  # the planner plans inside the rules that judge the plan
    fleets, missing, drones = _candidate_fleets(world, job, rules, now, tenant)
    tried: list[Attempt] = []
    for fleet in fleets[:MAX_ALTERNATIVES]:
        label = ", ".join(d.id for d in fleet)
        try:
            # What is stored, hashed, approved and dispatched is the canonical (rounded) plan: evaluate that one.
            plan = plan_from_dict(plan_to_dict(plan_mission(world, job, tuple(fleet), limits=limits, budget=budget)))
        except PlanInfeasible as exc:
            missing.append(f"[{label}]: {exc.message}")
            continue
        verdict = _evaluate(plan, world, rules, _context(now, frozenset(job.sensors), "plan"))
        if verdict.blocked and not verdict.capacity_blocked:
            tried.append(Attempt(fleet, plan, verdict, f"[{label}]: planned (blocked by a hard rule)", ok=True))
            return tried, missing, drones
        if not verdict.blocked and plan.sorties and not plan.unserved:
            tried.append(Attempt(fleet, plan, verdict, f"[{label}]: planned", ok=True))
            return tried, missing, drones
        why = "; ".join(f.message_en for f in verdict.blocking) or "; ".join(
            f"{u.target_id}: {u.reason}" for u in plan.unserved[:5]
        ) or "no sortie could be planned"
        tried.append(Attempt(fleet, plan, verdict, f"[{label}]: short of capacity: {why}"))
        missing.append(f"[{label}]: {why}")
    for i in range(len(tried) - 1, -1, -1):
        a = tried[i]
        if a.plan is not None and a.plan.sorties and not a.verdict.blocked:
            kept = replace(a, note=a.note.replace("short of capacity", "planned, partial"), ok=True)
            return tried[:i] + tried[i + 1:] + [kept], missing, drones
    return tried, missing, drones


@dataclass(frozen=True)
class Request:
    """Everything a version row says about the request, whichever fleet is tried."""

    draft_id: str
    request_key: str
    tenant: str
    region_id: str | None
    requested_by: str
    text: str
    intent_doc: dict[str, Any]
    area: dict[str, Any]
    world_dir: str


def version_rows(
    req: Request, first_version: int, tried: list[Attempt], missing: list[str], world: World,
    drones: dict[str, Any] | None = None,
) -> tuple[list[NewVersion], list[str], list[Plan | None]]:
    """One ledger row per attempt with a plan (the last is current), plus a WAITING_RESOURCE row when none served.
    ``drones`` (``drone_choice``) goes into every row's notes."""
    notes_base = {"area": req.area, "region_id": req.region_id} | ({"drones": drones} if drones is not None else {})
    rows: list[NewVersion] = []
    reasons: list[str] = []
    plans: list[Plan | None] = []
    final_ok = bool(tried) and tried[-1].ok
    entries: list[tuple[Attempt | None, str]] = [(a, "DRAFT") for a in tried if a.plan is not None]
    if not final_ok:
        entries.append((None, "WAITING_RESOURCE"))
    for i, (a, state) in enumerate(entries):
        plan = a.plan if a is not None else None
        verdict, findings = _verdict_of(a.verdict) if a is not None else ("waiting", [])
        if state == "WAITING_RESOURCE":
            verdict = "waiting"
        note = a.note if a is not None else "no fleet left"
        rows.append(
            NewVersion(
                draft_id=req.draft_id,
                version=first_version + i,
                state=state,
                request_key=req.request_key,
                tenant=req.tenant,
                region_id=req.region_id,
                requested_by=req.requested_by,
                request_text=req.text,
                intent=req.intent_doc,
                plan=None if plan is None else plan_to_dict(plan),
                plan_hash=None if plan is None else plan_hash(plan),
                findings=findings,
                verdict=verdict,
                missing=list(missing) if state == "WAITING_RESOURCE" else [],
                world_name=world.name,
                world_dir=req.world_dir,
                world_hash=world.snapshot_hash,
                notes={**notes_base, "fleet": [d.id for d in a.fleet] if a is not None else [], "attempt": note},
            )
        )
        reasons.append(note)
        plans.append(plan)
    return rows, reasons, plans


def draft_versions(
    req: Request, extraction: Any, area: BaseGeometry, world: World, rules: Any, now: datetime, first_version: int,
    budget: Any = None, *, decide: Any = None,
) -> tuple[list[NewVersion], list[str], list[Plan | None]]:
    """The whole decision of a plan or replan: clarify-or-plan, try the alternatives, build the rows — here, or by
    ``decide`` (the grounds' decider: ``sortie server``'s planning process, ``flows.server.plan_pool``, since
    OR-Tools holds the GIL for the whole search and a recall must not wait behind it). ``budget``: the caller's
    ``planner.routing.budget.Budget`` or None; its deadline, seed and work cap hold wherever the plan is decided."""
    if decide is not None:
        return decide(req, extraction, area, world, rules, now, first_version, budget)  # type: ignore[no-any-return]
    intent = extraction.intent if hasattr(extraction, "intent") else extraction
    if intent.needs_clarification:
        # Every path (CLI, Prefect, server) plans through here: a request that asks is never recorded as a draft.
        from intents.errors import NeedsClarification

        raise NeedsClarification.for_intent_questions(intent.clarification_questions, intent.missing, intent.instructions)
    from rules.derived_limits import planning_limits

    job = build_job(world, intent, start_at(extraction, world), area, planning_limits(rules, world))
    tried, missing, drones = attempts(world, job, rules, now, req.tenant, budget)
    return version_rows(req, first_version, tried, missing, world, drones)


# --------------------------------------------------------------------------- dispatch recheck


def recheck(rec: DraftRecord, world: World, rules: Any, now: datetime) -> list[str]:
    """Rules again on the current world at dispatch time; refuse if anything blocks now.

    The required sensors come from the recorded intent. ``DeviceUnavailable``
    for a drone that left the fleet or is not ONLINE; ``AirspaceBlocked`` for a
    geozone or ceiling finding; ``DeviceUnavailable`` for any other block.
    """
    checks: list[str] = []
    plan = plan_from_dict(rec.plan or {})
    for s in plan.sorties:
        try:
            drone = world.drone(s.drone_id)
        except NotFound:
            raise DeviceUnavailable(f"drone {s.drone_id} is no longer in the fleet") from None
        if drone.status != "ONLINE":
            raise DeviceUnavailable(f"drone {drone.id} is {drone.status} now; it was planned ONLINE")
    checks.append("drones still in the fleet and ONLINE")
    if world.snapshot_hash != rec.world_hash:
        checks.append(f"the world changed since planning (snapshot {rec.world_hash[:12]}… → {world.snapshot_hash[:12]}…)")
    sensors = frozenset(((rec.intent or {}).get("intent") or {}).get("sensors") or [])
    verdict = _evaluate(plan, world, rules, _context(now, sensors, "dispatch"))
    blocking = list(getattr(verdict, "blocking", ()))
    if blocking:
        first = blocking[0]
        text = "; ".join(f"{f.rule_id}: {f.message_en}" for f in blocking)
        details = {"findings": [f.to_dict() for f in blocking]}
        if first.kind in _AIRSPACE_KINDS:
            raise AirspaceBlocked(f"the rules block dispatch on the current world: {text}", details=details)
        raise DeviceUnavailable(f"the rules block dispatch on the current world: {text}", details=details)
    checks.append(f"rules pass on a fresh world snapshot ({len(verdict.findings)} warning(s))")
    return checks


# --------------------------------------------------------------------------- diff


def diff(a: DraftRecord, b: DraftRecord, sa: DraftSummary, sb: DraftSummary) -> dict[str, Any]:
    """What changed between two versions: state, hash, verdict, sorties and findings."""

    def sorties(s: DraftSummary) -> dict[str, dict[str, Any]]:
        return {f"{x.index}:{x.drone}": asdict(x) for x in s.sorties}

    xa, xb = sorties(sa), sorties(sb)
    fa = {(f["rule_id"], f.get("sortie_index"), f.get("leg_index"), f.get("zone_id")) for f in a.findings}
    fb = {(f["rule_id"], f.get("sortie_index"), f.get("leg_index"), f.get("zone_id")) for f in b.findings}
    return {
        "draft_id": a.draft_id,
        "from": a.version,
        "to": b.version,
        "changes": {
            k: {"from": getattr(sa, k), "to": getattr(sb, k)}
            for k in ("status", "plan_hash", "verdict", "planned_for", "world_hash")
            if getattr(sa, k) != getattr(sb, k)
        },
        "sorties_added": [xb[k] for k in sorted(set(xb) - set(xa))],
        "sorties_removed": [xa[k] for k in sorted(set(xa) - set(xb))],
        "sorties_changed": [
            {"sortie": k, "from": xa[k], "to": xb[k]} for k in sorted(set(xa) & set(xb)) if xa[k] != xb[k]
        ],
        "findings_added": sorted([list(x) for x in fb - fa], key=str),
        "findings_removed": sorted([list(x) for x in fa - fb], key=str),
        "distance_m": {"from": sum(x.distance_m for x in sa.sorties), "to": sum(x.distance_m for x in sb.sorties)},
        "energy_wh": {"from": sum(x.energy_wh for x in sa.sorties), "to": sum(x.energy_wh for x in sb.sorties)},
    }


