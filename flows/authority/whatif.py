"""``sortie plan --what-if``: a plan on any world and time that records nothing and asks no authority.

Why outside the ``Authority`` interface: a what-if has no identity to prove, no
ledger to write and no clock to trust — the one place a caller's own world and
time are fine — so it runs in this process with or without a server.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from flows.usecases import planning

__all__ = ["what_if"]


def what_if(*, text: str, region_id: str | None, area: Any, requested_by: str, world: str | Path | None,
            now: datetime, rules: str | Path | None, coverage_target: float | None = None) -> dict[str, Any]:
    """Gather and decide, no apply: the plan and its findings, stamped ``what-if``/``asserted``."""
    out = planning.what_if(text=text, region_id=region_id, area_geojson=area, requested_by=requested_by,
                           world_dir=world, now=now, rules_path=rules, coverage_target=coverage_target)
    return {**out, "mode": "what-if", "identity": "asserted"}
