"""What a server's answer says about its disk: ``files`` as references relative to its home, never absolute paths.

Why (issue 38): a draft's ``files`` (plan, map, mission files, report) are
written under the server's home; their absolute paths told every caller how
the server's disk is laid out (user names, mount points) and meant nothing on
the caller's machine. A reference relative to the home names the same file
for whoever reads the home (a backup, an operator on the host), and the
contents travel by their own routes (``export``, ``report``: base64).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any

__all__ = ["relative_files"]


@functools.lru_cache(maxsize=8)
def _bases(home: Path) -> tuple[str, ...]:
    """The home as written and as resolved (symlinks followed), each once: every answer is made relative to them,
    and resolving the home for each path was a third of a read's CPU (issue 44's server bench)."""
    return tuple(dict.fromkeys((os.path.normpath(os.path.abspath(home)), os.path.realpath(home))))


def _under(path: str, home: Path) -> str | None:
    for base in _bases(home):
        if path.startswith(base + os.sep):
            return path[len(base) + 1:]  # a POSIX path already (the server runs on POSIX: fcntl, fork)
    return None


def _relative(path: Any, home: Path) -> Any:
    """``path`` relative to ``home`` (as written, else with symlinks resolved); outside it, its name only."""
    if not isinstance(path, str) or not os.path.isabs(path):
        return path
    # normpath first: a ``..`` must not climb out of the home and still read as inside it
    found = _under(os.path.normpath(path), home) or _under(os.path.realpath(path), home)
    return found if found is not None else PurePath(path).name  # outside the home: never where it lies


#: what an answer's walk need not look into (checked before the ``Mapping`` ABC, whose check is slow)
_LEAVES = (str, int, float, type(None))


def relative_files(value: Any, home: Path) -> Any:
    """``value`` with every ``files`` mapping (or list) in it, at any depth, made of references relative to ``home``.

    A container with no ``files`` below it is returned as it is (not copied): the walk is every server answer's
    cost, and copying every dict and list of an answer the authority built for this request alone bought nothing
    (issue 44's server bench); the containers on the way to a ``files`` are new, the answer itself is not changed."""
    if isinstance(value, Mapping):
        out: dict[Any, Any] | None = None if isinstance(value, dict) else dict(value)  # a JSON object: a dict
        for k, v in value.items():
            if k == "files" and isinstance(v, Mapping):
                new: Any = {name: _relative(p, home) for name, p in v.items()}
            elif k == "files" and isinstance(v, list):
                new = [_relative(p, home) for p in v]
            elif isinstance(v, _LEAVES):
                continue
            else:
                new = relative_files(v, home)
                if new is v:
                    continue
            if out is None:
                out = dict(value)
            out[k] = new
        return value if out is None else out
    if isinstance(value, list):
        items: list[Any] | None = None
        for i, v in enumerate(value):
            if not isinstance(v, _LEAVES):
                new = relative_files(v, home)
                if new is not v:
                    if items is None:
                        items = list(value)
                    items[i] = new
        return value if items is None else items
    return value
