"""Server mode on real DuckDB files and real processes: one long-lived connection, snapshot reads that never wait
for the writer, writes serialised in the process, other processes let in on a knock, one server per home.

Timings are asserted only as ratios or generous bounds (the machine is shared): what is asserted is that a
read during a write does not wait for it (it finishes while the write is still open), not how fast it is.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from flows.errors import Conflict, LedgerUnavailable
from flows.integrity.verify import verify_ledger
from flows.ledger import Ledger, claim_home
from flows.ledger.audit import AuditEntry
from flows.ledger.shared import engine_for
from testkit import ledger_version

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")


def _audit(ledger: Ledger, command: str = "x", **kw: object) -> None:
    ledger.audit(actor="t", command=command, args={}, result_code="OK", duration_s=0.0, started=NOW, **kw)


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env.update({"SORTIE_HOME": str(home), "PYTHONPATH": str(ROOT), "SORTIE_LEDGER_LOCK_S": "60"})
    return env


@pytest.fixture
def shared(tmp_path: Path) -> Ledger:
    ledger = Ledger(tmp_path / "ledger.duckdb").shared()
    yield ledger
    ledger.close()


def test_reads_see_a_snapshot_and_do_not_wait_for_an_open_write(shared: Ledger) -> None:
    shared.record_versions([ledger_version("d-1")], actor="a", now=NOW)
    engine = engine_for(shared.path)
    assert engine is not None
    opened, release, done = threading.Event(), threading.Event(), threading.Event()

    def long_write() -> None:
        with engine.writing() as cur:
            cur.execute("BEGIN TRANSACTION")
            cur.execute("UPDATE drafts SET request_text = 'being rewritten' WHERE draft_id = 'd-1'")
            opened.set()
            release.wait(60)
            cur.execute("COMMIT")
        done.set()

    writer = threading.Thread(target=long_write)
    writer.start()
    assert opened.wait(30)
    reads = 0
    t0 = time.monotonic()
    while reads < 50 and time.monotonic() - t0 < 60:
        assert shared.get_draft("d-1").request_text == "r"  # the committed state, not the open write
        reads += 1
    assert not done.is_set() and reads == 50  # every read finished while the write was still open
    release.set()
    writer.join(30)
    assert shared.get_draft("d-1").request_text == "being rewritten"


def test_threads_writing_at_once_are_serialised_into_one_chain(shared: Ledger) -> None:
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(6):
                if i % 2:
                    shared.record_versions([ledger_version(f"d-{n}-{i}")], actor="a", now=NOW)
                else:
                    _audit(shared, f"t{n}")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    report = verify_ledger(shared)
    assert report.ok and report.entries == 36 and report.audit_rows == 18 and report.drafts == 18


def test_a_snapshot_walk_lets_writers_go_on(shared: Ledger) -> None:
    for i in range(30):
        shared.record_versions([ledger_version(f"d-{i}")], actor="a", now=NOW)
    shared.audit_many([AuditEntry("t", f"bulk{i}", {"i": i}, "OK", 0.0, NOW) for i in range(400)])
    before = verify_ledger(shared).head_seq
    box: dict[str, object] = {}

    def walk() -> None:
        box["report"] = shared.verify(full=True, record=False)

    walker = threading.Thread(target=walk)
    walker.start()
    written = 0
    while walker.is_alive() and written < 200:
        _audit(shared, "during")
        written += 1
    walker.join(120)
    report = box["report"]
    assert report.ok and written > 0  # writes went on while the walk ran
    assert before <= report.head_seq <= before + written  # the walk saw one snapshot, not a torn mix
    assert verify_ledger(shared).head_seq == before + written


OUTSIDER = """
import json, sys
from datetime import datetime
from flows.ledger import Ledger, NewVersion
led = Ledger(sys.argv[1])
now = datetime.fromisoformat("2026-11-29T07:00:00+02:00")
led.record_versions([NewVersion(draft_id="d-outside", version=1, state="DRAFT", request_key="rk-o", tenant="t",
    region_id=None, requested_by="a", request_text="from another process", intent=None, plan=None, plan_hash=None,
    findings=[], verdict="pass", missing=[], world_name="w", world_dir="w", world_hash="wh")], actor="a", now=now)
