"""A flight the server follows, shown live to a client: the server's ``flight.*`` events as ``on_update`` calls.

Why: through a server, ``sortie monitor`` does not follow the vehicle itself — the
server does (``flows.server.followers``) and the client waits for the end in bounded
requests; it printed nothing until the end (issue 42). The server already says
where the flight is on its event feed (``GET /v1/events``: ``flight.progress`` about
once a second per drone, ``flight.in_flight``, ``flight.link_lost`` / ``flight.link_back``).
``ProgressFeed`` reads that feed on a thread while the client waits and turns each
event of the followed draft into the same ``on_update(flight, what, data)`` call the
embedded follower makes (``flows.vehicle.follow``), so one progress display serves
both modes: ``flight`` is a ``DroneFlight`` holding what the event said (the item, the
items reached, the battery, the ledger state as its mode).

Bounded: each read of the feed is a long poll of at most ``POLL_S``; a broken feed is
asked again after ``RETRY_S``; once the wait ends (``close``) nothing more is relayed and
the thread ends with its poll.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from flows.vehicle.flight_record import DroneFlight
from planner.errors import SortieError

__all__ = ["ProgressFeed", "wait_with_progress", "POLL_S", "RETRY_S"]

POLL_S = 15.0
RETRY_S = 1.0

Update = Callable[[Any, str, dict[str, Any]], None]


class ProgressFeed:
    """Relay the server's ``flight.*`` events of one draft to ``on_update`` while open (a context manager)."""

    def __init__(self, events: Callable[..., Any], draft_id: str, on_update: Update) -> None:
        self._events = events
        self.draft_id = draft_id
        self.on_update = on_update
        self.flights: dict[str, DroneFlight] = {}
        self.relayed = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"progress-{draft_id}", daemon=True)

    def __enter__(self) -> ProgressFeed:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(1.0)  # a daemon: a poll still open ends by itself within POLL_S, relaying nothing

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                for ev in self._events(timeout_s=POLL_S):
                    if self._stop.is_set():
                        return
                    self.relay(ev)
            except SortieError:
                self._stop.wait(RETRY_S)  # the feed broke or is refused: the end still comes from the wait

    def relay(self, ev: dict[str, Any]) -> None:
        """One event of the feed: ``on_update`` when it is about this draft's flight."""
        kind = str(ev.get("type", ""))
        if ev.get("draft_id") != self.draft_id or not kind.startswith("flight.") or "drone_id" not in ev:
            return
        drone_id = str(ev["drone_id"])
        f = self.flights.get(drone_id)
        if f is None:
            f = self.flights[drone_id] = DroneFlight(drone_id, "", int(ev.get("sortie") or 0))
        what, data = _as_update(kind.removeprefix("flight."), ev, f)
        if what is None or self._stop.is_set():
            return
        self.relayed += 1
        try:
            self.on_update(f, what, data)
        except Exception:  # noqa: BLE001 - a display's error must not stop the wait for the end
            pass


def _as_update(kind: str, ev: dict[str, Any], f: DroneFlight) -> tuple[str | None, dict[str, Any]]:
    """(what, data) of the embedded follower's vocabulary for one ``flight.<kind>`` event (None: not shown)."""
    if kind == "progress":
        items = ev.get("items")
        if isinstance(items, int):
            f.nav_total = items
            pct = ev.get("pct")
            done = round(float(pct) * items / 100.0) if isinstance(pct, (int, float)) else 0
            f.reached = list(range(done))
        if isinstance(ev.get("item"), int):
            f.current_seq = ev["item"]
        if isinstance(ev.get("battery_pct"), (int, float)):
            f.battery_pct = float(ev["battery_pct"])
        f.sortie_index = int(ev.get("sortie") or f.sortie_index)
        f.mode = str(ev.get("state") or f.mode or "")
        return "progress", dict(ev)
    if kind == "in_flight":
        f.mode = str(ev.get("mode") or "")
        return "armed", dict(ev)
    if kind == "link_lost":
        return "alert", {"kind": "link_lost", "message": str(ev.get("message") or "telemetry lost"), **ev}
    if kind == "link_back":
        silent = ev.get("silent_s")
        return "alert", {"kind": "link_back", "message": f"telemetry back after {silent} s, mode {ev.get('mode')}",
                         **ev}
    return None, {}


def wait_with_progress(events: Callable[..., Any], draft_id: str, on_update: Update | None,
                       wait: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``wait()`` (the bounded requests until the end) with the feed relayed meanwhile when ``on_update``."""
    if on_update is None:
        return wait()
    with ProgressFeed(events, draft_id, on_update):
        return wait()
