"""Which authority a caller gets: the one place that reads ``SORTIE_SERVER``.

- ``--home DIR`` (a command run on the authority's own host): the embedded
  authority over that home's ledger, whatever ``SORTIE_SERVER`` says.
- ``SORTIE_SERVER`` set: ``RemoteAuthority`` with ``SORTIE_TOKEN``; a caller's
  identity, time, world and rule set are refused first
  (``flows.authority.overrides``) — the CLI's options and a Prefect worker's
  flow parameters and environment alike.
- otherwise: ``LocalAuthority`` on ``SORTIE_HOME``'s ledger, opened once here,
  the identity *asserted* (``--as``/``SORTIE_USER``), the local policy
  (``SORTIE_FOUR_EYES``), waking waiting Prefect runs itself; with ``hub``
  (a ``flows.fleet.hub.VehicleHub``: ``sortie demo``'s) it judges the fleet
  by what the vehicles report and reaches them through the hub's held links,
  as ``sortie server`` does; without one, each vehicle is reached by a link
  opened for the call.

Each branch imports what it needs when it is taken: a client of a server
sends HTTP requests and never loads the ledger, the use cases or the planner
(DuckDB, numpy, Shapely; ``tests/server/test_client_imports.py`` checks it).

The CLI audits each command in the embedded mode (``audit_by="command"``);
the Prefect flows leave that to the use cases and the approval gate.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from flows.authority.overrides import refuse_overrides, server_url

if TYPE_CHECKING:
    from flows.authority.interface import Authority

__all__ = ["authority", "server_url", "Caller"]

#: Who asks: ``cli`` (options spelled ``--as``, ``--world``, …; audited per command) or ``prefect`` (a flow's
#: parameters spelled ``world``, ``now``, …; form inputs audited by the gate).
Caller = Literal["cli", "prefect"]

_OPTION = {"cli": ("--as", "--world", "--now", "--rules"), "prefect": ("as_user", "world", "now", "rules")}


def authority(command: str, *, as_user: str | None = None, world: str | Path | None = None,
              now: str | datetime | None = None, rules: str | Path | None = None, home: Path | None = None,
              caller: Caller = "cli", hub: Any = None) -> Authority:
    """The authority for one command or task (see the module doc); ``command`` names it in a refusal."""
    url = None if home is not None else server_url()
    if url is not None:
        names = _OPTION[caller]
        refuse_overrides(command, dict(zip(names, (as_user, world, now, rules), strict=True)))
        from flows.authority.remote import RemoteAuthority

        return RemoteAuthority.from_env(url)
    if home is not None:
        from flows.authority.host import host_ledger

        ledger = host_ledger(home)
    else:
        from flows.ledger import open_ledger

        ledger = open_ledger()
    from flows.authority.local import LocalAuthority
    from flows.authority.session import Session, local_policy
    from flows.authority.waking import Waker
    from flows.actor import Actor
    from flows.usecases.grounds import Grounds

    who = as_user or os.environ.get("SORTIE_USER") or None
    grounds = Grounds(ledger=ledger, world_dir=world, rules=rules, live=hub,
                      **({} if hub is None else {"vehicles": hub.vehicles}))
    return LocalAuthority(grounds, Session(
        actor=Actor(who) if who else None, now_given=now, policy=local_policy(), waker=Waker(),
        audit_by="command" if caller == "cli" else "use case",
    ))
