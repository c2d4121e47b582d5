"""The service functions: what the CLI and the Prefect flows both call.

Each function is one user action (plan, replan, approve, reject, dispatch,
look at drafts, export) over plain arguments: the world folder, ``now`` and
the acting user come in explicitly, the ledger is ``SORTIE_HOME/ledger.duckdb``
(``flows.ledger.open_ledger``). Nothing here prints, and nothing here knows
about typer or Prefect: the CLI renders the returned values, the flows put
them in artifacts. Every user error is a ``planner.errors.SortieError``.

The path of ``plan_draft``::

    world  = planner.world_files.load_world(world_dir)
    intent = intents.extract.extract_intent(text, region/area, now, tz)
    job    = planner.job.Job(...)                  geometry, time, altitude, sensors
    fleets = rules.eligibility.candidate_fleets(...) ordered alternatives
    for fleet in fleets[:MAX_ALTERNATIVES]:
        plan    = planner.mission.plan_mission(world, job, fleet)
        verdict = rules.evaluate.evaluate(plan, world, rules, context=...)
        stop unless blocked for lack of capacity     (a hard rule is never weakened)
    none left → WAITING_RESOURCE with what is missing
    ledger.record_versions(...)   one transaction: every attempt a version, the last one current
    files: SORTIE_HOME/drafts/<id>/v<n>/plan.json, plan.geojson, map.png

The same request (user, text, area, world snapshot, ``now``) is the same
draft: planning it again returns the recorded draft instead of a duplicate,
which is what makes a killed ``sortie plan`` safe to rerun.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, time as dtime, timedelta
from pathlib import Path
from typing import Any

from shapely.geometry import shape
from shapely.geometry.base import BaseGeometry

from flows.context import draft_dir, load_world_at, resolve_rules_file, resolve_world_dir, sortie_home
from flows.ledger import (
    APPROVAL_TTL,
    DispatchRecord,
    DraftRecord,
    Ledger,
    NewVersion,
    idempotency_key,
    kill_point,
    open_ledger,
    params_hash,
)
from planner.errors import (
    AirspaceBlocked,
    Conflict,
    DeviceUnavailable,
    DispatchFailed,
    DispatchUncertain,
    Forbidden,
    InvalidArgument,
    NotFound,
    PlanInfeasible,
    SortieError,
)
from planner.plan import Plan, canonical_json, plan_from_dict, plan_hash, plan_to_dict, plan_to_geojson
from planner.world import Drone, User, World

__all__ = [
    "MAX_ALTERNATIVES",
    "EXPORT_FORMATS",
    "SortieSummary",
    "DraftSummary",
    "DispatchSummary",
    "plan_draft",
    "replan",
    "approve",
    "reject",
    "dispatch",
    "list_drafts",
    "show_draft",
    "diff_versions",
    "draft_log",
    "export",
    "draft_dir",
    "ensure_files",
    "load_world_at",
    "four_eyes_default",
    "check_visible",
]

#: At most this many fleets are tried for one request before it waits for resources.
MAX_ALTERNATIVES = 3
EXPORT_FORMATS = ("geojson", "qgc", "waypoints", "kml")
_SUPERSEDABLE = {"DRAFT", "APPROVED", "WAITING_RESOURCE"}
_REPLANNABLE = _SUPERSEDABLE | {"REJECTED", "EXPIRED"}
_AIRSPACE_KINDS = {"geozone_clearance", "altitude_ceiling"}


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class SortieSummary:
    """One sortie as the operator sees it."""

    index: int
    drone: str
    dock: str
    start_at: str
    distance_m: float
    duration_s: float
    energy_wh: float
    battery_fraction: float


@dataclass(frozen=True)
class DraftSummary:
    """One draft version: what ``sortie plan``/``show`` print and the Prefect artifact shows.

    ``status`` is the ledger state (DRAFT, WAITING_RESOURCE, APPROVED, …);
    ``verdict`` is pass | warn | block | waiting; ``created`` is False when the
    call found the draft already recorded (an idempotent rerun).
    """

    draft_id: str
    version: int
    status: str
    row_version: int
    plan_hash: str | None
    verdict: str
    findings: list[dict[str, Any]]
    sorties: list[SortieSummary]
    missing: list[str]
    files: dict[str, str]
    tenant: str
    region_id: str | None
    requested_by: str
    request_text: str
    mission_type: str | None
    planned_for: str | None
    extractor: str | None
    world_name: str
    world_hash: str
    created_time: str
    versions: list[int] = field(default_factory=list)
    created: bool = True
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def state(self) -> str:
        return self.status

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["state"] = self.status
        return out


@dataclass(frozen=True)
class DispatchSummary:
    """What ``dispatch`` did: a dry run, a new dispatch, or the first outcome of an earlier one."""

    draft_id: str
    version: int
    idempotency_key: str
    status: str  # DRY_RUN | PENDING | SENT | ACKED | UNCERTAIN | FAILED
    first: bool  # True when this call made the dispatch (or the dry run)
    dry_run: bool
    draft_status: str
    message: str
    checks: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    attempts: int = 0
    files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------- helpers


def four_eyes_default() -> bool:
    """Four-eyes is on unless ``SORTIE_FOUR_EYES=0`` says otherwise (a single-operator site)."""
    return os.environ.get("SORTIE_FOUR_EYES", "1").strip().lower() not in ("0", "false", "no", "off")


def _user(world: World, user_id: str | None, what: str) -> User:
    if not user_id:
        raise InvalidArgument(f"who is acting? give --as USER or set SORTIE_USER to {what}")
    try:
        return world.user(user_id)
    except NotFound:
        raise Forbidden(f"{user_id!r} is not a user of world {world.name!r}: they may not {what}") from None


def _parse_area(area_geojson: Any) -> BaseGeometry:
    """A GeoJSON geometry, Feature or FeatureCollection (dict, JSON text or a file path) → one geometry."""
    data = area_geojson
    if isinstance(data, Path) or (isinstance(data, str) and not data.lstrip().startswith("{")):
        path = Path(data).expanduser()
        if not path.is_file():
            raise InvalidArgument(f"area file {str(path)!r} does not exist")
        data = path.read_text(encoding="utf-8")
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


def _area_dict(geom: BaseGeometry) -> dict[str, Any]:
    from shapely.geometry import mapping

    return json.loads(json.dumps(mapping(geom)))


def _sha(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def _verdict_of(verdict: Any) -> tuple[str, list[dict[str, Any]]]:
    findings = [f.to_dict() for f in getattr(verdict, "findings", ())]
    if getattr(verdict, "blocked", False):
        return "block", findings
    if findings:
        return "warn", findings
    return "pass", findings


def _rules(rules_path: str | Path | None) -> Any:
    """The rule set (``--rules``, ``SORTIE_RULES`` or the bundled ``data/rules.yaml``); a missing file is an error, never a skip."""
    from rules.loading import load_rules

    path = resolve_rules_file(rules_path)
    if not path.is_file():
        raise InvalidArgument(f"rule file {str(path)!r} does not exist; sortie does not plan or dispatch without rules")
    return load_rules(path)


def _context(now: datetime, job: Any, phase: str, authorisations: Mapping[str, str] | None = None) -> Any:
    from rules.context import EvaluationContext

    return EvaluationContext(
        now=now,
        required_sensors=frozenset(getattr(job, "sensors", frozenset()) if job is not None else ()),
        authorisations=dict(authorisations or {}),
        phase=phase,  # type: ignore[arg-type]
    )


def _evaluate(plan: Plan, world: World, rules: Any, context: Any) -> Any:
    from rules.evaluate import evaluate

    return evaluate(plan, world, rules, context=context)


# --------------------------------------------------------------------------- planning pieces


@dataclass(frozen=True)
class _Attempt:
    fleet: tuple[Drone, ...]
    plan: Plan | None
    verdict: Any | None
    note: str
    ok: bool = False  # this attempt is the draft's current version


def _build_job(world: World, intent: Any, start_at: datetime, area: BaseGeometry, limits: Any) -> Any:
    from planner.job import Job

    mission = intent.mission_type.value if intent.mission_type is not None else None
    kinds = {"HYDRANTS": "hydrant", "ROOFS": "roof", "MASTS": "mast", "GATES": "gate", "ASSETS": "asset"}
    poi_kinds = frozenset(kinds[t.value] for t in intent.targets if t.value in kinds) or frozenset({"hydrant"})
    return Job(
        mission_type=mission,
        area_wgs84=area,
        start_at=start_at,
        altitude_m=limits.altitude_m(intent.altitude_m or None, world.defaults.altitude_m),
        sensors=frozenset(s.value for s in intent.sensors),
        poi_kinds=poi_kinds,
    )


def _candidate_fleets(world: World, job: Any, rules: Any, now: datetime, tenant: str) -> tuple[list[tuple[Drone, ...]], list[str]]:
    """Ordered alternative fleets (``rules.eligibility``) and, when there are none, what is missing."""
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
    return fleets, missing


def _plan_once(world: World, job: Any, fleet: Sequence[Drone], rules: Any) -> Plan:
    from planner.mission import plan_mission
    from rules.limits import planning_limits

    return plan_mission(world, job, tuple(fleet), limits=planning_limits(rules, world))


def _attempts(world: World, job: Any, rules: Any, now: datetime, tenant: str) -> tuple[list[_Attempt], list[str]]:
    """Try the candidate fleets in order until one is neither blocked for lack of capacity nor short.

    Short: targets left unserved, or no sortie at all. A plan blocked by
    airspace, altitude or weather ends the search (another dock would not fix
    a hard rule; the approver sees the findings). When every fleet falls
    short, the last plan that has sorties and is not blocked is kept as a
    partial DRAFT (its ``unserved`` says what is left); otherwise the request
    waits for resources.
    """
    fleets, missing = _candidate_fleets(world, job, rules, now, tenant)
    attempts: list[_Attempt] = []
    for fleet in fleets[:MAX_ALTERNATIVES]:
        label = ", ".join(d.id for d in fleet)
        try:
            # What is stored, hashed, approved and dispatched is the canonical (rounded) plan: evaluate that one.
            plan = plan_from_dict(plan_to_dict(_plan_once(world, job, fleet, rules)))
        except PlanInfeasible as exc:
            missing.append(f"[{label}]: {exc.message}")
            continue
        verdict = _evaluate(plan, world, rules, _context(now, job, "plan"))
        if verdict.blocked and not verdict.capacity_blocked:
            attempts.append(_Attempt(fleet, plan, verdict, f"[{label}]: planned (blocked by a hard rule)", ok=True))
            return attempts, missing
        if not verdict.blocked and plan.sorties and not plan.unserved:
            attempts.append(_Attempt(fleet, plan, verdict, f"[{label}]: planned", ok=True))
            return attempts, missing
        why = "; ".join(f.message_en for f in verdict.blocking) or "; ".join(
            f"{u.target_id}: {u.reason}" for u in plan.unserved[:5]
        ) or "no sortie could be planned"
        attempts.append(_Attempt(fleet, plan, verdict, f"[{label}]: short of capacity: {why}"))
        missing.append(f"[{label}]: {why}")
    for i in range(len(attempts) - 1, -1, -1):
        a = attempts[i]
        if a.plan is not None and a.plan.sorties and not a.verdict.blocked:
            kept = replace(a, note=a.note.replace("short of capacity", "planned, partial"), ok=True)
            return attempts[:i] + attempts[i + 1:] + [kept], missing
    return attempts, missing


def _write_files(
    draft_id: str, version: int, plan: Plan | None, world: World, summary: Mapping[str, Any], home: Path
) -> dict[str, str]:
    """Write a version's files atomically (a temporary folder renamed into place)."""
    final = draft_dir(draft_id, version, home)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".tmp-v{version}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        (tmp / "draft.json").write_text(
            json.dumps(dict(summary), ensure_ascii=False, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
        )
        if plan is not None:
            (tmp / "plan.json").write_text(canonical_json(plan), encoding="utf-8")
            (tmp / "plan.geojson").write_text(
                json.dumps(plan_to_geojson(plan), ensure_ascii=False, sort_keys=True), encoding="utf-8"
            )
            from planner.mapimage import render_plan_png

            (tmp / "map.png").write_bytes(render_plan_png(plan, world))
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return _files_of(draft_id, version, home)


