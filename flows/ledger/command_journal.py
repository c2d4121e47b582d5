"""The vehicle command journal: every command to a vehicle is written here before it is sent.

Why: a command is the one act of the authority the ledger cannot take back,
and the process that sends it can die between the send and the record of the
answer (a crash in the middle of a launch's arm → AUTO → start used to leave
no trace: the vehicle flew, the draft said DISPATCHED). So each command is
three possible entries, each an entry of the hash chain:

- ``sent``: written (and committed) before the command goes out — which
  command, to which drone, for which draft and action, by whom, from which
  process (host, pid);
- ``answered``: what the vehicle said (``flows.vehicle.commands`` outcome);
- ``settled``: for a ``sent`` left without an answer by a process that is
  gone, what the vehicle's own state showed afterwards and what the authority
  did about it (``flows.usecases.settling``).

A command is *unsettled* while it has a ``sent`` and neither of the others.
The rows are never updated: a change is a new row (``change`` is part of the
key), the way ``request_turns`` keeps a dialogue.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from flows.errors import Conflict
from flows.ledger.chain import chain_values, command_content
from flows.ledger.records import _dumps, _iso
from flows.ledger.store import Store

__all__ = ["JournalRoom", "JournaledCommand", "CHANGES"]

#: The changes of one command, in the order they can happen (``answered`` and ``settled`` exclude each other).
CHANGES = ("sent", "answered", "settled")
_COLS = ("command_id", "change", "draft_id", "version", "drone_id", "action", "command", "params_json", "actor",
         "outcome", "detail_json", "owner_host", "owner_pid", "change_time")


@dataclass(frozen=True)
class JournaledCommand:
    """A command as its ``sent`` entry says: what, to whom, for which mission, from which process."""

    command_id: str
    draft_id: str | None
    version: int | None
    drone_id: str
    action: str
    command: str
    params: list[Any]
    actor: str
    owner_host: str
    owner_pid: int
    sent_time: str

    def owner_alive(self) -> bool:
        """Whether the process that sent it still runs (this host only: another host's process is not known)."""
        if self.owner_host != socket.gethostname():
            return True
        if self.owner_pid == os.getpid():
            return True
        try:
            os.kill(self.owner_pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


class JournalRoom(Store):
    """Writing the journal's entries and reading the unsettled commands."""

    def _journal(self, con: duckdb.DuckDBPyConnection, values: dict[str, Any]) -> None:
        seq, prev, _, entry = chain_values(con, self.keys, None, command_content(values))
        con.execute(f"INSERT INTO vehicle_commands ({', '.join(_COLS)}, chain_seq, prev_hash, entry_hash) VALUES "
                    f"({', '.join(['?'] * (len(_COLS) + 3))})", [values[c] for c in _COLS] + [seq, prev, entry])

    def journal_sent(self, *, drone_id: str, action: str, command: str, params: Sequence[Any], actor: str,
                     now: datetime, draft_id: str | None = None, version: int | None = None) -> str:
        """Write (and commit) the ``sent`` entry of a command about to go out; its id."""
        command_id = uuid.uuid4().hex
        values = {"command_id": command_id, "change": "sent", "draft_id": draft_id,
                  "version": None if version is None else int(version), "drone_id": drone_id, "action": action,
                  "command": command, "params_json": _dumps(list(params)), "actor": actor, "outcome": None,
                  "detail_json": "{}", "owner_host": socket.gethostname(), "owner_pid": os.getpid(),
                  "change_time": _iso(now)}
        self._write(lambda con: self._journal(con, values), what=f"journal {command} to {drone_id}", state=False)
        return command_id

    def journal_end(self, command_id: str, change: str, *, outcome: str, detail: Mapping[str, Any], actor: str,
                    now: datetime) -> None:
        """Write the ``answered`` or ``settled`` entry of a sent command; ``Conflict`` if it already has one."""
        if change not in ("answered", "settled"):
            raise ValueError(f"unknown journal change {change!r}")

        def work(con: duckdb.DuckDBPyConnection) -> None:
            rows = con.execute(f"SELECT {', '.join(_COLS)} FROM vehicle_commands WHERE command_id = ?",
                               [command_id]).fetchall()
            entries = [dict(zip(_COLS, r)) for r in rows]
            sent = next((e for e in entries if e["change"] == "sent"), None)
            if sent is None:
                raise Conflict(f"no vehicle command {command_id[:12]}… in the journal")
            if any(e["change"] != "sent" for e in entries):
                raise Conflict(f"vehicle command {command_id[:12]}… is already answered or settled")
            self._journal(con, {**sent, "change": change, "outcome": outcome, "actor": actor,
                                "detail_json": _dumps(dict(detail)), "owner_host": socket.gethostname(),
                                "owner_pid": os.getpid(), "change_time": _iso(now)})

        self._write(work, what=f"journal {change} of {command_id[:12]}", state=False)

    def unsettled_commands(self) -> list[JournaledCommand]:
        """Every command sent and neither answered nor settled, oldest first."""

        def work(con: duckdb.DuckDBPyConnection) -> list[JournaledCommand]:
            rows = con.execute(
                "SELECT command_id, draft_id, version, drone_id, action, command, params_json, actor, owner_host, "
                "owner_pid, change_time FROM vehicle_commands s WHERE change = 'sent' AND NOT EXISTS (SELECT 1 FROM "
                "vehicle_commands e WHERE e.command_id = s.command_id AND e.change <> 'sent') ORDER BY chain_seq"
            ).fetchall()
            return [JournaledCommand(r[0], r[1], None if r[2] is None else int(r[2]), r[3], r[4], r[5],
                                     json.loads(r[6]), r[7], r[8], int(r[9]), r[10]) for r in rows]

        return self._read(work, [])

    def journal(self, *, draft_id: str | None = None, drone_id: str | None = None) -> list[dict[str, Any]]:
        """The journal's entries (of one draft, one drone), oldest first, each with its detail parsed."""
        where, args = [], []
        if draft_id is not None:
            where.append("draft_id = ?")
            args.append(draft_id)
        if drone_id is not None:
            where.append("drone_id = ?")
            args.append(drone_id)

        def work(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
            rows = con.execute(f"SELECT {', '.join(_COLS)} FROM vehicle_commands"
                               + (f" WHERE {' AND '.join(where)}" if where else "") + " ORDER BY chain_seq", args)
            out = [dict(zip(_COLS, r)) for r in rows.fetchall()]
            for e in out:
                e["params"] = json.loads(e.pop("params_json"))
                e["detail"] = json.loads(e.pop("detail_json"))
            return out

        return self._read(work, [])
