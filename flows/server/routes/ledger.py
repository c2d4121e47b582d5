"""The authority's ledger routes: a backup made by the server, on the admin's request.

``POST /v1/ledger/backup`` (an admin: the ``admin`` role in the server's
users.json AND a token with the ``admin`` scope) takes the same consistent,
verified copy as ``sortie ledger backup`` (``flows.integrity.backup``) into a
new folder ``<home>/backups/ledger-<UTC time>`` on the server host — a client
never names a path there. With ``include_files`` the copy (ledger file, signed
head, manifest) comes back base64-encoded, so ``sortie ledger backup DIR``
from an admin's machine keeps one off the host and checks it against the
manifest's sha256. The signing key is never sent (back it up on the host).
Verify and restore stay on the host (``sortie ledger verify|restore --home``):
a restore replaces the authority's record and is not a remote operation.
"""

# No ``from __future__ import annotations`` here: FastAPI resolves the handlers' annotations (``kit.Who``).

import base64
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter

from flows.authority.results import BackupView
from flows.server.models import BackupBody
from planner.errors import InvalidArgument

if TYPE_CHECKING:
    from flows.server.kit import Kit, RequestContext

__all__ = ["router", "MAX_SENT_BYTES"]

#: The largest backup sent back in a response; a bigger ledger is fetched from the host's backups folder.
MAX_SENT_BYTES = 64 * 1024 * 1024


def router(kit: "Kit") -> APIRouter:
    r = APIRouter()

    @r.post("/v1/ledger/backup")
    def ledger_backup(body: BackupBody, c: kit.Who) -> BackupView:  # type: ignore[name-defined]
        def work(ctx: "RequestContext") -> dict[str, Any]:
            stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")  # a folder name: the host's real time
            out = ctx.authority().ledger_backup(kit.config.home / "backups" / f"ledger-{stamp}",
                                                against=[(a.name, a.anchor) for a in body.against])
            if body.include_files:
                folder = Path(out["dir"])
                files = sorted(p for p in folder.iterdir() if p.is_file())
                if sum(p.stat().st_size for p in files) > MAX_SENT_BYTES:
                    raise InvalidArgument(f"the backup is larger than {MAX_SENT_BYTES} bytes: fetch {folder} from "
                                          "the server host instead of include_files")
                out["files"] = {p.name: base64.b64encode(p.read_bytes()).decode("ascii") for p in files}
            return out

        return kit.call(c, "ledger.backup", "admin",
                        {"include_files": body.include_files, "against": [a.name for a in body.against]}, work)

    return r
