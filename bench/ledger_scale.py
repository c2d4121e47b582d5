"""``python -m bench.ledger_scale``: a realistic ledger of N drafts, built through the ledger's real write paths,
and the ledger's figures measured on it (issue 27).

    python -m bench.ledger_scale build   --home DIR --drafts 10000 [--seed 7] [--build-dir /dev/shm/x]
    python -m bench.ledger_scale measure --home DIR [--writes 60] [--reads 300] [--starts 1]

``build`` first plans a few real drafts of the demo world with the real
planner (a fire-lane patrol, an area survey, a point inspection) and keeps
their plans, intents and findings; then it records N drafts through
``Ledger`` in server mode (``shared()``) the way the authority does: plan
(``record_versions``), reads and refusals (``audit``), approvals
(``approve``, signed), dispatch (``claim_dispatch``, ``record_attempt``,
``finish_dispatch``), take-off and landing (``transition``), with replans,
rejections, expiries, failed dispatches and recalls mixed in at fixed rates
(seeded). Each draft's plan is one of the real plans moved by a few hundred
metres and a few days, so no two plans are the same bytes. ``--build-dir``
builds on another filesystem (a tmpfs: every commit's fsync is then free) and
copies the result to ``--home`` at the end; the write paths are the same.

``measure`` prints one JSON object: the start-up check (since the last
checkpoint) and the full walk, their wall and CPU time; ms per read and per write with a
connection per unit of work (embedded) and on the shared connection (server);
reads on the shared connection while a long write transaction is open; what
writers wait for during a full walk: embedded, the copy taken in the turn;
shared, nothing by construction (a snapshot) — writes during a walk are
measured anyway; and ``sortie server``'s time from
spawn to its first answer (wall, and the CPU it used) on a copy of the home and
on an empty home in the same run (``--starts N``: N of each, alternated; the medians and every run).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

__all__ = ["build", "measure", "main"]

START = datetime(2025, 1, 6, 7, 0, tzinfo=timezone(timedelta(hours=2)))
REQUESTS = (("这块地今天巡一遍消防通道", "region-1001"), ("今天航测这块地", "region-1001"),
            ("inspect the hydrants today", "region-1001"))
SERVER_ARGS = {"mode": "server", "identity": "token", "clock": "system"}


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _sample_plans(scratch: Path) -> list[dict[str, Any]]:
    """Plan the demo requests once with the real planner; their records are the templates."""
    from flows.context import DEMO_WORLD_DIR
    from flows.ledger import Ledger
    from flows.usecases.grounds import Grounds
    from flows.usecases.planning import plan_draft

    world = scratch / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["last_telemetry_at"] = (START - timedelta(seconds=20)).isoformat()
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    ledger = Ledger(scratch / "home" / "ledger.duckdb")
    os.environ["SORTIE_HOME"] = str(scratch / "home")
    out = []
    for text, region in REQUESTS:
        s = plan_draft(text=text, region_id=region, requested_by="li.wei", now=START,
                       grounds=Grounds(ledger=ledger, world_dir=world))
        rec = ledger.get_draft(s.draft_id)
        if rec.plan is not None:
            out.append({"plan": rec.plan, "intent": rec.intent, "findings": rec.findings, "notes": rec.notes,
                        "verdict": rec.verdict, "text": rec.request_text, "world_hash": rec.world_hash,
                        "tenant": rec.tenant, "region_id": rec.region_id})
    if not out:
        raise RuntimeError("the demo world planned nothing to use as a template")
    return out


def _moved(plan: dict[str, Any], rng: random.Random, days: int) -> dict[str, Any]:
    """The plan moved by up to ~300 m and ``days`` later: different bytes, the same shape and size."""
    dlat, dlon = rng.uniform(-0.003, 0.003), rng.uniform(-0.005, 0.005)

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            out = {k: walk(x) for k, x in v.items()}
            if isinstance(out.get("lat"), float) and isinstance(out.get("lon"), float):
                out["lat"], out["lon"] = round(out["lat"] + dlat, 6), round(out["lon"] + dlon, 6)
            for k in ("planned_for", "start_at"):
                if isinstance(out.get(k), str):
                    out[k] = (datetime.fromisoformat(out[k]) + timedelta(days=days)).isoformat()
            return out
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(plan)


def _attempts(drone: str, link: str) -> list[dict[str, Any]]:
    return [{"kind": "hello", "drone_id": drone, "link": link, "outcome": "HEARTBEAT", "dialect": "px4",
             "detail": "system 1 component 1 autopilot 12", "attempt": 1},
            {"kind": "upload", "drone_id": drone, "link": link, "mission_type": "mission", "outcome": "ACCEPTED",
             "items_sent": 74, "count": 74, "duration_s": 0.9, "busy_nacks": 0, "duplicates_acked": 0, "attempt": 2}]


def _draft(ledger: Any, i: int, tpl: dict[str, Any], rng: random.Random) -> int:
    """One draft's life through the real write paths; returns how many writes it took."""
    from flows.ledger import NewVersion
    from flows.ledger.records import sha256_json

    now = START + timedelta(minutes=90 * i)
    draft_id = f"d-{i:06d}"
    fate = rng.random()
    writes = 0

    def audit(command: str, code: str = "OK", message: str | None = None, actor: str = "li.wei") -> None:
        nonlocal writes
        ledger.audit(actor=actor, command=f"server.{command}", args={"draft_id": draft_id, **SERVER_ARGS},
                     result_code=code, duration_s=rng.uniform(0.01, 0.4), started=now, draft_id=draft_id,
                     message=message, token_id=f"tok-{actor}", client_addr=f"10.0.0.{1 + i % 200}")
        writes += 1

    def version(v: int) -> NewVersion:
        plan = _moved(tpl["plan"], rng, i % 700)
        return NewVersion(draft_id=draft_id, version=v, state="DRAFT", request_key=f"rk-{draft_id}-{v}",
                          tenant=tpl["tenant"], region_id=tpl["region_id"], requested_by="li.wei",
                          request_text=tpl["text"], intent=tpl["intent"], plan=plan, plan_hash=sha256_json(plan),
                          findings=tpl["findings"], verdict=tpl["verdict"], missing=[], world_name="demo-helsinki",
                          world_dir="/srv/sortie/world", world_hash=tpl["world_hash"], notes=tpl["notes"])

    (rec,) = ledger.record_versions([version(1)], actor="li.wei", now=now)
    writes += 1
    audit("plan")
    for _ in range(rng.randrange(0, 3)):
        audit("show", actor="chen.jing")
    if fate < 0.08:  # replanned once before a decision
        now += timedelta(minutes=3)
        (rec,) = ledger.record_versions([version(2)], actor="li.wei", now=now, supersede=rec)
        writes += 1
        audit("replan")
    if fate > 0.97:  # a refused self-approval, then an expiry
        audit("approve", "FORBIDDEN", "four-eyes rule: li.wei requested the draft and cannot approve it")
        ledger.transition(draft_id, rec.version, expected_state="DRAFT", expected_row_version=rec.row_version,
                          to_state="EXPIRED", actor="ledger:deadline", reason="not decided by its deadline",
                          now=now + timedelta(minutes=31))
        return writes + 1
    if 0.92 < fate <= 0.97:
        ledger.reject(draft_id, rec.version, approver_id="chen.jing", may_approve=lambda t, r: True,
                      reason="not today", now=now + timedelta(minutes=5))
        audit("reject", actor="chen.jing")
        return writes + 1
    approval = ledger.approve(draft_id, rec.version, approver_id="chen.jing", may_approve=lambda t, r: True,
                              plan_hash=rec.plan_hash, comment="ok", now=now + timedelta(minutes=5),
                              identity_proof="token", evidence={"mode": "server", "identity": "token"})
    writes += 1
    audit("approve", actor="chen.jing")
    link = f"udpout:10.1.0.{i % 50}:14550"
    drone = rec.plan["sorties"][0]["drone_id"]
    at = now + timedelta(minutes=10)
    claim = ledger.claim_dispatch(draft_id, rec.version, plan_hash=rec.plan_hash, params={"link": link},
                                  actor="chen.jing", now=at, items_hash=sha256_json([draft_id, rec.version]),
                                  approval_id=approval.approval_id)
    key = claim.dispatch.idempotency_key
    attempts = _attempts(drone, link)
    for a in attempts:
        ledger.record_attempt(key, a, now=at)
    writes += 1 + len(attempts)
    if 0.89 < fate <= 0.92:
        ledger.finish_dispatch(key, status="FAILED", result={"message": "the vehicle refused the mission",
                                                             "uploads": []}, actor="chen.jing", now=at)
        audit("dispatch", "DISPATCH_FAILED", "the vehicle refused the mission", actor="chen.jing")
        return writes + 1
    ledger.finish_dispatch(key, status="ACKED", result={"message": "the vehicle accepted the mission",
                                                        "status": "ACCEPTED", "uploads": [{"attempts": attempts}]},
                           actor="chen.jing", now=at)
    audit("dispatch", actor="chen.jing")
    d = ledger.get_draft(draft_id, rec.version)
    d = ledger.transition(draft_id, d.version, expected_state="DISPATCHED", expected_row_version=d.row_version,
                          to_state="IN_FLIGHT", actor="monitor", reason="the vehicle took off",
                          now=at + timedelta(minutes=2))
    writes += 2
    if fate > 0.87:  # recalled
        d = ledger.transition(draft_id, d.version, expected_state="IN_FLIGHT", expected_row_version=d.row_version,
                              to_state="RECALLING", actor="chen.jing", reason="recall: return to launch",
                              now=at + timedelta(minutes=6))
        audit("recall", actor="chen.jing")
        ledger.transition(draft_id, d.version, expected_state="RECALLING", expected_row_version=d.row_version,
                          to_state="RECALLED", actor="monitor", reason="landed and disarmed at home",
                          now=at + timedelta(minutes=9))
        return writes + 2
    ledger.transition(draft_id, d.version, expected_state="IN_FLIGHT", expected_row_version=d.row_version,
                      to_state="SUCCEEDED", actor="monitor", reason="last item done, landed and disarmed",
                      now=at + timedelta(minutes=20))
    return writes + 1


