"""Ledger backups that are consistent while others write, and restores that are checked first.

Why: the ledger is the only record of what was approved and flown; a deleted
or damaged file must be recoverable, and a restore must not bring back a
broken or foreign file.

Backup (``sortie ledger backup DIR``): take the ledger's turn (the same
``flock`` every writer waits on, ``Store.quiesced``), ``CHECKPOINT`` so the
write-ahead log is empty, copy the file and its signed head, release. Writers
wait at most the copy time (milliseconds for a ledger of thousands of rows).
Then the copy is verified read-only (chain, states, signatures, head) and a
``MANIFEST.json`` records its sha256, entry count and key id. The private key
is NOT copied: back up ``SORTIE_HOME/keys`` separately (a backup verifies only
with the key that signed it).

Restore (``sortie ledger restore DIR``): check the manifest's sha256, verify
the backup against this home's key, then under the turn move the current file
(and head) aside as ``*.replaced-<stamp>`` — never deleted — and put the
backup in place atomically.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from flows.integrity.verify import raise_if_broken, verify_file
from flows.ledger import Ledger
from flows.ledger.chain import HEAD_SUFFIX
from planner.errors import InvalidArgument, LedgerTampered, LedgerUnavailable

__all__ = ["backup", "restore", "MANIFEST"]

MANIFEST = "MANIFEST.json"
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
    with open(tmp, "rb") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, dst)


def backup(ledger: Ledger, dest: str | Path) -> dict[str, Any]:
    """Copy the ledger (and its signed head) into ``dest`` consistently, verify the copy, write the manifest."""
    out = Path(dest)
    if out.exists() and any(out.iterdir()):
        raise InvalidArgument(f"the backup folder {out} is not empty: give a new folder per backup")
    if not ledger.path.exists():
        ledger._check_missing()
        raise InvalidArgument(f"there is no ledger at {ledger.path} to back up")
    out.mkdir(parents=True, exist_ok=True)
    name = ledger.path.name
    with ledger.quiesced():
        _copy(ledger.path, out / name)
        if ledger.head_path.exists():
            _copy(ledger.head_path, out / (name + HEAD_SUFFIX))
    report = verify_file(out / name, ledger.keys, out / (name + HEAD_SUFFIX))
    raise_if_broken(report, f"the ledger being backed up ({ledger.path})")
    manifest = {
        "format": FORMAT,
        "created_at": datetime.now(timezone.utc).isoformat(),
        "source": str(ledger.path),
        "file": name,
        "sha256": _sha256(out / name),
        "bytes": (out / name).stat().st_size,
        "entries": report.entries,
        "head_seq": report.head_seq,
        "key_id": ledger.keys.key_id if ledger.keys.exists() else None,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return {**manifest, "dir": str(out), "verified": True}


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
    ledger.path.parent.mkdir(parents=True, exist_ok=True)
    with ledger._turn():  # not quiesced(): the current file may be the damaged one we are replacing
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
