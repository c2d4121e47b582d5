"""The server's own rounds: the sweeper (``flows.authority.sweeper``) on the server's clock, ledger and policy,
and the vehicle hub (``flows.fleet.hub``) that holds one link per drone while the server serves.

Why here: the sweeper acts as the authority itself — no caller, no token — so
it gets the same embedded authority a request gets (``flows.server.kit``),
acting as ``authority:sweeper`` at the server's time, and publishes what it
did on the server's event feed. ``create_app`` starts it with the app and stops
it at shutdown (``ServerConfig.sweep_s``; 0 turns it off).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from flows.authority.local import LocalAuthority
from flows.authority.session import Session
from flows.authority.sweeper import SWEEPER_ACTOR, Sweeper
from flows.authority.waking import Waker
from flows.authority.interface import Actor

if TYPE_CHECKING:
    from flows.server.kit import Kit

__all__ = ["start_rounds", "start_hub"]


def start_rounds(kit: Kit) -> Sweeper:
    """The sweeper of this server, started (a no-op when ``sweep_s`` is 0)."""
    waker = Waker(report_wait_s=0.0)  # a round never waits to learn which run it woke

    def make() -> tuple[Any, datetime, Any]:
        now, policy = kit.config.clock.now(), kit.config.policy.current()
        authority = LocalAuthority(kit.grounds(), Session(
            actor=Actor(SWEEPER_ACTOR, "server"), now_given=now, policy=policy, waker=waker, audit_by="use case",
            checks_visibility=False, evidence={"clock": kit.config.clock.describe()}, clock=kit.config.clock.now,
        ))
        return authority, now, policy.approval_ttl

    return Sweeper(make, period_s=kit.config.sweep_s, publish=kit.publish).start()


def start_hub(kit: Kit) -> Any:
    """The server's vehicle hub (``flows.fleet.hub``), following the world it serves from now on; None when the
    server reads its fleet from the file (``--fleet file``). Its events go on the server's feed."""
    if kit.config.fleet != "live":
        return None
    from flows.fleet.hub import VehicleHub
    from flows.fleet.records import LedgerRecords
    from flows.world_folder import load_world_at
    from planner.errors import SortieError

    hub = VehicleHub(now=kit.config.clock.now, links=kit.links.all, key_store=kit.config.home / "keys",
                     publish=kit.bus.publish, silent_after_s=kit.config.fleet_silent_s,
                     records=LedgerRecords(kit.ledger, kit.config.clock.now), bind=kit.links.apply,
                     owner=f"sortie server, home {kit.config.home}")
    try:
        hub.follow(load_world_at(kit.config.world, strict=True))
    except SortieError:
        pass  # a world that does not load now is refused per request; the hub follows it once it loads
    return hub
