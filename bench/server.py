"""``python -m bench server``: the authority under a control room's load, measured from outside (issue 27).

    python -m bench server [--readers 16] [--subscribers 300] [--planners 0] [--seconds 20] [--probe-every-s 1]
                           [--rss-requests 10000] [--serial-reads 0] [--ledger-home DIR]

It starts ``sortie server`` (a real process, on 127.0.0.1) on a copy of the
demo world under a fresh home, with the server's clock at the world's
reference time; issues tokens (``TokenStore``, as ``sortie admin token
create`` does); plans the drafts the probes will approve; then, for
``--seconds``:

- ``--readers`` threads read in a loop — the drafts list and one draft, in
  turn — each on its own keep-alive connection;
- ``--subscribers`` event streams stay open and idle (``GET /v1/events``, ten
  per token: a token may hold 16), all on one asyncio loop;
- ``--planners`` threads plan new drafts in a loop (0 by default);
- every ``--probe-every-s`` a probe approves one of the planned drafts, and the
  next one asks a recall of an approved draft (refused: it does not fly —
  what is measured is how long the safety lane takes to answer);

(``--seconds 0`` skips this run) and prints one JSON object: reads per second, read latency p50/p95/max,
errors by kind, the probes' latencies, ``/v1/health`` latency, the server's
RSS and CPU. Then ``--rss-requests`` reads in a row, with the server's RSS
sampled along the way (flat, or growing with requests). With ``--ledger-home``
(a built ledger, e.g. ``python -m bench.ledger_scale build``) it also times a
server's start on a copy of that home: spawn → first ``/v1/health``, and →
first authenticated read, twice (the first start of a copy may have no
checkpoint yet; the second starts from the one the first recorded).

With ``--serial-reads N`` it first reads the drafts list N times and one
draft N times, one request after another on one connection, and reports the
server's CPU per read of each kind (``serial``): a figure a shared machine
disturbs far less than a latency under load.

The load generator runs on the same machine as the server (as the issue's
figures do): on a 2-core machine they share it, and so do other processes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["main", "run"]

CLOCK = "2026-11-29T07:00:00+02:00"
TEXTS = (("inspect the hydrants today", "region-1002"), ("这块地今天巡一遍消防通道", "region-1001"))


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _proc_stat(pid: int) -> dict[str, float]:
    """The server's CPU seconds (user + system) and RSS in MB, from /proc."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    rss_kb = 0
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                rss_kb = int(line.split()[1])
    return {"cpu_s": round(cpu, 2), "rss_mb": round(rss_kb / 1024, 1)}


def _ms(samples: list[float]) -> dict[str, Any]:
    if not samples:
        return {"n": 0}
    s = sorted(samples)
    return {"n": len(s), "p50_ms": round(1000 * statistics.median(s), 1),
            "p95_ms": round(1000 * s[min(len(s) - 1, int(0.95 * len(s)))], 1), "max_ms": round(1000 * s[-1], 1)}


@dataclass
class Server:
    """A ``sortie server`` process the bench started."""

    url: str
    home: Path
    world: Path
    proc: subprocess.Popen[bytes]
    tokens: dict[str, str] = field(default_factory=dict)

    def stat(self) -> dict[str, float]:
        return _proc_stat(self.proc.pid)


def stop_group(proc: subprocess.Popen[Any]) -> None:
    """Stop a server started in its own process group (its planning processes with it): SIGTERM, then SIGKILL
    after 30 s; a group already gone is fine."""
    try:
        os.killpg(proc.pid, 15)
        proc.wait(30)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.wait(10)


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SORTIE_", "PREFECT_"))}


