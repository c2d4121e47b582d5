"""The scheduled ledger backup: a Prefect flow around ``sortie ledger backup`` (``Authority.ledger_backup``).

Why a flow: a backup nobody runs is no backup. The ``backup-ledger``
deployment in ``prefect.yaml`` runs this every night; each run writes a new
folder ``<dest_root>/ledger-<UTC time>`` (a consistent copy, verified, with its
manifest) and keeps the newest ``keep`` of them. Put ``dest_root`` on another
disk than SORTIE_HOME; the signing key (``SORTIE_HOME/keys``) is not copied and
must be backed up on its own. With ``SORTIE_SERVER`` set, the worker asks the
server for a copy (its token needs the admin scope and role) and keeps it here.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

__all__ = ["backup_ledger", "run_backup"]

PREFIX = "ledger-"


def run_backup(dest_root: str | Path | None = None, keep: int = 14, *, now: datetime | None = None) -> dict[str, Any]:
    """One backup into a new folder under ``dest_root`` (default ``SORTIE_HOME/backups``), then prune to ``keep``."""
    from flows.authority.views import backup_manifest
    from flows.context import sortie_home
    from flows.orchestration.mission_tasks import authority_for
    from planner.errors import InvalidArgument

    if keep < 1:
        raise InvalidArgument("keep must be at least 1")
    root = Path(dest_root) if dest_root else sortie_home() / "backups"
    stamp = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    result = authority_for("backup-ledger").ledger_backup(root / f"{PREFIX}{stamp}")
    manifest = backup_manifest()
    done = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX) and (p / manifest).is_file())
    pruned = [str(p) for p in done[:-keep]]
    for p in done[:-keep]:
        shutil.rmtree(p)
    return {**result, "pruned": pruned}


@flow(name="backup-ledger", log_prints=False)
def backup_ledger(dest_root: str | None = None, keep: int = 14) -> dict[str, Any]:
    """Back up the ledger consistently (writers wait for the copy) and keep the newest ``keep`` backups."""
    result = run_backup(dest_root, keep)
    get_run_logger().info("ledger backed up to %s (%s entries, verified); pruned %d", result["dir"],
                          result["entries"], len(result["pruned"]))
    return result