def _files_of(draft_id: str, version: int, home: Path | None = None) -> dict[str, str]:
    d = draft_dir(draft_id, version, home)
    out: dict[str, str] = {}
    for key, name in (("draft", "draft.json"), ("plan", "plan.json"), ("plan_geojson", "plan.geojson"), ("map", "map.png")):
        if (d / name).is_file():
            out[key] = str(d / name)
    return out


def _summary(rec: DraftRecord, *, files: dict[str, str] | None = None, versions: list[int] | None = None,
             created: bool = True) -> DraftSummary:
    plan = rec.plan or {}
    sorties = [
        SortieSummary(
            index=s["index"],
            drone=s["drone_id"],
            dock=s["dock_id"],
            start_at=s["start_at"],
            distance_m=s["distance_m"],
            duration_s=s["duration_s"],
            energy_wh=s["energy_wh"],
            battery_fraction=s["battery_fraction"],
        )
        for s in plan.get("sorties", [])
    ]
    intent = rec.intent or {}
    return DraftSummary(
        draft_id=rec.draft_id,
        version=rec.version,
        status=rec.state,
        row_version=rec.row_version,
        plan_hash=rec.plan_hash,
        verdict=rec.verdict,
        findings=rec.findings,
        sorties=sorties,
        missing=rec.missing,
        files=files if files is not None else _files_of(rec.draft_id, rec.version),
        tenant=rec.tenant,
        region_id=rec.region_id,
        requested_by=rec.requested_by,
        request_text=rec.request_text,
        mission_type=(intent.get("intent") or {}).get("mission_type") or plan.get("mission_type"),
        planned_for=plan.get("planned_for"),
        extractor=intent.get("extractor"),
        world_name=rec.world_name,
        world_hash=rec.world_hash,
        created_time=rec.created_time,
        versions=versions or [rec.version],
        created=created,
        notes=rec.notes,
    )


