"""The authority follows the flights it dispatched, and says so on its event feed.

``sortie monitor`` (and the Prefect ``monitor-mission`` flow) through a server
do not follow the vehicle themselves: they ask the server, which owns the
ledger and the vehicles' link addresses, to follow it
(``flows.usecases.monitoring.monitor_mission`` on the server's ledger, on a
thread of the server). One follower per draft version: a second request joins
the running one instead of opening a second MAVLink link, and each request
waits for it at most its own ``wait_s`` (an HTTP call stays bounded; the
client asks again while the flight goes on).

What the follower sees is published on ``GET /v1/events`` like every other
change: ``flight.in_flight`` when the first vehicle is airborne (the ledger's
DISPATCHED → IN_FLIGHT), ``flight.finished`` with the state it ended in
(SUCCEEDED, INCOMPLETE, ABORTED, RECALLED) — once per version, whoever saw the
end first (the follower, or a recall that followed the vehicles down). While a
draft flies, ``flight.progress`` at most once a second per drone (``PROGRESS_KEYS``:
the sortie and item, time flown and left, the battery now and projected at
landing against the reserve, the ledger state; the /ops page renders them), and
``flight.link_lost`` / ``flight.link_back`` when a vehicle's telemetry stops or
returns (the flight is LINK_LOST meanwhile: it may still be flying).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Followers", "Follower", "ENDED", "PROGRESS_KEYS", "PROGRESS_EVERY_S"]

ENDED = frozenset({"SUCCEEDED", "ABORTED", "RECALLED", "INCOMPLETE"})
#: What ``flight.progress`` carries (``flows.usecases.monitoring.Mission.progress``); ``link_lost_s`` while lost.
PROGRESS_KEYS = ("draft_id", "version", "drone_id", "sortie", "sorties", "item", "items", "reached", "pct", "elapsed_s",
                 "time_left_s", "battery_pct", "projected_landing_pct", "reserve_pct", "state")
PROGRESS_EVERY_S = 1.0  # at most this often per drone (the follower ticks every ``progress_every_s``)


@dataclass
class Follower:
    """One following of one draft version: its thread, and its result once it ends."""

    draft_id: str
    version: int
    done: threading.Event = field(default_factory=threading.Event)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class Followers:
    """The server's running followers and the ends already announced (thread-safe)."""

    def __init__(self, publish: Callable[[str, str | None, dict[str, Any]], None]) -> None:
        self._publish = publish
        self._lock = threading.Lock()
        self._running: dict[tuple[str, int], Follower] = {}
        self._announced: set[tuple[str, int, str]] = set()

    def announce(self, kind: str, tenant: str | None, draft_id: str, version: int, data: dict[str, Any]) -> None:
        """Publish ``flight.<kind>`` once per draft version (a repeat is dropped)."""
        key = (draft_id, int(version), kind)
        with self._lock:
            if key in self._announced:
                return
            self._announced.add(key)
        self._publish(f"flight.{kind}", tenant, {"draft_id": draft_id, "version": int(version), **data})

    def finished(self, tenant: str | None, draft_id: str, version: int, state: str, reason: str = "") -> None:
        if state in ENDED:
            self.announce("finished", tenant, draft_id, version, {"state": state, "reason": reason})

    def follow(self, draft_id: str, version: int, tenant: str | None,
               run: Callable[[Callable[[Any, str, dict[str, Any]], None]], Any]) -> tuple[Follower, bool]:
        """The running follower of this version, or a new one running ``run(on_update)``; (follower, started)."""
        key = (draft_id, int(version))
        with self._lock:
            existing = self._running.get(key)
            if existing is not None and not existing.done.is_set():
                return existing, False
            f = Follower(draft_id, int(version))
            self._running[key] = f

        said: dict[str, float] = {}  # drone id -> monotonic time of its last flight.progress

        def on_update(flight: Any, what: str, data: dict[str, Any]) -> None:
            if what == "armed":
                self.announce("in_flight", tenant, draft_id, version,
                              {"state": "IN_FLIGHT", "drone_id": flight.drone_id, "mode": data.get("mode")})
            elif what == "progress" and "sorties" in data:
                now = time.monotonic()
                if now - said.get(flight.drone_id, -PROGRESS_EVERY_S) >= PROGRESS_EVERY_S:
                    said[flight.drone_id] = now
                    body = {k: data.get(k) for k in PROGRESS_KEYS}
                    if data.get("link_lost_s") is not None:
                        body["link_lost_s"] = data["link_lost_s"]
                    self._publish("flight.progress", tenant, body | {"draft_id": draft_id, "version": int(version)})
            elif what in ("link_lost", "link_back"):
                self._publish(f"flight.{what}", tenant, {"draft_id": draft_id, "version": int(version),
                                                         "drone_id": flight.drone_id, "sortie": flight.sortie_index,
                                                         **{k: v for k, v in data.items() if k != "message"},
                                                         "message": data.get("message", "")})

        def body() -> None:
            from planner.errors import SortieError

            try:
                out = run(on_update)
                f.result = out.to_dict() if hasattr(out, "to_dict") else dict(out)
                self.finished(tenant, draft_id, version, str(f.result.get("state")), str(f.result.get("reason", "")))
            except SortieError as exc:
                f.error = exc.to_dict()
            except Exception as exc:  # noqa: BLE001 - a follower thread must end and say why, never hang a waiter
                f.error = {"code": "INTERNAL", "message": f"{type(exc).__name__}: {exc}"}
            finally:
                f.done.set()

        threading.Thread(target=body, name=f"follow-{draft_id}-v{version}", daemon=True).start()
        return f, True
