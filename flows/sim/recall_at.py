"""For ``sortie demo --recall-at N``: recall the flying mission once the monitor has seen N items reached.

An ``on_update`` callback for the monitor (``flows.vehicle.monitor``): at the
N-th MISSION_ITEM_REACHED it starts ``flows.usecases.control.recall`` on its own
thread — the same use case ``sortie recall`` runs, over its own MAVLink link —
and the monitor, which keeps following, records RECALLED once the vehicle is
down at its dock. Demo glue: it lives beside the simulator, so no production
module imports it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

__all__ = ["RecallAt"]


class RecallAt:
    """``RecallAt(draft_id, n, actor=…, now=…)`` is the monitor's ``on_update``; ``result()`` after the flight."""

    def __init__(self, draft_id: str, n: int, *, actor: str, now: datetime, land_here: bool = False,
                 say: Callable[[str], None] | None = None) -> None:
        self.draft_id, self.n, self.actor, self.now, self.land_here = draft_id, n, actor, now, land_here
        self.say = say or (lambda text: None)
        self._thread: threading.Thread | None = None
        self._box: dict[str, Any] = {}

    def __call__(self, flight: Any, what: str, data: dict[str, Any]) -> None:
        if what != "progress" or self._thread is not None or len(set(flight.reached)) < self.n:
            return
        self.say(f"recall: {flight.drone_id} reached {self.n} items (item {data.get('seq')}); recalling it now")
        self._thread = threading.Thread(target=self._recall, name=f"recall-{self.draft_id}", daemon=True)
        self._thread.start()

    def _recall(self) -> None:
        from flows.ledger import open_ledger
        from flows.usecases.control import recall

        try:
            self._box["result"] = recall(open_ledger(), self.draft_id, actor=self.actor, now=self.now,
                                         land_here=self.land_here,
                                         reason=f"demo: recalled after {self.n} items").to_dict()
        except Exception as exc:  # noqa: BLE001 - reported with the demo's result
            self._box["error"] = f"{type(exc).__name__}: {exc}"

    def result(self, timeout_s: float = 30.0) -> dict[str, Any] | None:
        """The recall's ``ControlResult`` as a dict (``{"error": …}`` if it failed); None if never triggered."""
        if self._thread is None:
            return None
        self._thread.join(timeout_s)
        return self._box.get("result") or {"error": self._box.get("error", "the recall did not finish")}
