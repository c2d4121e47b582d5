"""The one error tree of sortie, with stable codes.

A rule violation is a value (a ``Finding``); an error is an exception. Every
exception a user can cause is a ``SortieError`` with a stable ``code`` that the
CLI prints as ``CODE: message`` (exit 2) and ``--json`` prints as an object.
Anything else escaping to the CLI is an internal error (exit 1).

This module is a leaf: it imports nothing of sortie, so every package
(``intents`` included) may import it.

    SortieError (Exception)                       code
    ├── InvalidArgument (ValueError)              INVALID_ARGUMENT
    │   └── OverrideRefused                       OVERRIDE_REFUSED
    ├── Forbidden (PermissionError)               FORBIDDEN
    ├── NotFound (LookupError)                    NOT_FOUND
    ├── Conflict (RuntimeError)                   CONFLICT
    │   └── RequestExpired                        REQUEST_EXPIRED
    ├── AirspaceBlocked (RuntimeError)            AIRSPACE_BLOCKED
    ├── DeviceUnavailable (RuntimeError)          DEVICE_UNAVAILABLE
    │   └── DeviceMismatch                        DEVICE_MISMATCH
    ├── ApprovalRequired (PermissionError)        APPROVAL_REQUIRED
    ├── ApprovalStale (RuntimeError)              APPROVAL_STALE
    ├── DispatchFailed (RuntimeError)             DISPATCH_FAILED
    ├── DispatchUncertain (RuntimeError)          DISPATCH_UNCERTAIN
    ├── LedgerUnavailable (RuntimeError)          LEDGER_UNAVAILABLE
    │   └── LedgerTampered                        LEDGER_TAMPERED
    ├── ApprovalInvalid (PermissionError)         APPROVAL_INVALID
    ├── DeviceBusy (RuntimeError)                 DEVICE_BUSY
    ├── PreflightFailed (RuntimeError)            PREFLIGHT_FAILED
    ├── LlmUnavailable (ConnectionError)          LLM_UNAVAILABLE
    ├── IntentInvalid (ValueError)                INTENT_INVALID
    ├── PlanInfeasible (RuntimeError)             PLAN_INFEASIBLE
    ├── Unauthenticated (PermissionError)         UNAUTHENTICATED
    ├── WorldUnavailable (RuntimeError)           WORLD_UNAVAILABLE
    ├── ServerUnavailable (ConnectionError)       SERVER_UNAVAILABLE
    ├── TooManyAttempts (PermissionError)         TOO_MANY_ATTEMPTS
    └── TooManyRequests (RuntimeError)            TOO_MANY_REQUESTS

Example::

    >>> err = NotFound("drone M30T-09 is not in the fleet")
    >>> err.code, isinstance(err, LookupError)
    ('NOT_FOUND', True)
    >>> str(err)
    'NOT_FOUND: drone M30T-09 is not in the fleet'
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "SortieError",
    "InvalidArgument",
    "Forbidden",
    "NotFound",
    "Conflict",
    "AirspaceBlocked",
    "DeviceUnavailable",
    "DeviceMismatch",
    "ApprovalRequired",
    "ApprovalStale",
    "DispatchFailed",
    "DispatchUncertain",
    "LedgerUnavailable",
    "LedgerTampered",
    "ApprovalInvalid",
    "DeviceBusy",
    "PreflightFailed",
    "LlmUnavailable",
    "IntentInvalid",
    "PlanInfeasible",
    "Unauthenticated",
    "WorldUnavailable",
    "ServerUnavailable",
    "TooManyAttempts",
    "TooManyRequests",
    "OverrideRefused",
    "RequestExpired",
    "ERROR_CODES",
]


class SortieError(Exception):
    """Root of every error a user can cause; carries a stable ``code``.

    ``details`` holds structured evidence (for example a list of located
    problems from ``world validate``); it is printed by ``--json``.
    """

    code: str = "INTERNAL"

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            out["details"] = self.details
        return out


class InvalidArgument(SortieError, ValueError):
    """Malformed input: a file, a CLI argument, a geometry, a value out of range."""

    code = "INVALID_ARGUMENT"


class Forbidden(SortieError, PermissionError):
    """The user lacks the role, tenant or region for this action."""

    code = "FORBIDDEN"


class NotFound(SortieError, LookupError):
    """A named thing (drone, draft, region, user) does not exist."""

    code = "NOT_FOUND"


class Conflict(SortieError, RuntimeError):
    """An illegal state transition or a lost race; nothing was changed."""

    code = "CONFLICT"


class RequestExpired(Conflict):
    """An open request (a request waiting for its questions to be answered) is past its deadline: nothing was
    planned, and answering it is refused; plan the request again.

        >>> err = RequestExpired("request r-1 expired at 2026-11-29T11:00:00+02:00")
        >>> err.code, isinstance(err, Conflict)
        ('REQUEST_EXPIRED', True)
    """

    code = "REQUEST_EXPIRED"


class AirspaceBlocked(SortieError, RuntimeError):
    """A blocking airspace finding prevents the action."""

    code = "AIRSPACE_BLOCKED"


class DeviceUnavailable(SortieError, RuntimeError):
    """The drone or dock is offline, stale, busy or unreachable."""

    code = "DEVICE_UNAVAILABLE"


class DeviceMismatch(DeviceUnavailable):
    """The vehicle on the link is not the drone of the fleet entry (system id, autopilot, signing key):
    for dispatch the bound drone is not available there, and nothing is sent."""

    code = "DEVICE_MISMATCH"


class ApprovalRequired(SortieError, PermissionError):
    """Dispatch needs a matching, unexpired approval that does not exist."""

    code = "APPROVAL_REQUIRED"


class ApprovalStale(SortieError, RuntimeError):
    """The approval names a superseded version, another plan hash, or has expired."""

    code = "APPROVAL_STALE"


class DispatchFailed(SortieError, RuntimeError):
    """The vehicle refused the mission (a MAV_MISSION_RESULT other than ACCEPTED)."""

    code = "DISPATCH_FAILED"


class DispatchUncertain(SortieError, RuntimeError):
    """The upload's outcome is unknown and reading the mission back did not settle it."""

    code = "DISPATCH_UNCERTAIN"


