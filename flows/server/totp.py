"""The second factor for approvals at a shared screen: TOTP (RFC 6238, ``pyotp``), one use per code.

``enroll`` makes a secret for a user (stored under ``--home`` with mode 0600:
a TOTP secret is shared, so the server must hold it) and returns the
``otpauth://`` URI an authenticator app scans. ``verify`` accepts the code of
the current 30-second step or one step either side (clock drift), and records
the step it matched: a code, or any code of an earlier step, is never accepted
twice for that user (a replay). Verification and marking happen under one
file lock, so two requests racing with one code cannot both pass.

Codes follow the wall clock of the server host (the approver's phone does),
never the demo ``--clock``.
"""

from __future__ import annotations

import hmac
import time

import pyotp

from flows.server.filestore import locked_json
from planner.errors import InvalidArgument, Unauthenticated

__all__ = ["TotpStore", "ISSUER"]

ISSUER = "sortie"
_STEP_S = 30


class TotpStore:
    """``<home>/auth/totp.json``: user → {secret, last_step}."""

    def __init__(self, home: str) -> None:
        from pathlib import Path

        self.path = Path(home) / "auth" / "totp.json"

    def enroll(self, user: str) -> str:
        """A fresh secret for ``user`` (replacing any earlier one); returns the otpauth URI."""
        secret = pyotp.random_base32()
        with locked_json(self.path, {"users": {}}) as data:
            data["users"][user] = {"secret": secret, "last_step": 0}
        return pyotp.TOTP(secret).provisioning_uri(name=user, issuer_name=ISSUER)

    def enrolled(self, user: str) -> bool:
        from flows.server.filestore import read_json

        return user in read_json(self.path, {"users": {}})["users"]

    def verify(self, user: str, code: str, *, at: float | None = None) -> int:
        """The step the code belongs to, once; ``Unauthenticated`` for a wrong, stale or replayed code."""
        code = (code or "").strip()
        if not (code.isdigit() and len(code) == 6):
            raise InvalidArgument("a one-time code is 6 digits")
        t = time.time() if at is None else at
        with locked_json(self.path, {"users": {}}) as data:
            rec = data["users"].get(user)
            if rec is None:
                raise Unauthenticated(f"{user} has no one-time code enrolled (sortie admin totp enroll {user})")
            totp = pyotp.TOTP(rec["secret"])
            now_step = int(t // _STEP_S)
            step = next((s for s in (now_step, now_step - 1, now_step + 1)
                         if hmac.compare_digest(totp.at(s * _STEP_S), code)), None)
            if step is None:
                raise Unauthenticated(f"the one-time code for {user} is wrong")
            if step <= int(rec.get("last_step", 0)):
                raise Unauthenticated(f"the one-time code for {user} was already used")
            rec["last_step"] = step
        return step