def build(home: Path, drafts: int, *, seed: int = 7, build_dir: Path | None = None) -> dict[str, Any]:
    """Build the ledger of ``drafts`` drafts under ``home`` (see the module docstring)."""
    from flows.ledger import Ledger, open_ledger
    from flows.ledger.signing import KeyStore

    work = build_dir or home
    if work.exists() and any(work.iterdir()):
        raise SystemExit(f"{work} is not empty")
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    templates = _sample_plans(work / ".templates")
    shutil.rmtree(work / ".templates")
    _log(f"{len(templates)} real plans as templates ({time.perf_counter() - t0:.1f} s)")
    ledger = Ledger(open_ledger(work).path, keys=KeyStore(work, mode="server")).shared()
    rng = random.Random(seed)
    writes, t1 = 0, time.perf_counter()
    for i in range(drafts):
        writes += _draft(ledger, i, templates[i % len(templates)], rng)
        if (i + 1) % 500 == 0:
            _log(f"{i + 1} drafts, {writes} writes, {(time.perf_counter() - t1) / writes * 1000:.1f} ms/write")
    ledger.close()
    seconds = time.perf_counter() - t1
    if build_dir is not None:
        home.mkdir(parents=True, exist_ok=True)
        for p in work.iterdir():
            (shutil.copytree if p.is_dir() else shutil.copy2)(p, home / p.name)
    size = (home / "ledger.duckdb").stat().st_size
    return {"home": str(home), "drafts": drafts, "writes": writes, "build_s": round(seconds, 1),
            "ms_per_write": round(seconds / writes * 1000, 2), "file_bytes": size, "built_on": str(work)}