def ensure_files(rec: DraftRecord, world: World | None = None) -> dict[str, str]:
    """A version's files, rewritten from the ledger when missing (say after a crash between commit and write)."""
    files = _files_of(rec.draft_id, rec.version)
    if "draft" in files and ("map" in files or rec.plan is None):
        return files
    if world is None:
        try:
            world = load_world_at(rec.world_dir)
        except SortieError:
            return files
    plan = None if rec.plan is None else plan_from_dict(rec.plan)
    return _write_files(rec.draft_id, rec.version, plan, world, _summary(rec, files={}).to_dict(), sortie_home())


def _start_at(extraction: Any, world: World, now: datetime) -> datetime:
    start = getattr(extraction, "start_at", None)
    if start is not None:
        return start
    from zoneinfo import ZoneInfo

    tz = ZoneInfo(world.timezone)
    clock = getattr(extraction, "start_time", None) or "09:00"
    hh, mm = (int(x) for x in clock.split(":"))
    return datetime.combine(extraction.date, dtime(hh, mm), tzinfo=tz)


def _extract(text: str, *, region_id: str | None, now: datetime, world: World, llm_settings: Any | None) -> Any:
    from intents.extract import extract_intent

    return extract_intent(text, region_id=region_id, now=now, timezone=world.timezone, settings=llm_settings)


