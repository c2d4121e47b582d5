"""The authority's Ed25519 key, and the signed statements made with it (approvals, the chain head).

Why: an approval is a claim "this person approved exactly this plan, under this
policy, until then". Written as a plain row, anyone who can write the ledger
file can forge it. Signed by the authority's key, a forged or edited approval
no longer verifies, and dispatch refuses it (``APPROVAL_INVALID``).

Where the key lives: ``<home>/keys/authority.ed25519`` (PKCS#8 PEM, 0600, in a
0700 folder) beside ``authority.pub``; ``home`` is ``SORTIE_HOME`` for the
local installation, and the server passes its own ``--home``. An admin who
wants the key off the ledger's disk (so that whoever can rewrite the home
cannot re-sign a rewritten history, issue 28) sets ``SORTIE_KEY_DIR`` to
another folder — a mounted token, another volume — and every ``KeyStore`` of
the process uses that folder instead. The key is made on first use,
atomically (``os.link`` of a finished file: two processes racing both end up
with the one key that won).

``mode`` says who signed: ``local`` (the installation's own key, the identity
of the approver only *asserted*) or ``server`` (the authority, identity proven
by token/TOTP). A server refuses local statements (``verify_statement(...,
require_mode="server")``).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from flows.errors import ApprovalInvalid, LedgerUnavailable

__all__ = ["KeyStore", "canonical_bytes", "verify_statement", "MODES", "KEY_DIR_ENV", "WriteContext", "signing_with",
           "current_keys", "current_write"]

KEY_DIR = "keys"
#: The environment variable naming a key folder outside the home.
KEY_DIR_ENV = "SORTIE_KEY_DIR"
PRIVATE_NAME = "authority.ed25519"
PUBLIC_NAME = "authority.pub"
MODES = ("local", "server")


def canonical_bytes(obj: Any) -> bytes:
    """The bytes a statement is signed over: canonical JSON (sorted keys, no spaces, UTF-8)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8")


def _key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


@dataclass(frozen=True)
class _Loaded:
    private: Ed25519PrivateKey
    public: Ed25519PublicKey
    key_id: str


class KeyStore:
    """The signing key of one home (``<home>/keys``), made on first use; ``mode`` is stamped on statements."""

    def __init__(self, home: str | Path, *, mode: str = "local", key_dir: str | Path | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
        chosen = key_dir or os.environ.get(KEY_DIR_ENV)
        self.dir = Path(chosen).expanduser() if chosen else Path(home) / KEY_DIR
        self.mode = mode
        self._loaded: _Loaded | None = None

    def __repr__(self) -> str:
        return f"KeyStore({str(self.dir)!r}, mode={self.mode!r})"

    def exists(self) -> bool:
        return (self.dir / PRIVATE_NAME).is_file()

    def _load(self, *, create: bool) -> _Loaded:
        if self._loaded is not None:
            return self._loaded
        path = self.dir / PRIVATE_NAME
        if not path.is_file():
            if not create:
                raise ApprovalInvalid(
                    f"no signing key at {path}: nothing signed here can be verified (restore the keys folder "
                    "from the backup of this installation)"
                )
            self._create(path)
        try:
            private = serialization.load_pem_private_key(path.read_bytes(), password=None)
        except (OSError, ValueError) as exc:
            raise LedgerUnavailable(f"the signing key {path} cannot be read ({exc}); restore it from a backup") from None
        if not isinstance(private, Ed25519PrivateKey):
            raise LedgerUnavailable(f"the signing key {path} is not an Ed25519 key")
        public = private.public_key()
        self._loaded = _Loaded(private, public, _key_id(public))
        return self._loaded

    def _create(self, path: Path) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        os.chmod(self.dir, 0o700)
        key = Ed25519PrivateKey.generate()
        pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        tmp = self.dir / f".{PRIVATE_NAME}.{uuid.uuid4().hex[:8]}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, pem)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)  # atomic and exclusive: the first writer's key wins
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        pub = serialization.load_pem_private_key(path.read_bytes(), password=None).public_key()
        pub_path = self.dir / PUBLIC_NAME
        pub_tmp = self.dir / f".{PUBLIC_NAME}.{uuid.uuid4().hex[:8]}"
        pub_tmp.write_bytes(pub.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
        os.replace(pub_tmp, pub_path)

    @property
    def key_id(self) -> str:
        return self._load(create=True).key_id

    def sign(self, statement: Any) -> tuple[str, str]:
        """(signature as base64, key id) over the canonical bytes of ``statement``."""
        loaded = self._load(create=True)
        return base64.b64encode(loaded.private.sign(canonical_bytes(statement))).decode("ascii"), loaded.key_id

    def verify(self, statement: Any, signature: str | None, key_id: str | None) -> bool:
        """Whether ``signature`` is this home's key's signature over ``statement``."""
        if not signature or not key_id:
            return False
        loaded = self._load(create=False)
        if key_id != loaded.key_id:
            return False
        try:
            loaded.public.verify(base64.b64decode(signature, validate=True), canonical_bytes(statement))
        except (InvalidSignature, ValueError):
            return False
        return True


def verify_statement(
    keys: KeyStore,
    statement: dict[str, Any],
    signature: str | None,
    key_id: str | None,
    *,
    what: str,
    require_mode: str | None = None,
) -> None:
    """``ApprovalInvalid`` unless the statement is signed by ``keys`` (and made in ``require_mode``)."""
    if not keys.verify(statement, signature, key_id):
        raise ApprovalInvalid(
            f"{what}: the signature does not verify (forged, edited, or signed by another key); "
            "nothing was sent — approve the version again"
        )
    if require_mode is not None and statement.get("mode") != require_mode:
        raise ApprovalInvalid(
            f"{what} was signed in {statement.get('mode')} mode (identity {statement.get('identity_proof')}); "
            f"this authority accepts only {require_mode} approvals"
        )


@dataclass
class WriteContext:
    """The write transaction running now: its key, and the chain head as its entries moved it.

    ``head`` is (seq, hash) after the last entry written in this transaction;
    the signed head row is updated once, just before the commit
    (``flows.ledger.chain.flush_head``), not once per entry.
    """

    keys: KeyStore
    head: tuple[int, str] | None = None
    head_exists: bool = False
    dirty: bool = False
    #: Each draft's last entry hash as this transaction's entries moved it (saves a lookup per further entry).
    draft_last: dict[str, str] = field(default_factory=dict)


_CURRENT: ContextVar[WriteContext | None] = ContextVar("sortie_ledger_write", default=None)


@contextmanager
def signing_with(keys: KeyStore) -> Iterator[WriteContext]:
    """The key (and chain head) of the ledger whose write transaction runs now (set by ``Store._write``).

    Why a context variable: every writer of entries (the rooms here, and any new
    room) chains its rows through ``flows.ledger.chain.chain_values`` without
    passing the key and the head through each signature.
    """
    token = _CURRENT.set(WriteContext(keys))
    try:
        yield _CURRENT.get()  # type: ignore[misc]
    finally:
        _CURRENT.reset(token)


def current_write() -> WriteContext | None:
    return _CURRENT.get()


def current_keys() -> KeyStore:
    ctx = _CURRENT.get()
    if ctx is None:
        raise RuntimeError("a ledger entry was written outside a ledger write transaction (Store._write)")
    return ctx.keys
