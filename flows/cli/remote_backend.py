"""The CLI's server mode: the same operations as the local backend, over HTTP to ``sortie server``.

Results are the server's JSON (already stamped ``"mode": "server"``, the
identity proof and the server's clock); errors come back as the same coded
exceptions. ``export`` writes the bytes the server sent to ``--out`` (or to
``./<draft>-v<n>-mission<suffix>``): the draft folders live on the server.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from flows.client.http import SortieClient

__all__ = ["RemoteBackend"]


class RemoteBackend:
    """The operations of ``flows.cli.backend.Backend``, each one request to the authority.

    (Not a subclass: ``backend`` imports this module, and sibling modules do not import each other in a cycle.)"""

    mode = "server"

    def __init__(self, client: SortieClient) -> None:
        self.client = client

    @classmethod
    def from_env(cls, url: str | None = None) -> RemoteBackend:
        return cls(SortieClient.from_env(url))

    def plan(self, text: str, region: str | None, area: Any, coverage_target: float | None = None) -> dict[str, Any]:
        import json

        doc = json.loads(area) if isinstance(area, str) else area
        return self.client.plan(text, region, doc, coverage_target=coverage_target)

    def drafts(self, limit: int) -> dict[str, Any]:
        return self.client.drafts(limit)

    def show(self, draft_id: str, version: int | None) -> dict[str, Any]:
        return self.client.show(draft_id, version)

    def diff(self, draft_id: str, v1: int, v2: int) -> dict[str, Any]:
        return self.client.diff(draft_id, v1, v2)

    def log(self, draft_id: str) -> dict[str, Any]:
        return self.client.log(draft_id)

    def replan(self, draft_id: str) -> dict[str, Any]:
        return self.client.replan(draft_id)

    def approve(self, draft_id: str, version: int, plan_hash: str | None, comment: str) -> dict[str, Any]:
        return self.client.approve(draft_id, version, plan_hash, comment)

    def reject(self, draft_id: str, version: int, reason: str) -> dict[str, Any]:
        return self.client.reject(draft_id, version, reason)

    def dispatch(self, draft_id: str, version: int | None, link: str | dict[str, str] | None, dry_run: bool) -> dict[str, Any]:
        return self.client.dispatch(draft_id, version, dry_run=dry_run, link=link)

    def export(self, draft_id: str, version: int | None, fmt: str, out: Path | None, sortie: int) -> dict[str, Any]:
        from flows.usecases.reading import write_export

        got = self.client.export(draft_id, fmt, version, sortie)
        data = base64.b64decode(got.pop("content_b64"))
        target = Path(out) if out else Path.cwd() / f"{draft_id}-v{got['version']}-mission{got['suffix']}"
        write_export(target, data)
        return {**got, "path": str(target), "bytes": target.stat().st_size}