def _tenant_for(world: World, user: User, region_id: str | None, area: BaseGeometry) -> str:
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


def _new_versions(
    *,
    draft_id: str,
    first_version: int,
    request_key: str,
    tenant: str,
    region_id: str | None,
    requested_by: str,
    text: str,
    extraction: Any,
    area: BaseGeometry,
    attempts: list[_Attempt],
    missing: list[str],
    world: World,
    world_dir: Path,
) -> tuple[list[NewVersion], list[str], list[Plan | None]]:
    intent_doc = extraction.to_dict() if hasattr(extraction, "to_dict") else {"intent": extraction.model_dump(mode="json")}
    notes_base = {"area": _area_dict(area), "region_id": region_id}
    rows: list[NewVersion] = []
    reasons: list[str] = []
    plans: list[Plan | None] = []
    final_ok = bool(attempts) and attempts[-1].ok
    entries: list[tuple[_Attempt | None, str]] = [(a, "DRAFT") for a in attempts if a.plan is not None]
    if not final_ok:
        entries.append((None, "WAITING_RESOURCE"))
    for i, (a, state) in enumerate(entries):
        plan = a.plan if a is not None else None
        verdict, findings = _verdict_of(a.verdict) if a is not None else ("waiting", [])
        if state == "WAITING_RESOURCE":
            verdict = "waiting"
        rows.append(
            NewVersion(
                draft_id=draft_id,
                version=first_version + i,
                state=state,
                request_key=request_key,
                tenant=tenant,
                region_id=region_id,
                requested_by=requested_by,
                request_text=text,
                intent=intent_doc,
                plan=None if plan is None else plan_to_dict(plan),
                plan_hash=None if plan is None else plan_hash(plan),
                findings=findings,
                verdict=verdict,
                missing=list(missing) if state == "WAITING_RESOURCE" else [],
                world_name=world.name,
                world_dir=str(world_dir),
                world_hash=world.snapshot_hash,
                notes={**notes_base, "fleet": [d.id for d in a.fleet] if a is not None else [],
                       "attempt": a.note if a is not None else "no fleet left"},
            )
        )
        reasons.append(a.note if a is not None else "no fleet left")
        plans.append(plan)
    return rows, reasons, plans


def _plan_versions(
    *,
    text: str,
    extraction: Any,
    area: BaseGeometry,
    region_id: str | None,
    tenant: str,
    world: World,
    world_dir: Path,
    now: datetime,
    rules_path: str | Path | None,
    draft_id: str,
    first_version: int,
    request_key: str,
    requested_by: str,
) -> tuple[list[NewVersion], list[str], list[Plan | None]]:
    intent = extraction.intent if hasattr(extraction, "intent") else extraction
    if intent.needs_clarification:
        questions = list(intent.clarification_questions) or [f"missing: {', '.join(intent.missing)}"]
        raise InvalidArgument(
            "the request needs clarification: " + " ".join(questions),
            details={"missing": list(intent.missing), "questions": questions},
        )
    rules = _rules(rules_path)
    from rules.limits import planning_limits

    job = _build_job(world, intent, _start_at(extraction, world, now), area, planning_limits(rules, world))
    attempts, missing = _attempts(world, job, rules, now, tenant)
    return _new_versions(
        draft_id=draft_id,
        first_version=first_version,
        request_key=request_key,
        tenant=tenant,
        region_id=region_id,
        requested_by=requested_by,
        text=text,
        extraction=extraction,
        area=area,
        attempts=attempts,
        missing=missing,
        world=world,
        world_dir=world_dir,
    )


def _record(
    ledger: Ledger,
    rows: list[NewVersion],
    reasons: list[str],
    plans: list[Plan | None],
    world: World,
    *,
    actor: str,
    now: datetime,
    supersede: DraftRecord | None,
) -> list[DraftRecord]:
    home = ledger.path.parent
    for row, plan in zip(rows, plans):
        pre = DraftRecord(
            draft_id=row.draft_id, version=row.version, state=row.state, row_version=1, request_key=row.request_key,
            tenant=row.tenant, region_id=row.region_id, requested_by=row.requested_by, request_text=row.request_text,
            intent=row.intent, plan=row.plan, plan_hash=row.plan_hash, findings=row.findings, verdict=row.verdict,
            missing=row.missing, notes=row.notes, world_name=row.world_name, world_dir=row.world_dir,
            world_hash=row.world_hash, created_time=now.isoformat(), updated_time=now.isoformat(),
        )
        _write_files(row.draft_id, row.version, plan, world, _summary(pre, files={}).to_dict(), home)
    kill_point("plan:after_files")
    recs = ledger.record_versions(rows, actor=actor, now=now, supersede=supersede, reasons=reasons[:-1])
    kill_point("plan:after_commit")
    return recs


# --------------------------------------------------------------------------- public: planning


