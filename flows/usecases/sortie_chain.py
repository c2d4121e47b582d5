"""One drone's sorties of a mission, flown in order: follow, the dock's turnaround, upload, launch, follow.

Why: a vehicle holds one mission at a time, so the dispatch uploads each
drone's first sortie and the rest waits (``flows.vehicle.read_back.first_sorties``).
A four-sortie survey then ended SUCCEEDED with 15 % of its sweeps flown because
nothing flew sorties 1–3 (issue 43). A mission is followed to its end, so
after sortie n of a drone lands — and only if it ended SUCCEEDED and the mission
was not recalled — its chain:

1. records the landing (an IN_FLIGHT → IN_FLIGHT event naming the next sortie
   and when it may start);
2. waits for the dock's turnaround (``Dock.turnaround_s``, the plan's
   ``dock_turnaround_s``, else its ``battery_swap_s``) after the landing, and on
   a running clock not before the sortie's planned start — on the mission's
   clock (``Mission.clock_s``: the authority's, or the vehicle's own when the
   ledger's time is a fixed ``now``), bounded by the watch;
3. uploads sortie n+1 over the drone's link (``flows.vehicle.upload``: fence,
   mission, rally, each confirmed; what went up is in the ledger's event);
4. launches it while its follower already listens (so the take-off is the
   vehicle's own, seen: ``flows.usecases.sortie_launch``: the pre-flight
   checks from the vehicle's own state — battery after the swap, at its dock,
   failsafes — then the autopilot's sequence), as the mission's launcher (the
   dispatcher who launched its first sortie: the approval and that launch
   authorised the whole plan, its sorties' starts included);
5. follows it like the first.

A sortie that cannot be uploaded or launched is not flown: it and the drone's
later sorties are named as such, and the mission ends INCOMPLETE at best.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

from flows.usecases.expectations import expectation_of
from flows.vehicle.flight_record import DroneFlight, Expectation
from flows.vehicle.follow import follow_flight
from planner.errors import SortieError
from planner.plan import Sortie

#: How often a turnaround's wait reads the ledger for a recall (seconds of wall time).
RECALL_POLL_S = 1.0

#: ``flows.usecases.monitoring.Mission`` (not imported: it imports this module).
Mission = Any

__all__ = ["SortieChain"]


class SortieChain:
    """The sorties of one drone, in their planned order (see the module docstring)."""

    def __init__(self, mission: Mission, drone_id: str, sorties: list[Sortie], first: Expectation | None,
                 link: Any) -> None:
        self.m = mission
        self.drone_id = drone_id
        self.sorties = sorties
        self.first = first  # the expectation of the sortie the vehicle holds now (None: resume with an upload)
        self.link = link

    def run(self) -> None:
        """Fly and follow every sortie of the drone, or say why one was not flown (never raises for a vehicle's
        answer: a thread of the monitor)."""
        exp = self.first
        for k, sortie in enumerate(self.sorties):
            launching: threading.Thread | None = None
            refused: dict[str, str] = {}
            if exp is None:
                why = self._next(sortie, self.sorties[k - 1] if k else None)
                if why is not None:
                    self._not_flown(self.sorties[k:], why)
                    return
                exp = expectation_of(self.m.plan, sortie, self.m.world, link=self.link.connection,
                                     dialect=self.m.dialect_of(self.drone_id))
                self.m.expecting(exp)
                if not self.link.view.armed:  # launched while the follower already listens: its take-off is seen
                    launching = threading.Thread(target=self._launch, args=(sortie, refused), daemon=True,
                                                 name=f"launch-{self.drone_id}-{sortie.index}")
            left = self.m.deadline - time.monotonic()
            if left <= 1.0:
                self._not_flown(self.sorties[k:], "the watch ended before this sortie was followed")
                return
            if launching is not None:
                launching.start()
            # the first sortie has the watch's own bounds (its notices name them); a later one what is left of it
            opts = self.m.opts if launching is None and k == 0 else replace(self.m.opts, timeout_s=float(round(left)))
            flight = follow_flight([exp], opts, self.m.notify, self.m.recalled,
                                   links={self.drone_id: self.link},
                                   stop=lambda: self.m.stopped() or "why" in refused)[0]
            if launching is not None:
                launching.join(max(1.0, self.m.deadline - time.monotonic()))
            if "why" in refused:
                self._not_flown(self.sorties[k:], refused["why"])
                return
            self.m.add_flight(flight)
            later = self.sorties[k + 1:]
            if not later:
                return
            if flight.status != "SUCCEEDED":
                self._not_flown(later, f"sortie {sortie.index} ended {flight.status}: {flight.reason}")
                return
            if self.m.recall_seen:
                self._not_flown(later, "the mission was recalled")
                return
            exp = None

    def _not_flown(self, sorties: list[Sortie], why: str) -> None:
        for s in sorties:
            self.m.not_flown(s, why)

    def _next(self, sortie: Sortie, before: Sortie | None) -> str | None:
        """The turnaround before ``sortie`` and its upload; None when it may be launched, else why not."""
        m = self.m
        if self.link.view.armed:  # launched already (a monitor run again during the sortie): follow it as it flies
            return None
        landed = m.landing_clock_s(self.drone_id, before)
        turnaround = m.turnaround_s(sortie)
        start = max(landed + turnaround, m.planned_clock_s(sortie)) if landed is not None else m.planned_clock_s(sortie)
        m.note(f"{self.drone_id}: sortie {before.index if before else '–'} landed; sortie {sortie.index} is next "
               f"after the dock's turnaround of {turnaround:.0f} s (planned start {sortie.start_at.isoformat()})")
        if not self._wait_until(start):
            return (f"the watch ended before sortie {sortie.index}'s start (its turnaround of {turnaround:.0f} s after "
                    "the landing): follow the mission again to fly it")
        if m.recall_seen:
            return "the mission was recalled during the turnaround"
        try:
            detail = m.upload(sortie, self.link)
        except SortieError as exc:
            return f"its upload failed: {exc.code}: {exc.message}"
        m.note(f"{self.drone_id}: sortie {sortie.index} uploaded ({detail})")
        return None

    def _launch(self, sortie: Sortie, refused: dict[str, str]) -> None:
        """Launch ``sortie`` as the mission's launcher (on its own thread: the follower listens meanwhile);
        ``refused["why"]`` when it did not fly."""
        m = self.m
        try:
            launched = m.launch(sortie, self.link)
        except SortieError as exc:
            refused["why"] = f"its launch was refused: {exc.code}: {exc.message}"
            return
        except Exception as exc:  # noqa: BLE001 - a launch thread ends and says why
            refused["why"] = f"its launch stopped with {type(exc).__name__}: {exc}"
            return
        m.note(f"{self.drone_id}: sortie {sortie.index} launched by {m.launcher}: {launched}")

    def _wait_until(self, clock_s: float) -> bool:
        """Read the link until the mission's clock reaches ``clock_s`` or a recall is recorded (the ledger read every
        ``RECALL_POLL_S``: a mission recalled during a turnaround ends then, not at the next sortie's start);
        bounded by the watch; True when either happened."""
        asked = 0.0
        while not self.m.stopped():
            if self.m.clock_s(self.link) >= clock_s:
                return True
            now = time.monotonic()
            if now - asked >= RECALL_POLL_S:
                asked = now
                if self.m.recalled():
                    return True
            if now >= self.m.deadline:
                return False
            self.link.pump(0.2)
        return False


def drone_flights(flights: list[DroneFlight], drone_id: str) -> list[DroneFlight]:
    """One drone's flights, in sortie order."""
    return sorted((f for f in flights if f.drone_id == drone_id), key=lambda f: f.sortie_index)
