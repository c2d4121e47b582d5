"""The draft file store: ``<home>/drafts/<id>/v<n>/`` with draft.json, plan.json, plan.geojson, map.png.

The ledger is the truth; these files are a convenience for people and tools
(the map picture, a plan to open in QGroundControl). They are written before
the ledger commit, atomically (a temporary folder renamed into place), and
rewritten from the ledger when a crash left them missing (``ensure_files``).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flows.context import draft_dir
from planner.plan import Plan, canonical_json, plan_to_geojson
from planner.world.model import World

__all__ = ["draft_dir", "files_of", "write_files"]

_FILES = (("draft", "draft.json"), ("plan", "plan.json"), ("plan_geojson", "plan.geojson"), ("map", "map.png"))




def files_of(draft_id: str, version: int, home: Path) -> dict[str, str]:
    """The files a version has on disk now (name → path)."""
    d = draft_dir(draft_id, version, home)
    return {key: str(d / name) for key, name in _FILES if (d / name).is_file()}


def write_files(
    draft_id: str, version: int, plan: Plan | None, world: World, summary: Mapping[str, Any], home: Path
) -> dict[str, str]:
    """Write a version's files atomically (a temporary folder renamed into place)."""
    final = draft_dir(draft_id, version, home)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".tmp-v{version}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        (tmp / "draft.json").write_text(
            json.dumps(dict(summary), ensure_ascii=False, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
        )
        if plan is not None:
            (tmp / "plan.json").write_text(canonical_json(plan), encoding="utf-8")
            (tmp / "plan.geojson").write_text(
                json.dumps(plan_to_geojson(plan), ensure_ascii=False, sort_keys=True), encoding="utf-8"
            )
            from planner.output.mapimage import render_plan_png

            (tmp / "map.png").write_bytes(render_plan_png(plan, world))
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return files_of(draft_id, version, home)
