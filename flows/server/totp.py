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
one function every path judges a code with.

**Attempts are limited** (issue 28: 150 wrong codes, then a right one,
approved). A code has a million values and is valid for about 90 s, so each
wrong attempt is evidence of guessing (a late or a replayed code is a real one,
and is not counted): after ``PAIR_FAILURES`` wrong codes for one person
presented by one caller (the authenticated user relaying or typing them)
within ``WINDOW_S``, that pair is locked out for ``LOCKOUT_S``: every code the
caller presents for that person is then refused with ``TOO_MANY_ATTEMPTS`` —
the right one too, so a guesser learns nothing from a lockout — judged on this
host's wall clock, never on a relayed submission time. A right code clears
the pair's count. The counts live in ``totp.json`` under the same file lock as
the secrets: they survive a restart and two racing requests cannot both slip
under a limit.

**Nobody can lock anyone else out, and nothing locks a stop** (issue 38: wrong
codes naming chen.jing, sent by another tenant's planner or through the
Prefect worker's service token, locked chen.jing out — and then locked the
worker itself, so every form approval, pause and recall of everyone failed for
15 minutes). So: a lock is per (person, caller) — never a person as a whole,
never a relaying service as a whole; codes are judged (and counted) only for
a person who holds the role for the draft's tenant (``flows.server.relay``
checks before it asks); and ``verify(..., stop=True)`` — a recall or a
landing — accepts a right code even while the pair is locked (a wrong one is
refused and counted as ever). Each lock set is reported to the caller
(``locked_now``), which audits it; ``locks`` lists the locks in force.
"""

from __future__ import annotations

import hmac
import time
from datetime import datetime, timezone

import pyotp

from flows.errors import TooManyAttempts, Unauthenticated
from flows.server.filestore import locked_json
from planner.errors import InvalidArgument, SortieError

__all__ = ["TotpStore", "ISSUER", "judged_at", "RELAY_MAX_AGE_S", "RELAY_SKEW_S", "LATE_STEPS", "PAIR_FAILURES",
           "WINDOW_S", "LOCKOUT_S"]

ISSUER = "sortie"
_STEP_S = 30
#: The oldest submission a relayed code is judged at: a worker restarts a suspended run 55-71 s after Submit under
#: load (FACTS); five minutes leaves room for a busy pool without keeping a typed code usable for long.
RELAY_MAX_AGE_S = 300.0
#: How far a relayed submission time may lie ahead of the server's wall clock (two hosts' clocks, one NTP apart).
RELAY_SKEW_S = 5.0
#: Steps before the drift window still recognised, so a late code is named "expired" rather than "wrong" (5 min).
LATE_STEPS = 10
#: Wrong codes for one person from one caller within ``WINDOW_S`` before that pair is locked (a person mistypes a few).
PAIR_FAILURES = 5
WINDOW_S = 900.0
LOCKOUT_S = 900.0


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

    def verify(self, user: str, code: str, *, at: float | None = None, caller: str | None = None,
               now_s: float | None = None, stop: bool = False) -> int:
        """The step the code belongs to at ``at`` (epoch seconds; default now), once; ``Unauthenticated`` for a wrong,
        expired (late when ``at`` is its submission) or replayed code; ``TooManyAttempts`` while the pair (``user``,
        ``caller`` who presented it) is locked out — unless ``stop`` (a recall or a landing) and the code is right.
        A refusal that set a lock says so in its details (``locked_now``). ``now_s``: this host's wall clock."""
        code = (code or "").strip()
        if not (code.isdigit() and len(code) == 6):
            raise InvalidArgument("a one-time code is 6 digits")
        wall = time.time() if now_s is None else now_s
        t = wall if at is None else at
        key = _pair(user, caller)
        refusal: SortieError | None = None
        step = 0
        with locked_json(self.path, {"users": {}}) as data:  # what is left in ``data`` is written back on leaving
            attempts = data.setdefault("attempts", {})
            locked = _locked_out(attempts, key, user, caller, wall)
            if locked is not None and not stop:
                refusal = locked
            else:
                try:
                    step = self._match(data["users"].get(user), user, code, t)
                except SortieError as exc:
                    refusal = exc
                    if isinstance(exc, _Wrong):  # a guess (a late or replayed code is a real one: no guess)
                        locked_now = _count_failure(attempts, key, PAIR_FAILURES, wall)
                        if locked is not None or locked_now:
                            refusal = _locked_out(attempts, key, user, caller, wall) or refusal
                            if locked_now and refusal.details is not None:
                                refusal.details["locked_now"] = True
                else:
                    attempts.pop(key, None)  # a right code: the person is who they say
                    data["users"][user]["last_step"] = step
        if refusal is not None:
            raise refusal
        return step

    def locks(self, now_s: float | None = None) -> list[dict[str, object]]:
        """The (person, caller) pairs locked out now, and until when (epoch seconds)."""
        from flows.server.filestore import read_json

        wall = time.time() if now_s is None else now_s
        out = []
        for key, rec in read_json(self.path, {"users": {}}).get("attempts", {}).items():
            until = float(rec.get("locked_until", 0.0) or 0.0)
            if until > wall and key.startswith("pair:"):
                user, _, caller = key[5:].partition("|")
                out.append({"user": user, "caller": caller or None, "until": until, "left_s": round(until - wall)})
        return sorted(out, key=lambda r: (str(r["user"]), str(r["caller"])))

    @staticmethod
    def _match(rec: dict[str, object] | None, user: str, code: str, t: float) -> int:
        """The step of ``code`` at ``t`` for the secret in ``rec``, unused yet; the same "wrong" without a secret."""
        if rec is None:
            raise _Wrong(f"the one-time code for {user} is wrong")
        totp = pyotp.TOTP(str(rec["secret"]))
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
            raise _Wrong(f"the one-time code for {user} is wrong")
        if step <= int(rec.get("last_step", 0) or 0):  # type: ignore[call-overload]
            raise Unauthenticated(f"the one-time code for {user} was already used")
        return step


class _Wrong(Unauthenticated):
    """A code that is no code of the user's secret near the time (or a user without one): what a guesser gets."""


def _pair(user: str, caller: str | None) -> str:
    return f"pair:{user}|{caller or ''}"


def _locked_out(attempts: dict[str, dict[str, object]], key: str, user: str, caller: str | None,
                wall: float) -> TooManyAttempts | None:
    """``TooManyAttempts`` while the pair is locked out (whatever the code), else None."""
    left = float(attempts.get(key, {}).get("locked_until", 0.0)) - wall  # type: ignore[arg-type]
    if left <= 0:
        return None
    return TooManyAttempts(f"too many wrong one-time codes for {user} from {caller or 'this caller'}: every code it "
                           f"presents for {user} is refused for {left:.0f} s more (a recall or a landing with the "
                           "right code still goes through)",
                           details={"retry_after_s": int(left) + 1, "locked": "pair", "user": user, "caller": caller})


def _count_failure(attempts: dict[str, dict[str, object]], key: str, most: int, wall: float) -> bool:
    """One more wrong code for ``key`` (the failures of the last ``WINDOW_S`` kept); the ``most``-th locks it (True
    when this one did)."""
    rec = attempts.setdefault(key, {})
    recent = [float(x) for x in rec.get("failures", []) if wall - float(x) < WINDOW_S]  # type: ignore[union-attr]
    recent.append(wall)
    rec["failures"] = recent[-most:]
    if len(recent) >= most:
        rec["locked_until"] = wall + LOCKOUT_S
        rec["failures"] = []
        return True
    return False