def _ms(samples: list[float]) -> dict[str, float]:
    s = sorted(samples)
    return {"n": len(s), "p50_ms": round(statistics.median(s) * 1000, 2),
            "p95_ms": round(s[int(0.95 * (len(s) - 1))] * 1000, 2), "max_ms": round(s[-1] * 1000, 2)}


def _timed(fn: Any, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _server_start(home: Path, world: Path) -> dict[str, float]:
    """Wall seconds from spawning ``sortie server`` on ``home`` to its first 200 on /v1/health, and the CPU
    seconds the server process had used by then (a figure that the machine's load does not move much)."""
    import httpx

    sock = __import__("socket").socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(Path(sys.executable).parent / "sortie"), "server", "--world", str(world), "--home",
                             str(home), "--listen", f"127.0.0.1:{port}"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        while time.perf_counter() - t0 < 300:
            if proc.poll() is not None:
                raise RuntimeError(f"sortie server exited: {proc.stderr.read().decode()[-2000:]}")  # type: ignore[union-attr]
            try:
                if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=1).status_code == 200:
                    wall = time.perf_counter() - t0
                    return {"wall_s": round(wall, 2), "cpu_s": round(_cpu_s(proc.pid), 2)}
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise RuntimeError("sortie server did not answer within 300 s")
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(30)


def _starts(runs: list[dict[str, float]]) -> dict[str, Any]:
    """Server starts: the medians, and every run when there were several."""
    out: dict[str, Any] = {k: round(statistics.median(r[k] for r in runs), 2) for k in ("wall_s", "cpu_s")}
    if len(runs) > 1:
        out["runs"] = runs
    return out