@contextmanager
def start_server(world: Path, home: Path, *, clock: str | None = CLOCK) -> Iterator[tuple[Server, dict[str, float]]]:
    """A server on ``home``; yields it and its start: spawn → first health answer (wall, and its CPU then)."""
    import httpx

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    args = [str(Path(sys.executable).parent / "sortie"), "server", "--world", str(world), "--home", str(home),
            "--listen", f"127.0.0.1:{port}", "--sweep-s", "0", "--fleet", "file", "--allow-unsigned"] + (["--clock", clock] if clock else [])
    # --fleet file: telemetry stamped for the clock, no links, no keys in a fresh home (--allow-unsigned, or no start)
    log = open(home.parent / f"server-{port}.log", "wb")  # noqa: SIM115 - kept open for the process's life
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, env=_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"sortie server exited: {(home.parent / f'server-{port}.log').read_text()[-2000:]}")
            if time.perf_counter() - t0 > 300:
                raise RuntimeError("sortie server did not answer within 300 s")
            try:
                if httpx.get(f"{url}/v1/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.02)
        start = {"first_answer_s": round(time.perf_counter() - t0, 2), **_proc_stat(proc.pid)}
        yield Server(url, home, world, proc), start
    finally:
        stop_group(proc)
        log.close()


def _token(home: Path, user: str, scopes: tuple[str, ...] = ("read", "plan", "approve", "dispatch")) -> str:
    from flows.server.tokens import TokenStore

    return TokenStore(home).create(user, scopes=scopes, label="bench")[1]


def _world_copy(dest: Path) -> Path:
    """The demo world, its drones reported in at the server's clock (so plans pass the telemetry rule)."""
    from flows.context import DEMO_WORLD_DIR

    shutil.copytree(DEMO_WORLD_DIR, dest)
    fleet = json.loads((dest / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["last_telemetry_at"] = "2026-11-29T06:59:50+02:00"
    (dest / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    return dest


def _plan(client: Any, i: int) -> dict[str, Any] | None:
    """The ``i``-th probe draft: another request each time (the text ends in one more full stop, which the reader
    reads as the same request). The same words in the same second of the server's clock are one draft, and since the
    server plans to its deadline (a demo plan ~0.5 s) most probes approved a draft approved already (409)."""
    text, region = TEXTS[i % len(TEXTS)]
    text += ("。" if text[-1] > "\u3000" else ".") * (i // len(TEXTS))
    r = client.post("/v1/plan", json={"text": text, "region_id": region})
    if r.status_code != 200:
        _log(f"plan refused: {r.status_code} {r.text[:300]}")
        return None
    d = r.json()
    return d if d.get("status") == "DRAFT" and d.get("verdict") != "block" else None


class _Load:
    """The readers, planners and probes of one run, and what they saw."""

    def __init__(self, server: Server, seconds: float) -> None:
        self.server, self.seconds = server, seconds
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.reads: list[float] = []
        self.errors: Counter[str] = Counter()
        self.probes: dict[str, list[float]] = {"approve": [], "recall": [], "health": []}
        self.probe_codes: Counter[str] = Counter()
        self.plans: list[float] = []

    def reader(self, token: str, ids: list[str]) -> None:
        import httpx

        with httpx.Client(base_url=self.server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            i = 0
            while not self.stop.is_set():
                path = "/v1/drafts" if i % 2 == 0 else f"/v1/drafts/{ids[i % len(ids)]}"
                t = time.perf_counter()
                try:
                    r = c.get(path, params={"limit": 20} if i % 2 == 0 else None)
                    ok = r.status_code == 200
                    kind = "" if ok else f"http {r.status_code} {r.json().get('error', {}).get('code', '')}"
                except httpx.HTTPError as exc:
                    ok, kind = False, type(exc).__name__
                dt = time.perf_counter() - t
                with self.lock:
                    if ok:
                        self.reads.append(dt)
                    else:
                        self.errors[kind] += 1
                i += 1

    def planner(self, token: str, k: int) -> None:
        import httpx

        with httpx.Client(base_url=self.server.url, headers={"Authorization": f"Bearer {token}"}, timeout=120) as c:
            i = k
            while not self.stop.is_set():
                t = time.perf_counter()
                d = _plan(c, i)
                with self.lock:
                    if d is not None:
                        self.plans.append(time.perf_counter() - t)
                    else:
                        self.errors["plan refused"] += 1
                i += 2

    def prober(self, token: str, drafts: list[dict[str, Any]], every_s: float) -> None:
        import httpx

        approved: list[dict[str, Any]] = []
        with httpx.Client(base_url=self.server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            k = 0
            while not self.stop.wait(every_s):
                t = time.perf_counter()
                try:
                    c.get("/v1/health")
                    self.probes["health"].append(time.perf_counter() - t)
                except httpx.HTTPError:
                    self.probe_codes["health error"] += 1
                if k % 2 == 0 and drafts:
                    d = drafts.pop()
                    t = time.perf_counter()
                    r = c.post(f"/v1/drafts/{d['draft_id']}/approve",
                               json={"version": d["version"], "plan_hash": d["plan_hash"]})
                    self.probes["approve"].append(time.perf_counter() - t)
                    self.probe_codes[f"approve {r.status_code}"] += 1
                    if r.status_code == 200:
                        approved.append(d)
                elif approved:
                    d = approved[-1]
                    t = time.perf_counter()
                    r = c.post(f"/v1/drafts/{d['draft_id']}/recall", json={"reason": "bench probe"})
                    self.probes["recall"].append(time.perf_counter() - t)
                    self.probe_codes[f"recall {r.status_code}"] += 1
                k += 1


async def _subscribers(url: str, tokens: list[str], n: int, stop: threading.Event, opened: Counter[str]) -> None:
    """``n`` idle event streams on raw connections (one loop): each reads its lines until ``stop``."""
    host, port = url.split("//", 1)[1].split(":")

    opening = asyncio.Semaphore(32)  # a control room's screens connect over seconds, not in one instant

    async def one(token: str) -> None:
        async with opening:
            try:
                reader, writer = await asyncio.open_connection(host, int(port))
            except OSError:
                opened["connect error"] += 1
                return
            writer.write(f"GET /v1/events HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
                         "Accept: text/event-stream\r\n\r\n".encode())
            await writer.drain()
            try:
                status = (await asyncio.wait_for(reader.readline(), 60)).decode(errors="replace").split()
            except (OSError, TimeoutError):
                opened["stream error"] += 1
                writer.close()
                return
        try:
            opened[f"http {status[1] if len(status) > 1 else '?'}"] += 1
            while not stop.is_set():
                try:
                    line = await asyncio.wait_for(reader.readline(), 0.5)
                except TimeoutError:
                    continue
                if not line:
                    opened["closed by server"] += 1
                    return
        except (OSError, TimeoutError, IndexError):
            opened["stream error"] += 1
        finally:
            writer.close()

    await asyncio.gather(*(one(tokens[i % len(tokens)]) for i in range(n)))


def _health_ms(url: str) -> float:
    import httpx

    t = time.perf_counter()
    httpx.get(f"{url}/v1/health", timeout=60)
    return round(1000 * (time.perf_counter() - t), 1)


def load_run(server: Server, *, readers: int, subscribers: int, planners: int, seconds: float,
             probe_every_s: float) -> dict[str, Any]:
    """The timed run of the module docstring on a started server."""
    import httpx

    home = server.home
    reader_tokens = [_token(home, "chen.jing") for _ in range(max(1, readers))]
    sub_tokens = [_token(home, "chen.jing", ("read",)) for _ in range(max(1, (subscribers + 9) // 10))]
    approver = _token(home, "chen.jing")
    planner_token = _token(home, "li.wei")
    n_probes = int(seconds / probe_every_s / 2) + 2
    t = time.perf_counter()
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {planner_token}"}, timeout=240) as c:
        drafts = [d for d in (_plan(c, i) for i in range(n_probes)) if d is not None]
    _log(f"planned {len(drafts)} drafts for the probes in {time.perf_counter() - t:.1f} s")
    ids = [d["draft_id"] for d in drafts]
    load = _Load(server, seconds)
    opened: Counter[str] = Counter()
    sub_thread = threading.Thread(target=lambda: asyncio.run(_subscribers(server.url, sub_tokens, subscribers,
                                                                         load.stop, opened)), daemon=True)
    sub_thread.start()
    deadline = time.monotonic() + 120
    while sum(opened.values()) < subscribers and time.monotonic() < deadline:
        time.sleep(0.1)
    _log(f"{sum(opened.values())} subscribers opened: {dict(opened)}")
    before = server.stat()
    threads = [threading.Thread(target=load.reader, args=(reader_tokens[i], ids), daemon=True) for i in range(readers)]
    threads += [threading.Thread(target=load.planner, args=(planner_token, k), daemon=True) for k in range(planners)]
    threads.append(threading.Thread(target=load.prober, args=(approver, list(drafts), probe_every_s), daemon=True))
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    time.sleep(seconds)
    load.stop.set()
    elapsed = time.perf_counter() - t0
    for th in threads:
        th.join(timeout=120)
    sub_thread.join(timeout=30)
    after = server.stat()
    return {
        "readers": readers, "subscribers": subscribers, "planners": planners, "seconds": round(elapsed, 1),
        "reads_per_s": round(len(load.reads) / elapsed, 1), "reads": _ms(load.reads),
        "errors": sum(load.errors.values()), "errors_by_kind": dict(load.errors),
        "subscribers_opened": dict(opened),
        "probe_approve": _ms(load.probes["approve"]), "probe_recall": _ms(load.probes["recall"]),
        "probe_health": _ms(load.probes["health"]), "probe_codes": dict(load.probe_codes),
        "plans": _ms(load.plans), "server_cpu_s": round(after["cpu_s"] - before["cpu_s"], 1),
        "server_cpu_share": round((after["cpu_s"] - before["cpu_s"]) / elapsed, 2), "server_rss_mb": after["rss_mb"],
    }


def serial_run(server: Server, requests: int) -> dict[str, Any]:
    """``requests`` reads one after another on one connection (the list and one draft, in turn): the server's CPU per
    read, a figure that a shared machine disturbs far less than a latency under load."""
    import httpx

    token = _token(server.home, "chen.jing")
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {_token(server.home, 'li.wei')}"},
                      timeout=240) as p:
        for i in range(4):
            _plan(p, i)
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        ids = [d["draft_id"] for d in c.get("/v1/drafts", params={"limit": 20}).json()["drafts"]] or ["none"]
        for path in ("/v1/drafts", f"/v1/drafts/{ids[0]}"):
            c.get(path)  # warm
        out: dict[str, Any] = {"requests": requests}
        for kind in ("list", "show"):
            before, t = server.stat()["cpu_s"], time.perf_counter()
            for i in range(requests):
                r = c.get("/v1/drafts", params={"limit": 20}) if kind == "list" else c.get(f"/v1/drafts/{ids[i % len(ids)]}")
                if r.status_code != 200:
                    out["errors"] = out.get("errors", 0) + 1
            wall = time.perf_counter() - t
            out[f"{kind}_server_cpu_ms"] = round(1000 * (server.stat()["cpu_s"] - before) / requests, 2)
            out[f"{kind}_wall_ms"] = round(1000 * wall / requests, 2)
    return out


def rss_run(server: Server, requests: int, threads: int = 4) -> dict[str, Any]:
    """``requests`` reads in a row (``threads`` at a time), the server's RSS sampled every tenth of them."""
    import httpx

    token = _token(server.home, "chen.jing")
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
        ids = [d["draft_id"] for d in c.get("/v1/drafts", params={"limit": 20}).json()["drafts"]]
    if not ids:  # alone (--seconds 0): plan a few, or every other read would be a refused show of no draft
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {_token(server.home, 'li.wei')}"},
                          timeout=240) as p:
            ids = [d["draft_id"] for d in (_plan(p, i) for i in range(4)) if d is not None]
    ids = ids or ["none"]
    done = Counter[str]()
    lock = threading.Lock()
    samples: list[tuple[int, float]] = [(0, server.stat()["rss_mb"])]
    step = max(1, requests // 20)

    def work(k: int) -> None:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
            while True:
                with lock:
                    n = done["n"]
                    if n >= requests:
                        return
                    done["n"] += 1
                    if (n + 1) % step == 0:
                        samples.append((n + 1, server.stat()["rss_mb"]))
                r = c.get("/v1/drafts" if n % 2 else f"/v1/drafts/{ids[n % len(ids)]}")
                if r.status_code != 200:
                    with lock:
                        done["errors"] += 1

    t = time.perf_counter()
    pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
    for th in pool:
        th.start()
    for th in pool:
        th.join()
    seconds = round(time.perf_counter() - t, 1)
    time.sleep(1.0)  # the last audit batch written
    samples.append((requests, server.stat()["rss_mb"]))
    half = samples[len(samples) // 2][1]
    return {"requests": requests, "seconds": seconds, "errors": done["errors"],
            "rss_mb_by_requests": samples, "rss_growth_mb": round(samples[-1][1] - samples[1][1], 1)
            if len(samples) > 1 else 0.0, "rss_growth_second_half_mb": round(samples[-1][1] - half, 1)}


def startup_run(ledger_home: Path, scratch: Path) -> dict[str, Any]:
    """A server's start on a copy of a built ledger home: first health answer and first authenticated read."""
    import httpx

    from flows.context import DEMO_WORLD_DIR

    home = scratch / "startup-home"
    shutil.copytree(ledger_home, home, ignore=shutil.ignore_patterns("*.lock", "*.knock"))
    out: dict[str, Any] = {}
    token = _token(home, "chen.jing")
    for name in ("first_start", "second_start"):
        t0 = time.perf_counter()
        with start_server(Path(DEMO_WORLD_DIR), home, clock=None) as (server, start):
            r = httpx.get(f"{server.url}/v1/drafts", params={"limit": 20}, timeout=120,
                          headers={"Authorization": f"Bearer {token}"})
            out[name] = {**start, "first_read_s": round(time.perf_counter() - t0, 2), "first_read_status": r.status_code}
            walk_deadline = time.monotonic() + 600
            while time.monotonic() < walk_deadline:  # let the full walk record its checkpoint before the restart
                health = httpx.get(f"{server.url}/v1/health", timeout=30).json()
                if health.get("integrity") != "walking":
                    out[name]["full_walk"] = {k: health.get(k) for k in ("integrity", "full_walk_s")}
                    break
                time.sleep(0.5)
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"load_avg_before": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}
    scratch = Path(tempfile.mkdtemp(prefix="bench-server-"))
    try:
        world = _world_copy(scratch / "world")
        home = scratch / "home"
        home.mkdir()
        with start_server(world, home) as (server, start):
            out["start_empty_home"] = start
            out["health_idle_ms"] = _health_ms(server.url)
            if args.serial_reads:
                out["serial"] = serial_run(server, args.serial_reads)
            if args.seconds > 0:
                out["load"] = load_run(server, readers=args.readers, subscribers=args.subscribers,
                                       planners=args.planners, seconds=args.seconds, probe_every_s=args.probe_every_s)
            if args.rss_requests:
                out["rss"] = rss_run(server, args.rss_requests)
        if args.ledger_home is not None:
            out["startup"] = startup_run(args.ledger_home, scratch)
        out["load_avg_after"] = [round(x, 2) for x in os.getloadavg()]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench server", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readers", type=int, default=16)
    parser.add_argument("--subscribers", type=int, default=300)
    parser.add_argument("--planners", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--probe-every-s", type=float, default=1.0)
    parser.add_argument("--rss-requests", type=int, default=10_000)
    parser.add_argument("--serial-reads", type=int, default=0,
                        help="before the load: this many reads of each kind one after another; the server's CPU per read")
    parser.add_argument("--ledger-home", type=Path, default=None,
                        help="a built ledger home (python -m bench.ledger_scale build): time a server's start on a copy")
    args = parser.parse_args(argv)
    json.dump(run(args), sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

