"""Signed checkpoints of the chain, and anchors: the same statement, kept where the ledger's writer cannot reach.

A checkpoint says "a walk of ledger L found it intact up to entry N, whose
hash is H", signed by the authority's key. Two uses:

- **start-up that does not grow with history**: the next walk trusts
  everything up to the last checkpoint whose entry N still has hash H, and
  walks only what came after (``flows.ledger.walk.verify_since``). Checkpoints
  are rows of ``chain_checkpoints``; a forged one (no key) does not verify and
  is ignored, a deleted one only makes the next start walk further.
- **anchors against a rollback**: the head file beside the ledger catches an
  older copy of the ledger file, but not an older copy of the whole home
  (file and head file together, each valid on its own). A checkpoint
  published off the host — a backup target, a Prefect artifact — is an
  *anchor*: ``sortie ledger verify --against ANCHOR`` fails when the ledger
  does not hold entry N with hash H (it is older than the anchor, or its
  history was rewritten). The ledger's id (``ledger_meta``) ties an anchor to
  its ledger; backups keep it.

An anchor is JSON: ``{"statement": {...}, "signature": "...", "key_id": "..."}``.
It proves as much as its storage: an anchor the ledger's writer can also
rewrite proves nothing; keep the signing key (``SORTIE_KEY_DIR``) and the
anchors off the host.
"""

from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import duckdb
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from flows.ledger.chain import CHAINED_TABLES, head_row, union_of
from flows.ledger.checks import Break, ChainReport
from flows.ledger.records import _dumps
from flows.ledger.signing import KeyStore
from planner.errors import InvalidArgument

__all__ = [
    "CHECKPOINT_FORMAT",
    "ANCHOR_FILE",
    "BACKUP_MANIFEST",
    "Checkpoint",
    "ledger_id",
    "make_checkpoint",
    "record_checkpoint",
    "latest_checkpoint",
    "check_anchor",
    "write_anchor",
    "read_anchor",
    "parse_anchor",
]

CHECKPOINT_FORMAT = "sortie-ledger-checkpoint/1"
ANCHOR_FILE = "ANCHOR.json"
#: The manifest that makes a folder a backup (``flows.integrity.backup``): such a folder is only ever read.
BACKUP_MANIFEST = "MANIFEST.json"


@dataclass(frozen=True)
class Checkpoint:
    """A signed statement of a verified chain position."""

    statement: dict[str, Any]
    signature: str
    key_id: str

    @property
    def seq(self) -> int:
        return int(self.statement["seq"])

    @property
    def head_hash(self) -> str:
        return str(self.statement["head_hash"])

    def to_anchor(self) -> dict[str, Any]:
        return {"statement": self.statement, "signature": self.signature, "key_id": self.key_id}


def ledger_id(con: duckdb.DuckDBPyConnection) -> str | None:
    row = con.execute("SELECT value FROM ledger_meta WHERE name = 'ledger_id'").fetchone()
    return None if row is None else str(row[0])


def make_checkpoint(con: duckdb.DuckDBPyConnection, keys: KeyStore, report: ChainReport, at: datetime) -> Checkpoint:
    """Sign what a clean walk (``report``) found; ``at`` is when it was verified."""
    statement = {
        "format": CHECKPOINT_FORMAT,
        "ledger_id": ledger_id(con),
        "seq": report.head_seq,
        "head_hash": report.head_hash,
        "scope": report.scope,
        "from_seq": report.from_seq,
        "entries_walked": report.entries,
        "verified_at": at.isoformat(),
    }
    signature, key_id = keys.sign(statement)
    return Checkpoint(statement, signature, key_id)


def record_checkpoint(con: duckdb.DuckDBPyConnection, cp: Checkpoint) -> None:
    """Keep a checkpoint in the ledger (inside the caller's write transaction)."""
    con.execute(
        "INSERT INTO chain_checkpoints (seq, head_hash, scope, statement_json, signature, key_id) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [cp.seq, cp.head_hash, str(cp.statement["scope"]), _dumps(cp.statement), cp.signature, cp.key_id],
    )