def measure(home: Path, *, writes: int = 60, reads: int = 300, starts: int = 1) -> dict[str, Any]:
    """The figures of the module docstring, on a copy of ``home`` (the original is never changed)."""
    from flows.context import DEMO_WORLD_DIR
    from flows.ledger import Ledger, open_ledger
    from flows.ledger.signing import KeyStore

    out: dict[str, Any] = {"home": str(home), "load_avg": os.getloadavg()}
    scratch = home.parent / f".measure-{os.getpid()}"
    shutil.copytree(home, scratch / "home")
    try:
        h = scratch / "home"
        ledger = Ledger(open_ledger(h).path, keys=KeyStore(h, mode="server"))
        ids = [d.draft_id for d in ledger.list_drafts(limit=50)]
        out["drafts"] = ledger._read(lambda c: c.execute("SELECT count(DISTINCT draft_id) FROM drafts").fetchone()[0], 0)
        out["file_bytes"] = ledger.path.stat().st_size
        t = time.perf_counter()
        ledger.copy_to(scratch / "copy.duckdb")  # what embedded writers wait for during a `ledger verify`
        out["embedded_turn_held_for_copy_s"] = round(time.perf_counter() - t, 2)
        (scratch / "copy.duckdb").unlink()
        t, c = time.perf_counter(), time.process_time()
        full = ledger.verify(full=True)
        out["verify_full"] = {"wall_s": round(time.perf_counter() - t, 2), "cpu_s": round(time.process_time() - c, 2),
                              **{k: full.to_dict()[k] for k in ("ok", "entries", "drafts", "approvals", "audit_rows",
                                                                "dispatch_changes", "head_seq")}}
        t, c = time.perf_counter(), time.process_time()
        since = ledger.verify(full=False)
        out["verify_since_checkpoint"] = {"wall_s": round(time.perf_counter() - t, 2),
                                          "cpu_s": round(time.process_time() - c, 2), "ok": since.ok,
                                          "entries_walked": since.entries}
        now = datetime.now(timezone.utc)

        def write() -> None:
            ledger.audit(actor="bench", command="bench.write", args={}, result_code="OK", duration_s=0.0, started=now)

        rng = random.Random(1)
        out["embedded"] = {"read": _ms(_timed(lambda: ledger.get_draft(rng.choice(ids)), max(20, reads // 10))),
                           "write": _ms(_timed(write, max(10, writes // 3)))}
        ledger.shared()
        out["shared"] = {"read": _ms(_timed(lambda: ledger.get_draft(rng.choice(ids)), reads)),
                         "write": _ms(_timed(write, writes))}
        out["reads_during_long_write"] = _reads_during_long_write(ledger, ids, rng)
        out["writes_during_full_walk"] = _writes_during_walk(ledger, write)
        ledger.close()
        (scratch / "empty").mkdir()
        built, empty = [], []
        for _ in range(max(1, starts)):  # alternated, so both see the same machine
            built.append(_server_start(h, DEMO_WORLD_DIR))
            empty.append(_server_start(scratch / "empty", DEMO_WORLD_DIR))
        out["server_start"] = _starts(built)
        out["server_start_empty_home"] = _starts(empty)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def _reads_during_long_write(ledger: Any, ids: list[str], rng: random.Random) -> dict[str, Any]:
    """Point reads on the shared connection while another thread's write transaction stays open for 2 s."""
    started, done = threading.Event(), threading.Event()

    def slow_work(con: Any) -> None:  # a real write (through ``_write``), kept open
        con.execute("UPDATE ledger_meta SET value = value WHERE name = 'ledger_id'")
        started.set()
        time.sleep(2.0)

    def long_write() -> None:
        try:
            ledger._write(slow_work, what="bench: a long write")
        finally:
            done.set()

    th = threading.Thread(target=long_write)
    th.start()
    started.wait(30)
    samples = []
    while not done.is_set() and len(samples) < 10_000:
        t = time.perf_counter()
        ledger.get_draft(rng.choice(ids))
        samples.append(time.perf_counter() - t)
    th.join()
    return _ms(samples)


def _writes_during_walk(ledger: Any, write: Any) -> dict[str, Any]:
    """Writes on the shared connection while a full walk runs on a snapshot in another thread."""
    done = threading.Event()
    box: dict[str, Any] = {}

    def walk() -> None:
        t = time.perf_counter()
        box["ok"] = ledger.verify(full=True, record=False).ok
        box["walk_s"] = round(time.perf_counter() - t, 2)
        done.set()

    th = threading.Thread(target=walk)
    th.start()
    samples = []
    while not done.is_set() and len(samples) < 2000:
        samples.extend(_timed(write, 1))
    th.join()
    return {**box, "writes": _ms(samples) if samples else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ledger_scale", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--home", type=Path, required=True)
    b.add_argument("--drafts", type=int, default=10_000)
    b.add_argument("--seed", type=int, default=7)
    b.add_argument("--build-dir", type=Path, default=None)
    m = sub.add_parser("measure")
    m.add_argument("--home", type=Path, required=True)
    m.add_argument("--writes", type=int, default=60)
    m.add_argument("--reads", type=int, default=300)
    m.add_argument("--starts", type=int, default=1, help="server starts on each home, alternated (medians printed)")
    args = parser.parse_args(argv)
    if args.command == "build":
        result = build(args.home, args.drafts, seed=args.seed, build_dir=args.build_dir)
    else:
        result = measure(args.home, writes=args.writes, reads=args.reads, starts=args.starts)
    json.dump(result, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
