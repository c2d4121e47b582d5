"""``python -m bench.cli_start``: what starting ``sortie`` costs in CPU seconds, by the way it is started (issue 44).

    python -m bench.cli_start [--runs 7] [--args="--help"] [--args="drafts --help"]

Each way runs ``sortie ARGS`` as a child process, ``--runs`` times, the ways interleaved round by round so that all
see the same load; measured: the child's CPU (user + system of it and every process it waited for, from
``os.wait4``) and its wall time. The ways:

- ``venv``: ``.venv/bin/sortie`` — the installed entry point, nothing in front of it;
- ``uv_run_no_sync``: ``uv run --no-sync sortie`` — uv finds the environment and runs it, no check of it;
- ``uv_run``: ``uv run sortie`` — what the README teaches, with this checkout's ``[tool.uv]`` settings (uv checks
  that the environment matches the lock first);
- ``uv_run_compile``: ``uv run --compile-bytecode sortie`` — the setting ``compile-bytecode = true`` this checkout
  had in ``[tool.uv]`` until issue 44: uv 0.13 then compiles every file of the environment again on every ``uv run``
  (11,270 files here; astral-sh/uv#12202), the "before" of the same run.

One warm-up run of each way first, not counted (a changed ``pyproject.toml`` makes ``uv run`` rebuild the editable
install once). Prints one JSON object: per way and arguments the CPU and wall seconds of every run, their medians,
the ratio of each way's CPU median to ``venv``'s and to ``uv_run_compile``'s, the load average before and after, and
uv's version. CPU figures grow with the machine's load; ratios measured in one run hold better.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "WAYS"]

ROOT = Path(__file__).resolve().parents[1]

#: how each way starts ``sortie`` (the arguments follow)
WAYS: dict[str, list[str]] = {
    "venv": [str(ROOT / ".venv" / "bin" / "sortie")],
    "uv_run_no_sync": ["uv", "run", "--no-sync", "sortie"],
    "uv_run": ["uv", "run", "sortie"],
    "uv_run_compile": ["uv", "run", "--compile-bytecode", "sortie"],
}


def child_cost(argv: list[str]) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit status) of one child process and every descendant it waited for."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    return usage.ru_utime + usage.ru_stime, wall, proc.returncode


def measure(ways: dict[str, list[str]], args_list: list[list[str]], runs: int) -> dict[str, Any]:
    """Every way with every argument list, ``runs`` interleaved rounds after one warm-up round."""
    cells: dict[tuple[str, str], dict[str, list[float]]] = {}
    for round_no in range(runs + 1):
        for args in args_list:
            for way, head in ways.items():
                cpu, wall, code = child_cost(head + args)
                if code != 0:
                    raise SystemExit(f"{way}: {shlex.join(head + args)} exited {code}")
                if round_no == 0:
                    continue  # the warm-up
                cell = cells.setdefault((way, shlex.join(args)), {"cpu_s": [], "wall_s": []})
                cell["cpu_s"].append(round(cpu, 3))
                cell["wall_s"].append(round(wall, 3))
    out: dict[str, Any] = {}
    for (way, args), cell in cells.items():
        out.setdefault(args, {})[way] = {**cell, "cpu_median_s": round(statistics.median(cell["cpu_s"]), 3),
                                          "wall_median_s": round(statistics.median(cell["wall_s"]), 3)}
    for per_way in out.values():
        for base in ("venv", "uv_run_compile"):
            if base in per_way and per_way[base]["cpu_median_s"] > 0:
                for row in per_way.values():
                    row[f"cpu_vs_{base}"] = round(row["cpu_median_s"] / per_way[base]["cpu_median_s"], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.cli_start", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="counted rounds (after one warm-up)")
    parser.add_argument("--args", action="append", default=None,
                        help='the arguments to sortie, as one string: --args="drafts --help" (repeatable; default --help)')
    parser.add_argument("--way", action="append", choices=sorted(WAYS), default=None, help="only these ways")
    opts = parser.parse_args(argv)
    if opts.runs < 1:
        parser.error("--runs must be at least 1")
    args_list = [shlex.split(a) for a in (opts.args or ["--help"])]
    ways = {w: WAYS[w] for w in (opts.way or WAYS)}
    uv = subprocess.run(["uv", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    load_before = os.getloadavg()
    results = measure(ways, args_list, opts.runs)
    load_after = os.getloadavg()
    json.dump({"bench": "cli_start", "runs": opts.runs, "uv": uv, "python": sys.version.split()[0],
               "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in load_after],
               "cpu_count": os.cpu_count(), "results": results}, sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