def plan_draft(
    *,
    text: str,
    region_id: str | None = None,
    area_geojson: Any = None,
    requested_by: str,
    world_dir: str | Path | None = None,
    now: datetime,
    rules_path: str | Path | None = None,
    llm_settings: Any | None = None,
) -> DraftSummary:
    """Extract, plan, evaluate and record a new draft; return its current version.

    ``area_geojson`` is a GeoJSON geometry/Feature/FeatureCollection (dict, text
    or file path); exactly one of it and ``region_id`` is needed (a region the
    request names itself also works). The requester needs the planner role for
    the tenant and region. The same request at the same ``now`` on the same
    world returns the already recorded draft (``created=False``).
    """
    if not text or not text.strip():
        raise InvalidArgument("the request text is empty")
    if region_id is not None and area_geojson is not None:
        raise InvalidArgument("give either --region or --area, not both")
    if now.tzinfo is None:
        raise InvalidArgument("now needs a timezone offset")
    wdir = resolve_world_dir(world_dir)
    world = load_world_at(wdir)
    user = _user(world, requested_by, "plan")
    area_doc = None
    area: BaseGeometry | None = None
    if area_geojson is not None:
        area = _parse_area(area_geojson)
        area_doc = _area_dict(area)
    extraction = _extract(text, region_id=region_id, now=now, world=world, llm_settings=llm_settings)
    intent = extraction.intent if hasattr(extraction, "intent") else extraction
    if region_id is None and area is None and intent.area.kind == "region" and intent.area.region_id:
        region_id = intent.area.region_id
    if region_id is not None:
        area = world.region(region_id).area
    if area is None:
        raise InvalidArgument("where? give --region ID or --area FILE.geojson")
    tenant = _tenant_for(world, user, region_id, area)
    if not user.may("planner", tenant, region_id):
        raise Forbidden(
            f"{user.id} may not plan for tenant {tenant}" + ("" if region_id is None else f" in region {region_id}")
        )
    request_key = _sha(["plan", user.id, text, region_id, area_doc, now.isoformat(), world.snapshot_hash])
    draft_id = "d-" + request_key[:12]
    ledger = open_ledger().ensure()
    existing = ledger.find_by_request_key(request_key)
    if existing is not None:
        return _existing(ledger, existing.draft_id, world)
    rows, reasons, plans = _plan_versions(
        text=text, extraction=extraction, area=area, region_id=region_id, tenant=tenant, world=world,
        world_dir=wdir, now=now, rules_path=rules_path, draft_id=draft_id, first_version=1,
        request_key=request_key, requested_by=user.id,
    )
    try:
        recs = _record(ledger, rows, reasons, plans, world, actor=user.id, now=now, supersede=None)
    except Conflict:
        # The same request recorded concurrently: the first one is the draft.
        if ledger.find_by_request_key(request_key) is None:
            raise
        return _existing(ledger, draft_id, world)
    last = recs[-1]
    return _summary(last, files=_files_of(last.draft_id, last.version), versions=[r.version for r in recs])


def _existing(ledger: Ledger, draft_id: str, world: World) -> DraftSummary:
    versions = ledger.versions(draft_id)
    latest = versions[-1]
    for v in versions:
        ensure_files(v, world)
    return _summary(latest, versions=[v.version for v in versions], created=False)


def replan(
    draft_id: str,
    *,
    requested_by: str,
    world_dir: str | Path | None = None,
    now: datetime,
    rules_path: str | Path | None = None,
) -> DraftSummary:
    """Plan the draft's request again on a fresh world at ``now``: a new version; the old one SUPERSEDED.

    The intent recorded with the draft is reused (no second extraction); the
    area is the one recorded. Two concurrent replans: one wins, the other gets
    ``Conflict``.
    """
    ledger = open_ledger()
    latest = ledger.get_draft(draft_id)
    if latest.state not in _REPLANNABLE:
        raise Conflict(f"draft {draft_id} v{latest.version} is {latest.state}; it can no longer be replanned")
    wdir = resolve_world_dir(world_dir or latest.world_dir)
    world = load_world_at(wdir)
    user = _user(world, requested_by, "replan")
    if not user.may("planner", latest.tenant, latest.region_id):
        raise Forbidden(f"{user.id} may not plan for tenant {latest.tenant}")
    from intents.extract import Extraction
    from intents.intent import Intent
    from intents.timeresolve import resolve_clock, resolve_date, resolve_start

    doc = latest.intent or {}
    intent = Intent.model_validate(doc.get("intent", doc))
    extraction = Extraction(
        intent=intent,
        extractor=str(doc.get("extractor", "ledger")),
        start_at=resolve_start(intent.when, now, world.timezone),
        date=resolve_date(intent.when, now, world.timezone),
        start_time=resolve_clock(intent.when),
    )
    area = shape(latest.notes["area"]) if latest.notes.get("area") else world.region(str(latest.region_id)).area
    rows, reasons, plans = _plan_versions(
        text=latest.request_text, extraction=extraction, area=area, region_id=latest.region_id,
        tenant=latest.tenant, world=world, world_dir=wdir, now=now, rules_path=rules_path, draft_id=draft_id,
        first_version=latest.version + 1, request_key=latest.request_key, requested_by=latest.requested_by,
    )
    supersede = latest if latest.state in _SUPERSEDABLE else None
    recs = _record(ledger, rows, reasons, plans, world, actor=user.id, now=now, supersede=supersede)
    last = recs[-1]
    return _summary(last, versions=[v.version for v in ledger.versions(draft_id)])


