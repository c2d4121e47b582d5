"""Backup → restore → verify round-trips while other processes keep writing the ledger (real DuckDB files)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from flows.ledger import Ledger
from flows.errors import LedgerTampered

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


# --------------------------------------------------------------------------- anchors: a rolled-back home


def _write_more(home: Path, who: str, env: dict[str, str] | None = None) -> None:
    w = subprocess.run([sys.executable, "-c", textwrap.dedent(WRITER), str(home / "ledger.duckdb"), who, "0.5"],
                       env=env or _env(home), cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert w.returncode == 0, w.stderr[-2000:]


def _roll_back(home: Path, saved: Path) -> None:
    """Put the saved home's ledger and head file back: an older ledger with its own valid head."""
    for name in ("ledger.duckdb", "ledger.duckdb.head"):
        (home / name).write_bytes((saved / name).read_bytes())
    (home / "ledger.duckdb.wal").unlink(missing_ok=True)


def test_a_rolled_back_home_verifies_alone_but_not_against_its_anchor(tmp_path: Path) -> None:
    from flows.integrity.backup import backup
    from flows.integrity.verify import verify_ledger
    from flows.ledger.checkpoints import read_anchor
    from flows.orchestration.backup_flow import run_backup

    home = tmp_path / "home"
    ledger = _filled(home, "first")
    saved = tmp_path / "saved"
    saved.mkdir()
    for name in ("ledger.duckdb", "ledger.duckdb.head"):
        (saved / name).write_bytes((home / name).read_bytes())
    _filled(home, "later")
    dest = tmp_path / "b1"
    out = backup(ledger, dest)
    anchor = json.loads((dest / "ANCHOR.json").read_text())
    assert anchor["statement"]["seq"] == out["head_seq"]
    assert oct(dest.stat().st_mode & 0o777) == "0o700"
    assert {p.name: oct(p.stat().st_mode & 0o777) for p in dest.iterdir()} == {
        "ledger.duckdb": "0o600", "ledger.duckdb.head": "0o600", "MANIFEST.json": "0o600", "ANCHOR.json": "0o600"}
    assert verify_ledger(ledger, against=[("b1", read_anchor(dest / "ANCHOR.json"))]).ok
    _roll_back(home, saved)
    alone = _sortie(home, "ledger", "verify")
    assert alone.returncode == 0, alone.stdout  # the older copy is valid on its own: that was the hole
    v = _sortie(home, "ledger", "verify", "--against", str(dest))
    assert v.returncode == 2, v.stdout
    error = json.loads(v.stdout)["error"]
    assert error["code"] == "LEDGER_TAMPERED" and "rolled back to an older copy" in error["message"]
    # the nightly backup, which checks the previous backup's anchor first, refuses to back the older copy up
    root = tmp_path / "nightly"
    root.mkdir()
    os.replace(dest, root / "ledger-20261129T021500000000Z")
    os.environ["SORTIE_HOME"] = str(home)
    try:
        with pytest.raises(LedgerTampered, match="rolled back"):
            run_backup(root, keep=3)
    finally:
        del os.environ["SORTIE_HOME"]
    manifests = [p.name for p in root.iterdir() if (p / "MANIFEST.json").is_file()]
    assert manifests == ["ledger-20261129T021500000000Z"]  # the refused copy is not counted as a backup


def _filled(home: Path, who: str, n: int = 3) -> Ledger:
    """A ledger in ``home`` with ``n`` approved drafts, written in this process (the same writes as WRITER)."""
    from datetime import datetime

    from flows.ledger import NewVersion
    from flows.ledger.records import sha256_json

    ledger = Ledger(home / "ledger.duckdb")
    now = datetime.fromisoformat("2026-11-29T07:00:00+02:00")
    for i in range(n):
        plan, d = {"sorties": [{"drone_id": f"D-{who}-{i}"}]}, f"d-{who}-{i}"
        ledger.record_versions([NewVersion(
            draft_id=d, version=1, state="DRAFT", request_key=d, tenant="t", region_id=None, requested_by="a",
            request_text="r", intent=None, plan=plan, plan_hash=sha256_json(plan), findings=[], verdict="pass",
            missing=[], world_name="w", world_dir="w", world_hash="wh")], actor="a", now=now)
        ledger.approve(d, 1, approver_id="b", may_approve=lambda t, r: True, plan_hash=sha256_json(plan), comment="",
                       now=now)
    return ledger


