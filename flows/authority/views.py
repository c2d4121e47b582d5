"""The shapes of the authority's answers a client renders: pending rows, a report's artifact key, a backup folder.

Pure functions of a result, the same in both modes: a client renders what the
authority answered without reaching into the use cases. Each imports its use
case module when called, so a command's import stays light.
"""

from __future__ import annotations

from typing import Any

__all__ = ["pending_rows", "report_artifact_key", "backup_manifest", "anchor_file", "read_anchor", "checked_anchor"]


def pending_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One table row per waiting version of a ``pending()`` answer (``flows.usecases.pending.pending_rows``)."""
    from flows.usecases.pending import pending_rows as rows

    return rows(data)


def report_artifact_key(draft_id: str, version: int) -> str:
    """``report-<id>-v<version>`` in Prefect's artifact key alphabet (``flows.usecases.report``)."""
    from flows.usecases.report import report_artifact_key as key

    return key(draft_id, version)


def backup_manifest() -> str:
    """The file a finished ledger backup folder holds (``flows.integrity.backup.MANIFEST``)."""
    from flows.integrity.backup import MANIFEST

    return MANIFEST


def anchor_file() -> str:
    """The file holding a backup folder's signed anchor (``flows.ledger.checkpoints.ANCHOR_FILE``)."""
    from flows.ledger.checkpoints import ANCHOR_FILE

    return ANCHOR_FILE


def read_anchor(path: Any) -> dict[str, Any]:
    """An anchor file (or a backup folder's ``ANCHOR.json``) as its checked JSON (``flows.ledger.checkpoints``)."""
    from flows.ledger.checkpoints import read_anchor as read

    return read(path).to_anchor()


def checked_anchor(data: Any) -> dict[str, Any]:
    """Published anchor JSON (an artifact's, a request's), checked to be a signed checkpoint statement."""
    from flows.ledger.checkpoints import parse_anchor

    return parse_anchor(data).to_anchor()
