"""``python -m bench.server_ab --before DIR [--after DIR]``: ``python -m bench server`` on two checkouts, side by side.

    python -m bench.server_ab --before /tmp/auth-main [--after .] [--rounds 3] [--seconds 20] [--readers 16]
                              [--subscribers 300] [--serial-reads 300]

Each checkout runs its own ``bench/server.py`` with its own ``.venv`` (so each
starts its own ``sortie server``), one run at a time, interleaved round by
round — before, after; then after, before — so both sides meet the same
machine: on a shared machine a figure of one run means little, the ratio of
two runs next to each other means more (``../shared/bench/README.md``). Prints
one JSON object: every run (reads/s, read p95, the server's CPU per read under
the load — its probes and idle streams included —, and per read of the list and
of one draft read one after another; the load average around it), each side's median, and the
medians' ratios after / before (reads/s: above 1 is faster; p95 and CPU per
read: below 1 is cheaper).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["main"]


def _one(checkout: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One ``python -m bench server`` run in ``checkout`` with its own interpreter; the figures that compare."""
    cmd = [str(checkout / ".venv" / "bin" / "python"), "-m", "bench", "server", "--rss-requests", "0",
           "--seconds", str(args.seconds), "--readers", str(args.readers), "--subscribers", str(args.subscribers),
           "--serial-reads", str(args.serial_reads)]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    done = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench server in {checkout} failed: {done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    load, serial = out.get("load", {}), out.get("serial", {})
    reads = (load.get("reads") or {}).get("n")
    return {
        "reads_per_s": load.get("reads_per_s"), "read_p95_ms": (load.get("reads") or {}).get("p95_ms"),
        "errors": load.get("errors"), "recall_p95_ms": (load.get("probe_recall") or {}).get("p95_ms"),
        "load_cpu_ms_per_read": round(1000 * load["server_cpu_s"] / reads, 2) if reads else None,
        "list_cpu_ms": serial.get("list_server_cpu_ms"), "show_cpu_ms": serial.get("show_server_cpu_ms"),
        "load_avg": [out["load_avg_before"][0], out["load_avg_after"][0]],
    }


FIGURES = ("reads_per_s", "read_p95_ms", "load_cpu_ms_per_read", "list_cpu_ms", "show_cpu_ms")


def run(args: argparse.Namespace) -> dict[str, Any]:
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    runs: list[dict[str, Any]] = []
    for r in range(args.rounds):
        for side in ("before", "after") if r % 2 == 0 else ("after", "before"):
            row = {"round": r, "side": side, **_one(sides[side], args)}
            print(json.dumps(row), file=sys.stderr, flush=True)
            runs.append(row)
    medians = {side: {f: statistics.median(x[f] for x in runs if x["side"] == side and x[f] is not None)
                      for f in FIGURES if any(x[f] is not None for x in runs if x["side"] == side)}
               for side in sides}
    ratios = {f: round(medians["after"][f] / medians["before"][f], 3) for f in medians["after"]
              if medians["before"].get(f)}
    return {"checkouts": {k: str(v) for k, v in sides.items()}, "rounds": args.rounds, "seconds": args.seconds,
            "readers": args.readers, "subscribers": args.subscribers, "serial_reads": args.serial_reads,
            "runs": runs, "median": medians, "after_over_before": ratios}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.server_ab", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="a checkout with its own .venv (uv sync)")
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--readers", type=int, default=16)
    parser.add_argument("--subscribers", type=int, default=300)
    parser.add_argument("--serial-reads", type=int, default=300)
    json.dump(run(parser.parse_args(argv)), sys.stdout, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