def _entry_hash_at(con: duckdb.DuckDBPyConnection, seq: int) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT entry_hash FROM (" + union_of(CHAINED_TABLES, "chain_seq, entry_hash", "chain_seq = ?") + ")",
        [seq] * len(CHAINED_TABLES)).fetchall()]


def latest_checkpoint(con: duckdb.DuckDBPyConnection, keys: KeyStore, *, look_back: int = 20) -> Checkpoint | None:
    """The newest checkpoint that is signed by ``keys``, names this ledger, and whose entry still has its hash."""
    if not keys.exists():
        return None
    head = head_row(con)
    me = ledger_id(con)
    for statement_json, signature, key_id in con.execute(
        "SELECT statement_json, signature, key_id FROM chain_checkpoints ORDER BY checkpoint_id DESC LIMIT ?",
        [look_back],
    ).fetchall():
        try:
            statement = json.loads(statement_json)
        except ValueError:
            continue
        if not keys.verify(statement, signature, key_id) or statement.get("ledger_id") != me:
            continue
        cp = Checkpoint(statement, signature, key_id)
        if head is None or cp.seq > head[0] or (cp.seq and _entry_hash_at(con, cp.seq) != [cp.head_hash]):
            continue
        return cp
    return None


class _Statement(BaseModel):
    """The checked shape of an anchor's statement (the dict itself is what the signature covers)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    format: Literal["sortie-ledger-checkpoint/1"]
    ledger_id: str | None
    seq: int = Field(ge=0)
    head_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    scope: Literal["full", "since"]
    from_seq: int = Field(ge=0)
    entries_walked: int = Field(ge=0)
    verified_at: str


class _AnchorFile(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    statement: _Statement
    signature: str
    key_id: str


def parse_anchor(data: Any) -> Checkpoint:
    """An anchor's JSON (a file, an artifact: a boundary) as a checkpoint; ``InvalidArgument`` when it is not one."""
    try:
        _AnchorFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "the document"
        raise InvalidArgument(f"not a sortie ledger anchor (a signed {CHECKPOINT_FORMAT} statement): {where}: "
                              f"{first['msg']}") from None
    return Checkpoint(dict(data["statement"]), str(data["signature"]), str(data["key_id"]))


def check_anchor(con: duckdb.DuckDBPyConnection, keys: KeyStore, anchor: Checkpoint, name: str) -> list[Break]:
    """Whether this ledger still holds the position ``anchor`` recorded (a rollback or a rewrite is a break)."""
    where = f"anchor {name}"
    if not keys.exists() or not keys.verify(anchor.statement, anchor.signature, anchor.key_id):
        return [Break(where, "its signature does not verify with this installation's key (forged, or the key was "
                             "replaced)")]
    me = ledger_id(con)
    if anchor.statement.get("ledger_id") != me:
        return [Break(where, f"was published for ledger {anchor.statement.get('ledger_id')}, not this one ({me}): "
                             "another ledger was put in its place")]
    head = head_row(con)
    seq = 0 if head is None else head[0]
    when = anchor.statement.get("verified_at")
    if seq < anchor.seq:
        return [Break("ledger", f"holds {seq} entries but the anchor published at {when} recorded {anchor.seq}: "
                                "the ledger was rolled back to an older copy (restore the latest backup)")]
    if anchor.seq and _entry_hash_at(con, anchor.seq) != [anchor.head_hash]:
        return [Break("ledger", f"entry {anchor.seq} is not the one the anchor published at {when} recorded: the "
                                "history was rewritten or replaced")]
    return []


def write_anchor(folder: Path, cp: Checkpoint) -> Path:
    """``folder/ANCHOR.json`` (0600): the checkpoint, published beside a backup."""
    path = folder / ANCHOR_FILE
    tmp = folder / f".{ANCHOR_FILE}.{uuid.uuid4().hex[:8]}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(cp.to_anchor(), indent=2, sort_keys=True) + "\n")
    os.replace(tmp, path)
    return path


def read_anchor(path: Path) -> Checkpoint:
    """An anchor file, or the ``ANCHOR.json`` of a backup folder."""
    file = path / ANCHOR_FILE if path.is_dir() else path
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidArgument(f"no anchor at {file}") from None
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"the anchor {file} cannot be read ({exc})") from None
    return parse_anchor(data)
