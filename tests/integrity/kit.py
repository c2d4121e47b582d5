"""Shared pieces of the integrity tests: an approved draft in a real SORTIE_HOME, a simulator per test."""

from __future__ import annotations

import json
import os
import shutil
from datetime import datetime
from pathlib import Path

from flows.context import DEMO_WORLD_DIR

NOW = "2026-11-29T07:00:00+02:00"
TEXT = "这块地今天巡一遍消防通道"


def now() -> datetime:
    return datetime.fromisoformat(NOW)


def make_world(base: Path) -> Path:
    """The demo world with fresh telemetry and without its geozones (as the other dispatch tests use it)."""
    world = base / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    for z in (world / "zones").iterdir():
        z.unlink()
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["last_telemetry_at"] = "2026-11-29T06:59:40+02:00"
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    return world


def env_for(home: Path, world: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env.update({"SORTIE_HOME": str(home), "SORTIE_WORLD": str(world), "SORTIE_NOW": NOW, "COLUMNS": "200",
                "SORTIE_LEDGER_LOCK_S": "60"})
    return env
