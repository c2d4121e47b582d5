"""One holder per vehicle link on this host: a watch claims its link's address before it opens it.

Why (issue 38): a second ``sortie server`` on the same machine, started on the
demo world, used the same default links (``udpout:127.0.0.1:14550`` …) as the
first: both talked to the same simulated vehicles, and one of them uploaded
and flew a mission on the other's drone. Two hubs, or two drones of one world
pointed at one address, must not share a vehicle: the second is told who holds
it (``LINK_HELD``), opens nothing and tries again later (the holder may stop).

How: an exclusive, non-blocking ``flock`` on a file per address in a directory
of this host (``$XDG_RUNTIME_DIR/sortie-links``, else the temp directory), held
while the link is held; ``flock`` is per open file, so the same process's
claims are kept in a register too: another drone's claim on the same address
is refused like another process's, the same drone's (a watch replaced while
its old link is still lent) shares the lock; a process that dies lets go
with its descriptors. The file says who holds
it (pid, drone, home) for the refusal's message.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
import threading
from pathlib import Path

from flows.errors import Conflict

__all__ = ["LinkClaim", "claim_link", "claims_dir"]


def claims_dir() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base) / "sortie-links"


class LinkClaim:
    """A held claim on one link address for one drone; ``release`` lets it go (the last holder unlocks)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.released = False

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        with _lock:
            held = _held.get(self.key)
            if held is None:
                return
            held[2] -= 1
            if held[2] <= 0:
                del _held[self.key]
                try:
                    fcntl.flock(held[0], fcntl.LOCK_UN)
                finally:
                    os.close(held[0])


#: address → [fd, drone id, claims]: this process's claims (a drone's replaced watch and its successor share one)
_held: dict[str, list] = {}  # type: ignore[type-arg]
_lock = threading.Lock()


def claim_link(connection: str, *, drone_id: str, owner: str) -> LinkClaim:
    """Claim ``connection`` for ``drone_id`` (``owner``: the home or program holding it); ``Conflict`` naming the
    holder when another drone, here or in another process, holds it. The same drone's claims share one lock (a
    watch replaced while a follower still speaks through the old link)."""
    folder = claims_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / (re.sub(r"[^A-Za-z0-9_.-]", "_", connection) + ".lock")
    key = str(path)
    with _lock:
        held = _held.get(key)
        if held is not None:
            if held[1] != drone_id:
                raise _held_by(connection, {"pid": os.getpid(), "drone_id": held[1], "owner": owner})
            held[2] += 1
            return LinkClaim(key)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(path)
            os.close(fd)
            raise _held_by(connection, holder) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "drone_id": drone_id, "owner": owner}).encode())
        _held[key] = [fd, drone_id, 1]
        return LinkClaim(key)


def _held_by(connection: str, holder: dict[str, object]) -> Conflict:
    who = ("another drone of this authority" if holder.get("pid") == os.getpid() else
           f"another sortie process on this host (pid {holder.get('pid', '?')}, {holder.get('owner', '?')})")
    return Conflict(f"the link {connection!r} is held by {who} for {holder.get('drone_id', '?')}: one holder per "
                    "vehicle — give this drone its own link (sortie admin link set) or stop the other holder",
                    details={"holder": holder})


def _holder(path: Path) -> dict[str, object]:
    try:
        return dict(json.loads(path.read_text(encoding="utf-8") or "{}"))
    except (OSError, ValueError):
        return {}
