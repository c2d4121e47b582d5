"""MAVLink 2 signing keys: a secret store outside the world folder, one file per reference.

A fleet entry names its key by reference (``"signing_key": "m30t-01"``), never
by value: the world folder is shared and versioned, a key must not be. The
store is a directory (``SORTIE_HOME/keys`` by default, or the server's home);
``<ref>.key`` holds the 32-byte secret as 64 hex digits (what ArduPilot's
``SETUP_SIGNING`` and QGroundControl take), whitespace ignored. A reference is
a plain file name, so it cannot reach outside the store.
"""

from __future__ import annotations

import re
from pathlib import Path

from planner.errors import InvalidArgument, NotFound

__all__ = ["key_path", "load_signing_key", "write_signing_key"]

_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def key_path(store: Path, ref: str) -> Path:
    """Where the key ``ref`` lives in ``store``; ``InvalidArgument`` for a reference that is not a plain name."""
    if not _REF.match(ref) or ".." in ref:
        raise InvalidArgument(f"signing key reference {ref!r}: letters, digits, '_', '-', '.' only")
    return store / f"{ref}.key"


def load_signing_key(store: Path, ref: str) -> bytes:
    """The 32-byte secret of ``ref``; ``NotFound`` when the store has no such key, ``InvalidArgument`` when malformed."""
    path = key_path(store, ref)
    try:
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise NotFound(f"signing key {ref!r} is not in the key store {store} (expected {path.name})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgument(f"signing key {ref!r} cannot be read: {exc}") from None
    digits = "".join(text.split())
    try:
        key = bytes.fromhex(digits)
    except ValueError:
        raise InvalidArgument(f"signing key {ref!r} ({path}) is not hex") from None
    if len(key) != 32:
        raise InvalidArgument(f"signing key {ref!r} ({path}) has {len(key)} bytes; a MAVLink 2 key has 32")
    return key


def write_signing_key(store: Path, ref: str, key: bytes) -> Path:
    """Save ``key`` as ``ref`` (owner-only permissions); for set-up and tests."""
    if len(key) != 32:
        raise InvalidArgument("a MAVLink 2 signing key is 32 bytes")
    path = key_path(store, ref)
    store.mkdir(parents=True, exist_ok=True)
    path.write_text(key.hex() + "\n", encoding="ascii")
    path.chmod(0o600)
    return path