def test_a_forged_or_foreign_anchor_is_named(tmp_path: Path) -> None:
    from flows.integrity.backup import backup
    from flows.integrity.verify import verify_ledger
    from flows.ledger.checkpoints import parse_anchor, read_anchor
    from planner.errors import InvalidArgument

    ledger = _filled(tmp_path / "home", "h")
    backup(ledger, tmp_path / "b")

    def first_break(anchor_path: Path) -> str:
        with pytest.raises(LedgerTampered) as err:
            verify_ledger(ledger, against=[(str(anchor_path), read_anchor(anchor_path))])
        return err.value.details["first_break"]

    anchor = json.loads((tmp_path / "b" / "ANCHOR.json").read_text())
    forged = dict(anchor, statement={**anchor["statement"], "seq": anchor["statement"]["seq"] - 1})
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    assert "signature does not verify" in first_break(tmp_path / "forged.json")
    other = _filled(tmp_path / "other", "o")  # another ledger, with its own key: its anchor proves nothing here
    backup(other, tmp_path / "ob")
    assert "signature does not verify" in first_break(tmp_path / "ob")
    (tmp_path / "twin").mkdir()  # another ledger signed with the same key: named as another ledger
    shutil.copytree(tmp_path / "home" / "keys", tmp_path / "twin" / "keys")
    backup(_filled(tmp_path / "twin", "t"), tmp_path / "tb")
    assert "another ledger was put in its place" in first_break(tmp_path / "tb")
    with pytest.raises(InvalidArgument):
        parse_anchor({})
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    v = _sortie(tmp_path / "home", "ledger", "verify", "--against", str(junk))
    assert v.returncode == 2 and json.loads(v.stdout)["error"]["code"] == "INVALID_ARGUMENT"


def test_with_the_key_outside_the_home_a_rolled_back_home_is_still_found(tmp_path: Path) -> None:
    """SORTIE_KEY_DIR: the key is not in the home, so whoever rolls the home back cannot re-sign an anchor."""
    keys = tmp_path / "offhost-keys"
    home = tmp_path / "home"
    home.mkdir()
    env = {**_env(home), "SORTIE_KEY_DIR": str(keys)}
    _write_more(home, "first", env)
    assert (keys / "authority.ed25519").is_file() and not (home / "keys").exists()
    saved = tmp_path / "saved"
    saved.mkdir()
    for name in ("ledger.duckdb", "ledger.duckdb.head"):
        (saved / name).write_bytes((home / name).read_bytes())
    _write_more(home, "second", env)
    backup_out = subprocess.run([str(SORTIE), "ledger", "backup", str(tmp_path / "b"), "--json"], env=env, cwd=ROOT,
                                capture_output=True, text=True, timeout=300)
    assert backup_out.returncode == 0, backup_out.stdout + backup_out.stderr
    _roll_back(home, saved)
    v = subprocess.run([str(SORTIE), "ledger", "verify", "--json", "--against", str(tmp_path / "b")], env=env,
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert v.returncode == 2 and "rolled back" in json.loads(v.stdout)["error"]["message"]
    without = subprocess.run([str(SORTIE), "ledger", "verify", "--json"], env=_env(home), cwd=ROOT,
                             capture_output=True, text=True, timeout=300)
    assert without.returncode == 2  # without the key nothing in the home verifies


def test_a_server_backs_up_from_one_snapshot_while_it_writes(tmp_path: Path) -> None:
    """Shared mode: ``COPY FROM DATABASE`` inside one read snapshot; writers in other threads never wait for it."""
    import threading
    from datetime import datetime

    from flows.integrity.backup import backup, restore

    home = _home_with_ledger(tmp_path)
    ledger = Ledger(home / "ledger.duckdb").shared()
    stop = threading.Event()
    written: list[int] = []

    def write() -> None:
        while not stop.is_set() and len(written) < 500:
            ledger.audit(actor="t", command="during", args={}, result_code="OK", duration_s=0.0,
                         started=datetime.fromisoformat("2026-11-29T07:00:00+02:00"))
            written.append(1)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        out = backup(ledger, tmp_path / "b")
    finally:
        stop.set()
        writer.join(60)
        ledger.close()
    assert out["verified"] and written  # writes went on during the copy
    assert json.loads((tmp_path / "b" / "ledger.duckdb.head").read_text())["seq"] == out["head_seq"]
    assert _sortie(home, "ledger", "verify", "--against", str(tmp_path / "b")).returncode == 0
    back = restore(Ledger(home / "ledger.duckdb"), tmp_path / "b")
    assert back["head_seq"] == out["head_seq"] and _entries(home / "ledger.duckdb") > 0
    assert _sortie(home, "ledger", "verify").returncode == 0


def test_verifying_a_backup_folder_reads_it_and_never_writes_it(tmp_path: Path) -> None:
    """``sortie ledger verify --home BACKUP`` must not migrate, checkpoint or otherwise touch the copy."""
    from flows.integrity.backup import backup, restore

    home = tmp_path / "home"
    ledger = _filled(home, "h")
    dest = tmp_path / "b"
    backup(ledger, dest)
    before = {p.name: p.read_bytes() for p in dest.iterdir()}
    v = subprocess.run([str(SORTIE), "ledger", "verify", "--home", str(dest), "--json"],  # the key is not in a backup
                       env={**_env(home), "SORTIE_KEY_DIR": str(home / "keys")}, cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert v.returncode == 0, v.stdout + v.stderr
    assert {p.name: p.read_bytes() for p in dest.iterdir()} == before
    assert restore(ledger, dest)["verified"]
