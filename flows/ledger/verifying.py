"""Verifying the ledger while others use it, and signing checkpoints of what was verified.

Why a room: the walk (``flows.ledger.walk``) needs a consistent view of the
ledger and of the head file beside it, and must not keep writers out while it
runs. How it gets one depends on how the file is held:

- **shared** (a server): one snapshot of the shared connection — writers go
  on, the walk sees the ledger as it was when it began;
- **embedded** (the CLI): a consistent copy of the file is taken in our turn
  (writers wait the copy's time, not the walk's), then walked read-only.

A clean walk records a signed checkpoint (``flows.ledger.checkpoints``): the
next start walks only what came after it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import duckdb

from flows.ledger.chain import read_head_file
from flows.ledger.checkpoints import BACKUP_MANIFEST, Checkpoint, check_anchor, latest_checkpoint, make_checkpoint, record_checkpoint
from flows.ledger.checks import Break, ChainReport, check_dispatch_rows, check_draft, check_head
from flows.ledger.files import CONFIG
from flows.ledger.schema import SCHEMA_VERSION
from flows.ledger.signing import KeyStore
from flows.ledger.store import Store
from flows.ledger.walk import verify_all, verify_since
from flows.errors import LedgerUnavailable

__all__ = ["VerifyRoom", "walk_file"]

#: An anchor to check against, named for the report: (name, checkpoint).
Anchor = tuple[str, Checkpoint]


def _walk(con: duckdb.DuckDBPyConnection, keys: KeyStore, recorded: dict[str, Any] | None, *, full: bool,
          against: Sequence[Anchor], head_name: str) -> ChainReport:
    cp = None if full else latest_checkpoint(con, keys)
    if cp is None:
        report = verify_all(con, keys, recorded, head_name)
    else:
        report = verify_since(con, keys, recorded, cp.seq, cp.head_hash, head_name)
    for name, anchor in against:
        report.breaks += check_anchor(con, keys, anchor, name)
    return report


def walk_file(path: Path, keys: KeyStore, recorded: dict[str, Any] | None, *, against: Sequence[Anchor] = (),
              head_name: str = "ledger.duckdb.head") -> ChainReport:
    """Walk a ledger file nobody uses (a copy, a backup) in full, read-only; never raises on a break.

    A file from an older sortie is first migrated in a private copy, as it
    would be on its next open (``flows.ledger.adopt``); ``recorded`` (its own
    head file) is checked against that copy, where the entries it names come
    before the adopted ones.
    """
    try:
        con = duckdb.connect(str(path), read_only=True, config=CONFIG)
    except duckdb.Error as exc:
        raise LedgerUnavailable(f"the ledger copy {path} cannot be opened: {str(exc).splitlines()[0]}") from None
    try:
        try:
            versions = {r[0] for r in con.execute("SELECT version FROM schema_migrations").fetchall()}
        except duckdb.Error:
            versions = set()
        if versions and max(versions) < SCHEMA_VERSION:
            con.close()
            with tempfile.TemporaryDirectory(dir=path.parent, prefix=".upgrade-") as tmp:
                copy = Path(tmp) / path.name
                shutil.copyfile(path, copy)
                Store(copy, keys=keys).ensure()
                return walk_file(copy, keys, recorded, against=against, head_name=head_name)
        return _walk(con, keys, recorded, full=True, against=against, head_name=head_name)
    except duckdb.Error as exc:
        raise LedgerUnavailable(f"the ledger copy {path} is damaged: {str(exc).splitlines()[0]}") from None
    finally:
        try:
            con.close()
        except duckdb.Error:
            pass


class VerifyRoom(Store):
    """Verification of the ledger (full or since the last checkpoint) and its signed checkpoints."""

    def verify(
        self,
        *,
        full: bool = True,
        against: Sequence[Anchor] = (),
        record: bool = True,
        now: datetime | None = None,
    ) -> ChainReport:
        """Check the ledger; a clean result is recorded as a signed checkpoint (``record``).

        ``full``: every entry from the first (``sortie ledger verify``, backups; a
        backup folder — one with a manifest — is walked read-only and never written);
        otherwise only the entries after the last valid checkpoint, plus the
        one-query checks over every row (a server's start). ``against``: anchors
        published elsewhere that the ledger must still hold. Never holds the
        file from others while walking.
        """
        if not self.path.exists():
            self._check_missing()
            return ChainReport()
        if (self.path.parent / BACKUP_MANIFEST).exists():  # a backup folder: read it, never write (nor migrate) it
            return walk_file(self.path, self.keys, read_head_file(self.head_path), against=against,
                             head_name=self.head_path.name)
        if full and not self.is_shared:
            with tempfile.TemporaryDirectory(dir=self.path.parent, prefix=".verify-") as tmp:
                copy = Path(tmp) / self.path.name
                recorded = self.copy_to(copy)
                report = walk_file(copy, self.keys, recorded, against=against, head_name=self.head_path.name)
        else:
            with self._snapshot() as (con, recorded):
                report = _walk(con, self.keys, recorded, full=full, against=against, head_name=self.head_path.name)
        if report.ok and record and report.head_seq:
            self.checkpoint(report, now=now)
        return report

    def checkpoint(self, report: ChainReport, *, now: datetime | None = None) -> Checkpoint:
        """Sign and keep the position a clean walk reached; returns it (publish it as an anchor)."""
        at = now or datetime.now(timezone.utc)

        def work(con: duckdb.DuckDBPyConnection) -> Checkpoint:
            cp = make_checkpoint(con, self.keys, report, at)
            record_checkpoint(con, cp)
            return cp

        return self._write(work, what="checkpoint")

    def check(self, draft_id: str) -> list[Break]:
        """The cheap check before a dispatch: this draft's entries, states and plan; every dispatch row (a
        forgotten or edited one would free a busy drone); the signed head against the head file."""
        if not self.path.exists():
            self._check_missing()
            return []
        with self._snapshot() as (con, recorded):
            return (check_draft(con, draft_id) + check_dispatch_rows(con)
                    + check_head(con, self.keys, recorded, self.head_path.name))

    def latest_checkpoint(self) -> Checkpoint | None:
        """The newest valid checkpoint (the anchor to publish), if any."""
        return self._read(lambda con: latest_checkpoint(con, self.keys), None)
