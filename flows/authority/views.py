"""The shapes of the authority's answers a client renders: pending rows, a report's artifact key, a backup folder.

Pure functions of a result, the same in both modes: a client renders what the
authority answered without reaching into the use cases. Each imports its use
case module when called, so a command's import stays light.
"""

from __future__ import annotations

from typing import Any

__all__ = ["pending_rows", "report_artifact_key", "backup_manifest"]


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
