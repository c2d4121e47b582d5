"""A small JSON file under the server's ``--home``, read and changed under an exclusive lock.

Tokens, TOTP secrets and the policy are few and change rarely, and the admin
commands change them on the server host while the server runs: a file per
concern, locked with ``flock`` for each read-modify-write and replaced
atomically, is enough and needs no second database. Files are created with
mode 0600 (they hold token hashes and TOTP secrets).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["locked_json", "read_json", "CurrentJson"]


def read_json(path: Path, default: dict[str, Any]) -> dict[str, Any]:
    """The file's object, or ``default`` when it does not exist yet."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return default


class CurrentJson:
    """A file read on every request (tokens, policy, links): parsed again only when a ``stat`` says it changed (inode,
    size, mtime, ctime — ``locked_json`` replaces the file, so a revocation is seen at the next request). The memory
    is the reader's own (one per store the server holds), not the process's. The object is shared between callers
    and is the same object while the file does not change: read it, never change it."""

    def __init__(self, path: Path, default: dict[str, Any]) -> None:
        self.path, self.default = path, default
        self._seen: tuple[tuple[int, int, int, int], dict[str, Any]] | None = None

    def read(self) -> dict[str, Any]:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return self.default
        key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        seen = self._seen
        if seen is not None and seen[0] == key:
            return seen[1]
        data = read_json(self.path, self.default)
        self._seen = (key, data)
        return data


@contextmanager
def locked_json(path: Path, default: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Yield the file's object under an exclusive lock; whatever the caller leaves in it is written back."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = read_json(path, default)
        before = json.dumps(data, sort_keys=True)
        yield data
        if json.dumps(data, sort_keys=True) != before:
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            fd2 = os.open(tmp, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
            with os.fdopen(fd2, "w", encoding="utf-8") as fh:
                json.dump(data, fh, indent=1, sort_keys=True)
                fh.write("\n")
            os.replace(tmp, path)
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
