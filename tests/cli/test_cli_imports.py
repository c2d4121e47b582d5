"""``sortie --help`` stays fast: loading the CLI must not import the heavy libraries.

Each check runs in a fresh interpreter (the test process has imported
everything already) and lists which of the heavy modules got loaded. Without
cached bytecode pymavlink's dialects, rule-engine's parser tables, DuckDB,
shapely/numpy, matplotlib and Prefect cost seconds; a command imports what it
needs when it runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HEAVY = (
    "pymavlink",
    "rule_engine",
    "duckdb",
    "shapely",
    "numpy",
    "matplotlib",
    "prefect",
    "ortools",
    "pyvrp",
    "openai",
    "instructor",
    "pyproj",
    "flows.usecases",
    "flows.authority.local",
    "flows.ledger",
    "planner.world.model",
    "rules",
    "intents",
)


def _loaded_after(code: str) -> list[str]:
    """Which ``HEAVY`` top-level names (or packages) are in ``sys.modules`` after running ``code``."""
    probe = (
        f"{code}\n"
        "import json, sys\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(h for h in heavy if h in sys.modules)))\n"
    )
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(150)
def test_loading_the_cli_imports_none_of_the_heavy_libraries() -> None:
    assert _loaded_after("import flows.cli") == []
    probe = "import flows.cli, sys\nprint(sorted(m for m in sys.modules if m.split('.')[0] in ('rich', 'markdown_it', 'pygments')))"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", "rich is imported when a command prints, not when the CLI loads"


@pytest.mark.timeout(150)
def test_sortie_help_stays_within_its_cpu_budget() -> None:
    """Issue 27: ``sortie --help`` at most 0.3 CPU s (measured 0.14-0.20 s on the shared 2-core machine with the
    bytecode compiled at install). CPU time of the child, not wall time; the bound here is 0.5 s so that a loaded
    machine does not fail it, while a heavy import brought back at load time (rich's help: +0.1 s, rule-engine:
    +0.3 s, duckdb, pydantic or the planner: more) still does, added up."""
    import resource

    sortie = Path(sys.executable).parent / "sortie"
    spent = []
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([str(sortie), "--help"], cwd=ROOT, capture_output=True, timeout=60, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        spent.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    assert min(spent) <= 0.5, spent


@pytest.mark.timeout(150)
def test_mission_constants_do_not_load_every_mavlink_dialect() -> None:
    loaded = _loaded_after(
        "import sys\n"
        "import planner.output.export_files, planner.output.mission_items\n"
        "assert 'pymavlink.mavutil' not in sys.modules, 'mavutil loads the all dialect of v1 and v2'\n"
        "assert 'pymavlink.dialects.v20.all' not in sys.modules\n"
        "assert planner.output.mission_items.command_name(16) == 'MAV_CMD_NAV_WAYPOINT'\n"
        "from pymavlink.dialects.v20 import all as every, common\n"
        "vendor = min(set(every.enums['MAV_CMD']) - set(common.enums['MAV_CMD']))\n"
        "assert planner.output.mission_items.command_name(vendor) == every.enums['MAV_CMD'][vendor].name, vendor\n"
        "assert planner.output.mission_items.command_name(1) == '1'\n"
    )
    assert "pymavlink" in loaded  # the constants do come from pymavlink


@pytest.mark.timeout(150)
def test_guards_load_rule_engine_only_when_a_guard_is_compiled() -> None:
    assert "rule_engine" not in _loaded_after("import rules.guards")
    # ...and compiling still type-checks at load time
    loaded = _loaded_after(
        "from rules.guards import GuardError, compile_guard\n"
        "try:\n"
        "    compile_guard('phase < 3')\n"
        "except GuardError:\n"
        "    pass\n"
        "else:\n"
        "    raise SystemExit('a mistyped guard compiled')\n"
    )
    assert "rule_engine" in loaded
