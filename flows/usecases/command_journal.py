"""The ledger's vehicle command journal as a controller's ``CommandJournal`` (``flows.vehicle.commands``).

Why a use-case piece: the controller knows the command, the use case knows for
which draft, drone and action, by whom and at what time; this joins them so
every use case that commands a vehicle (launch, recall, pause, resume, a
settlement's disarm) writes the command to the ledger before it goes out
(``flows.ledger.command_journal``).

A launch, a pause, a resume: the ``sent`` entry must be written, or nothing is
sent (the error is the ledger's: 503, LEDGER_UNAVAILABLE). A recall or a land
(``required=False``) is sent even when the ledger cannot take the entry — a
stop that cannot be blocked (issue 38) outranks its own record; the refused
write is logged and the use case's audit row still says what was done.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from flows.ledger import Ledger
from flows.ledger.store import kill_point
from planner.errors import SortieError

__all__ = ["LedgerJournal", "answer_detail"]

log = logging.getLogger(__name__)


def answer_detail(out: Any) -> dict[str, Any]:
    """What the journal keeps of a command's outcome: the vehicle's word and the state it showed."""
    view = out.view
    return {"result": out.result, "attempts": out.attempts, "acks": out.acks, "detail": out.detail,
            "duration_s": round(out.duration_s, 3),
            "vehicle": {"armed": view.armed, "mode": view.mode, "airborne": view.airborne, "seq": view.seq}}


@dataclass
class LedgerJournal:
    """Journal the commands to ``drone_id`` for ``action`` of a draft version, by ``actor``, at ``now`` (the use
    case's time; later entries add the wall time elapsed since)."""

    ledger: Ledger
    drone_id: str
    action: str
    actor: str
    now: datetime
    draft_id: str | None = None
    version: int | None = None
    required: bool = True
    _t0: float = field(default_factory=time.monotonic)

    def _at(self) -> datetime:
        return self.now + timedelta(seconds=time.monotonic() - self._t0)

    def sending(self, cmd: Any) -> str | None:
        try:
            return self.ledger.journal_sent(drone_id=self.drone_id, action=self.action, command=cmd.name,
                                            params=[cmd.command, *cmd.params], actor=self.actor, now=self._at(),
                                            draft_id=self.draft_id, version=self.version)
        except SortieError as exc:
            if self.required:
                raise
            log.warning("%s to %s sent without its journal entry (%s): a stop is never held back by its record",
                        cmd.name, self.drone_id, exc)
            return None

    def answered(self, entry: str | None, out: Any) -> None:
        if entry is None:
            return
        kill_point(f"journal:before_answer:{self.action}:{out.name}")  # crash tests: sent, answer not recorded
        try:
            self.ledger.journal_end(entry, "answered", outcome=out.outcome, detail=answer_detail(out),
                                    actor=self.actor, now=self._at())
        except SortieError as exc:  # the command went out; its entry stays unsettled and is settled later
            log.warning("the answer of %s to %s is not in the journal (%s); it will be settled from the vehicle",
                        out.name, self.drone_id, exc)
