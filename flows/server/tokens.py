"""Bearer tokens: issued per user by an admin on the server host, shown once, stored only as a hash.

A token is ``sortie_<id>_<secret>``: the id finds the record, the sha256 of
the whole token is compared in constant time. A record holds the user, the
scopes the token may use (a service token for Prefect workers is narrowed to
``service,plan,read,dispatch``), when it was created, when it expires and whether it
was revoked. Expiry is judged by the wall clock of the server host, never by a
caller and never by a demo ``--clock`` (a credential's lifetime is real time).
A token expires after ``DEFAULT_LIFETIME`` (90 days) unless the admin gives
another lifetime, or ``never`` on purpose (``sortie admin token create
--expires never``): a token nobody remembers stops working by itself.

The user's roles and tenants are NOT in the token: they are looked up in the
server's own users.json on every request, so a change there takes effect at once.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from flows.errors import Unauthenticated
from flows.server.filestore import CurrentJson, locked_json, read_json
from planner.errors import InvalidArgument, NotFound

__all__ = ["SCOPES", "TokenInfo", "TokenStore", "parse_duration", "parse_lifetime", "claimed_token_id",
           "DEFAULT_LIFETIME"]

#: What a token may be used for. ``approve`` covers approve and reject; ``service`` lets a worker plan on
#: behalf of the requester named in a flow's parameters (never together with ``approve``); ``admin`` is reserved.
SCOPES = frozenset({"read", "plan", "approve", "dispatch", "service", "admin"})
DEFAULT_SCOPES = ("read", "plan", "approve", "dispatch")
_TOKEN = re.compile(r"^sortie_([0-9a-f]{16})_([A-Za-z0-9_-]{20,100})$")
#: How long a token lives when the admin does not say (``--expires 30d``, or ``--expires never`` on purpose).
DEFAULT_LIFETIME = timedelta(days=90)
#: The lifetime that means "no expiry": given explicitly, never by default.
NEVER = None


def parse_duration(text: str) -> timedelta:
    """``90s``, ``15m``, ``12h``, ``30d`` → a positive duration."""
    m = re.fullmatch(r"\s*(\d+)\s*([smhd])\s*", text or "")
    if not m or int(m.group(1)) <= 0:
        raise InvalidArgument(f"duration {text!r}: expected a positive number with s, m, h or d (e.g. 30d)")
    unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[m.group(2)]
    return timedelta(**{unit: int(m.group(1))})


def parse_lifetime(text: str | None) -> timedelta | None:
    """A token's lifetime: ``None`` (not given) is ``DEFAULT_LIFETIME``; ``never`` is no expiry; else a duration."""
    if text is None:
        return DEFAULT_LIFETIME
    if text.strip().lower() == "never":
        return NEVER
    return parse_duration(text)


def claimed_token_id(token: str | None) -> str | None:
    """The id a presented token claims (unverified: for the audit of a refused token; never the secret)."""
    m = _TOKEN.match((token or "").strip())
    return m.group(1) if m else None


@dataclass(frozen=True)
class TokenInfo:
    """A verified token: who it speaks for and what it may do."""

    token_id: str
    user: str
    scopes: frozenset[str]
    expires: str | None


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


class TokenStore:
    """``<home>/auth/tokens.json``: token id → {user, sha256, scopes, created, expires, revoked}."""

    def __init__(self, home: str | Path) -> None:
        self.path = Path(home) / "auth" / "tokens.json"
        self._current = CurrentJson(self.path, {"tokens": {}})

    def create(self, user: str, *, expires: timedelta | None = DEFAULT_LIFETIME,
               scopes: tuple[str, ...] = DEFAULT_SCOPES, label: str = "") -> tuple[TokenInfo, str]:
        """A new token for ``user``: returns its record and the token itself (the only time it is seen).
        ``expires``: its lifetime (90 days unless given; ``None`` only when the admin said ``never``)."""
        bad = set(scopes) - SCOPES
        if bad or not scopes:
            raise InvalidArgument(f"scopes {sorted(bad) or '(none)'}: expected some of {', '.join(sorted(SCOPES))}")
        if "service" in scopes and ("approve" in scopes or "admin" in scopes):
            raise InvalidArgument("a service token (plans on behalf of others) may not also approve or administer")
        token_id = secrets.token_hex(8)
        token = f"sortie_{token_id}_{secrets.token_urlsafe(32)}"
        created = _now()
        until = None if expires is None else (created + expires).isoformat()
        with locked_json(self.path, {"tokens": {}}) as data:
            data["tokens"][token_id] = {
                "user": user, "sha256": _hash(token), "scopes": sorted(set(scopes)), "created": created.isoformat(),
                "expires": until, "revoked": None, "label": label,
            }
        return TokenInfo(token_id, user, frozenset(scopes), until), token

    def verify(self, token: str | None) -> TokenInfo:
        """The token's record, or ``Unauthenticated`` (missing, malformed, unknown, wrong, expired, revoked)."""
        if not token:
            raise Unauthenticated("no token: set SORTIE_TOKEN (ask an admin: sortie admin token create USER)")
        m = _TOKEN.match(token.strip())
        if not m:
            raise Unauthenticated("the token is not a sortie token")
        rec = self._current.read()["tokens"].get(m.group(1))  # parsed once per change
        if rec is None or not hmac.compare_digest(rec["sha256"], _hash(token.strip())):
            raise Unauthenticated("the token is not known to this server")
        if rec.get("revoked"):
            raise Unauthenticated(f"the token was revoked at {rec['revoked']}")
        if rec.get("expires") and _now() >= datetime.fromisoformat(rec["expires"]):
            raise Unauthenticated(f"the token expired at {rec['expires']}")
        return TokenInfo(m.group(1), rec["user"], frozenset(rec["scopes"]), rec.get("expires"))

    def ended(self, token_id: str) -> str | None:
        """Why the token ``token_id`` no longer holds (revoked, expired, unknown), or None while it does: for the
        streams and long polls it keeps open (``flows.server.sessions``)."""
        rec = self._current.read()["tokens"].get(token_id)
        if rec is None:
            return "the token is not known to this server any more"
        if rec.get("revoked"):
            return f"the token was revoked at {rec['revoked']}"
        if rec.get("expires") and _now() >= datetime.fromisoformat(rec["expires"]):
            return f"the token expired at {rec['expires']}"
        return None

    def revoke(self, token_id: str | None = None, *, user: str | None = None) -> list[str]:
        """Revoke one token (by id) or every live token of a user; returns the ids revoked."""
        if not token_id and not user:
            raise InvalidArgument("revoke which token? give its id or --user USER")
        done: list[str] = []
        with locked_json(self.path, {"tokens": {}}) as data:
            for tid, rec in data["tokens"].items():
                if (tid == token_id or (user and rec["user"] == user)) and not rec.get("revoked"):
                    rec["revoked"] = _now().isoformat()
                    done.append(tid)
        if token_id and not done:
            raise NotFound(f"no live token with id {token_id!r}")
        return done

    def list(self) -> list[dict[str, Any]]:
        """Every token's record without its hash."""
        data = read_json(self.path, {"tokens": {}})["tokens"]
        return [{"token_id": tid, **{k: v for k, v in rec.items() if k != "sha256"}} for tid, rec in sorted(data.items())]
