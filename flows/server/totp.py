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

**When a code is judged.** A code typed into the Prefect approval form is read
by the run only when a worker restarts it, a minute or more after the
approver pressed Submit (FACTS). So a relayed code is judged at the time the
input was *submitted* (``at``: Prefect's own record of the input, relayed by
the worker), which :func:`judged_at` accepts only within ``RELAY_MAX_AGE_S``
before the server's wall clock and never in its future (``RELAY_SKEW_S``). A
code that matches a step before the drift window at that time was already
late when it was typed: it is refused as *expired*, not *wrong*
(``LATE_STEPS`` back, so the answer stays a cheap lookup). ``verify`` is the
one function every path judges a code with (attempt limits belong there too).
"""

from __future__ import annotations

import hmac
import time
from datetime import datetime, timezone

import pyotp

from flows.server.filestore import locked_json
from planner.errors import InvalidArgument, Unauthenticated

__all__ = ["TotpStore", "ISSUER", "judged_at", "RELAY_MAX_AGE_S", "RELAY_SKEW_S", "LATE_STEPS"]

ISSUER = "sortie"
_STEP_S = 30
#: The oldest submission a relayed code is judged at: a worker restarts a suspended run 55-71 s after Submit under
#: load (FACTS); five minutes leaves room for a busy pool without keeping a typed code usable for long.
RELAY_MAX_AGE_S = 300.0
#: How far a relayed submission time may lie ahead of the server's wall clock (two hosts' clocks, one NTP apart).
RELAY_SKEW_S = 5.0
#: Steps before the drift window still recognised, so a late code is named "expired" rather than "wrong" (5 min).
LATE_STEPS = 10


def judged_at(submitted: datetime | None, *, now_s: float | None = None, max_age_s: float = RELAY_MAX_AGE_S,
              skew_s: float = RELAY_SKEW_S) -> float:
    """The wall-clock instant (epoch seconds) a code is judged at: ``submitted`` within the bounds, else now.

    ``Unauthenticated`` ("expired") for a submission older than ``max_age_s``; ``InvalidArgument`` for one in the
    future of this host's clock (beyond ``skew_s``) or without an offset.
    """
    now = time.time() if now_s is None else now_s
    if submitted is None:
        return now
    if submitted.tzinfo is None:
        raise InvalidArgument("a relayed submission time needs an offset (ISO 8601, e.g. 2026-11-29T07:00:00+00:00)")
    at = submitted.timestamp()
    if at > now + skew_s:
        raise InvalidArgument(f"the relayed submission time {submitted.isoformat()} is {at - now:.0f} s in the future "
                              "of the server's clock: refused")
    if now - at > max_age_s:
        raise Unauthenticated(f"the one-time code expired: it was submitted {now - at:.0f} s ago, and a relayed code "
                              f"is judged at most {max_age_s:.0f} s after it was submitted; submit a fresh one")
    return at


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
        """The step the code belongs to at ``at`` (epoch seconds; default now), once; ``Unauthenticated`` for a wrong,
        expired (late when ``at`` is its submission) or replayed code."""
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
                late = next((s for s in range(now_step - 2, now_step - 2 - LATE_STEPS, -1)
                             if hmac.compare_digest(totp.at(s * _STEP_S), code)), None)
                if late is not None:
                    when = datetime.fromtimestamp(late * _STEP_S, timezone.utc).isoformat(timespec="seconds")
                    raise Unauthenticated(f"the one-time code for {user} had expired when it was submitted (it was the "
                                          f"code of {when}, {(now_step - late) * _STEP_S} s earlier): type the code "
                                          "your app shows now")
                raise Unauthenticated(f"the one-time code for {user} is wrong")
            if step <= int(rec.get("last_step", 0)):
                raise Unauthenticated(f"the one-time code for {user} was already used")
            rec["last_step"] = step
        return step
