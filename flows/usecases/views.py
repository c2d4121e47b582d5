"""View models: what a use case hands back to the CLI, the server and the Prefect artifacts.

A view is a frozen dataclass built from ledger records; ``to_dict`` is the
JSON the CLI prints with ``--json`` and the server returns. Nothing here reads
files or the ledger: ``summarize`` takes the record and the file list it is
given, so the same view is built in-process and behind the server.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from flows.ledger import DispatchRecord, DraftRecord

__all__ = ["SortieSummary", "DraftSummary", "DispatchSummary", "summarize", "dispatch_summary", "plain"]


_LEAVES = (str, int, float, type(None))


def plain(value: Any) -> Any:
    """``value`` as ``dataclasses.asdict`` gives it — dataclasses as dicts, every dict, list and tuple a fresh
    copy — with the leaves (str, numbers, None) shared instead of passed one by one through ``copy.deepcopy``: they
    are immutable, and the deepcopy of each leaf was a fifth of a server read's CPU under a profiler (issue 44's
    server bench)."""
    if isinstance(value, _LEAVES):
        return value
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in fields(value)}
    return value


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
    # surveys: {"reached", "target", "met"}, the share of the free area the sweeps image and what was asked
    coverage: dict[str, Any] | None = None
    # an answered open request's questions, each with its answer, who gave it and when; and that request's id
    clarifications: list[dict[str, Any]] = field(default_factory=list)
    request_id: str | None = None

    @property
    def state(self) -> str:
        return self.status

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = plain(self)
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
        return plain(self)  # type: ignore[no-any-return]


def summarize(
    rec: DraftRecord, *, files: dict[str, str], versions: list[int] | None = None, created: bool = True
) -> DraftSummary:
    """The view of one stored version (its files are listed by the caller, who knows where they live)."""
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
    params = plan.get("parameters") or {}
    coverage = None
    if plan.get("coverage_fraction") is not None and "coverage_target" in params:
        coverage = {"reached": plan["coverage_fraction"], "target": params["coverage_target"],
                    "met": bool(params.get("coverage_target_met"))}
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
        files=files,
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
        coverage=coverage,
        clarifications=list(intent.get("clarifications_answered") or []),
        request_id=intent.get("request_id"),
    )


def dispatch_summary(
    d: DispatchRecord, *, first: bool, draft_status: str, message: str, checks: list[str] | None = None
) -> DispatchSummary:
    """The view of a recorded dispatch."""
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
