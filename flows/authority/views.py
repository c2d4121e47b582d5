"""The shapes of the authority's answers a client renders: the pending table, a report's artifact key.

Pure functions of a result, the same in both modes: a client (the CLI, a Prefect
flow) renders what the authority answered without reaching into the use cases,
and a client of a server imports nothing but this (no ledger, no planner).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

__all__ = ["pending_rows", "time_left", "report_artifact_key"]


def time_left(seconds: int) -> str:
    """``25 min``, ``1 h 05 min`` or ``overdue 3 min``: what an operator reads at a glance."""
    s = abs(int(seconds))
    text = f"{s // 3600} h {s % 3600 // 60:02d} min" if s >= 3600 else (f"{s // 60} min" if s >= 60 else f"{s} s")
    return text if seconds >= 0 else f"overdue {text}"


def _short_time(iso: str) -> str:
    """``2026-11-29 07:28+02:00``: the minute and the offset, what a table column has room for."""
    t = datetime.fromisoformat(iso)
    return t.strftime("%Y-%m-%d %H:%M") + (t.isoformat(timespec="seconds")[19:] or "")


def pending_rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One table row per waiting version of a ``pending()`` answer, in its order (tenant, then soonest deadline)."""
    return [
        {
            "tenant": p["tenant"],
            "draft": f"{p['draft_id']} v{p['version']}",
            "region": p.get("region_id") or "area",
            "requested by": p["requested_by"],
            "who may approve": ", ".join(p["approvers"]) or f"nobody holds {p['approver_role']}",
            "time left": time_left(p["seconds_left"]),
            "deadline": _short_time(p["deadline"]),
        }
        for p in data.get("pending", [])
    ]


_KEY_BAD = re.compile(r"[^a-z0-9-]+")


def report_artifact_key(draft_id: str, version: int) -> str:
    """``report-<id>-v<version>`` in Prefect's artifact key alphabet (lowercase letters, digits, dashes)."""
    folded = re.sub(r"-{2,}", "-", _KEY_BAD.sub("-", str(draft_id).lower())).strip("-") or "unnamed"
    return f"report-{folded}-v{int(version)}"
