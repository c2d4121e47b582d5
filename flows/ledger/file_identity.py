"""Is the file at the ledger's path the file a process holds open? Its device and inode say.

Why (issue 38): replaced while the server ran, the ledger file at the path was
another file, and the server went on writing into the one it held — deleted,
read by nobody again: a plan answered 200 was lost, and the restart refused
the ledger (its head file counted the lost entries). ``flows.ledger.shared``
records the identity when it opens the file and asks ``problem`` before every
unit of work.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["identity", "problem"]


def identity(path: Path) -> tuple[int, int]:
    """(device, inode) of the file at ``path`` now (``FileNotFoundError`` when there is none)."""
    st = os.stat(path)
    return st.st_dev, st.st_ino


def problem(path: Path, held: tuple[int, int]) -> str | None:
    """Why the file at ``path`` is not the file ``held`` (removed, replaced), or None when it is."""
    try:
        now = identity(path)
    except FileNotFoundError:
        return f"the ledger file {path} was removed while this server holds it open"
    if now != held:
        return (f"the ledger file {path} was replaced while this server holds it open (device/inode "
                f"{held[0]}/{held[1]} opened, {now[0]}/{now[1]} at the path now)")
    return None
