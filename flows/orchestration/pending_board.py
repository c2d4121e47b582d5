"""The Prefect table artifact ``pending-approvals``: what waits for approval, for whom, until when.

The same list as ``sortie pending`` (the authority's: ``flows.usecases.pending``
embedded, the server's ``GET /v1/pending`` when the flows are its clients),
as one table artifact with a fixed key, so the UI's Artifacts page always has
its latest version (the history of versions shows how it changed). A waiting
run refreshes it when it starts waiting and again once a decision is made; a
refresh that fails is logged and never fails the approval run: the board is a
view, the ledger is the truth.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PENDING_ARTIFACT_KEY", "read_pending", "publish_pending_board", "refresh_pending_board", "refresh_pending_task"]

PENDING_ARTIFACT_KEY = "pending-approvals"


def read_pending(now: str | None = None) -> dict[str, Any]:
    """The pending list, from the authority: the embedded ledger's (all tenants), or the server's (the token's)."""
    from flows.orchestration.mission_tasks import authority_for

    return authority_for("pending-board", now=now).pending()


def publish_pending_board(data: dict[str, Any]) -> str:
    """Create the next version of the ``pending-approvals`` table artifact; returns its key."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    from flows.authority.views import pending_rows

    rows = pending_rows(data)
    description = f"Waiting for approval at {data.get('now') or data.get('server_time')}: {len(rows)} " + (
        "(" + ", ".join(f"{t}: {n}" for t, n in sorted(data.get("by_tenant", {}).items())) + ")" if rows else "")
    if rows:
        create_table_artifact(table=rows, key=PENDING_ARTIFACT_KEY, description=description)
    else:  # an empty table renders as nothing at all in the UI; say so in words
        create_markdown_artifact(markdown="Nothing waits for approval.", key=PENDING_ARTIFACT_KEY, description=description)
    return PENDING_ARTIFACT_KEY


def refresh_pending_board(now: str | None = None) -> str | None:
    """Read and publish the board; a failure is logged, never raised (the run's approval matters more)."""
    import logging

    try:
        return publish_pending_board(read_pending(now))
    except Exception as exc:  # noqa: BLE001 - a view must not fail the approval run
        from prefect.exceptions import MissingContextError
        from prefect.logging import get_run_logger

        try:
            log: Any = get_run_logger()
        except MissingContextError:
            log = logging.getLogger(__name__)
        log.warning("could not refresh the %s artifact: %s", PENDING_ARTIFACT_KEY, exc)
        return None


def _task() -> Any:
    from prefect import task
    from prefect.cache_policies import NO_CACHE

    return task(name="refresh-pending-board", cache_policy=NO_CACHE)(refresh_pending_board)


#: The refresh as a Prefect task (shown on the waiting run's graph); call it inside a flow run.
refresh_pending_task = _task()
