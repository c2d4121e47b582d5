"""For ``sortie demo --recall-at N``: recall the flying mission once the follower has seen N items reached.

An ``on_update`` callback for the authority's ``monitor``: at the N-th
MISSION_ITEM_REACHED it asks the authority for a recall on its own thread —
the same action ``sortie recall`` asks for — and the follower, which keeps
following, records RECALLED once the vehicle is down at its dock. Demo glue:
it lives beside the simulator, so no production module imports it, and like
a simulator it reaches the ledger only through the authority it is given.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["RecallAt"]


class RecallAt:
    """``RecallAt(n, recall)`` is the follower's ``on_update``; ``recall(reason)`` is the authority's recall of the
    flying draft (say ``lambda why: a.recall(draft_id, reason=why)``); ``result()`` after the flight."""

    def __init__(self, n: int, recall: Callable[[str], dict[str, Any]], *,
                 say: Callable[[str], None] | None = None) -> None:
        self.n, self.recall = n, recall
        self.say = say or (lambda text: None)
        self._thread: threading.Thread | None = None
        self._box: dict[str, Any] = {}

    def __call__(self, flight: Any, what: str, data: dict[str, Any]) -> None:
        if what != "progress" or self._thread is not None or len(set(flight.reached)) < self.n:
            return
        self.say(f"recall: {flight.drone_id} reached {self.n} items (item {data.get('seq')}); recalling it now")
        self._thread = threading.Thread(target=self._recall, name="demo-recall", daemon=True)
        self._thread.start()

    def _recall(self) -> None:
        try:
            self._box["result"] = self.recall(f"demo: recalled after {self.n} items")
        except Exception as exc:  # noqa: BLE001 - reported with the demo's result
            self._box["error"] = f"{type(exc).__name__}: {exc}"

    def result(self, timeout_s: float = 30.0) -> dict[str, Any] | None:
        """The recall's answer (``{"error": …}`` if it failed); None if never triggered."""
        if self._thread is None:
            return None
        self._thread.join(timeout_s)
        return self._box.get("result") or {"error": self._box.get("error", "the recall did not finish")}