# --------------------------------------------------------------------------- public: decisions


def _version_or_latest(ledger: Ledger, draft_id: str, version: int | None) -> DraftRecord:
    return ledger.get_draft(draft_id, version)


def _decider(draft_id: str, version: int, approver: str, world_dir: str | Path | None, what: str) -> tuple[Ledger, User]:
    """The ledger and the approving (or rejecting) user, looked up in the world the version was planned in
    unless ``world_dir`` names another: approve and reject check the same person the same way."""
    ledger = open_ledger()
    rec = ledger.get_draft(draft_id, version)
    return ledger, _user(load_world_at(world_dir or rec.world_dir), approver, what)


def approve(
    draft_id: str,
    version: int,
    *,
    approver: str,
    plan_hash: str | None = None,
    comment: str = "",
    now: datetime,
    world_dir: str | Path | None = None,
    ttl: timedelta = APPROVAL_TTL,
    four_eyes: bool | None = None,
) -> DraftSummary:
    """Approve one version, bound to its plan hash, for ``ttl`` (30 min); see ``Ledger.approve`` for refusals."""
    ledger, user = _decider(draft_id, version, approver, world_dir, "approve")
    ledger.approve(
        draft_id,
        int(version),
        approver_id=user.id,
        may_approve=lambda tenant, region: user.may("approver", tenant, region),
        plan_hash=plan_hash,
        comment=comment,
        now=now,
        ttl=ttl,
        four_eyes=four_eyes_default() if four_eyes is None else four_eyes,
    )
    kill_point("approve:after_commit")
    return show_draft(draft_id, version)


def reject(
    draft_id: str,
    version: int,
    *,
    approver: str,
    reason: str,
    now: datetime,
    world_dir: str | Path | None = None,
) -> DraftSummary:
    """Reject one version (the approver role for its tenant and region is needed; a reason is required)."""
    ledger, user = _decider(draft_id, version, approver, world_dir, "reject")
    ledger.reject(
        draft_id,
        int(version),
        approver_id=user.id,
        may_approve=lambda tenant, region: user.may("approver", tenant, region),
        reason=reason,
        now=now,
    )
    return show_draft(draft_id, version)


# --------------------------------------------------------------------------- public: dispatch


def _recheck(rec: DraftRecord, world: World, now: datetime, rules_path: str | Path | None) -> list[str]:
    """Rules again on a fresh world snapshot at dispatch time; refuse if anything blocks now."""
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
    rules = _rules(rules_path)
    sensors = ((rec.intent or {}).get("intent") or {}).get("sensors") or []

    class _J:  # the context only needs the required sensors
        pass

    job = _J()
    job.sensors = frozenset(sensors)  # type: ignore[attr-defined]
    verdict = _evaluate(plan, world, rules, _context(now, job, "dispatch"))
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


def _dispatch_summary(d: DispatchRecord, *, first: bool, draft_status: str, message: str,
                      checks: list[str] | None = None) -> DispatchSummary:
    return DispatchSummary(
        draft_id=d.draft_id,
        version=d.version,
        idempotency_key=d.idempotency_key,
        status=d.status,
        first=first,
        dry_run=False,
        draft_status=draft_status,
        message=message,
        checks=checks or [],
        result=d.result,
        attempts=d.attempts,
    )


