"""``sortie plan`` of the demo request stays cheap (issue 27): CPU spent, matplotlib not imported, search stopped early.

The request is the demo's ("这块地今天巡一遍消防通道", ``region-1001`` at the demo world's reference time), planned
by a fresh ``sortie`` process into a fresh ``SORTIE_HOME``: the same work the lead measures with
``/usr/bin/time -f %U+%S uv run sortie plan …`` (README, "CLI"). Two kinds of check:

* the CPU of the child process (``RUSAGE_CHILDREN``: its own and its children's, user + system), the smaller
  of two runs, bounded at 2.0 s. History: 2.85-3.16 s before the search cap and the Pillow map, then
  2.07-2.22 s on an idle machine (main at 8d4366a, measured by the lead). The start-up round (bytecode of
  sortie's own modules compiled at install, the rule file parsed once, one click command built, the
  cyclic collector run less often, the grammar's patterns compiled on use) measured 0.88x main's CPU,
  interleaved in one session at load average 3-6 (main 3.58-3.81 s, this 3.11-3.33 s on the shared
  machine) and 0.87x main's instructions (callgrind: 15.5 → 13.5 G), so about 1.8-1.95 s idle: the bound
  fails main's idle figures and leaves this code 0.05-0.2 s (thin: re-measure idle before trusting it).
  It is the issue's 1.5 s once the search (about half the instructions) and the imports the plan needs
  cost less. Round plancpu3 (the search's local search ends once it stalls, the collector idle in a planning
  command, one reading of an unedited request) measured 0.87x main's CPU at 3985779, interleaved at load
  average 2-4 (main 2.36-2.67 s, this 2.05-2.26 s) and 0.85x at load 6-7 (2.12-2.60 → 1.72-2.27 s); not
  measured idle, so the bound stays 2.0 (tighter would flake on the shared machine). On a loaded machine
  this check fails whatever the code: CPU time grows with the load;
* the work, which no machine load changes: the plan path imports no matplotlib (the map is drawn by
  Pillow), parses the rule file once, and OR-Tools' search of the 53-node patrol stops at
  ``deadline_cap`` (497 solutions: n² / 300 a node below 100 nodes since search1; n / 3 a node gave 937, 40 a
  node 2 120) with the plan the uncapped 40-a-node search makes (its plan hash, unchanged: the search's best
  comes by solution 141 under renumbering 0), its local searches ended 150 solutions after that best
  (``Search.stall``: the count still reaches the cap, the same plan hash). search1 measured 0.85x the
  previous round's CPU for the demo plan (interleaved, 6 pairs at load 1.4-2.1: 2.16-2.91 → 1.71-2.40 s), so still above the issue's 1.5 s.
  The seventh round (the ``sortie`` executable skips the interpreter's teardown after a planning command,
  ``flows.cli.console``) measured, interleaved with main at 8fae28e on the idle machine (load 0.5-0.8), 10 pairs:
  0.90-1.38 CPU s (median 0.95) against 1.03-1.51 (median 1.13): the bound is now the issue's 1.5 s.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

# CPU time is only a measure when this test has the machine to itself: in a parallel run (the README's command
# runs two workers on this machine kind's two vCPUs) it also counts the other worker's contention — a full run
# measured 1.3x the idle figures. Speed is the bench's to report (README); these run alone: pytest -n 0 FILE.
RUN_ALONE = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) <= 1

ROOT = Path(__file__).resolve().parents[2]
ARGS = ["plan", "这块地今天巡一遍消防通道", "--region", "region-1001", "--now", "2026-11-29T07:00:00+02:00",
        "--as", "li.wei", "--json"]
CPU_BOUND_S = 1.5  # the target; idle machine: 0.90-1.38 (median 0.95) at the seventh round (docstring)
# the demo's plan as the uncapped 40-a-node search makes it (checked after the lanes2 start, which reordered the
# golden patrol; again after the sortie figures became the vehicle's flight, planner.output.sortie_flight):
# the capped search must give the same plan
DEMO_PLAN_HASH_PREFIX = "4dc525b5d182"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_")}
    env["SORTIE_HOME"] = str(home)
    return env


@pytest.mark.skipif(not RUN_ALONE, reason="CPU time in a parallel run counts the other worker: run alone (-n 0)")
@pytest.mark.timeout(300)
def test_plan_of_the_demo_request_stays_within_its_cpu_budget(tmp_path: Path) -> None:
    sortie = Path(sys.executable).parent / "sortie"
    spent = []
    for k in range(2):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([str(sortie), *ARGS], cwd=ROOT, env=_env(tmp_path / f"home{k}"), capture_output=True,
                             text=True, timeout=120, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        assert json.loads(out.stdout)["plan_hash"].startswith(DEMO_PLAN_HASH_PREFIX)
    assert min(spent) <= CPU_BOUND_S, f"sortie plan of the demo request took {spent} CPU s (bound {CPU_BOUND_S})"


_PROBE = """
import json, sys
import planner.routing.engines as engines
import rules.loading
parsed = []
real_parse = rules.loading.parse_rules
def counting_parse(text, source="<rules>", **kw):  # the real parse, each one counted
    parsed.append(source)
    return real_parse(text, source, **kw)
