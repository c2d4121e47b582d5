"""What the control tests share: constants, the approved templates and a flying simulator (``Flight``).

One draft is planned once per session (the hydrant inspection of region-1002,
flown by M3TD-01, a PX4 vehicle) and kept twice: unapproved, and approved. It
is dispatched either against the bundled world or against a copy whose
M3TD-01 runs ArduPilot (with or without a MAVLink signing key), so every
command is tested in both dialects. A case copies a template SORTIE_HOME,
starts the vehicle simulator on free 127.0.0.1 UDP ports, dispatches over
MAVLink, launches it (the simulator, like a real autopilot, does not take off
by itself), and (optionally) follows the flight with the real monitor on a
thread, exactly as ``sortie monitor`` would.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("MAVLINK20", "1")

from flows.context import resolve_now  # noqa: E402
from flows.ledger import Ledger, open_ledger  # noqa: E402
from flows.sim.flight import SimFlight  # noqa: E402
from flows.sim.vehicle import SimVehicle  # noqa: E402
from flows.usecases import decisions, planning  # noqa: E402
from flows.vehicle.commands import ControlOptions  # noqa: E402
from flows.vehicle.launch import LaunchOptions  # noqa: E402
from flows.usecases.grounds import Grounds  # noqa: E402
from flows.vehicle.flight_record import MonitorOptions, MonitorResult  # noqa: E402

NOW = resolve_now("2026-11-29T06:58:00+02:00")  # M3TD-01 reported at 06:57:30: fresh enough to dispatch
PLANNER, OPERATOR, APPROVER_ONLY = "li.wei", "chen.jing", "demo.approver"
TEXT, REGION = "inspect the hydrants today", "region-1002"
MONITOR = MonitorOptions(timeout_s=45.0, start_wait_s=15.0, link_alert_s=2.0, link_lost_s=4.0)
FAST = ControlOptions(connect_timeout_s=5.0, ack_timeout_s=0.5, settle_timeout_s=2.0, confirm_timeout_s=3.0)
LAUNCH = LaunchOptions(prearm_wait_s=5.0, control=FAST)
KEY = bytes(range(32))  # the signed vehicle's MAVLink 2 key (the "signed" template's fleet entry names it m3td-01)


@dataclass(frozen=True)
class Template:
    home: Path
    draft_id: str
    version: int
    dialect: str
    world_dir: Path | None  # dispatch against this world (None: the one the draft was planned in)
    signing: bool = False  # the vehicle and the fleet entry share KEY


def _plan_approved(home: Path, world_dir: Path | None) -> tuple[str, int]:
    saved = os.environ.get("SORTIE_HOME")
    os.environ["SORTIE_HOME"] = str(home)
    try:
        d = planning.plan_draft(text=TEXT, region_id=REGION, requested_by=PLANNER,
                                grounds=Grounds(ledger=open_ledger(), world_dir=world_dir), now=NOW)
        assert d.status == "DRAFT" and d.verdict == "pass" and len(d.sorties) == 1, d
        shutil.copytree(home, home.with_name(home.name + "-unapproved"))  # the same draft, not yet approved
        decisions.approve(d.draft_id, d.version, approver=OPERATOR, plan_hash=d.plan_hash, comment="ok", now=NOW,
                          grounds=Grounds(ledger=open_ledger(), world_dir=world_dir))
        return d.draft_id, d.version
    finally:
        if saved is None:
            os.environ.pop("SORTIE_HOME", None)
        else:
            os.environ["SORTIE_HOME"] = saved


@dataclass
class Flight:
    """One dispatched draft flying on a simulator, optionally followed by the monitor on a thread."""

    draft_id: str
    version: int
    dialect: str
    sim: SimVehicle
    flight: SimFlight
    ledger: Ledger
    dock: tuple[float, float]
    updates: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    monitor_result: list[MonitorResult] = field(default_factory=list)
    monitor_thread: threading.Thread | None = None
    launch: Any = None
    world_dir: Path | None = None  # the world the dispatch used (None: the draft's own)
    launch_commands: int = 0  # how many commands the launch sent (flight.commands before the ones under test)

    def launch_with(self, *, now: datetime = NOW, options: LaunchOptions = LAUNCH) -> Any:
        """``sortie launch``'s use case for this draft, as the operator (a ``ControlResult``; raises as it does)."""
        from flows.usecases import launching

        return launching.launch(self.draft_id, self.version, actor=OPERATOR, now=now,
                                grounds=Grounds(ledger=self.ledger, world_dir=self.world_dir), options=options)

    @property
    def commands(self) -> list[dict[str, Any]]:
        """The commands the vehicle received after its launch (the operators' ones)."""
        return self.flight.commands[self.launch_commands:]

    def pace(self, speedup: float) -> None:
        """Change the simulator's time scale mid-flight: slow while commands are exchanged (a loaded machine
        answers in seconds, not milliseconds), fast again for the rest of the flight."""
        self.flight.options = replace(self.flight.options, speedup=speedup)

    def wait_on_leg(self, timeout_s: float = 30.0, ahead_m: float = 40.0, pace: float = 1.0) -> None:
        """Until the vehicle flies towards a waypoint (ArduCopter pauses only there: ``ModeAuto::pause``) with at
        least ``ahead_m`` of that leg still ahead; then time runs at ``pace`` (an operator's link takes a moment to
        connect, and the vehicle must still be on its leg when the command lands)."""
        from flows.vehicle.commands import distance_m

        deadline = time.monotonic() + timeout_s
        while True:
            fl = self.flight
            if fl.on_leg():
                item = fl.items[fl.cur]
                if distance_m(fl.lat, fl.lon, item.lat, item.lon) >= ahead_m:
                    self.pace(pace)
                    return
            assert time.monotonic() < deadline, f"the vehicle never flew a waypoint leg with {ahead_m} m ahead"
            time.sleep(0.001)

    def wait_reached(self, n: int, timeout_s: float = 20.0) -> None:
        """Until the vehicle reached ``n`` navigation items (bounded)."""
        deadline = time.monotonic() + timeout_s
        while len(self.flight.reached) < n:
            assert time.monotonic() < deadline, f"only {len(self.flight.reached)} items reached in {timeout_s} s"
            time.sleep(0.01)

    def wait_update(self, what: str, timeout_s: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while True:
            hit = [d for w, d in self.updates if w == what]
            if hit:
                return hit[-1]
            assert time.monotonic() < deadline, f"the monitor never said {what!r}: {[w for w, _ in self.updates]}"
            time.sleep(0.01)

    def monitored(self, timeout_s: float = 60.0) -> MonitorResult:
        assert self.monitor_thread is not None
        self.monitor_thread.join(timeout_s)
        assert not self.monitor_thread.is_alive(), "the monitor did not finish"
        return self.monitor_result[0]

    def events(self) -> list[tuple[str | None, str, str, str]]:
        return [(e.from_state, e.to_state, e.actor, e.reason) for e in self.ledger.events(self.draft_id)
                if e.version == self.version]


