"""One server per home: a lock on ``<home>/server.lock`` held for the life of the process that serves it.

Why: two servers on one home both answered, each with its own clock and its
own flight followers, and each believed it was the only writer of the
ledger. The first server to call ``claim_home`` holds an exclusive ``flock``
on the lock file until its process ends (the kernel drops it when the
process dies, however it dies: no stale lock to clean up); a second gets
``CONFLICT`` at once, naming the first (pid, host, since when), and serves
nothing.

It also makes the home private (0700): the ledger, its head, tokens and keys
live there.

One line in the server: ``claim_home(config.home)``; the claim is kept for
the process (claiming the same home again in the same process returns it).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from flows.errors import Conflict
from flows.ledger.files import private_dir

__all__ = ["HomeClaim", "claim_home", "LOCK_NAME"]

LOCK_NAME = "server.lock"

_HELD: dict[str, "HomeClaim"] = {}
_HELD_LOCK = threading.Lock()


@dataclass
class HomeClaim:
    """The held lock of one home; released when the process ends (or by ``release``)."""

    home: Path
    fd: int | None

    def release(self) -> None:
        with _HELD_LOCK:
            if _HELD.get(str(self.home.resolve())) is self:
                del _HELD[str(self.home.resolve())]
        if self.fd is not None:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_UN)
            finally:
                os.close(self.fd)
                self.fd = None


def claim_home(home: str | Path, *, what: str = "sortie server") -> HomeClaim:
    """Take ``home`` for this process (or return this process's claim), else ``Conflict`` naming who has it."""
    folder = Path(home).expanduser()
    private_dir(folder)
    key = str(folder.resolve())
    with _HELD_LOCK:
        held = _HELD.get(key)
        if held is not None and held.fd is not None:
            return held
        claim = _claim(folder, what)
        _HELD[key] = claim
        return claim


def _claim(folder: Path, what: str) -> HomeClaim:
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            holder = json.loads(os.pread(fd, 4096, 0).decode("utf-8") or "{}")
        except (OSError, ValueError):
            holder = {}
        os.close(fd)
        who = (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, since {holder.get('since', '?')}"
               if holder else "another process")
        raise Conflict(
            f"the home {folder} is already served by another {holder.get('what', what)} ({who}): one server per "
            "home; stop that one first, or give this one another --home",
            details={"home": str(folder), "holder": holder},
        ) from None
    info = {"what": what, "pid": os.getpid(), "host": socket.gethostname(),
            "since": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(info) + "\n").encode("utf-8"), 0)
    return HomeClaim(folder, fd)
