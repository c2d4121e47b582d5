"""The server's own rounds: the sweeper (``flows.authority.sweeper``) on the server's clock, ledger and policy,
the vehicle hub (``flows.fleet.hub``) that holds one link per drone while the server serves, and the settler
(``LocalAuthority.settle_vehicle_commands``) that settles the vehicle commands a crashed authority left unanswered.

Why here: the sweeper acts as the authority itself — no caller, no token — so
it gets the same embedded authority a request gets (``flows.server.kit``),
acting as ``authority:sweeper`` at the server's time, and publishes what it
did on the server's event feed. ``create_app`` starts it with the app and stops
it at shutdown (``ServerConfig.sweep_s``; 0 turns it off).
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

from flows.authority.local import LocalAuthority
from flows.authority.session import Session
from flows.authority.sweeper import SWEEPER_ACTOR, Sweeper
from flows.authority.waking import Waker
from flows.authority.interface import Actor

if TYPE_CHECKING:
    from flows.server.kit import Kit

__all__ = ["start_rounds", "start_hub", "Settler"]

log = logging.getLogger(__name__)

SETTLER_ACTOR = "authority:settler"  # flows.usecases.settling.SETTLER: who settles what a crash left unsaid


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
    server reads its fleet from the file (``--fleet file``). Its events go on the server's feed; an intrusion also
    to the Prefect API, when there is one (``flows.authority.prefect_notices``: the control room watches Prefect)."""
    if kit.config.fleet != "live":
        return None
    from flows.fleet.hub import VehicleHub
    from flows.fleet.records import LedgerRecords
    from flows.world_folder import load_world_at
    from planner.errors import SortieError

    from flows.authority.prefect_notices import telling_prefect

    hub = VehicleHub(now=kit.config.clock.now, links=kit.links.all, key_store=kit.config.home / "keys",
                     publish=telling_prefect(kit.bus.publish), silent_after_s=kit.config.fleet_silent_s,
                     records=LedgerRecords(kit.ledger, kit.config.clock.now), bind=kit.links.apply,
                     owner=f"sortie server, home {kit.config.home}")
    try:
        hub.follow(load_world_at(kit.config.world, strict=True))
    except SortieError:
        pass  # a world that does not load now is refused per request; the hub follows it once it loads
    return hub


class Settler:
    """``settle_commands`` at the server's start and then every ``period_s`` (the sweeper may be off: a crash's
    unanswered launch is settled regardless), on the server's grounds and clock; its settlements go on the feed."""

    def __init__(self, kit: Kit, period_s: float = 5.0) -> None:
        self.kit, self.period_s = kit, period_s
        self.settled: list[Any] = []
        self.unsettled = 0  # commands of gone processes still unsettled after the last round (their vehicle silent)
        self.rounds = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sortie-settler", daemon=True)

    def start(self) -> Settler:
        self._thread.start()
        return self

    def stop(self, timeout_s: float = 5.0) -> None:
        self._stop.set()
        self._thread.join(timeout_s)

    def to_dict(self) -> dict[str, Any]:
        """For ``/v1/health``: rounds made, commands settled, commands still unsettled (counts only)."""
        return {"rounds": self.rounds, "settled": len(self.settled), "unsettled": self.unsettled}

    def _loop(self) -> None:
        kit = self.kit
        while True:
            try:
                authority = LocalAuthority(kit.grounds(), Session(
                    actor=Actor(SETTLER_ACTOR, "server"), now_given=kit.config.clock.now(),
                    policy=kit.config.policy.current(), waker=Waker(report_wait_s=0.0), audit_by="use case",
                    checks_visibility=False, evidence={"clock": kit.config.clock.describe()}, clock=kit.config.clock.now))
                out = authority.settle_vehicle_commands(publish=kit.publish)
                self.settled += out["settled"]
                self.unsettled = out["unsettled"]
                self.rounds += 1
            except Exception as exc:  # noqa: BLE001 - one bad round (a busy ledger) must not end the rounds
                log.warning("settling unanswered vehicle commands failed: %s", exc)
            if self._stop.wait(self.period_s):
                return
