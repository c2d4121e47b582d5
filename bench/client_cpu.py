"""``python -m bench.client_cpu``: what a command costs the CLI as a client of ``sortie server``, and the server (issue 27).

    python -m bench.client_cpu [--runs 5] [--before /path/to/other/worktree] [--human] [--report-in IDS]

It starts ``sortie server`` (a real process on 127.0.0.1, this checkout's) on a copy of the demo world under a
fresh home, the server's clock at the world's reference time and the drones' telemetry stamped at the server's
time before every plan (as ``tests/server/conftest.py`` does; ``--report-in M3TD-01``: that drone alone, the others'
telemetry left as the file has it, stale, so the server plans what the embedded ``sortie plan ... --now`` of the
demo request plans, one drone, where every drone reporting in makes a two-drone plan); issues tokens for li.wei (plans) and chen.jing
(approves) with ``sortie admin token create``. Then, ``--runs`` times, for each CLI (``--before``'s
``.venv/bin/sortie`` first when given, then this checkout's: interleaved, so that both see the same load):
``plan`` of the demo request, ``drafts``, ``show`` of that draft and ``approve`` of it, each with ``--json``
(``--human``: ``drafts`` and ``show`` print their tables instead), with ``SORTIE_SERVER`` and ``SORTIE_TOKEN``
set. Measured: the CLI process's CPU (user + system, ``getrusage`` of the reaped child) and the server's CPU over
the same request (utime + stime + cutime + cstime of the server and its living descendants, from ``/proc``, before
and after). Prints one JSON object: the figures per CLI and command, their medians, and the load average before
and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["main"]

ROOT = Path(__file__).resolve().parents[1]
CLOCK = "2026-11-29T07:00:00+02:00"
TEXT = "这块地今天巡一遍消防通道"
TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, utime + stime + cutime + cstime in seconds) of a living process, None if it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rindex(")") + 2:].split()
    return int(fields[1]), sum(int(f) for f in fields[11:15]) / TICK


def tree_cpu(root: int) -> float:
    """CPU seconds of ``root`` and every living descendant (the reaped ones are in their parent's cutime/cstime)."""
    procs = {int(p): s for p in os.listdir("/proc") if p.isdigit() and (s := _stat(int(p))) is not None}
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        if pid in procs:
            total += procs[pid][1]
            todo.extend(child for child, (parent, _) in procs.items() if parent == pid)
    return total


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _sortie(bin_: Path, args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], float]:
    """One CLI process; its result and its CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run([str(bin_), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return p, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.client_cpu")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", type=Path, default=None, help="another checkout (with .venv) to compare with")
    parser.add_argument("--human", action="store_true", help="drafts and show print tables, not JSON")
    parser.add_argument("--report-in", default=None,
                        help="comma-separated drone ids whose telemetry is stamped fresh before a plan (default: all)")
    args = parser.parse_args(argv)

    clis = ({"before": args.before / ".venv/bin/sortie"} if args.before else {}) | {
        "this": Path(sys.executable).parent / "sortie"}
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("SORTIE_", "PREFECT_"))}
    base_env.update(COLUMNS="200", PYTHONDONTWRITEBYTECODE="1")
    out: dict[str, Any] = {"clock": "CPU s: user+system of the CLI process (getrusage); the server tree's from /proc",
                           "loadavg_before": os.getloadavg(), "runs": args.runs, "human": args.human,
                           "clis": {k: str(v) for k, v in clis.items()}}
    reporting = None if args.report_in is None else set(args.report_in.split(","))
    out["report_in"] = "all" if reporting is None else sorted(reporting)
    with tempfile.TemporaryDirectory(prefix="client-cpu-") as tmp:
        world, home = Path(tmp) / "world", Path(tmp) / "home"
        shutil.copytree(ROOT / "data" / "demo-helsinki", world)
        tokens = {}
        for user in ("li.wei", "chen.jing"):
            p, _ = _sortie(clis["this"], ["admin", "token", "create", user, "--home", str(home), "--world", str(world),
                                          "--json"], base_env)
            tokens[user] = json.loads(p.stdout)["token"]
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen([str(clis["this"]), "server", "--world", str(world), "--home", str(home), "--listen",
                                   f"127.0.0.1:{port}", "--clock", CLOCK, "--fleet", "file"], env=base_env, cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            _wait_up(url)
            rows: dict[str, dict[str, list[float]]] = {name: {} for name in clis}
            for run in range(args.runs):
                for name, cli in clis.items():
                    _report_in(url, tokens["chen.jing"], world, reporting)
                    for cmd, user, cmd_args in _commands(run, args.human):
                        env = base_env | {"SORTIE_SERVER": url, "SORTIE_TOKEN": tokens[user]}
                        if cmd != "plan":
                            cmd_args = [a.format(**draft) for a in cmd_args]
                        s0 = tree_cpu(server.pid)
                        p, cpu = _sortie(cli, cmd_args, env)
                        s1 = tree_cpu(server.pid)
                        if p.returncode != 0:
                            raise SystemExit(f"{name} {cmd}: exit {p.returncode}: {p.stdout[-500:]} {p.stderr[-1500:]}")
                        if cmd == "plan":
                            got = json.loads(p.stdout)
                            draft = {"id": got["draft_id"], "v": got["version"], "hash": got["plan_hash"]}
                            assert got["verdict"] == "pass", got["verdict"]
                        rows[name].setdefault(cmd, []).append(round(cpu, 3))
                        rows[name].setdefault(f"server:{cmd}", []).append(round(s1 - s0, 3))
        finally:
            os.killpg(server.pid, signal.SIGTERM)  # the server and its planning workers (its own session)
            server.wait(timeout=30)
    out["cpu_s"] = rows
    out["median_cpu_s"] = {name: {k: round(statistics.median(v), 3) for k, v in r.items()} for name, r in rows.items()}
    out["loadavg_after"] = os.getloadavg()
    print(json.dumps(out, indent=1))
    return 0


def _commands(run: int, human: bool) -> list[tuple[str, str, list[str]]]:
    """(name, user, argv) of one round; ``{id}``/``{v}``/``{hash}`` are the round's plan."""
    table = [] if human else ["--json"]
    return [
        ("plan", "li.wei", ["plan", TEXT + "。" * (run % 2), "--region", "region-1001", "--json"]),
        ("drafts", "li.wei", ["drafts", *table]),
        ("show", "li.wei", ["show", "{id}", *table]),
        ("approve", "chen.jing", ["approve", "{id}", "--version", "{v}", "--plan-hash", "{hash}", "--json"]),
    ]


def _wait_up(url: str) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/v1/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit("sortie server did not come up")


def _report_in(url: str, token: str, world: Path, drones: set[str] | None = None) -> None:
    """The drones report (``drones``: those alone): telemetry stamped at the server's current time (the server's
    clock runs on)."""
    req = urllib.request.Request(f"{url}/v1/drafts?limit=1", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=60) as r:
        now = json.loads(r.read())["server_time"]
    path = world / "fleet.json"
    fleet = json.loads(path.read_text(encoding="utf-8"))
    unknown = set(drones or ()) - {d["id"] for d in fleet["drones"]}
    if unknown:
        raise SystemExit(f"--report-in: no such drone in the demo world: {', '.join(sorted(unknown))}")
    for d in fleet["drones"]:
        if drones is None or d["id"] in drones:
            d["last_telemetry_at"] = now
    tmp = path.with_name(".fleet.json.tmp")
    tmp.write_text(json.dumps(fleet), encoding="utf-8")
    os.replace(tmp, path)


if __name__ == "__main__":
    sys.exit(main())
