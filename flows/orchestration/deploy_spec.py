"""One source of truth for what ``sortie serve`` and ``prefect deploy --all`` create, and a guard between them.

``prefect.yaml`` (at the project root) is the declaration: the daily patrols'
regions and their cron schedules and the nightly backup's schedule are read
from it by ``sortie serve`` too, so a patrol cannot run at 06:00 under one and
06:30 under the other. Without the file (an installed wheel, no checkout) the
built-in defaults below apply.

The two ways of running must not share a deployment: a deployment created by
``prefect deploy`` belongs to a work pool and its runs are started by a worker
from the pull step's folder, while a served one has no pool and its runs are
started by the serving process. If ``serve`` re-applied a pool deployment of
the same name, every run would break (the worker finds no code path:
``FileNotFoundError: …/None``), so ``serve`` refuses (``pool_conflicts``).

Which Prefect API to talk to is ``flows.authority.prefect_api``'s to say.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["PREFECT_YAML", "Schedule", "PatrolSpec", "patrols", "backup_schedule", "pool_conflicts",
           "DEFAULT_CRON", "DEFAULT_TIMEZONE"]

PREFECT_YAML = Path(__file__).resolve().parents[2] / "prefect.yaml"
DEFAULT_CRON = "0 6 * * *"
DEFAULT_TIMEZONE = "Europe/Helsinki"
_BACKUP_CRON = "15 2 * * *"
_PATROL_ENTRY = "flows/orchestration/mission_run.py:daily_patrol"
_BACKUP_ENTRY = "flows/orchestration/backup_flow.py:backup_ledger"


@dataclass(frozen=True)
class Schedule:
    cron: str
    timezone: str


@dataclass(frozen=True)
class PatrolSpec:
    """One daily patrol deployment: its name, region, requester, schedule and who dispatches it (None: the approver)."""

    name: str
    region_id: str
    requested_by: str
    schedule: Schedule
    dispatcher: str | None = None


def _spec(path: Path | None = None) -> dict[str, Any] | None:
    import yaml

    file = path or PREFECT_YAML
    if not file.is_file():
        return None
    return yaml.safe_load(file.read_text(encoding="utf-8"))


def _schedule(entry: dict[str, Any], default: Schedule) -> Schedule:
    scheds = entry.get("schedules") or []
    if not scheds:
        return default
    return Schedule(str(scheds[0]["cron"]), str(scheds[0].get("timezone") or default.timezone))


def patrols(path: Path | None = None) -> list[PatrolSpec]:
    """The daily patrols ``prefect.yaml`` declares (region-1001 and region-1002 when it is absent)."""
    spec = _spec(path)
    default = Schedule(DEFAULT_CRON, DEFAULT_TIMEZONE)
    if spec is None:
        return [PatrolSpec(r, r, "li.wei", default) for r in ("region-1001", "region-1002")]
    return [
        PatrolSpec(str(d["name"]), str(d["parameters"]["region_id"]), str(d["parameters"].get("requested_by", "li.wei")),
                   _schedule(d, default), d["parameters"].get("dispatcher"))
        for d in spec.get("deployments", []) if d.get("entrypoint") == _PATROL_ENTRY
    ]


def backup_schedule(path: Path | None = None) -> Schedule:
    spec = _spec(path) or {}
    default = Schedule(_BACKUP_CRON, DEFAULT_TIMEZONE)
    entry = next((d for d in spec.get("deployments", []) if d.get("entrypoint") == _BACKUP_ENTRY), None)
    return _schedule(entry, default) if entry else default


def pool_conflicts(names: list[str]) -> list[str]:
    """Of these ``flow/deployment`` names, those that already exist on the server and belong to a work pool."""
    from prefect import get_client
    from prefect.exceptions import ObjectNotFound

    owned = []
    with get_client(sync_client=True) as client:
        for name in names:
            try:
                dep = client.read_deployment_by_name(name)
            except ObjectNotFound:
                continue
            if dep.work_pool_name:
                owned.append(f"{name} (work pool {dep.work_pool_name})")
    return owned