rules.loading.parse_rules = counting_parse
searched = []
real = engines.solve_model
def counting(model, search, start_routes=None):  # the real search, its work recorded
    out = real(model, search, start_routes)
    searched.append({"n_nodes": model.n_nodes, "kind": search.kind, "limit": search.solution_limit,
                     "solutions": out.solutions, "cap": engines.deadline_cap(model), "stall": search.stall})
    return out
engines.solve_model = counting
sys.argv = ["sortie", *ARGS]
from flows.cli import main
try:
    main()
except SystemExit as e:
    assert not e.code, e.code
heavy = sorted(m for m in ("matplotlib", "prefect", "pymavlink", "openai", "instructor") if m in sys.modules)
print(json.dumps({"heavy": heavy, "searched": searched, "rule_parses": len(parsed)}))
"""


@pytest.mark.timeout(300)
def test_plan_path_imports_no_matplotlib_and_its_search_stops_at_the_cap(tmp_path: Path) -> None:
    probe = f"ARGS = {ARGS!r}\n{_PROBE}"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=_env(tmp_path / "home"), capture_output=True,
                         text=True, timeout=120, check=True)
    lines = out.stdout.strip().splitlines()
    draft, report = json.loads("\n".join(lines[:-1])), json.loads(lines[-1])
    assert draft["plan_hash"].startswith(DEMO_PLAN_HASH_PREFIX)
    assert report["heavy"] == [], "the plan path needs none of these (the map is drawn with Pillow)"
    assert report["rule_parses"] == 1  # the rule file is parsed once, not once for the limits and again for the plan
    ils = [s for s in report["searched"] if s["kind"] == "ils"]
    assert len(ils) == 1 and ils[0]["n_nodes"] == 53  # the demo patrol's lane pieces and depots
    n, cap = ils[0]["n_nodes"], ils[0]["cap"]
    assert ils[0]["limit"] == cap == math.ceil(n * n / 300 * n) < 40 * n  # 497 solutions (n / 3 a node: 937; 40: 2 120)
    assert cap <= ils[0]["solutions"] <= cap + n  # the search ends a few solutions past its limit
    assert ils[0]["stall"] == 150  # local search ends 150 solutions after the best (solution 141): the same plan


@pytest.mark.timeout(120)
def test_a_planning_command_runs_the_cyclic_collector_less_often_than_the_others() -> None:
    """``sortie plan``/``replan`` run once and exit: the collector's first threshold is 200,000 there (no collection
    after the start of the demo plan, which spent 0.11-0.13 CPU s in seven at 20,000); every other command keeps
    20,000, so a long-running server or monitor collects its cycles as before."""
    probe = (
        "import gc, sys\n"
        "from flows.cli import main\n"
        "sys.argv = ['sortie', *sys.argv[1:]]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('threshold', gc.get_threshold()[0])\n"
    )
    seen = {}
    for command in ("plan", "replan", "drafts", "server"):
        out = subprocess.run([sys.executable, "-c", probe, command, "--help"], cwd=ROOT, capture_output=True, text=True,
                             timeout=60, check=True)
        seen[command] = int(out.stdout.rsplit("threshold", 1)[1])
    assert seen == {"plan": 200_000, "replan": 200_000, "drafts": 20_000, "server": 20_000}


_BLAS_THREADS = """
import os, sys
{setup}
import numpy  # OpenBLAS starts its threads when numpy loads it
print(len(os.listdir("/proc/self/task")))
"""


def _threads_after_numpy(setup: str, **env: str) -> int:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENBLAS_", "OMP_", "SORTIE_"))}
    p = subprocess.run([sys.executable, "-c", _BLAS_THREADS.format(setup=setup)], env=clean | env, cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return int(p.stdout.strip())


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="OpenBLAS starts no extra thread on one core")
def test_a_sortie_process_loads_numpy_with_one_blas_thread_unless_the_operator_sets_more() -> None:
    """``flows.cli.main`` sets ``OPENBLAS_NUM_THREADS=1`` first: OpenBLAS's per-core threads spun for ~0.12 CPU s of
    every ``sortie plan`` doing nothing (its arrays are too small to share out). The operator's own value is kept."""
    sortie = "from flows.cli import single_threaded_blas; single_threaded_blas(os.environ)"
    assert _threads_after_numpy("") > 1  # what numpy does on its own on this machine: the check below can fail
    assert _threads_after_numpy(sortie) == 1
    assert _threads_after_numpy(sortie, OPENBLAS_NUM_THREADS="2") == 2