def dispatch(
    draft_id: str,
    version: int | None = None,
    *,
    actor: str,
    now: datetime,
    link: str | Mapping[str, str] | None = None,
    dry_run: bool = False,
    world_dir: str | Path | None = None,
    rules_path: str | Path | None = None,
    timeout_s: float = 30.0,
) -> DispatchSummary:
    """Dispatch one approved version (the latest when ``version`` is None), once ever.

    Order: the dispatcher role; an earlier dispatch of this version → its first
    outcome (PENDING while in flight; other parameters → ``Conflict``); a
    matching unexpired approval (``ApprovalRequired``/``ApprovalStale``); the
    rules on a FRESH world snapshot (``DeviceUnavailable``/``AirspaceBlocked``);
    then ``dry_run`` stops and reports. Otherwise the idempotency key is claimed
    in the ledger, the plan uploaded over MAVLink (``flows.vehicle.upload``), and the
    outcome recorded: ACKED → DISPATCHED, a refusal → FAILED (draft ABORTED),
    an unknown outcome → UNCERTAIN (never re-sent blind).
    """
    ledger = open_ledger()
    rec = ledger.get_draft(draft_id, version)
    world = load_world_at(world_dir or rec.world_dir)
    user = _user(world, actor, "dispatch")
    if not user.may("dispatcher", rec.tenant, rec.region_id):
        raise Forbidden(f"{user.id} may not dispatch drafts of tenant {rec.tenant}")
    if rec.plan_hash is None:
        raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state} and has no plan to dispatch")
    key = idempotency_key(draft_id, rec.version, rec.plan_hash)
    params = {"link": dict(link) if isinstance(link, Mapping) else link}
    earlier = ledger.get_dispatch(key)
    if earlier is not None:
        if earlier.params_hash != params_hash(params):
            raise Conflict(
                f"draft {draft_id} v{rec.version} was already dispatched with other parameters "
                f"({json.dumps(earlier.params)}); a version is dispatched once"
            )
        return _first_outcome(ledger, earlier, now=now)
    ledger.valid_approval(draft_id, rec.version, now=now)
    checks = ["approval matches this version and plan hash and has not expired"]
    checks += _recheck(rec, world, now, rules_path)
    if dry_run:
        return DispatchSummary(
            draft_id=draft_id, version=rec.version, idempotency_key=key, status="DRY_RUN", first=True, dry_run=True,
            draft_status=rec.state, message="dry run: every check passed; nothing was claimed or sent",
            checks=checks, files=_files_of(draft_id, rec.version),
        )
    from flows.vehicle.linkspec import check_links
    from flows.vehicle.upload import upload_plan as upload  # pymavlink is heavy: only a real dispatch loads it

    drones = sorted({s["drone_id"] for s in (rec.plan or {}).get("sorties", [])})
    check_links(drones, link)  # before the claim: a wrong --link must not use up the dispatch
    claim = ledger.claim_dispatch(draft_id, rec.version, plan_hash=rec.plan_hash, params=params, actor=user.id, now=now)
    if not claim.claimed:
        return _first_outcome(ledger, claim.dispatch, now=now)
    kill_point("dispatch:after_claim")
    plan = plan_from_dict(rec.plan or {})

    def on_attempt(entry: dict[str, Any]) -> None:
        try:
            ledger.record_attempt(key, entry, now=now)
        except SortieError:
            pass  # the outcome below is recorded regardless; an attempt log line is not worth failing for

    try:
        outcome = upload(plan, world, link=link, timeout_s=timeout_s, on_attempt=on_attempt)
        status, result = "ACKED", _outcome_dict(outcome)
        result["message"] = "the vehicle accepted the mission"
    except DispatchFailed as exc:
        status, result = "FAILED", {"message": exc.message, "outcome": exc.details}
    except DeviceUnavailable as exc:
        status, result = "FAILED", {"message": exc.message, "outcome": exc.details}
    except DispatchUncertain as exc:
        status, result = "UNCERTAIN", {"message": exc.message, "outcome": exc.details}
    except SortieError as exc:
        status, result = "FAILED", {"message": exc.message, "code": exc.code}
    except Exception as exc:  # noqa: BLE001 - a crash mid-upload: what the vehicle holds is unknown
        status, result = "UNCERTAIN", {"message": f"the upload stopped with {type(exc).__name__}: {exc}"}
    kill_point("dispatch:after_upload")
    done = ledger.finish_dispatch(key, status=status, result=result, actor=user.id, now=now)
    draft_now = ledger.get_draft(draft_id, rec.version).state
    if status == "UNCERTAIN":
        raise DispatchUncertain(
            f"{result['message']} (draft {draft_id} v{rec.version} stays {draft_now}; read the mission back, "
            "do not re-send)",
            details=_dispatch_summary(done, first=True, draft_status=draft_now, message=result["message"]).to_dict(),
        )
    if status == "FAILED":
        raise DispatchFailed(
            f"{result['message']} (draft {draft_id} v{rec.version} is now {draft_now})",
            details=_dispatch_summary(done, first=True, draft_status=draft_now, message=result["message"]).to_dict(),
        )
    return _dispatch_summary(done, first=True, draft_status=draft_now, message=result["message"], checks=checks)


def _outcome_dict(outcome: Any) -> dict[str, Any]:
    if hasattr(outcome, "to_dict"):
        return dict(outcome.to_dict())
    if isinstance(outcome, Mapping):
        return dict(outcome)
    return {"outcome": str(outcome)}


def _first_outcome(ledger: Ledger, d: DispatchRecord, *, now: datetime) -> DispatchSummary:
    """The answer to a repeated dispatch: the first one's outcome, never a second upload."""
    state = ledger.get_draft(d.draft_id, d.version).state
    if d.status == "PENDING" and not d.owner_alive():
        msg = (
            f"the first dispatch (pid {d.owner_pid}, {d.created_time}) died before recording its outcome; "
            "what reached the vehicle is unknown: read its mission back before anything else, never re-send blind"
        )
        try:
            d = ledger.finish_dispatch(
                d.idempotency_key, status="UNCERTAIN", result={"message": msg}, actor="sortie", now=now,
                expected_status=("PENDING",),
            )
        except Conflict:
            d = ledger.get_dispatch(d.idempotency_key) or d
        return _dispatch_summary(d, first=False, draft_status=state, message=msg)
    msg = {
        "PENDING": "a dispatch of this version is in flight; this is its outcome so far",
        "ACKED": "already dispatched: the vehicle accepted the mission",
        "SENT": "already dispatched",
        "UNCERTAIN": "the first dispatch's outcome is unknown; read the mission back, do not re-send",
        "FAILED": "the first dispatch failed; replan to try again",
    }[d.status]
    return _dispatch_summary(d, first=False, draft_status=state, message=msg)


# --------------------------------------------------------------------------- public: reading


