"""The authority's world, loaded once per content and shared by every request in flight.

Why: every request needs the server's world, and parsing the folder again for
each one was half of a read's CPU (issue 27: 49 %), while the folder changes
a few times a day (a fleet file rewritten by a telemetry feed, a zone added).
So each request asks ``WorldCache.current()``, which:

1. takes a *fingerprint* of the folder — each entry's path, type, size,
   inode, mtime and ctime (``os.scandir``; a dozen ``stat`` calls, no read) —
   and, when it is the one the last snapshot was made from, returns that
   snapshot: the same frozen ``World`` object for every request in flight;
2. when the fingerprint changed, reads every file (``read_world_folder``, the
   same bytes ``World.snapshot_hash`` is made of) and hashes them: content
   already seen (a file touched, not changed) gives its snapshot back; new
   content is checked and parsed strictly once, under one lock, while other
   requests wait for it rather than parse it too;
3. fails closed: zone data that cannot be read, or a folder that does not
   parse (a corrupt zone file, a broken fleet file), is ``WORLD_UNAVAILABLE``
   (HTTP 503) for every request until the folder changes again — the failure
   is remembered by fingerprint, so a broken world is not parsed per request.

A file rewritten while it is being read changes the fingerprint between the
two looks: the read is repeated (a bounded number of times), so a snapshot
is never made of half of one version and half of another. The ``ctime``
catches a ``chmod`` that makes a zone file unreadable without changing it.
"""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from flows.errors import WorldUnavailable
from planner.errors import InvalidArgument, NotFound, SortieError
from planner.world.model import World

__all__ = ["WorldCache", "fingerprint", "content_hash"]

#: How many times a folder that changes while it is read is read again before the request is refused.
READ_ATTEMPTS = 5
#: Snapshots kept by content hash (the current one and a few before it: a file flipped back and forth).
KEEP = 4

Fingerprint = tuple[tuple[str, int, int, int, int, int], ...]


def fingerprint(root: Path) -> Fingerprint:
    """(relative path, mode, size, inode, mtime ns, ctime ns) of every entry below ``root``, sorted; hidden entries
    and ``__pycache__`` skipped as ``read_world_folder`` skips them. A missing folder is an empty fingerprint."""
    out: list[tuple[str, int, int, int, int, int]] = []

    def walk(folder: Path, prefix: str) -> None:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            out.append((prefix or ".", -1, 0, 0, 0, 0))
            return
        for e in entries:
            if e.name.startswith(".") or e.name == "__pycache__":
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                out.append((prefix + e.name, -1, 0, 0, 0, 0))
                continue
            out.append((prefix + e.name, st.st_mode, st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns))
            if stat.S_ISDIR(st.st_mode):
                walk(Path(e.path), prefix + e.name + "/")

    walk(root, "")
    return tuple(sorted(out))


def content_hash(files: dict[str, bytes]) -> str:
    """sha256 over every (name, bytes) of a folder read: equal content, equal hash, whatever the timestamps."""
    h = hashlib.sha256()
    for name in sorted(files):
        data = files[name]
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


@dataclass(frozen=True)
class _Seen:
    """What one fingerprint gave: a world, or the refusal to repeat until the folder changes."""

    fingerprint: Fingerprint
    world: World | None
    error: SortieError | None


class WorldCache:
    """The server's world folder as one shared snapshot per content (thread-safe)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._lock = threading.Lock()
        self._seen: _Seen | None = None
        self._by_content: dict[str, World] = {}
        self.loads = 0  # parses done (for tests and the bench: a steady folder costs none)

    def current(self) -> World:
        """The world the folder holds now (``WORLD_UNAVAILABLE`` if it cannot be read or parsed)."""
        fp = fingerprint(self.root)
        seen = self._seen
        if seen is None or seen.fingerprint != fp:
            with self._lock:
                seen = self._seen
                if seen is None or seen.fingerprint != fp:
                    seen = self._load()
                    self._seen = seen
        if seen.error is not None:
            raise seen.error
        assert seen.world is not None
        return seen.world

    def _load(self) -> _Seen:
        """Read the folder (again while it changes under the read), then reuse or parse its content."""
        from flows.world_folder import check_zones_readable
        from flows.world_folder import read_world_folder

        fp = fingerprint(self.root)
        for _ in range(READ_ATTEMPTS):
            try:
                check_zones_readable(self.root)
                files = read_world_folder(self.root)
            except WorldUnavailable as exc:
                return _Seen(fp, None, exc)
            except (OSError, NotFound, InvalidArgument):
                return _Seen(fp, None, WorldUnavailable(
                    "the authority's world folder cannot be read: nothing is planned, approved or dispatched until "
                    "it is back"))
            after = fingerprint(self.root)
            if after == fp:
                break
            fp = after  # a file was rewritten while it was read: read again
        else:
            return _Seen(fp, None, WorldUnavailable("the authority's world folder keeps changing while it is read; "
                                                    "try again"))
        key = content_hash(files)
        world = self._by_content.get(key)
        if world is None:
            try:
                world = self._parse(files)
            except InvalidArgument as exc:  # a corrupt file: the world is unusable, not the request invalid
                return _Seen(fp, None, WorldUnavailable(
                    f"the authority's world does not load ({len(exc.details or [])} problem(s); first: "
                    f"{_first_problem(exc)}): nothing is planned, approved or dispatched until it is fixed",
                    details=exc.details))
            self._by_content[key] = world
            while len(self._by_content) > KEEP:
                self._by_content.pop(next(iter(self._by_content)))
        return _Seen(fp, world, None)

    def _parse(self, files: dict[str, bytes]) -> World:
        from planner.world.files import parse_world

        self.loads += 1
        return parse_world(files, root=str(self.root))


def _first_problem(exc: InvalidArgument) -> str:
    """The first located problem of a world that does not parse, by file name and JSON path (no server path)."""
    details = exc.details if isinstance(exc.details, list) else []
    if details and isinstance(details[0], dict):
        d = details[0]
        return f"{d.get('file', '?')} {d.get('path', '$')}: {d.get('message', '')}".strip()
    return "unknown problem"
