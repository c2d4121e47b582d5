"""Backup → restore → verify round-trips while other processes keep writing the ledger (real DuckDB files)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from flows.ledger import Ledger

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"

WRITER = """
import hashlib, json, sys, time
from datetime import datetime
from flows.ledger import Ledger, NewVersion
path, who, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
ledger = Ledger(path, lock_budget_s=60)
now = datetime.fromisoformat("2026-11-29T07:00:00+02:00")
end = time.monotonic() + seconds
i = 0
while time.monotonic() < end and i < 400:
    plan = {"sorties": [{"drone_id": f"D-{who}-{i}"}], "n": i}
    text = json.dumps(plan, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    h = hashlib.sha256(text.encode()).hexdigest()
    d = f"d-{who}-{i}"
    ledger.record_versions([NewVersion(draft_id=d, version=1, state="DRAFT", request_key=d, tenant="t", region_id=None,
        requested_by="a", request_text="r", intent=None, plan=plan, plan_hash=h, findings=[], verdict="pass",
        missing=[], world_name="w", world_dir="w", world_hash="wh")], actor="a", now=now)
    ledger.approve(d, 1, approver_id="b", may_approve=lambda t, r: True, plan_hash=h, comment="", now=now)
    i += 1
print(i)
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env.update({"SORTIE_HOME": str(home), "PYTHONPATH": str(ROOT), "SORTIE_LEDGER_LOCK_S": "60"})
    return env


def _sortie(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SORTIE), *args, "--json"], env=_env(home), cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def _entries(path: Path) -> int:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return int(con.execute("SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM approvals)").fetchone()[0])
    finally:
        con.close()


def _home_with_ledger(tmp_path: Path) -> Path:
    """A fresh SORTIE_HOME whose ledger one WRITER process has filled (in its own process, as in use)."""
    home = tmp_path / "home"
    home.mkdir()
    w = subprocess.run([sys.executable, "-c", textwrap.dedent(WRITER), str(home / "ledger.duckdb"), "w", "1"],
                       env=_env(home), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert w.returncode == 0, w.stderr[-2000:]
    return home


def test_backup_restore_verify_round_trips_under_concurrent_writes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    ledger = Ledger(home / "ledger.duckdb").ensure()
    writers = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), str(ledger.path), f"w{i}", "12"],
                         env=_env(home), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(3)
    ]
    backups: list[tuple[Path, dict]] = []
    try:
        time.sleep(2.0)
        for n in range(3):  # backups taken while the writers write
            dest = tmp_path / f"backup-{n}"
            b = _sortie(home, "ledger", "backup", str(dest))
            assert b.returncode == 0, b.stdout[-2000:] + b.stderr[-2000:]
            backups.append((dest, json.loads(b.stdout)))
            time.sleep(1.0)
    finally:
        outs = [w.communicate(timeout=240) for w in writers]
    assert all(w.returncode == 0 for w in writers), [o[1][-2000:] for o in outs]
    written = sum(int(o[0].strip()) for o in outs)
    assert written > 0
    counts = [m["entries"] for _, m in backups]
    assert counts == sorted(counts) and counts[0] > 0  # each backup is a consistent prefix of a growing ledger
    assert all(m["verified"] for _, m in backups)
    final = _sortie(home, "ledger", "verify")
    assert final.returncode == 0 and json.loads(final.stdout)["entries"] == 3 * written  # per draft: two events and one approval
    # restore the middle backup: the ledger is exactly that copy, verifies, and the newer file was kept aside
    dest, manifest = backups[1]
    r = _sortie(home, "ledger", "restore", str(dest))
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out["entries"] == manifest["entries"] and out["moved_aside"]
    assert hashlib.sha256(ledger.path.read_bytes()).hexdigest() == manifest["sha256"]
    v = _sortie(home, "ledger", "verify")
    assert v.returncode == 0 and json.loads(v.stdout)["entries"] == manifest["entries"], v.stdout
    assert _entries(ledger.path) == manifest["entries"]
    # and it is a working ledger again: a new write chains onto the restored head
    ledger.audit(actor="t", command="x", args={}, result_code="OK", duration_s=0.0,
                 started=__import__("datetime").datetime.fromisoformat("2026-11-29T07:00:00+02:00"))
    assert _sortie(home, "ledger", "verify").returncode == 0


def test_a_tampered_backup_is_not_restored(tmp_path: Path) -> None:
    home = _home_with_ledger(tmp_path)
    dest = tmp_path / "b"
    assert _sortie(home, "ledger", "backup", str(dest)).returncode == 0
    before = (home / "ledger.duckdb").read_bytes()
    con = duckdb.connect(str(dest / "ledger.duckdb"))
    con.execute("UPDATE events SET actor = 'mallory' WHERE event_id = 1")
    con.close()
    r = _sortie(home, "ledger", "restore", str(dest))
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["code"] == "LEDGER_TAMPERED"
    assert (home / "ledger.duckdb").read_bytes() == before  # the ledger in use was not touched
    # the manifest's sha256 is what caught it; with the manifest rewritten the chain still does
    manifest = json.loads((dest / "MANIFEST.json").read_text())
    manifest["sha256"] = hashlib.sha256((dest / "ledger.duckdb").read_bytes()).hexdigest()
    (dest / "MANIFEST.json").write_text(json.dumps(manifest))
    r = _sortie(home, "ledger", "restore", str(dest))
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["code"] == "LEDGER_TAMPERED"
    assert "changed after it was written" in json.loads(r.stdout)["error"]["message"]
    assert (home / "ledger.duckdb").read_bytes() == before


def test_restore_brings_back_a_deleted_ledger(tmp_path: Path) -> None:
    home = _home_with_ledger(tmp_path)
    dest = tmp_path / "b"
    assert _sortie(home, "ledger", "backup", str(dest)).returncode == 0
    (home / "ledger.duckdb").unlink()
    missing = _sortie(home, "ledger", "verify")
    assert missing.returncode == 2 and json.loads(missing.stdout)["error"]["code"] == "LEDGER_UNAVAILABLE"
    assert "sortie ledger restore" in json.loads(missing.stdout)["error"]["message"]
    assert _sortie(home, "ledger", "restore", str(dest)).returncode == 0
    assert _sortie(home, "ledger", "verify").returncode == 0


def test_the_scheduled_backup_flow_writes_verified_backups_and_prunes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The body of the ``backup-ledger`` deployment (prefect.yaml ``nightly``), run as its flow function does."""
    import yaml
    from datetime import datetime, timedelta, timezone

    from flows.orchestration.backup_flow import run_backup

    home = _home_with_ledger(tmp_path)
    monkeypatch.setenv("SORTIE_HOME", str(home))
    start = datetime(2026, 11, 29, 0, 15, tzinfo=timezone.utc)
    results = [run_backup(tmp_path / "backups", keep=2, now=start + timedelta(days=i)) for i in range(3)]
    kept = sorted(p.name for p in (tmp_path / "backups").iterdir())
    assert kept == [Path(r["dir"]).name for r in results[1:]]
    assert results[2]["pruned"] == [results[0]["dir"]] and all(r["verified"] for r in results)
    spec = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8"))
    nightly = [d for d in spec["deployments"] if d["entrypoint"] == "flows/orchestration/backup_flow.py:backup_ledger"]
    assert nightly and nightly[0]["schedules"][0]["cron"] == "15 2 * * *"
