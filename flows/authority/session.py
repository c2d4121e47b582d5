"""Who a call of the embedded authority is for, and on what terms: the actor, the time, the policy, the audit duty.

Why a value of its own: the same in-process authority (``flows.authority.local``)
serves three callers that differ only here — the CLI on one operator's
machine (identity asserted, every command audited by name), the Prefect
flows (identity asserted per call, the form inputs audited by the gate) and
``sortie server`` (identity proven by the token, the server's clock and
policy, every request audited by the server). Keeping the differences in one
value is what keeps audit, stamping and refusals from drifting between the
embedded mode and the server. What the authority stands on — its ledger,
world, rules, planning process and vehicles — is its ``Grounds``
(``flows.usecases.grounds``), the other half of a ``LocalAuthority``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from flows.authority.waking import Waker
from flows.context import resolve_now
from flows.actor import Actor, Policy
from planner.errors import InvalidArgument

__all__ = ["Session", "AuditBy", "four_eyes_default", "local_policy"]

#: Who writes the audit rows: ``command`` — the embedded authority, one row per CLI command (the control
#: actions and reconcile by their use cases, as before); ``use case`` — only the use cases that audit
#: themselves (the Prefect flows; the approval gate audits its form inputs); ``caller`` — the caller
#: audits every request itself (``sortie server``) and the use cases write none.
AuditBy = Literal["command", "use case", "caller"]


def four_eyes_default() -> bool:
    """Embedded mode only: four-eyes is on unless ``SORTIE_FOUR_EYES=0`` says otherwise (a single-operator site).

    The server never reads this: its policy is its own configuration, recorded on every approval.
    """
    return os.environ.get("SORTIE_FOUR_EYES", "1").strip().lower() not in ("0", "false", "no", "off")


def local_policy() -> Policy:
    """The embedded mode's policy: four-eyes from the environment, the default time to live."""
    return Policy(four_eyes=four_eyes_default())


@dataclass(frozen=True)
class Session:
    """One embedded authority's actor, clock, policy, waker and audit duty.

    ``now_given`` is the time of the call when one is fixed: the server's clock read once per request, or the
    embedded caller's ``--now`` (a flow's ``now``); else ``SORTIE_NOW``, else the system clock, read at each
    use. ``evidence`` is added to every approval row (the server's clock, token and relay). ``clock``: the
    authority's running clock (the server's), which stamps what happens later than the call — a followed
    flight's events — where ``now_given`` is only the moment the call arrived.
    ``checks_visibility``: whether a read checks the actor's tenants itself (the server's routes ask
    ``LocalAuthority.visible`` first, before anything else of the request). ``stamps``: what the authority adds to
    every result beyond mode and identity (the server: its clock and the request's time).
    """

    actor: Actor | None
    now_given: str | datetime | None = None
    policy: Policy = field(default_factory=Policy)
    waker: Waker | None = None
    audit_by: AuditBy = "command"
    checks_visibility: bool = True
    evidence: Mapping[str, Any] = field(default_factory=dict)
    clock: Callable[[], datetime] | None = None
    stamps: Mapping[str, Any] = field(default_factory=dict)

    def now(self) -> datetime:
        """The authority's time for a stamp or a rule (a bad ``--now`` is ``INVALID_ARGUMENT`` here, audited)."""
        return resolve_now(self.now_given)

    def fixed_now(self) -> datetime | None:
        """The fixed time, when one was given (it also stamps a followed flight's events); None for the clock."""
        return resolve_now(self.now_given) if self.now_given or os.environ.get("SORTIE_NOW") else None

    @property
    def mode(self) -> str:
        return self.actor.mode if self.actor is not None else "local"

    def acting(self, on_behalf_of: str | None = None) -> Actor:
        """Who acts for one call: the named person (asserted, in the authority's mode), else the actor."""
        if on_behalf_of:
            return Actor(on_behalf_of, self.actor.mode if self.actor else "local", "asserted")
        if self.actor is None or not self.actor.id:
            raise InvalidArgument("who is acting? give --as USER or set SORTIE_USER")
        return self.actor

    def actor_id(self) -> str | None:
        return self.actor.id if self.actor is not None and self.actor.id else None

    def stamp(self, out: dict[str, Any], actor: Actor | None = None) -> dict[str, Any]:
        """``mode`` and ``identity`` on a result (who acted, how proven); with ``stamps`` (a server) those say it
        whatever the result held, and its clock and time are added. The one place a result is stamped."""
        who = actor or self.actor or Actor("")
        if not self.stamps:
            out.setdefault("mode", who.mode)
            out.setdefault("identity", who.proof)
            return out
        out.update({"mode": who.mode, "identity": who.proof, **self.stamps})
        return out
