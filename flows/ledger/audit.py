"""Audit: one row per CLI command — who ran what (hash + redacted copy of the arguments), the result,
how long it took.

Why a room: redaction (secret-looking keys masked, long text cut) must be the
same for every command, and the audit is written even when the command failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import duckdb

from flows.ledger.records import _dumps, _iso, sha256_json
from flows.ledger.store import Store

__all__ = ["AuditRoom", "redact"]

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
    ) -> None:
        """One audit row: who ran what (hash + redacted copy of the arguments), the result, how long."""

        def work(con: duckdb.DuckDBPyConnection) -> None:
            con.execute(
                "INSERT INTO audit (actor, command, args_sha256, args_redacted, result_code, duration_ms, "
                "started_time, draft_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    actor,
                    command,
                    sha256_json(dict(args)),
                    _dumps(redact(dict(args))),
                    result_code,
                    round(duration_s * 1000.0, 3),
                    _iso(started),
                    draft_id,
                ],
            )

        self._write(work, what=f"audit {command}")
