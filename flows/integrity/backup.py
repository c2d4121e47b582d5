"""Ledger backups that are consistent while others write, restores that are checked first, and anchors.

Why: the ledger is the only record of what was approved and flown; a deleted
or damaged file must be recoverable, a restore must not bring back a broken
or foreign file, and a rollback of the whole home must be findable from
somewhere its writer cannot reach.

Backup (``sortie ledger backup DIR``): a consistent copy of the ledger and
its signed head (``Ledger.copy_to``: in our turn after a checkpoint, writers
wait the copy's time; a server copies from one snapshot and nobody waits),
verified read-only in full (chain, states, signatures, dispatch rows, head,
and the anchors the caller names, e.g. the previous backup's), then a signed
checkpoint of what was verified, written beside it as ``ANCHOR.json`` — the
anchor ``sortie ledger verify --against DIR`` checks a later ledger with —
and a ``MANIFEST.json`` (sha256, entry count, key id, ledger id). The folder
is 0700 and its files 0600. The private key is NOT copied: back up the key
folder (``SORTIE_KEY_DIR``, else ``SORTIE_HOME/keys``) on its own; a backup
verifies only with the key that signed it.

Restore (``sortie ledger restore DIR``): check the manifest's sha256, verify
the backup against this home's key, then with the file closed to everyone
(``Ledger.replacing``) move the current file (and head) aside as
``*.replaced-<stamp>`` — never deleted — and put the backup in place.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from flows.errors import LedgerTampered, LedgerUnavailable
from flows.integrity.verify import raise_if_broken, verify_file
from flows.ledger import Checkpoint, Ledger
from flows.ledger.chain import HEAD_SUFFIX
from flows.ledger.checkpoints import ANCHOR_FILE, BACKUP_MANIFEST, write_anchor
from flows.ledger.files import private, private_dir
from planner.errors import InvalidArgument

__all__ = ["backup", "restore", "MANIFEST", "ANCHOR_FILE"]

MANIFEST = BACKUP_MANIFEST
FORMAT = "sortie-ledger-backup/1"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _copy(src: Path, dst: Path) -> None:
    tmp = dst.with_name(f".{dst.name}.{uuid.uuid4().hex[:8]}")
    shutil.copyfile(src, tmp)
    private(tmp)
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, dst)


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


def backup(
    ledger: Ledger,
    dest: str | Path,
    *,
    against: Sequence[tuple[str, Checkpoint]] = (),
    now: datetime | None = None,
) -> dict[str, Any]:
    """Copy the ledger (and its signed head) into ``dest`` consistently, verify the copy (and against the given
    anchors), sign a checkpoint of it, write ``ANCHOR.json`` and the manifest."""
    out = Path(dest)
    if out.exists() and any(out.iterdir()):
        raise InvalidArgument(f"the backup folder {out} is not empty: give a new folder per backup")
    if not ledger.path.exists():
        ledger._check_missing()
        raise InvalidArgument(f"there is no ledger at {ledger.path} to back up")
    private_dir(out)
    name = ledger.path.name
    head = ledger.copy_to(out / name)
    if head is not None:
        _write_private(out / (name + HEAD_SUFFIX), json.dumps(head, sort_keys=True) + "\n")
    report = verify_file(out / name, ledger.keys, out / (name + HEAD_SUFFIX), against=against)
    raise_if_broken(report, f"the ledger being backed up ({ledger.path})")
    anchor = ledger.checkpoint(report, now=now) if report.head_seq else None
    if anchor is not None:
        write_anchor(out, anchor)
    manifest = {
        "format": FORMAT,
        "created_at": (now or datetime.now(timezone.utc)).isoformat(),
        "source": str(ledger.path),
        "file": name,
        "sha256": _sha256(out / name),
        "bytes": (out / name).stat().st_size,
        "entries": report.entries,
        "head_seq": report.head_seq,
        "head_hash": report.head_hash,
        "ledger_id": None if anchor is None else anchor.statement.get("ledger_id"),
        "key_id": ledger.keys.key_id if ledger.keys.exists() else None,
    }
    _write_private(out / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return {**manifest, "dir": str(out), "verified": True,
            "anchor": None if anchor is None else anchor.to_anchor()}


def restore(ledger: Ledger, src: str | Path) -> dict[str, Any]:
    """Put the verified backup in ``src`` in place of the ledger; the current file is moved aside, not deleted."""
    folder = Path(src)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InvalidArgument(f"{folder} is not a ledger backup (no {MANIFEST})") from None
    except ValueError:
        raise LedgerUnavailable(f"the backup manifest {folder / MANIFEST} is damaged") from None
    if manifest.get("format") != FORMAT:
        raise InvalidArgument(f"{folder / MANIFEST} is not a {FORMAT} manifest")
    file = folder / str(manifest.get("file", ledger.path.name))
    if not file.is_file() or _sha256(file) != manifest.get("sha256"):
        raise LedgerTampered(f"the backup file {file} is missing or is not the one its manifest recorded (sha256)")
    if manifest.get("key_id") and ledger.keys.exists() and manifest["key_id"] != ledger.keys.key_id:
        raise LedgerTampered(
            f"the backup was signed by key {manifest['key_id']}, this home's key is {ledger.keys.key_id}: "
            "restore the matching keys folder first"
        )
    head = folder / (file.name + HEAD_SUFFIX)
    report = raise_if_broken(verify_file(file, ledger.keys, head), f"the backup {folder}")
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    moved: list[str] = []
    private_dir(ledger.path.parent)
    with ledger.replacing():  # not quiesced(): the current file may be the damaged one we are replacing
        for p in (ledger.path, ledger.path.with_name(ledger.path.name + ".wal"), ledger.head_path):
            if p.exists():
                aside = p.with_name(f"{p.name}.replaced-{stamp}")
                os.replace(p, aside)
                moved.append(str(aside))
        _copy(file, ledger.path)
        if head.exists():
            _copy(head, ledger.head_path)
    return {
        "restored_from": str(folder),
        "ledger": str(ledger.path),
        "entries": report.entries,
        "head_seq": report.head_seq,
        "moved_aside": moved,
        "verified": True,
    }
