"""The shell's errors (identity, approvals, the ledger, vehicles, the server) and the registry of every code.

The root and the pure core's codes live in ``planner.errors`` (planner/, rules/
and intents/ raise only those, and intents/ its own ``NEEDS_CLARIFICATION``);
the tree, drawn whole, is in ``planner.errors``'s docstring. ``ERROR_CODES``
maps the codes to their classes: the HTTP client raises a server's answer as
the class of its code, so a caller catches ``DeviceBusy`` whether the use case
ran in-process or behind ``sortie server`` (``NEEDS_CLARIFICATION`` comes back
as a ``SortieError`` with that code and its questions in ``details``: this
module does not load intents/).

    >>> err = ERROR_CODES["DEVICE_BUSY"]("M3TD-01 is flying draft d-1")
    >>> isinstance(err, DeviceBusy), str(err)
    (True, 'DEVICE_BUSY: M3TD-01 is flying draft d-1')
"""

from __future__ import annotations

from planner.errors import (
    AirspaceBlocked,
    IntentInvalid,
    InvalidArgument,
    LlmUnavailable,
    NotFound,
    PlanInfeasible,
    SortieError,
)

__all__ = [
    "Forbidden",
    "Conflict",
    "RequestExpired",
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
    "Unauthenticated",
    "WorldUnavailable",
    "ServerUnavailable",
    "TooManyAttempts",
    "TooManyRequests",
    "OverrideRefused",
    "ERROR_CODES",
]


class Forbidden(SortieError, PermissionError):
    """The user lacks the role, tenant or region for this action."""

    code = "FORBIDDEN"


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
        NotFound,
        AirspaceBlocked,
        PlanInfeasible,
        LlmUnavailable,
        IntentInvalid,
        Forbidden,
        Conflict,
        RequestExpired,
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
        Unauthenticated,
        WorldUnavailable,
        ServerUnavailable,
        TooManyAttempts,
        TooManyRequests,
        OverrideRefused,
    )
}
