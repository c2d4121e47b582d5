"""``python -m bench KIND INSTANCE.json``: one JSON object on stdout, logs on stderr.

Kinds: coverage, routes, lanes, carp, intents, rules. Each lives in ``bench/<kind>.py``
with ``run(instance_path, args) -> dict``; the contract is in
``../shared/bench/README.md``. ``python -m bench server [options]`` takes no
instance: it loads a running ``sortie server`` (``bench/server.py``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

KINDS = ("coverage", "routes", "lanes", "carp", "intents", "rules")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["server"]:
        from bench import server

        return server.main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("kind", choices=KINDS)
    parser.add_argument("instance", help="instance file (JSON, GeoJSON, JSONL or CARPLIB .dat)")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="routes, lanes, carp: the planning deadline in seconds, start-up included")
    parser.add_argument("--seed", type=int, default=0, help="routes, lanes: the search's seed (default 0)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="routes, lanes: cap each search lane's work (PyVRP iterations / OR-Tools solutions); "
                             "with --seed, a run that ends on its cap repeats exactly")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="routes, lanes: what the deadline counts (cpu: CPU seconds of one core per lane, "
                             "as an idle machine would give them; bench/clocks.py)")
    parser.add_argument("--solver", choices=("sortie", "pyvrp"), default="sortie",
                        help="routes: sortie's engines (default) or PyVRP alone with its defaults, for comparison")
    parser.add_argument(
        "--baseline", action="store_true",
        help="lanes: the replaced hand-written planner; coverage: a careful ground-station survey, for comparison"
    )
    parser.add_argument("--fleet-spare", type=int, default=None,
                        help="carp: search within VEHICULOS + this many routes (HGS-CARP: 1; default: free)")
    parser.add_argument("--extractor", choices=("offline", "llm"), default="offline", help="intents only")
    parser.add_argument("--base-url", default=None, help="intents --extractor llm: an OpenAI-compatible server (…/v1)")
    parser.add_argument("--model", default=None, help="intents --extractor llm: the model name on that server")
    args = parser.parse_args(argv)
    module = importlib.import_module(f"bench.{args.kind}")
    result = module.run(args.instance, args)
    json.dump(result, sys.stdout, ensure_ascii=False, sort_keys=True)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
