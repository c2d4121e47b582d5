"""Who acts, and how we know: the identity every use case receives explicitly.

In the embedded (local) mode the user id is whatever ``--as``/``SORTIE_USER``
says: the identity is *asserted*, and every result, approval and audit row
says so. Behind ``sortie server`` the id comes from a verified bearer token
(``proof="token"``) or, for an approval made at a shared screen, from a
verified one-time code (``proof="totp"``); the mode is ``server``. An approval
made in local mode never satisfies a dispatch in server mode.

``Policy`` is the approval policy a decision applies (four-eyes, how long an
approval stays valid); it is recorded with every approval.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal

__all__ = ["Actor", "Policy", "as_actor", "LOCAL", "SERVER"]

LOCAL = "local"
SERVER = "server"

Mode = Literal["local", "server"]
Proof = Literal["asserted", "token", "totp"]


@dataclass(frozen=True)
class Actor:
    """A user id plus where the call runs (``mode``) and how the id was proven (``proof``)."""

    id: str
    mode: Mode = "local"
    proof: Proof = "asserted"

    @property
    def identity(self) -> str:
        """``asserted`` in local mode; in server mode how the id was proven (token, totp)."""
        return self.proof

    def stamp(self) -> dict[str, str]:
        """The fields every result, approval and audit row carries."""
        return {"mode": self.mode, "identity": self.proof}


def as_actor(who: str | Actor | None) -> Actor | None:
    """A plain user id (the old call style) is a local, asserted identity."""
    if who is None or isinstance(who, Actor):
        return who
    return Actor(id=str(who))


@dataclass(frozen=True)
class Policy:
    """The approval policy: four-eyes on or off, and an approval's time to live."""

    four_eyes: bool = True
    approval_ttl: timedelta = timedelta(minutes=30)

    def to_dict(self) -> dict[str, Any]:
        return {"four_eyes": self.four_eyes, "approval_ttl_s": int(self.approval_ttl.total_seconds())}
