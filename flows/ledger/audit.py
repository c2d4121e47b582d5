"""Audit: one row per CLI command — who ran what (hash + redacted copy of the arguments), the result,
why it was refused, how long it took.

Refused decisions are read back per draft (:meth:`AuditRoom.refusals`): a
self-approval attempt, a wrong plan hash or a junk form input stays visible
on the draft (``sortie show``), whichever path it came through (CLI, server,
the Prefect approval form).

Why a room: redaction (secret-looking keys masked, long text cut) must be the
same for every command, and the audit is written even when the command failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import duckdb

from flows.ledger.records import _AUDIT_COLS, AuditRecord, _audit, _dumps, _iso, sha256_json
from flows.ledger.store import Store

__all__ = ["AuditRoom", "redact", "DECISION_COMMANDS"]

#: The audited commands that decide (or try to decide) on a version, on every path.
DECISION_COMMANDS = ("approve", "reject", "server.approve", "server.reject", "server.approve.totp",
                     "server.reject.totp", "prefect.approve", "prefect.reject", "prefect.approval-wait")

_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "authorization", "credential")


def redact(value: Any) -> Any:
    """A copy of command arguments safe to store: secret-looking keys masked, long text cut."""
    if isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if any(word in str(k).lower() for word in _SECRET_WORDS):
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
    ) -> None:
        """One audit row: who ran what (hash + redacted copy of the arguments), the result (and, refused, why),
        how long."""

        def work(con: duckdb.DuckDBPyConnection) -> None:
            con.execute(
                "INSERT INTO audit (actor, command, args_sha256, args_redacted, result_code, duration_ms, "
                "started_time, draft_id, result_message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    actor,
                    command,
                    sha256_json(dict(args)),
                    _dumps(redact(dict(args))),
                    result_code,
                    round(duration_s * 1000.0, 3),
                    _iso(started),
                    draft_id,
                    None if message is None else str(redact(message)),
                ],
            )

        self._write(work, what=f"audit {command}")

    def refusals(self, draft_id: str, version: int | None = None) -> list[AuditRecord]:
        """The refused decision attempts on a draft (a version's, when given), oldest first."""

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
