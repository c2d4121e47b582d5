"""One way in for every client: the ``Authority`` interface, its two implementations, and the one choice.

    interface   ``Authority`` (one method per user action), ``Relay``, ``MonitorRequest``
    local       ``LocalAuthority``: the ledger and the use cases in this process (with ``local_flight``);
                what ``sortie server``'s routes call too, with the identity its token proved
    remote      ``RemoteAuthority``: the HTTP API of ``sortie server`` (``flows.client.http``)
    choice      ``authority(...)``: the one function reading ``SORTIE_SERVER``
    overrides   the one rule for what a server's client may not supply
    grounds     what one embedded authority stands on: ledger, actor, clock, world, policy, audit duty
    waking      waking the Prefect run waiting on a version, after a decision the authority recorded
    prefect_api which Prefect API this process talks to
    host        the ledger and admin acts on the authority's own host (``--home``)
    whatif      ``sortie plan --what-if``, which needs no authority
    views       result shapes a client renders (pending rows, report artifact key)

Importing the package is light (the interface and the override rule); ``choice`` loads the rest when a
caller asks for an authority. The CLI (``flows.cli``) and the flows (``flows.orchestration``) reach the use
cases (``flows.usecases``, ``flows.ledger``) only through this package; an
import-linter contract in pyproject.toml checks it.
"""

from __future__ import annotations

from flows.authority.interface import Actor, Authority, Links, MonitorRequest, Policy, Relay, parse_links
from flows.authority.overrides import LOCAL_ENV, refuse_overrides

__all__ = ["Actor", "Authority", "Links", "LOCAL_ENV", "MonitorRequest", "Policy", "Relay", "parse_links",
           "refuse_overrides"]
