"""Opening the ledger's DuckDB file: the header check, DuckDB's own lock, damage, migrations, file modes.

Why a module of its own: both ways of holding the file (a connection per unit
of work for the CLI, ``flows.ledger.file_lock``; one long-lived connection for a
server, ``flows.ledger.shared``) open it the same way and must report a
damaged, foreign or newer file the same way — never as INTERNAL, never by
overwriting it.

File modes: the ledger, its head, its lock files and its write-ahead log are
0600 and the folder that holds them 0700 (issue 28 item 7). DuckDB creates
its files with the process umask, so they are tightened right after it does.
"""

from __future__ import annotations

import os
import random
import stat
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import duckdb

from flows.errors import LedgerUnavailable
from flows.ledger.schema import MIGRATIONS, SCHEMA_VERSION

__all__ = [
    "CONFIG",
    "DAMAGE",
    "check_header",
    "corrupt",
    "damaged",
    "connect",
    "migrate",
    "private",
    "private_dir",
]

#: One thread is plenty for a ledger; never fetch extensions (a SQLite file would trigger a download).
CONFIG = {"threads": 1, "autoinstall_known_extensions": False, "autoload_known_extensions": False}

#: What a damaged file (truncated, a bad block) raises from DuckDB: reported with advice, never INTERNAL.
DAMAGE = (duckdb.IOException, duckdb.InternalException, duckdb.FatalException, duckdb.SerializationException)

_migrated: set[str] = set()
_migrated_lock = threading.Lock()


def private(path: Path) -> None:
    """``path`` readable and writable by its owner only (0600), if it exists."""
    try:
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o600)
    except FileNotFoundError:
        pass


def private_dir(path: Path) -> None:
    """The folder ``path`` (made if missing) open to its owner only (0700).

    Only a folder this user owns, and never a shared one with the sticky bit
    (``/tmp`` given as a home by mistake): those are left as they are.
    """
    path.mkdir(parents=True, exist_ok=True)
    st = os.stat(path)
    if st.st_mode & 0o077 and st.st_uid == os.getuid() and not st.st_mode & stat.S_ISVTX:
        os.chmod(path, 0o700)


def corrupt(path: Path) -> LedgerUnavailable:
    return LedgerUnavailable(
        f"the ledger file {path} is not a DuckDB database (corrupt or a different file); "
        "it was left untouched: move it aside or restore a backup"
    )


def damaged(path: Path, exc: BaseException) -> LedgerUnavailable:
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return LedgerUnavailable(
        f"the ledger file {path} is damaged ({first}); it was left untouched: restore the latest backup "
        "(`sortie ledger restore BACKUP_DIR`), then `sortie ledger verify`"
    )


def check_header(path: Path) -> None:
    """A DuckDB file carries ``DUCK`` at byte 8; anything else is refused before DuckDB touches it."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(12)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise LedgerUnavailable(f"cannot read the ledger {path}: {exc}") from None
    if head[8:12] != b"DUCK":
        raise corrupt(path)


def connect(path: Path, deadline: float, budget_s: float) -> duckdb.DuckDBPyConnection:
    """Connect, retrying DuckDB's lock (held by a process outside our turn) until ``deadline``."""
    check_header(path)
    created = not path.exists()
    delay = 0.005
    attempts = 0
    while True:
        attempts += 1
        try:
            con = duckdb.connect(str(path), config=CONFIG)
            break
        except duckdb.IOException as exc:
            text = str(exc)
            if "not a valid DuckDB database" in text or "not a DuckDB" in text:
                raise corrupt(path) from None
            if "lock" not in text.lower():
                raise damaged(path, exc) from None
            if time.monotonic() >= deadline:
                raise LedgerUnavailable(
                    f"the ledger {path} stayed locked by another process for {budget_s:g} s "
                    f"({attempts} attempts): {text.splitlines()[0]}"
                ) from None
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 1.6, 0.15)
        except DAMAGE as exc:
            raise damaged(path, exc) from None
        except duckdb.Error as exc:
            raise LedgerUnavailable(f"cannot open the ledger {path}: {exc}") from None
    if created:
        private_dir(path.parent)
        private(path)
    return con


def migrate(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    *,
    adopt: Callable[[duckdb.DuckDBPyConnection, set[int]], bool],
    after_adopt: Callable[[duckdb.DuckDBPyConnection], None],
) -> None:
    """Bring the file's schema to ``SCHEMA_VERSION`` in one transaction, once per file per process.

    ``adopt(con, done)`` runs inside that transaction after the SQL of the
    new migrations, with the numbers the file held before (it chains rows
    written before a migration added them to the chain; ``flows.ledger.adopt``);
    when it says it changed something, ``after_adopt`` runs after the commit
    (it writes the head file).
    """
    try:
        key = f"{path.resolve()}#{os.stat(path).st_ino}"
    except OSError:
        key = str(path.resolve())
    if key in _migrated:
        return
    with _migrated_lock:
        if key in _migrated:
            return
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_time VARCHAR NOT NULL)"
            )
            done = {r[0] for r in con.execute("SELECT version FROM schema_migrations").fetchall()}
            if done and max(done) > SCHEMA_VERSION:
                raise LedgerUnavailable(
                    f"the ledger {path} has schema version {max(done)}, newer than this sortie "
                    f"({SCHEMA_VERSION}); upgrade sortie"
                )
            for number, name, sql in MIGRATIONS:
                if number in done:
                    continue
                for statement in sql.split(";"):
                    if statement.strip():
                        con.execute(statement)
                con.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?, ?)",
                    [number, name, datetime.now().astimezone().isoformat()],
                )
            adopted = adopt(con, done)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        if adopted:
            after_adopt(con)
        private_dir(path.parent)
        for p in (path, path.with_name(path.name + ".wal")):
            private(p)
        _migrated.add(key)
