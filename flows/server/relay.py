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
address; a caller or a user with too many wrong codes is locked out
(``TOO_MANY_ATTEMPTS``, ``flows.server.totp``). A service token that names no
one (no code) is refused for the actions that need a person
(``refuse_unproven_service``).
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from flows.server.totp import judged_at
from flows.authority.interface import Actor
from planner.errors import Forbidden, InvalidArgument, SortieError

if TYPE_CHECKING:
    from flows.server.kit import Kit, RequestContext
    from flows.server.models import Totp

__all__ = ["relayed_actor", "submitted_time", "refuse_unproven_service"]


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
    """The user ``totp`` proves, judged at its submission time; every refusal audited (``server.<what>.totp``)."""
    started, t0 = datetime.now(timezone.utc), time.perf_counter()
    token, caller = c.caller.token, c.caller.actor.id
    try:
        at = judged_at(submitted_time(totp.submitted_at))
        kit.totps.verify(totp.user, totp.code, at=at, caller=caller)
    except SortieError as exc:
        c.audited = True
        kit.audit(caller, f"{what}.totp", {"code_for": totp.user, "caller": caller, "token_id": token.token_id,
                                           "submitted_at": totp.submitted_at}, exc.code, t0, started, "token",
                  draft_id, exc.message, token_id=token.token_id, client_addr=c.caller.client_addr)
        raise
    return Actor(totp.user, "server", "totp")


def refuse_unproven_service(c: RequestContext, what: str) -> None:
    """A service token acts for an operator (a Prefect deployment started from the UI) only with their code."""
    if "service" in c.caller.token.scopes:
        raise Forbidden(f"a service token may not {what} as itself: relay the operator's user id and one-time code "
                        "(the deployment's user and code parameters)")
