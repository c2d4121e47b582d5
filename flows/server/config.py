"""The authority's configuration: its world, its home, its clock, its policy.

``ServerClock``: the server's own time. Without ``--clock`` it is the system
clock; with ``--clock T`` it starts at ``T`` when the server starts and runs
on (monotonic), for demos and simulations; either way it is named in every
result (``clock``). Clients never set time.

``PolicyStore``: four-eyes and the approval window live in
``<home>/policy.json``, read on every decision (so a change needs no restart)
and recorded on every approval. ``sortie admin policy set`` changes it and
writes an audit row in the ledger: changing policy is an audited admin act.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from flows.server.filestore import CurrentJson, locked_json
from flows.server.admission import LaneSizes
from flows.server.timeouts import BODY_TIMEOUT_S, HEADER_TIMEOUT_S
from flows.server.token_quotas import POLLS_PER_TOKEN, STREAMS_PER_TOKEN
from flows.authority.interface import Policy
from planner.errors import InvalidArgument

__all__ = ["ServerClock", "PolicyStore", "ServerConfig"]


class ServerClock:
    """The system clock, or a simulated one that starts at ``start`` and runs in real time."""

    def __init__(self, start: datetime | None = None) -> None:
        if start is not None and start.tzinfo is None:
            raise InvalidArgument("--clock needs an offset, e.g. 2026-12-02T08:00:00+02:00")
        self.start = start
        self._t0 = time.monotonic()

    def now(self) -> datetime:
        if self.start is None:
            return datetime.now(timezone.utc).replace(microsecond=0).astimezone()
        return (self.start + timedelta(seconds=time.monotonic() - self._t0)).replace(microsecond=0)

    def describe(self) -> str:
        return "system" if self.start is None else f"simulated from {self.start.isoformat()}"


_DEFAULT = {"four_eyes": True, "approval_ttl_s": 1800}


class PolicyStore:
    """``<home>/policy.json``: the approval policy the server applies."""

    def __init__(self, home: str | Path) -> None:
        self.path = Path(home) / "policy.json"
        self._current = CurrentJson(self.path, {})

    def current(self) -> Policy:
        d = {**_DEFAULT, **self._current.read()}  # read on every request: parsed once per change
        return Policy(four_eyes=bool(d["four_eyes"]), approval_ttl=timedelta(seconds=int(d["approval_ttl_s"])))

    def set(self, *, four_eyes: bool | None = None, approval_ttl: timedelta | None = None) -> tuple[Policy, Policy]:
        """Change the policy; returns (before, after)."""
        before = self.current()
        with locked_json(self.path, dict(_DEFAULT)) as data:
            if four_eyes is not None:
                data["four_eyes"] = bool(four_eyes)
            if approval_ttl is not None:
                if approval_ttl <= timedelta(0):
                    raise InvalidArgument("the approval window must be positive")
                data["approval_ttl_s"] = int(approval_ttl.total_seconds())
        return before, self.current()


@dataclass(frozen=True)
class ServerConfig:
    """What ``sortie server`` was started with."""

    world: Path
    home: Path
    clock: ServerClock
    rules: Path | None = None  # None: $SORTIE_RULES of the server's environment, else the bundled rule set
    max_body_bytes: int = 256 * 1024
    sweep_s: float = 10.0  # the sweeper's period (flows.server.rounds): overdue drafts expire, UI cancels withdraw; 0 off
    lanes: LaneSizes = LaneSizes()  # flows.server.admission: requests in progress per lane, the queue in front of them
    streams_per_token: int = STREAMS_PER_TOKEN  # event streams one token may hold open (flows.server.token_quotas)
    polls_per_token: int = POLLS_PER_TOKEN  # monitor long polls one token may hold open
    full_walk: bool = True  # walk the whole ledger on a thread once serving (flows.server.integrity)
    full_walk_delay_s: float = 1.0  # … after this long, so the first answers come first
    plan_workers: int = 1  # processes that decide plans (flows.server.plan_pool); 0 decides in the server itself
    fleet: str = "live"  # "live": the vehicle hub (flows.fleet.hub) says ONLINE, battery, position; "file": fleet.json
    fleet_silent_s: float = 10.0  # a held link with no heartbeat for this long is OFFLINE
    header_timeout_s: float = HEADER_TIMEOUT_S  # a request's headers arrive within this (flows.server.timeouts)
    body_timeout_s: float = BODY_TIMEOUT_S  # … and its body within this of the first wait for it
    allow_unsigned: bool = False  # serve drones with no system id or signing key (``--allow-unsigned``; shown and audited)

    @property
    def policy(self) -> PolicyStore:
        return PolicyStore(self.home)

    def describe(self) -> dict[str, Any]:
        return {"world": str(self.world), "home": str(self.home), "clock": self.clock.describe(), "sweep_s": self.sweep_s,
                "streams_per_token": self.streams_per_token, "polls_per_token": self.polls_per_token,
                "fleet": self.fleet, "allow_unsigned": self.allow_unsigned, "rules": str(self.rules) if self.rules else None,
                "policy": self.policy.current().to_dict()}
