"""The scheduled ledger backup: a Prefect flow around ``sortie ledger backup`` (``Authority.ledger_backup``).

Why a flow: a backup nobody runs is no backup. The ``backup-ledger``
deployment in ``prefect.yaml`` runs this every night; each run writes a new
folder ``<dest_root>/ledger-<UTC time>`` (a consistent copy, verified, with its
manifest and its signed anchor ``ANCHOR.json``) and keeps the newest ``keep``
of them. Put ``dest_root`` on another disk than SORTIE_HOME; the signing key
(``SORTIE_KEY_DIR``, else ``SORTIE_HOME/keys``) is not copied and must be
backed up on its own. With ``SORTIE_SERVER`` set, the worker asks the server
for a copy (its token needs the admin scope and role) and keeps it here; the
anchors it holds are sent along, and the server checks its ledger against them.

Anchors (issue 28): each run also publishes the backup's signed checkpoint
as the Prefect artifact ``anchor_key`` (default ``sortie-ledger-anchor``) on
the Prefect server — off the ledger's host when Prefect runs elsewhere — and
checks the ledger first against the previous run's anchors (the newest
backup folder's and the artifact): a home rolled back to an older copy fails
the backup (``LEDGER_TAMPERED``) instead of being backed up as if it were the
truth. ``sortie ledger verify --against prefect:sortie-ledger-anchor`` checks
the same on demand. After a deliberate restore of an older backup, the next
backup fails for that reason too: point ``dest_root`` at a new folder and
delete or supersede the artifact on purpose.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger

__all__ = ["backup_ledger", "run_backup", "ANCHOR_ARTIFACT_KEY", "publish_anchor_artifact", "read_anchor_artifact"]

PREFIX = "ledger-"
ANCHOR_ARTIFACT_KEY = "sortie-ledger-anchor"
_JSON_FENCE = "```json\n"


def _previous_anchor(root: Path) -> list[tuple[str, dict[str, Any]]]:
    """The anchor of the newest earlier backup under ``root`` (none before the first backup)."""
    from flows.authority.host import ANCHOR_FILE, MANIFEST, read_anchor

    if not root.is_dir():
        return []
    manifest, anchor = MANIFEST, ANCHOR_FILE
    done = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX) and (p / manifest).is_file()
                  and (p / anchor).is_file())
    return [(f"previous backup {done[-1]}", read_anchor(done[-1]))] if done else []


def run_backup(
    dest_root: str | Path | None = None,
    keep: int = 14,
    *,
    now: datetime | None = None,
    against: Sequence[tuple[str, Any]] = (),
) -> dict[str, Any]:
    """One backup into a new folder under ``dest_root`` (default ``SORTIE_HOME/backups``), checked against the
    previous backup's anchor (and ``against``), then prune to ``keep``."""
    from flows.authority.host import MANIFEST
    from flows.context import sortie_home
    from flows.orchestration.mission_tasks import authority_for
    from planner.errors import InvalidArgument

    if keep < 1:
        raise InvalidArgument("keep must be at least 1")
    root = Path(dest_root) if dest_root else sortie_home() / "backups"
    stamp = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    result = authority_for("backup-ledger").ledger_backup(root / f"{PREFIX}{stamp}",
                                                          against=[*_previous_anchor(root), *against])
    manifest = MANIFEST
    done = sorted(p for p in root.iterdir() if p.is_dir() and p.name.startswith(PREFIX) and (p / manifest).is_file())
    pruned = [str(p) for p in done[:-keep]]
    for p in done[:-keep]:
        shutil.rmtree(p)
    return {**result, "pruned": pruned}


def publish_anchor_artifact(anchor: dict[str, Any], key: str = ANCHOR_ARTIFACT_KEY) -> None:
    """Publish a signed checkpoint as a markdown artifact (inside a flow run): a table for people, the JSON for
    ``sortie ledger verify --against prefect:KEY``."""
    from prefect.artifacts import create_markdown_artifact

    s = anchor["statement"]
    markdown = (
        "| ledger | entry | head hash | verified at |\n|---|---|---|---|\n"
        f"| {s.get('ledger_id')} | {s.get('seq')} | {str(s.get('head_hash'))[:16]}… | {s.get('verified_at')} |\n\n"
        f"{_JSON_FENCE}{json.dumps(anchor, sort_keys=True, indent=1)}\n```\n"
    )
    create_markdown_artifact(markdown=markdown, key=key,
                             description="sortie ledger anchor: the signed chain position of the last backup")


def read_anchor_artifact(key: str = ANCHOR_ARTIFACT_KEY) -> dict[str, Any]:
    """The newest anchor published as artifact ``key`` on the Prefect server (``InvalidArgument`` if none)."""
    from prefect.artifacts import Artifact

    from flows.authority.host import checked_anchor
    from planner.errors import InvalidArgument

    artifact = Artifact.get(key)
    text = str(getattr(artifact, "data", "") or "")
    if artifact is None or _JSON_FENCE not in text:
        raise InvalidArgument(f"no ledger anchor is published as Prefect artifact {key!r}")
    body = text.split(_JSON_FENCE, 1)[1].split("\n```", 1)[0]
    try:
        return checked_anchor(json.loads(body))
    except ValueError as exc:
        raise InvalidArgument(f"the Prefect artifact {key!r} is not a ledger anchor ({exc})") from None


@flow(name="backup-ledger", log_prints=False)
def backup_ledger(dest_root: str | None = None, keep: int = 14, anchor_key: str = ANCHOR_ARTIFACT_KEY) -> dict[str, Any]:
    """Back up the ledger consistently, check it against the last published anchor, publish the new one, and keep
    the newest ``keep`` backups."""
    from planner.errors import InvalidArgument

    try:
        published = [(f"prefect:{anchor_key}", read_anchor_artifact(anchor_key))]
    except InvalidArgument:
        published = []  # the first backup: nothing published yet
    result = run_backup(dest_root, keep, against=published)
    if result.get("anchor"):
        publish_anchor_artifact(result["anchor"], anchor_key)
    get_run_logger().info("ledger backed up to %s (%s entries, verified); anchor %s published; pruned %d",
                          result["dir"], result["entries"], anchor_key, len(result["pruned"]))
    return result
