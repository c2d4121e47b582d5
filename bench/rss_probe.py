"""``python -m bench.rss_probe``: where a serving authority's memory goes, sampled inside the server (issue 27).

    python -m bench.rss_probe [--requests 10000] [--threads 4] [--every 1000] [--tracemalloc]
                              [--arena-max N] [--trim-at-end]

``bench server --rss-requests`` sees the server's RSS from outside only. This
bench runs the same server (``flows.server.run.make_config`` + ``serve``, the
code ``sortie server`` runs) in a child process whose entry point is this
module: beside uvicorn, a sampler thread of the bench writes one JSON line
every half second to the file the bench names (``RSS_PROBE_OUT``, read only
here, never by the product). Each line separates:

- **rss**: the process's resident set, from ``/proc/self/smaps``, by kind of
  mapping: the brk heap, anonymous mappings (glibc's per-thread arenas and
  large blocks; DuckDB's own allocations go through malloc too), file-backed
  pages (libraries, the DuckDB file if mapped), thread stacks;
- **malloc**: ``mallinfo2()``: bytes in use (``uordblks``, main and thread
  arenas) and bytes free but held (``fordblks``): memory glibc keeps rather
  than returns;
- **duckdb**: ``duckdb_memory()`` summed (the buffer manager's own count)
  and ``PRAGMA database_size``'s memory usage, through the server's own
  connection;
- **python**: ``tracemalloc``'s traced bytes (``--tracemalloc``: slows every
  request), the gc's object count, and the sizes of the server's caches.

The load is ``bench server``'s ``rss_run``: the drafts list and one draft, in
turn, ``--threads`` at a time. The output is one JSON object: per
``--every`` requests, the RSS seen from outside and the nearest sample's
breakdown.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.server import CLOCK, _env, _free_port, _plan, _proc_stat, _token, _world_copy, stop_group

__all__ = ["main"]


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                      "fsmblks", "uordblks", "fordblks", "keepcost")]


def _libc() -> Any:
    libc = ctypes.CDLL("libc.so.6")
    libc.mallinfo2.restype = _MallInfo2
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    return libc


def _smaps() -> dict[str, float]:
    """Resident MB by kind of mapping."""
    out: Counter[str] = Counter()
    kind = "anon"
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as fh:
        for line in fh:
            head = line.split(maxsplit=6)
            if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                name = head[5].strip() if len(head) > 5 else ""
                kind = ("heap" if name == "[heap]" else "stack" if name.startswith("[stack") else
                        "file" if name.startswith("/") else "anon" if not name else "other")
            elif head[0] == "Rss:":
                out[kind] += int(head[1])
    return {k: round(v / 1024, 1) for k, v in sorted(out.items())}


def _sample(libc: Any, traced: bool) -> dict[str, Any]:
    from flows.ledger.shared import _ENGINES

    mi = libc.mallinfo2()
    s: dict[str, Any] = {"t": time.time(), "rss": _smaps(),
                         "malloc": {"arena_mb": round(mi.arena / 2**20, 1), "mmap_mb": round(mi.hblkhd / 2**20, 1),
                                    "in_use_mb": round(mi.uordblks / 2**20, 1),
                                    "free_held_mb": round(mi.fordblks / 2**20, 1)},
                         "threads": threading.active_count(), "gc_objects": len(gc.get_objects())}
    import tracemalloc

    if traced and tracemalloc.is_tracing():
        s["traced_mb"] = round(tracemalloc.get_traced_memory()[0] / 2**20, 2)
    for engine in list(_ENGINES.values()):
        try:
            with engine.reading() as cur:
                tags = cur.execute("SELECT tag, memory_usage_bytes FROM duckdb_memory() WHERE memory_usage_bytes > 0"
                                   ).fetchall()
                size = cur.execute("PRAGMA database_size").fetchall()
            s["duckdb"] = {"memory_mb": round(sum(b for _, b in tags) / 2**20, 2),
                           "by_tag_mb": {t: round(b / 2**20, 2) for t, b in tags},
                           "database_size": [str(x) for x in size[0]] if size else None,
                           "recalled": len(engine._recalled), "idle_cursors": len(engine._idle)}
        except Exception as exc:  # a sample is information only
            s["duckdb"] = {"error": repr(exc)}
    return s


def _sampler(out: Path, traced: bool, period_s: float = 0.5) -> None:
    libc = _libc()
    first = None
    with open(out, "a", encoding="utf-8") as fh:
        while True:
            fh.write(json.dumps(_sample(libc, traced)) + "\n")
            fh.flush()
            time.sleep(period_s)
            snap = out.with_suffix(".snap")
            if traced and snap.exists():  # the bench asks: what did Python allocate since the last snapshot?
                import tracemalloc

                snap.unlink()
                if first is None:  # started here, once serving: CPython 3.11.7 failed at import time under it
                    tracemalloc.start(12)
                    first = tracemalloc.take_snapshot()
                else:
                    top = tracemalloc.take_snapshot().compare_to(first, "traceback")[:8]
                    fh.write(json.dumps({"tracemalloc_top": [
                        {"kb": round(d.size_diff / 1024, 1), "count": d.count_diff,
                         "where": [f"{f.filename.rsplit('/', 3)[-1]}:{f.lineno}" for f in d.traceback][-6:]}
                        for d in top]}) + "\n")
                    fh.flush()
            trim = out.with_suffix(".trim")
            if trim.exists():  # the bench asks: how much of the RSS is free memory glibc kept?
                trim.unlink()
                before = _smaps()
                t = time.perf_counter()
                libc.malloc_trim(0)
                fh.write(json.dumps({"trim": {"before": before, "after": _smaps(),
                                              "ms": round(1000 * (time.perf_counter() - t), 1)}}) + "\n")
                fh.flush()


def serve_child(argv: list[str]) -> int:
    """The child: the server ``sortie server`` runs, plus the sampler thread."""
    world, home, listen, out, traced = argv[0], argv[1], argv[2], Path(argv[3]), argv[4] == "1"
    from flows.server.run import make_config, serve

    config = make_config(world, home, CLOCK, None, 0.0, fleet="file")
    threading.Thread(target=_sampler, args=(out, traced), daemon=True, name="rss-probe").start()
    serve(config, listen)
    return 0


def run(args: argparse.Namespace) -> dict[str, Any]:
    import httpx

    scratch = Path(tempfile.mkdtemp(prefix="bench-rss-"))
    out_file = scratch / "samples.jsonl"
    try:
        world = _world_copy(scratch / "world")
        home = scratch / "home"
        home.mkdir()
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        env = _env()
        if args.arena_max:
            env["MALLOC_ARENA_MAX"] = str(args.arena_max)
        log = open(scratch / "server.log", "wb")  # noqa: SIM115 - kept open for the process's life
        proc = subprocess.Popen([sys.executable, "-m", "bench.rss_probe", "--serve", str(world), str(home),
                                 f"127.0.0.1:{port}", str(out_file), "1" if args.tracemalloc else "0"],
                                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline:
                if proc.poll() is not None:
                    raise RuntimeError((scratch / "server.log").read_text()[-2000:])
                try:
                    if httpx.get(f"{url}/v1/health", timeout=1).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
            token = _token(home, "chen.jing")
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {_token(home, 'li.wei')}"},
                              timeout=240) as p:
                ids = [d["draft_id"] for d in (_plan(p, i) for i in range(4)) if d is not None] or ["none"]
            marks: list[tuple[int, float, float]] = [(0, time.time(), _proc_stat(proc.pid)["rss_mb"])]
            done = Counter[str]()
            lock = threading.Lock()

            def work() -> None:
                with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as c:
                    while True:
                        with lock:
                            n = done["n"]
                            if n >= args.requests:
                                return
                            done["n"] += 1
                            if (n + 1) % args.every == 0:
                                if args.tracemalloc and n + 1 in (args.every, args.requests):
                                    out_file.with_suffix(".snap").touch()
                                marks.append((n + 1, time.time(), _proc_stat(proc.pid)["rss_mb"]))
                        path = {"list": "/v1/drafts", "show": f"/v1/drafts/{ids[n % len(ids)]}",
                                "health": "/v1/health"}.get(args.only, "")
                        r = c.get(path or ("/v1/drafts" if n % 2 else f"/v1/drafts/{ids[n % len(ids)]}"))
                        if r.status_code != 200:
                            with lock:
                                done["errors"] += 1

            t0 = time.perf_counter()
            cpu0 = _proc_stat(proc.pid)["cpu_s"]
            pool = [threading.Thread(target=work) for _ in range(args.threads)]
            for th in pool:
                th.start()
            for th in pool:
                th.join()
            seconds = time.perf_counter() - t0
            cpu = _proc_stat(proc.pid)["cpu_s"] - cpu0
            time.sleep(1.5)
            marks.append((args.requests, time.time(), _proc_stat(proc.pid)["rss_mb"]))
            trim = None
            if args.trim_at_end:
                out_file.with_suffix(".trim").touch()
                time.sleep(1.5)
        finally:
            stop_group(proc)
            log.close()
        lines = [json.loads(x) for x in out_file.read_text(encoding="utf-8").splitlines() if x.strip()]
        samples = [x for x in lines if "t" in x]
        trim = next((x["trim"] for x in lines if "trim" in x), None)
        top = next((x["tracemalloc_top"] for x in lines if "tracemalloc_top" in x), None)
        rows = []
        for n, t, rss in marks:
            near = min(samples, key=lambda s: abs(s["t"] - t))
            rows.append({"requests": n, "rss_mb": rss, **{k: v for k, v in near.items() if k != "t"}})
        return {"requests": args.requests, "errors": done["errors"], "seconds": round(seconds, 1),
                "server_cpu_ms_per_request": round(1000 * cpu / args.requests, 2),
                "arena_max": args.arena_max, "only": args.only, "tracemalloc": args.tracemalloc, "by_requests": rows, "trim": trim,
                "tracemalloc_top": top,
                "load_avg": [round(x, 2) for x in os.getloadavg()]}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--serve":
        return serve_child(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bench.rss_probe", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument("--only", choices=("list", "show", "health"), default=None,
                        help="one kind of request only (default: the list and one draft, in turn)")
    parser.add_argument("--tracemalloc", action="store_true")
    parser.add_argument("--arena-max", type=int, default=0, help="MALLOC_ARENA_MAX for the server (0: glibc's default)")
    parser.add_argument("--trim-at-end", action="store_true", help="malloc_trim(0) in the server after the reads")
    json.dump(run(parser.parse_args(argv)), sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
