"""Audit: one row per command — who ran what (hash + redacted copy of the arguments), the result,
why it was refused, how long it took, with which token, for whom, from where.

Every audit row is an entry of the hash chain (``flows.ledger.chain``): a
deleted or edited row fails ``sortie ledger verify``. A token's id is an
identifier, not a secret: it is stored as given (its own column, and unmasked
in the arguments); the token itself never reaches this module.

Refused decisions are read back per draft (:meth:`AuditRoom.refusals`): a
self-approval attempt, a wrong plan hash or a junk form input stays visible
on the draft (``sortie show``), whichever path it came through (CLI, server,
the Prefect approval form).

Why a room: redaction (secret-looking keys masked, long text cut) must be the
same for every command, and the audit is written even when the command failed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from flows.ledger.chain import audit_content, chain_values
from flows.ledger.records import _AUDIT_COLS, AuditRecord, _audit, _dumps, _iso, sha256_json
from flows.ledger.store import Store

__all__ = ["AuditRoom", "AuditEntry", "redact", "DECISION_COMMANDS"]

#: The audited commands that decide (or try to decide) on a version, on every path.
DECISION_COMMANDS = ("approve", "reject", "server.approve", "server.reject", "server.approve.totp",
                     "server.reject.totp", "prefect.approve", "prefect.reject", "prefect.approval-wait",
                     # a form input a worker refused before asking (another draft, junk, a wrong hash), as the
                     # server audits it (POST /v1/drafts/{id}/attempts)
                     "server.prefect.approve", "server.prefect.reject", "server.prefect.approval-wait")

_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "authorization", "credential")
#: Names that contain a secret word but hold an identifier: shown as they are.
_IDENTIFIERS = frozenset({"token_id", "key_id", "idempotency_key"})


def redact(value: Any) -> Any:
    """A copy of command arguments safe to store: secret-looking keys masked, long text cut."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if str(k).lower() not in _IDENTIFIERS and any(word in str(k).lower() for word in _SECRET_WORDS):
                out[str(k)] = "***" if v not in (None, "") else v
            else:
                out[str(k)] = redact(v)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    if isinstance(value, str) and len(value) > 500:
        return value[:500] + f"…(+{len(value) - 500} chars)"
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


@dataclass(frozen=True)
class AuditEntry:
    """One audit row to write (``AuditRoom.audit``'s arguments): for ``audit_many``, which writes several at once."""

    actor: str | None
    command: str
    args: Mapping[str, Any]
    result_code: str
    duration_s: float
    started: datetime
    draft_id: str | None = None
    message: str | None = None
    token_id: str | None = None
    client_addr: str | None = None
    caller: str | None = None

    def columns(self) -> dict[str, Any]:
        """The row's columns (in ``_AUDIT_COLS`` order after ``audit_id``), arguments redacted and hashed."""
        return {
            "actor": self.actor,
            "command": self.command,
            "args_sha256": sha256_json(dict(self.args)),
            "args_redacted": _dumps(redact(dict(self.args))),
            "result_code": self.result_code,
            "duration_ms": round(self.duration_s * 1000.0, 3),
            "started_time": _iso(self.started),
            "draft_id": self.draft_id,
            "result_message": None if self.message is None else str(redact(self.message)),
            "token_id": self.token_id,
            "client_addr": self.client_addr,
            "caller": self.caller,
        }


class AuditRoom(Store):
    """The audit writes of the ledger."""

    def audit(
        self,
        *,
        actor: str | None,
        command: str,
        args: Mapping[str, Any],
        result_code: str,
        duration_s: float,
        started: datetime,
        draft_id: str | None = None,
        message: str | None = None,
        token_id: str | None = None,
        client_addr: str | None = None,
        caller: str | None = None,
    ) -> None:
        """One chained audit row: who ran what (hash + redacted copy of the arguments), the result (and, refused,
        why), how long; for a server request also the token's id, the client's address and, when the caller
        acted for someone else (``actor``), the caller."""
        self.audit_many([AuditEntry(actor, command, args, result_code, duration_s, started, draft_id, message,
                                    token_id, client_addr, caller)])

    def audit_many(self, entries: Sequence[AuditEntry]) -> int:
        """Several audit rows in one transaction: for a server that batches the audit of its reads instead of
        paying a commit per read. Returns how many were written."""
        rows = [e.columns() for e in entries]
        if not rows:
            return 0

        def work(con: duckdb.DuckDBPyConnection) -> int:
            self._insert(con, rows)
            return len(rows)

        return self._write(work, what=f"audit {entries[0].command}" + (f" and {len(rows) - 1} more" if len(rows) > 1
                                                                         else ""), state=False)

    def _insert(self, con: duckdb.DuckDBPyConnection, rows: Sequence[Mapping[str, Any]]) -> None:
        """Chain and insert ``rows`` in order: their ids from one query, the rows in one multi-row INSERT.

        Why not a statement per row: two statements per row (``nextval``, ``INSERT``) were a server's largest cost
        per read (about 2.4 ms of CPU a row, 2 cores loaded) while its audit queue wrote them in chunks of 16."""
        ids = sorted(int(r[0]) for r in con.execute("SELECT nextval('audit_seq') FROM range(?)", [len(rows)]).fetchall())
        params: list[Any] = []
        for audit_id, row in zip(ids, rows, strict=True):
            values = {"audit_id": audit_id, **row}
            seq, prev, _, entry = chain_values(con, self.keys, None, audit_content(values))
            params += [*values.values(), seq, prev, entry]
        one = f"({', '.join(['?'] * 16)})"
        con.execute(f"INSERT INTO audit ({_AUDIT_COLS}, chain_seq, prev_hash, entry_hash) VALUES "
                    + ", ".join([one] * len(rows)), params)

    def refusals(self, draft_id: str, version: int | None = None) -> list[AuditRecord]:
        """The refused decision attempts on a draft (a version's, when given), oldest first.

        One filter over the audit, which has no index on ``draft_id``: DuckDB 2.0.1 uses an index only for a filter
        on the indexed column alone, and a materialised step that made it use one measured slower than this scan at
        every size tried. From 18 thousand to 3 million audit rows (1 % of them refusals) the scan costs 2–3 ms of
        CPU a draft; the forced path cost 4–7 ms once a shown draft had hundreds of read rows of its own."""

        def work(con: duckdb.DuckDBPyConnection) -> list[AuditRecord]:
            rows = con.execute(
                f"SELECT {_AUDIT_COLS} FROM audit WHERE draft_id = ? AND result_code <> 'OK' AND command IN "
                f"({', '.join('?' * len(DECISION_COMMANDS))}) ORDER BY audit_id",
                [draft_id, *DECISION_COMMANDS],
            ).fetchall()
            out = [_audit(r) for r in rows]
            if version is None:
                return out
            return [r for r in out if r.args_redacted.get("version") in (None, int(version))]

        return self._read(work, [])
