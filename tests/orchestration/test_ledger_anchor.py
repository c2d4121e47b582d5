"""The chain's anchor on a real Prefect server: the ``backup-ledger`` flow publishes it as an artifact, and a home
rolled back to an older copy fails ``sortie ledger verify --against prefect:KEY`` and the next backup."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from flows.errors import LedgerTampered
from flows.ledger import Ledger, NewVersion
from flows.ledger.records import sha256_json

pytestmark = [pytest.mark.prefect, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")
KEY = "sortie-ledger-anchor-test"


def _drafts(ledger: Ledger, first: int, n: int) -> None:
    for i in range(first, first + n):
        plan = {"sorties": [{"drone_id": f"D-{i}"}]}
        ledger.record_versions([NewVersion(
            draft_id=f"d-{i}", version=1, state="DRAFT", request_key=f"rk-{i}", tenant="t", region_id=None,
            requested_by="a", request_text="r", intent=None, plan=plan, plan_hash=sha256_json(plan), findings=[],
            verdict="pass", missing=[], world_name="w", world_dir="w", world_hash="wh")], actor="a", now=NOW)


def test_the_backup_flow_publishes_the_anchor_and_a_rollback_is_found(
    prefect_server: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.orchestration.backup_flow import backup_ledger, read_anchor_artifact

    home = tmp_path / "home"
    monkeypatch.setenv("SORTIE_HOME", str(home))
    ledger = Ledger(home / "ledger.duckdb")
    _drafts(ledger, 0, 3)
    saved = {name: (home / name).read_bytes() for name in ("ledger.duckdb", "ledger.duckdb.head")}
    _drafts(ledger, 3, 3)
    result = backup_ledger(dest_root=str(tmp_path / "backups"), keep=3, anchor_key=KEY)
    published = read_anchor_artifact(KEY)
    assert published["statement"]["seq"] == result["head_seq"] == 6
    assert published["statement"]["ledger_id"] == result["ledger_id"]
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}, "SORTIE_HOME": str(home)}
    sortie = Path(sys.executable).parent / "sortie"

    def verify() -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(sortie), "ledger", "verify", "--json", "--against", f"prefect:{KEY}"], env=env,
                              cwd=ROOT, capture_output=True, text=True, timeout=300)

    ok = verify()
    assert ok.returncode == 0 and json.loads(ok.stdout)["against"] == [f"prefect:{KEY}"], ok.stdout + ok.stderr
    for name, data in saved.items():  # the whole home rolled back: an older ledger with its own valid head
        (home / name).write_bytes(data)
    rolled = verify()
    assert rolled.returncode == 2, rolled.stdout + rolled.stderr
    assert "rolled back to an older copy" in json.loads(rolled.stdout)["error"]["message"]
    with pytest.raises(LedgerTampered, match="rolled back"):
        backup_ledger(dest_root=str(tmp_path / "elsewhere"), keep=3, anchor_key=KEY)  # checked against the artifact
    assert read_anchor_artifact(KEY)["statement"]["seq"] == 6  # and nothing older was published over it
