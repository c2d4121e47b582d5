"""Where inputs come from at the edge: the world folder, the rule file, "now", SORTIE_HOME, draft folders.

The core never reads the clock or the environment; the CLI and the flows
resolve these once, here, and pass plain values down.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from planner.errors import InvalidArgument

__all__ = [
    "DATA_DIR",
    "DEMO_WORLD_DIR",
    "RULES_FILE",
    "resolve_rules_file",
    "resolve_world_dir",
    "resolve_now",
    "sortie_home",
    "draft_dir",
]

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
DEMO_WORLD_DIR = DATA_DIR / "demo-helsinki"
RULES_FILE = DATA_DIR / "rules.yaml"


def resolve_world_dir(world: str | Path | None = None) -> Path:
    """``--world``, else ``SORTIE_WORLD``, else the bundled demo world."""
    chosen = world or os.environ.get("SORTIE_WORLD") or DEMO_WORLD_DIR
    return Path(chosen).expanduser()


def resolve_rules_file(rules: str | Path | None = None) -> Path:
    """``--rules``, else ``SORTIE_RULES``, else the bundled ``data/rules.yaml``: the rule set that
    judges plans and dispatches, and whose limits the planner plans inside."""
    chosen = rules or os.environ.get("SORTIE_RULES") or RULES_FILE
    return Path(chosen).expanduser()


def resolve_now(now: str | datetime | None = None) -> datetime:
    """``--now``, else ``SORTIE_NOW``, else the system clock; always timezone-aware.

    A naive ``--now`` is rejected: a reproducible run must say which offset it means.
    """
    if isinstance(now, datetime):
        value = now
    else:
        text = now or os.environ.get("SORTIE_NOW")
        if not text:
            return datetime.now(timezone.utc).replace(microsecond=0)
        try:
            value = datetime.fromisoformat(text)
        except ValueError as exc:
            raise InvalidArgument(f"--now/SORTIE_NOW {text!r} is not an ISO 8601 time: {exc}") from None
    if value.tzinfo is None:
        raise InvalidArgument(f"--now/SORTIE_NOW {value.isoformat()!r} needs an offset, e.g. +02:00")
    return value


def sortie_home() -> Path:
    """``SORTIE_HOME`` (default ``~/.sortie``): the ledger and each draft's files."""
    return Path(os.environ.get("SORTIE_HOME") or Path.home() / ".sortie").expanduser()


def draft_dir(draft_id: str, version: int, home: Path) -> Path:
    """``<home>/drafts/<id>/v<version>``: where a version's files live (``home``: the authority's)."""
    return Path(home) / "drafts" / draft_id / f"v{int(version)}"
