"""``sortie fleet --publish``: the fleet as a Prefect table artifact, against a real Prefect server on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.prefect, pytest.mark.timeout(180)]
SORTIE = Path(sys.executable).parent / "sortie"


def test_the_fleet_is_published_as_a_table_artifact_and_without_prefect_it_is_refused(
        prefect_server: Any, tmp_path: Path) -> None:
    from prefect.artifacts import Artifact

    from flows.orchestration.fleet_board import FLEET_ARTIFACT_KEY

    env = {k: v for k, v in prefect_server.env.items() if not k.startswith("SORTIE_")} | {
        "SORTIE_HOME": str(tmp_path / "home")}
    p = subprocess.run([str(SORTIE), "fleet", "--publish", "--json", "--as", "li.wei"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr + p.stdout
    assert json.loads(p.stdout)["artifact_key"] == FLEET_ARTIFACT_KEY
    board = Artifact.get(FLEET_ARTIFACT_KEY)
    assert board is not None and board.type == "table"
    rows = json.loads(board.data) if isinstance(board.data, str) else board.data
    assert [r["drone"] for r in rows] == ["M30T-01", "M30T-02", "M3TD-01", "M3TD-02"]  # li.wei's tenant
    assert {r["source"] for r in rows} == {"file"} and "file" in (board.description or "")
    bare = {k: v for k, v in env.items() if not k.startswith("PREFECT_")} | {
        "PREFECT_HOME": str(tmp_path / "no-prefect")}  # no profile with an API URL either
    p = subprocess.run([str(SORTIE), "fleet", "--publish", "--json"], env=bare, capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 2 and "PREFECT_API_URL" in p.stdout, p.stdout + p.stderr
