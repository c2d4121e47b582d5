"""What the authority's route modules share: the verified caller of a request, and the server's ``Kit``.

``flows.server.api`` builds the app and one ``Kit`` (its state and its one way
of running a request: scope check, the use case at the server's time, an audit
row either way, the stamped result); ``vehicle_api`` and ``ledger_api`` add
their routes with it. A module of its own so the route modules do not import
the app that imports them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flows.ledger import Ledger
from flows.server.config import ServerConfig
from flows.server.followers import Followers
from flows.server.links import LinkStore
from flows.server.tokens import TokenInfo
from flows.usecases.actor import Actor

__all__ = ["Caller", "Kit", "EVENT_FIELDS"]

#: The fields of a result that an event carries (never a plan, a path or a token).
EVENT_FIELDS = ("draft_id", "version", "status", "verdict", "plan_hash", "requested_by", "draft_status", "state",
                "outcome", "reason", "changed", "first")


@dataclass(frozen=True)
class Caller:
    """The verified caller of one request."""

    token: TokenInfo
    actor: Actor


@dataclass(frozen=True)
class Kit:
    """What the route modules (``vehicle_api``, ``ledger_api``) share with ``api``: the server's state and the
    one way a request is checked, run, stamped and audited."""

    config: ServerConfig
    ledger: Ledger
    links: LinkStore
    followers: Followers
    Who: Any  # the Annotated dependency that yields the verified ``Caller``
    call: Callable[..., dict[str, Any]]
    visible: Callable[[Caller, str], None]
    publish: Callable[[str, dict[str, Any]], None]