print(json.dumps({"drafts": sorted(d.draft_id for d in led.list_drafts())}))
"""


def test_another_process_gets_its_turn_while_a_server_holds_the_file(shared: Ledger, tmp_path: Path) -> None:
    shared.record_versions([ledger_version("d-1")], actor="a", now=NOW)
    engine = engine_for(shared.path)
    yields = engine.yields
    stop = threading.Event()
    served: list[float] = []

    def keep_reading() -> None:  # the server keeps answering meanwhile
        while not stop.is_set():
            t = time.monotonic()
            shared.get_draft("d-1")
            served.append(time.monotonic() - t)

    reader = threading.Thread(target=keep_reading)
    reader.start()
    try:
        out = subprocess.run([sys.executable, "-c", textwrap.dedent(OUTSIDER), str(shared.path)], env=_env(tmp_path),
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
    finally:
        stop.set()
        reader.join(60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout)["drafts"] == ["d-1", "d-outside"]
    assert engine.yields > yields and served  # it let the other process in, then took the file back
    assert shared.get_draft("d-outside").request_text == "from another process"
    assert verify_ledger(shared).ok and engine.opens >= 2


def test_a_knock_file_made_again_is_still_heard(shared: Ledger, tmp_path: Path) -> None:
    shared.record_versions([ledger_version("d-1")], actor="a", now=NOW)
    knock = shared.path.with_name(shared.path.name + ".knock")
    knock.unlink()
    time.sleep(0.2)  # the holder notices within a few polls and probes the new file
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(OUTSIDER), str(shared.path)], env=_env(tmp_path),
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "d-outside" in json.loads(out.stdout)["drafts"]


HOLDER = """
import sys, time
from flows.ledger import claim_home
claim_home(sys.argv[1])
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_one_server_per_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(home), "60"], env=_env(tmp_path), cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        with pytest.raises(Conflict) as err:
            claim_home(home)
        assert time.monotonic() - t0 < 5  # refused at once, not after a wait
        assert f"pid {holder.pid}" in err.value.message and "one server per home" in err.value.message
    finally:
        holder.kill()
        holder.wait(10)
    claim = claim_home(home)  # the kernel dropped the dead holder's lock: no stale lock to clean up
    assert claim_home(home) is claim  # the same process asking again keeps its claim
    claim.release()


def test_a_second_sortie_server_on_the_same_home_refuses_clearly(tmp_path: Path) -> None:
    from flows.context import DEMO_WORLD_DIR
    from testkit import free_port, stop_process_group

    home = tmp_path / "home"
    sortie = Path(sys.executable).parent / "sortie"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_") and not k.startswith("PREFECT_")}
    port = free_port()
    first = subprocess.Popen([str(sortie), "server", "--world", str(DEMO_WORLD_DIR), "--home", str(home), "--listen",
                              f"127.0.0.1:{port}", "--allow-unsigned"], env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, start_new_session=True)
    try:
        import httpx

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert first.poll() is None, first.stderr.read().decode()[-2000:] if first.stderr else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        second = subprocess.run([str(sortie), "server", "--world", str(DEMO_WORLD_DIR), "--home", str(home),
                                 "--listen", f"127.0.0.1:{free_port()}", "--allow-unsigned"], env=env, cwd=ROOT, capture_output=True,
                                text=True, timeout=120)
        assert second.returncode == 2, second.stdout + second.stderr
        assert "CONFLICT" in second.stderr and f"pid {first.pid}" in second.stderr, second.stderr
        assert "Traceback" not in second.stderr
        assert httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=10).status_code == 200  # the first serves on
        assert json.loads((home / "server.json").read_text())["world"] == str(DEMO_WORLD_DIR)
    finally:
        stop_process_group(first)


def test_files_are_private_in_a_private_home(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o755)
    ledger = Ledger(home / "ledger.duckdb").shared()
    try:
        _audit(ledger)
    finally:
        ledger.close()
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    for name in ("ledger.duckdb", "ledger.duckdb.head", "ledger.duckdb.lock", "ledger.duckdb.knock"):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE((home / "keys").stat().st_mode) == 0o700


def test_a_closed_shared_ledger_falls_back_to_a_connection_per_unit(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.duckdb").shared()
    assert ledger.is_shared and Ledger(tmp_path / "ledger.duckdb").is_shared  # every Ledger of the file
    ledger.close()
    assert not ledger.is_shared
    _audit(ledger)
    assert verify_ledger(ledger).audit_rows == 1


def test_a_damaged_file_is_refused_by_shared_mode_too(tmp_path: Path) -> None:
    path = tmp_path / "ledger.duckdb"
    path.write_bytes(b"not a database" * 100)
    with pytest.raises(LedgerUnavailable, match="not a DuckDB database"):
        Ledger(path).shared()
    assert path.read_bytes() == b"not a database" * 100 and not Ledger(path).is_shared


def test_a_read_session_is_one_snapshot_and_one_cursor_and_a_write_beside_it_still_commits(shared: Ledger) -> None:
    shared.record_versions([ledger_version("d-1")], actor="a", now=NOW)
    engine = engine_for(shared.path)
    assert engine is not None and engine.DUCKDB_THREADS == 1
    cursors: list[object] = []
    with shared.read_session():
        with engine.reading() as first, engine.reading() as second:
            cursors += [first, second]
        assert shared.get_draft("d-1").request_text == "r"
        with engine.writing() as cur:  # a write inside takes its own cursor and commits
            cur.execute("BEGIN TRANSACTION")
            cur.execute("UPDATE drafts SET request_text = 'rewritten' WHERE draft_id = 'd-1'")
            cur.execute("COMMIT")
        assert shared.get_draft("d-1").request_text == "r"  # the session's snapshot, taken before the write
    assert cursors[0] is cursors[1]
    assert shared.get_draft("d-1").request_text == "rewritten"  # after the session: a fresh snapshot
    with engine.reading() as a, engine.reading() as b:  # outside a session each unit has a cursor of its own
        assert a is not b
    assert shared.schema_versions()  # the session's cursor went back to the pool in a usable state
