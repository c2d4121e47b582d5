"""What a server's answer says about its disk: ``files`` as references relative to its home, never absolute paths.

Why (issue 38): a draft's ``files`` (plan, map, mission files, report) are
written under the server's home; their absolute paths told every caller how
the server's disk is laid out (user names, mount points) and meant nothing on
the caller's machine. A reference relative to the home names the same file
for whoever reads the home (a backup, an operator on the host), and the
contents travel by their own routes (``export``, ``report``: base64).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any

__all__ = ["relative_files"]


def _relative(path: Any, home: Path) -> Any:
    if not isinstance(path, str) or not PurePath(path).is_absolute():
        return path
    for base, p in ((home, Path(path)), (home.resolve(), Path(path).resolve())):
        try:
            return p.relative_to(base).as_posix()
        except ValueError:
            continue
    return PurePath(path).name  # outside the home: its name only, never where it lies


def relative_files(value: Any, home: Path) -> Any:
    """``value`` with every ``files`` mapping (or list) in it, at any depth, made of references relative to ``home``."""
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if k == "files" and isinstance(v, Mapping):
                out[k] = {name: _relative(p, home) for name, p in v.items()}
            elif k == "files" and isinstance(v, list):
                out[k] = [_relative(p, home) for p in v]
            else:
                out[k] = relative_files(v, home)
        return out
    if isinstance(value, list):
        return [relative_files(v, home) for v in value]
    return value
