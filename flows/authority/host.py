"""On the authority's own host: its ledger by ``--home``, and the admin acts done there.

Why in the authority package: verifying or restoring the ledger, issuing a
token for a user of the server's world and auditing an admin act are done by
whoever runs the host, on its files, never through the API. The CLI reaches
them here, as it reaches every use case through the authority.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from flows.context import resolve_world_dir
from flows.integrity.backup import MANIFEST
from flows.ledger import LEDGER_FILE, Ledger, open_ledger
from flows.ledger.checkpoints import ANCHOR_FILE, parse_anchor
from flows.ledger.checkpoints import read_anchor as _read_anchor
from planner.errors import InvalidArgument
from planner.world.model import World

__all__ = ["host_ledger", "verify_ledger", "restore_ledger", "admin_audit", "audit_command", "server_world",
           "known_user", "MANIFEST", "ANCHOR_FILE", "read_anchor", "checked_anchor"]


def host_ledger(home: Path | None) -> Ledger:
    """The ledger of ``--home`` (default SORTIE_HOME). With a server configured and no ``--home``, the ledger is
    the server's: these commands run on its host with its ``--home``, never against a client's own folder."""
    from flows.authority.overrides import server_url

    if home is None and server_url() is not None:
        raise InvalidArgument(
            "SORTIE_SERVER is set: the ledger belongs to the authority; run this on its host with --home DIR"
        )
    if home is not None and (Path(home) / "server.json").is_file():  # the authority's home: its keys sign as server
        from flows.ledger.signing import KeyStore

        return Ledger(Path(home) / LEDGER_FILE, keys=KeyStore(home, mode="server"))
    return open_ledger(home)


def verify_ledger(home: Path | None, *, full: bool = True,
                  against: Sequence[tuple[str, dict[str, Any]]] = ()) -> dict[str, Any]:
    """Walk the hash chain, every draft's states, every approval signature and dispatch row (``full``; else only
    what came after the last signed checkpoint), and check the published anchors ``against`` (name, anchor JSON):
    the first break is refused."""
    from flows.integrity.verify import verify_ledger as verify
    from flows.ledger.checkpoints import parse_anchor

    anchors = [(name, parse_anchor(anchor)) for name, anchor in against]
    return verify(host_ledger(home), full=full, against=anchors).to_dict()


def restore_ledger(home: Path | None, src: Path) -> dict[str, Any]:
    """Verify a backup and put it in place of the ledger (the current file is moved aside, not deleted)."""
    from flows.integrity.backup import restore

    return restore(host_ledger(home), src)


def admin_audit(home: Path, command: str, args: dict[str, Any], code: str = "OK") -> None:
    """The audit row of an admin act on the host (``admin.<command>``): the ledger records who changed what."""
    open_ledger(home).ensure().audit(
        actor=os.environ.get("USER") or "admin", command=f"admin.{command}",
        args={**args, "mode": "server", "identity": "host"}, result_code=code, duration_s=0.0,
        started=datetime.now(timezone.utc),
    )


def audit_command(home: Path, *, actor: str | None, command: str, args: dict[str, Any], code: str,
                  started: datetime, duration_s: float) -> None:
    """The audit row of a whole embedded command that is more than one action (``sortie demo``)."""
    open_ledger(home).audit(actor=actor, command=command, args={**args, "mode": "local", "identity": "asserted"},
                            result_code=code, duration_s=duration_s, started=started)


def server_world(world: str | None, home: Path) -> World:
    """The server's world: ``--world``, else the world the server last started with."""
    from flows.usecases.common import load_world_at

    if world is None and (home / "server.json").is_file():
        world = json.loads((home / "server.json").read_text(encoding="utf-8")).get("world")
    return load_world_at(resolve_world_dir(world))


def known_user(user: str, world: str | None, home: Path) -> None:
    """USER must be in the server's users.json."""
    from flows.usecases.common import user_of

    user_of(server_world(world, home), user, "hold a token")


def read_anchor(path: Any) -> dict[str, Any]:
    """An anchor file (or a backup folder's ``ANCHOR.json``, ``ANCHOR_FILE``; a finished backup folder holds
    ``MANIFEST``) as its checked JSON: what ``--against`` and the backup flow compare a ledger with."""
    return _read_anchor(path).to_anchor()


def checked_anchor(data: Any) -> dict[str, Any]:
    """Published anchor JSON (an artifact's, a request's), checked to be a signed checkpoint statement."""
    return parse_anchor(data).to_anchor()