def check_visible(draft_id: str, user: str, *, world_dir: str | Path | None = None) -> None:
    """``Forbidden`` unless ``user`` belongs to the draft's tenant (a user sees only their tenants' drafts)."""
    rec = open_ledger().get_draft(draft_id)
    world = load_world_at(world_dir or rec.world_dir)
    u = _user(world, user, "see drafts")
    if rec.tenant not in u.tenants and "*" not in u.tenants:
        raise Forbidden(f"{u.id} does not see drafts of tenant {rec.tenant}")


def list_drafts(*, user: str | None = None, world_dir: str | Path | None = None, limit: int = 200) -> list[DraftSummary]:
    """The latest version of each draft, newest first; only the user's tenants when ``user`` is given."""
    ledger = open_ledger()
    tenants: list[str] | None = None
    if user:
        world = load_world_at(world_dir)
        tenants = sorted(_user(world, user, "see drafts").tenants)
    return [_summary(r) for r in ledger.list_drafts(tenants=tenants, limit=limit)]


def show_draft(draft_id: str, version: int | None = None) -> DraftSummary:
    """One version (the latest by default) with its files, approvals and dispatch in ``notes``."""
    ledger = open_ledger()
    rec = ledger.get_draft(draft_id, version)
    versions = [v.version for v in ledger.versions(draft_id)]
    approvals = [asdict(a) for a in ledger.approvals(draft_id, rec.version)]
    dispatches = [
        {"idempotency_key": d.idempotency_key, "status": d.status, "attempts": d.attempts, "result": d.result}
        for d in ledger.dispatches(draft_id)
        if d.version == rec.version
    ]
    s = _summary(rec, versions=versions)
    return replace(s, notes={**s.notes, "approvals": approvals, "dispatches": dispatches})


def diff_versions(draft_id: str, v1: int, v2: int) -> dict[str, Any]:
    """What changed between two versions: state, hash, verdict, sorties and findings."""
    ledger = open_ledger()
    a, b = ledger.get_draft(draft_id, v1), ledger.get_draft(draft_id, v2)
    sa, sb = _summary(a), _summary(b)

    def sorties(s: DraftSummary) -> dict[str, dict[str, Any]]:
        return {f"{x.index}:{x.drone}": asdict(x) for x in s.sorties}

    xa, xb = sorties(sa), sorties(sb)
    fa = {(f["rule_id"], f.get("sortie_index"), f.get("leg_index"), f.get("zone_id")) for f in a.findings}
    fb = {(f["rule_id"], f.get("sortie_index"), f.get("leg_index"), f.get("zone_id")) for f in b.findings}
    return {
        "draft_id": draft_id,
        "from": v1,
        "to": v2,
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


def draft_log(draft_id: str) -> dict[str, Any]:
    """Every event, approval and dispatch of a draft, in order."""
    ledger = open_ledger()
    ledger.get_draft(draft_id)  # NotFound for an unknown id
    return {
        "draft_id": draft_id,
        "events": [asdict(e) for e in ledger.events(draft_id)],
        "approvals": [asdict(a) for a in ledger.approvals(draft_id)],
        "dispatches": [
            {k: v for k, v in asdict(d).items() if k not in ("attempt_log",)} for d in ledger.dispatches(draft_id)
        ],
    }


def export(draft_id: str, version: int | None, fmt: str, *, out: str | Path | None = None,
           world_dir: str | Path | None = None, sortie: int = 0) -> dict[str, Any]:
    """Write a version's plan as geojson | qgc | waypoints | kml (``planner.export_files``); returns the path.

    QGroundControl ``.plan`` and Mission Planner ``.waypoints`` hold one vehicle's
    mission: ``sortie`` picks which (default the first).
    """
    if fmt not in EXPORT_FORMATS:
        raise InvalidArgument(f"format {fmt!r}: expected one of {', '.join(EXPORT_FORMATS)}")
    ledger = open_ledger()
    rec = ledger.get_draft(draft_id, version)
    if rec.plan is None:
        raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state} and has no plan to export")
    plan = plan_from_dict(rec.plan)
    suffix = {"geojson": ".geojson", "qgc": ".plan", "waypoints": ".waypoints", "kml": ".kml"}[fmt]
    target = Path(out) if out else draft_dir(draft_id, rec.version) / f"mission{suffix}"
    from planner import export_files as files

    if fmt == "geojson":
        text = json.dumps(plan_to_geojson(plan), ensure_ascii=False, sort_keys=True, indent=1) + "\n"
        data = text.encode("utf-8")
    elif fmt == "kml":
        data = files.plan_kml(plan)
    else:
        world = load_world_at(world_dir or rec.world_dir)
        if sortie < 0 or sortie >= len(plan.sorties):
            raise InvalidArgument(f"sortie {sortie} is not in the plan (it has {len(plan.sorties)})")
        maker = files.qgc_plan if fmt == "qgc" else files.mission_planner_waypoints
        data = maker(plan, world, sortie).encode("utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(data if isinstance(data, bytes) else str(data).encode("utf-8"))
    os.replace(tmp, target)
    return {"draft_id": draft_id, "version": rec.version, "format": fmt, "path": str(target), "bytes": target.stat().st_size}
