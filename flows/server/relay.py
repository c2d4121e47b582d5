"""Who acts when a worker relays for someone at a shared screen: the user a one-time code proves.

Why one function: an approval typed into the Prefect form and a recall, pause
or resume started from a Prefect deployment are both relayed by a worker's
service token for a person who is not at their own client. The token proves
only the worker; the person is proven by their one-time code, judged at the
moment they submitted it (``flows.server.totp.judged_at``: Prefect's record of
the submission, relayed by the worker and honoured only within bounds of this
server's clock), never at the moment the worker got round to it. A refused
code is audited as ``server.<action>.totp`` under the caller who presented it
(the token's user: a guesser is named, not the person the code was for), with
the user the code was for (``code_for``), the token's id and the client's
address; a caller with too many wrong codes for one person is locked out for
that person (``TOO_MANY_ATTEMPTS``, ``flows.server.totp``; the lock is audited
as ``server.<action>.totp.lockout``). A code is judged — and a wrong one
counted — only for a person who holds the action's role for the draft's tenant
(``claimed_may``: else ``FORBIDDEN``, nothing counted), so nobody can lock
out a person of another tenant; a recall (or a landing) with the right code
goes through any lock. A service token that names no one (no code) is refused
for the actions that need a person (``refuse_unproven_service``).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from flows.server.totp import judged_at
from flows.authority.interface import Actor
from flows.errors import Forbidden
from planner.errors import InvalidArgument, SortieError

if TYPE_CHECKING:
    from flows.server.kit import Kit, RequestContext
    from flows.server.models import Totp

__all__ = ["refuse_administrator", "relayed_actor", "submitted_time", "refuse_unproven_service", "claimed_may",
           "ROLE_OF", "STOPS"]

#: The role a relayed person must hold for each action, for the draft's (or the request's) tenant.
ROLE_OF = {"approve": "approver", "reject": "approver", "pause": "dispatcher", "resume": "dispatcher",
           "recall": "dispatcher", "answer": "planner"}
#: The actions no lockout refuses with the right code: stopping a flight.
STOPS = frozenset({"recall"})


def submitted_time(text: str | None) -> datetime | None:
    """The relayed submission time, parsed (``INVALID_ARGUMENT`` if it is not ISO 8601 with an offset)."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidArgument(f"submitted_at {text!r} is not an ISO 8601 time") from None
    if when.tzinfo is None:
        raise InvalidArgument(f"submitted_at {text!r} needs an offset")
    return when


def relayed_actor(kit: Kit, c: RequestContext, totp: Totp, what: str, draft_id: str) -> Actor:
    """The user ``totp`` proves, judged at its submission time, after ``claimed_may``; every refusal audited
    (``server.<what>.totp``, and ``server.<what>.totp.lockout`` when it set a lock)."""
    started, t0 = datetime.now(timezone.utc), time.perf_counter()
    token, caller = c.caller.token, c.caller.actor.id
    args = {"code_for": totp.user, "caller": caller, "token_id": token.token_id, "submitted_at": totp.submitted_at}
    try:
        claimed_may(c, totp.user, what, draft_id)  # before any code is judged: nothing counted for a stranger
        at = judged_at(submitted_time(totp.submitted_at))
        kit.totps.verify(totp.user, totp.code, at=at, caller=caller, stop=what in STOPS)
    except SortieError as exc:
        c.audited = True
        kit.audit(caller, f"{what}.totp", args, exc.code, t0, started, "token", draft_id, exc.message,
                  token_id=token.token_id, client_addr=c.caller.client_addr)
        if isinstance(exc.details, dict) and exc.details.get("locked_now"):  # a lock is an event of its own
            kit.audit(caller, f"{what}.totp.lockout", {**args, "retry_after_s": exc.details.get("retry_after_s")},
                      exc.code, t0, started, "token", draft_id, f"one-time codes for {totp.user} from {caller} "
                      f"locked for {exc.details.get('retry_after_s')} s", token_id=token.token_id,
                      client_addr=c.caller.client_addr)
        raise
    return Actor(totp.user, "server", "totp")


def refuse_administrator(c: RequestContext, user_id: str, what: str) -> None:
    """``FORBIDDEN`` when a service names an administrator to act for (issue 38): ``admin`` holds every role in
    every tenant, so acting on their behalf would reach them all; an administrator acts with a token of their own."""
    user = next((u for u in c.world.users if u.id == user_id), None)
    if user is not None and "admin" in user.roles:
        raise Forbidden(f"a service token may not {what} on behalf of {user_id}: an administrator's authority is never "
                        "relayed (they act with a token of their own)")


def claimed_may(c: RequestContext, user_id: str, what: str, subject: str) -> None:
    """``FORBIDDEN`` unless ``user_id`` is a user of the server's world holding ``what``'s role for the tenant of
    the draft ``subject`` (a request's: one of the caller's own tenants), and is no administrator."""
    refuse_administrator(c, user_id, what)
    role = ROLE_OF.get(what, "admin")
    user = next((u for u in c.world.users if u.id == user_id), None)
    if what == "answer":
        tenants, region = sorted(c.user("answer for someone").tenants), None
    else:
        rec = c.draft(subject)
        tenants, region = [rec.tenant], rec.region_id
    if user is None or not any(user.may(role, t, region) for t in tenants if t != "*"):
        raise Forbidden(f"{user_id} may not {what} here (the {role} role for this tenant): no code was judged")


def refuse_unproven_service(c: RequestContext, what: str) -> None:
    """A service token acts for an operator (a Prefect deployment started from the UI) only with their code."""
    if "service" in c.caller.token.scopes:
        raise Forbidden(f"a service token may not {what} as itself: relay the operator's user id and one-time code "
                        "(the deployment's user and code parameters)")