class LedgerUnavailable(SortieError, RuntimeError):
    """The ledger file is locked by another writer past the retry budget, or corrupt."""

    code = "LEDGER_UNAVAILABLE"


class LedgerTampered(LedgerUnavailable):
    """The ledger fails its integrity check (a hash chain break, a forged row, an older copy, a missing
    file where one existed); nothing is dispatched from it. The message names the first break."""

    code = "LEDGER_TAMPERED"


class ApprovalInvalid(SortieError, PermissionError):
    """The approval does not verify: bad or missing signature, or the plan, its files or the mission
    items about to be uploaded are not the ones the approval signed. Nothing was sent."""

    code = "APPROVAL_INVALID"


class DeviceBusy(SortieError, RuntimeError):
    """The drone's last dispatch is not finished (in flight, or its outcome unsettled): no new one."""

    code = "DEVICE_BUSY"


class PreflightFailed(SortieError, RuntimeError):
    """A launch refused before take-off: a pre-flight check on the vehicle's own state failed, or the vehicle
    refused a step of its launch sequence; ``details["check"]`` names it, and the vehicle is left disarmed.

    >>> PreflightFailed("M3TD-01: gps: no 3D fix (fix type 1)", details={"check": "gps"}).code
    'PREFLIGHT_FAILED'
    """

    code = "PREFLIGHT_FAILED"


class LlmUnavailable(SortieError, ConnectionError):
    """The language model could not be reached or did not answer in time."""

    code = "LLM_UNAVAILABLE"


class IntentInvalid(SortieError, ValueError):
    """The model's answer failed validation after the bounded re-asks."""

    code = "INTENT_INVALID"


class PlanInfeasible(SortieError, RuntimeError):
    """No plan can be made at all (for example no drone can reach the area)."""

    code = "PLAN_INFEASIBLE"


class Unauthenticated(SortieError, PermissionError):
    """No credential, or one the authority does not accept (unknown, expired, revoked, wrong code)."""

    code = "UNAUTHENTICATED"


class WorldUnavailable(SortieError, RuntimeError):
    """The authority's world cannot be read completely (say its zone data is missing): fail closed."""

    code = "WORLD_UNAVAILABLE"


class ServerUnavailable(SortieError, ConnectionError):
    """The configured ``sortie server`` could not be reached or answered nonsense."""

    code = "SERVER_UNAVAILABLE"


class TooManyAttempts(SortieError, PermissionError):
    """Too many wrong one-time codes for one user, or from one caller: locked out for a while, whatever the next
    code is (a guesser must not learn that a code was right); ``details["retry_after_s"]`` says how long.

    >>> TooManyAttempts("too many wrong one-time codes for chen.jing", details={"retry_after_s": 900}).code
    'TOO_MANY_ATTEMPTS'
    """

    code = "TOO_MANY_ATTEMPTS"


class TooManyRequests(SortieError, RuntimeError):
    """More concurrent event streams or long polls than one token may hold, or more requests waiting than the
    authority queues: refused at once (HTTP 429), never left hanging; ``details["retry_after_s"]`` when known.

    >>> TooManyRequests("this token already holds 16 event streams", details={"limit": 16}).code
    'TOO_MANY_REQUESTS'
    """

    code = "TOO_MANY_REQUESTS"


class OverrideRefused(InvalidArgument):
    """A client tried to supply what the authority owns (its time, world, identity or a vehicle's link
    address): refused, never silently ignored."""

    code = "OVERRIDE_REFUSED"


ERROR_CODES: dict[str, type[SortieError]] = {
    cls.code: cls
    for cls in (
        InvalidArgument,
        Forbidden,
        NotFound,
        Conflict,
        RequestExpired,
        AirspaceBlocked,
        DeviceUnavailable,
        DeviceMismatch,
        ApprovalRequired,
        ApprovalStale,
        DispatchFailed,
        DispatchUncertain,
        LedgerUnavailable,
        LedgerTampered,
        ApprovalInvalid,
        DeviceBusy,
        PreflightFailed,
        LlmUnavailable,
        IntentInvalid,
        PlanInfeasible,
        Unauthenticated,
        WorldUnavailable,
        ServerUnavailable,
        TooManyAttempts,
        TooManyRequests,
        OverrideRefused,
    )
}
