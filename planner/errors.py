"""The pure core's errors: the root of sortie's one error tree and the codes planning itself raises.

A rule violation is a value (a ``Finding``); an error is an exception. Every
exception a user can cause is a ``SortieError`` with a stable ``code`` that the
CLI prints as ``CODE: message`` (exit 2) and ``--json`` prints as an object.
Anything else escaping to the CLI is an internal error (exit 1).

The tree is split by who raises what (issue 44): this module holds the root and
the codes the pure core raises (the planner about its inputs and results,
intents/ about reading a request; ``NEEDS_CLARIFICATION`` is intents/' own, in
``intents.errors``); ``flows.errors`` holds the shell's (identity, approvals,
the ledger, vehicles, the server) and ``ERROR_CODES``, the registry of the
codes a server's answer is raised back as. This module is a leaf: it imports
nothing of sortie, so every package may import it.

    SortieError (Exception)                       code                 module
    ├── InvalidArgument (ValueError)              INVALID_ARGUMENT     planner.errors
    │   └── OverrideRefused                       OVERRIDE_REFUSED     flows.errors
    ├── NotFound (LookupError)                    NOT_FOUND            planner.errors
    ├── AirspaceBlocked (RuntimeError)            AIRSPACE_BLOCKED     planner.errors
    ├── PlanInfeasible (RuntimeError)             PLAN_INFEASIBLE      planner.errors
    ├── LlmUnavailable (ConnectionError)          LLM_UNAVAILABLE      planner.errors
    ├── IntentInvalid (ValueError)                INTENT_INVALID       planner.errors
    ├── NeedsClarification (ValueError)           NEEDS_CLARIFICATION  intents.errors
    ├── Forbidden (PermissionError)               FORBIDDEN            flows.errors
    ├── Conflict (RuntimeError)                   CONFLICT             flows.errors
    │   └── RequestExpired                        REQUEST_EXPIRED      flows.errors
    ├── DeviceUnavailable (RuntimeError)          DEVICE_UNAVAILABLE   flows.errors
    │   └── DeviceMismatch                        DEVICE_MISMATCH      flows.errors
    ├── DeviceBusy (RuntimeError)                 DEVICE_BUSY          flows.errors
    ├── PreflightFailed (RuntimeError)            PREFLIGHT_FAILED     flows.errors
    ├── ApprovalRequired (PermissionError)        APPROVAL_REQUIRED    flows.errors
    ├── ApprovalStale (RuntimeError)              APPROVAL_STALE       flows.errors
    ├── ApprovalInvalid (PermissionError)         APPROVAL_INVALID     flows.errors
    ├── DispatchFailed (RuntimeError)             DISPATCH_FAILED      flows.errors
    ├── DispatchUncertain (RuntimeError)          DISPATCH_UNCERTAIN   flows.errors
    ├── LedgerUnavailable (RuntimeError)          LEDGER_UNAVAILABLE   flows.errors
    │   └── LedgerTampered                        LEDGER_TAMPERED      flows.errors
    ├── Unauthenticated (PermissionError)         UNAUTHENTICATED      flows.errors
    ├── WorldUnavailable (RuntimeError)           WORLD_UNAVAILABLE    flows.errors
    ├── ServerUnavailable (ConnectionError)       SERVER_UNAVAILABLE   flows.errors
    ├── TooManyAttempts (PermissionError)         TOO_MANY_ATTEMPTS    flows.errors
    └── TooManyRequests (RuntimeError)            TOO_MANY_REQUESTS    flows.errors

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
    "NotFound",
    "AirspaceBlocked",
    "PlanInfeasible",
    "LlmUnavailable",
    "IntentInvalid",
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


class NotFound(SortieError, LookupError):
    """A named thing (drone, draft, region, user) does not exist."""

    code = "NOT_FOUND"


class AirspaceBlocked(SortieError, RuntimeError):
    """A blocking airspace finding prevents the action."""

    code = "AIRSPACE_BLOCKED"


class PlanInfeasible(SortieError, RuntimeError):
    """No plan can be made at all (for example no drone can reach the area)."""

    code = "PLAN_INFEASIBLE"


class LlmUnavailable(SortieError, ConnectionError):
    """The language model could not be reached or did not answer in time."""

    code = "LLM_UNAVAILABLE"


class IntentInvalid(SortieError, ValueError):
    """The model's answer failed validation after the bounded re-asks."""

    code = "INTENT_INVALID"
