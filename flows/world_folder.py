"""Reading a world folder from disk: the edge in front of ``planner.world.files``.

The planner parses a folder's content (``{relative path: bytes}``) and never opens a file;
this module reads the folder once into that mapping — every file below it, hidden files
and ``__pycache__`` skipped, names relative and ``/``-separated — and hands it over. What
is parsed is exactly what is hashed into ``World.snapshot_hash``.

``load_world`` returns a complete ``World`` or raises ``InvalidArgument`` listing every
problem; a missing folder is ``NotFound``. ``validate_world`` lists the problems without
raising (``sortie world validate``).
"""

from __future__ import annotations

from pathlib import Path

from planner.errors import InvalidArgument, NotFound
from planner.world.model import World
from planner.world.files import WorldProblem, parse_world, world_problems

__all__ = ["load_world", "read_world_folder", "validate_world"]


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


def _root(path: str | Path) -> Path:
    root = Path(path).expanduser()
    if not root.exists():
        raise NotFound(f"world folder {str(root)!r} does not exist")
    if not root.is_dir():
        raise InvalidArgument(f"world {str(root)!r} is not a folder", details=[
            {"file": root.name, "path": "$", "message": "a world is a folder of files (see WORLD.md)"}])
    return root
