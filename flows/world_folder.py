"""Reading a world folder from disk: the edge in front of ``planner.world.files``.

The planner parses a folder's content (``{relative path: bytes}``) and never opens a file;
this module reads the folder once into that mapping — every file below it, hidden files
and ``__pycache__`` skipped, names relative and ``/``-separated — and hands it over. What
is parsed is exactly what is hashed into ``World.snapshot_hash``.

``load_world`` returns a complete ``World`` or raises ``InvalidArgument`` listing every
problem; a missing folder is ``NotFound``. ``validate_world`` lists the problems without
raising (``sortie world validate``). ``load_world_at`` is the one loader sortie runs on:
``--world``/``SORTIE_WORLD``/the demo world, and *strictly* for the authority — a world
whose zone data cannot be read (no ``zones/`` folder, a zone file that is not a regular
file or cannot be read) is refused with ``WorldUnavailable`` instead of being planned on as
a world without zones (which is what let an old or partial copy of a world dispatch past a
prohibited zone).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from flows.context import resolve_world_dir
from flows.errors import WorldUnavailable
from planner.errors import InvalidArgument, NotFound
from planner.world.model import World
from planner.world.files import WorldProblem, parse_world, world_problems

__all__ = ["load_world", "load_world_at", "check_zones_readable", "read_world_folder", "validate_world"]


def read_world_folder(path: str | Path) -> dict[str, bytes]:
    """``{relative path: bytes}`` of every file in the folder (hidden ones and ``__pycache__`` skipped)."""
    root = _root(path)
    files = sorted(
        p for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in p.relative_to(root).parts)
    )
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in files}


def validate_world(path: str | Path) -> list[WorldProblem]:
    """Every problem in the world folder at ``path`` (empty when it loads). A missing folder is ``NotFound``."""
    return world_problems(read_world_folder(path))


def load_world(path: str | Path) -> World:
    """The complete ``World`` of the folder at ``path``, or ``InvalidArgument`` listing every problem."""
    root = _root(path)
    return parse_world(read_world_folder(root), root=str(root))


def check_zones_readable(world_dir: str | Path) -> None:
    """Fail closed unless ``world_dir/zones`` is a folder whose entries are regular, readable files."""
    root = Path(world_dir)
    zones = root / "zones"
    try:
        st = os.lstat(zones)
    except OSError:
        raise WorldUnavailable(f"the world {str(root)!r} has no zones/ folder: nothing is planned, approved or "
                               "dispatched until its zone data is back") from None
    if not stat.S_ISDIR(st.st_mode):
        raise WorldUnavailable(f"{str(zones)!r} is not a folder: the world's zone data cannot be read")
    try:
        entries = sorted(zones.iterdir())
    except OSError as exc:
        raise WorldUnavailable(f"the zone folder {str(zones)!r} cannot be listed: {exc.strerror}") from None
    for p in entries:
        if p.name.startswith("."):
            continue
        mode = os.lstat(p).st_mode
        if not stat.S_ISREG(mode):
            raise WorldUnavailable(f"zone entry {p.name!r} is not a regular file: the zone data cannot be trusted")
        try:
            with open(p, "rb") as fh:
                fh.read(1)
        except OSError as exc:
            raise WorldUnavailable(f"zone file {p.name!r} cannot be read: {exc.strerror}") from None


def load_world_at(world_dir: str | Path | None, *, strict: bool = False) -> World:
    """Load the world folder (``--world``, ``SORTIE_WORLD``, else the demo world); a fresh snapshot each call.

    ``strict`` (the server) checks the zone data first and refuses a world without it.
    """
    root = resolve_world_dir(world_dir)
    if strict:
        check_zones_readable(root)
    return load_world(root)


def _root(path: str | Path) -> Path:
    root = Path(path).expanduser()
    if not root.exists():
        raise NotFound(f"world folder {str(root)!r} does not exist")
    if not root.is_dir():
        raise InvalidArgument(f"world {str(root)!r} is not a folder", details=[
            {"file": root.name, "path": "$", "message": "a world is a folder of files (see WORLD.md)"}])
    return root
