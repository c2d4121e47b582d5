"""A client of ``sortie server`` imports only what a client needs (issue 27).

With ``SORTIE_SERVER`` and ``SORTIE_TOKEN`` set, ``sortie plan``/``drafts``/``show``/``approve`` send one HTTP
request and print the answer: the planner, the rules, the ledger, the use cases, DuckDB, numpy, Shapely,
matplotlib, pymavlink and Prefect stay on the server's side. Each command runs as a real CLI process (the
console script's ``main``) against the real server of ``conftest.py``, under ``python -X importtime``, whose
report lists every module the process imported; nothing in the product reads an environment variable for this.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEXT = "这块地今天巡一遍消防通道"  # the demo request (conftest.TEXT)

#: top-level packages (or sortie packages) a client has no use for
HEAVY = ("planner", "rules", "intents", "duckdb", "numpy", "shapely", "matplotlib", "pymavlink", "prefect", "pyproj",
         "ortools", "pyvrp", "rule_engine", "flows.ledger", "flows.usecases", "flows.authority.local",
         "flows.server")
#: ... except the one leaf of ``planner`` every client needs: the error tree with its stable codes
ALLOWED = ("planner", "planner.errors")

_IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \| *(\S+)$", re.MULTILINE)


def client_run(authority: Any, user: str, args: list[str]) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``sortie ARGS`` as ``user``'s client of the server; the process and the heavy modules it imported."""
    env = authority.env(SORTIE_SERVER=authority.url, SORTIE_TOKEN=authority.tokens[user], PYTHONDONTWRITEBYTECODE="1")
    p = subprocess.run([sys.executable, "-X", "importtime", "-c", "from flows.cli import main; main()", *args],
                       env=env, cwd=ROOT, capture_output=True, text=True, timeout=240)
    modules = _IMPORTED.findall(p.stderr)
    assert "flows.cli" in modules, p.stderr[-2000:]  # the report is there: an empty list proves nothing
    heavy = sorted({m for m in modules if m not in ALLOWED and any(m == h or m.startswith(h + ".") for h in HEAVY)})
    return p, heavy


@pytest.mark.timeout(600)
def test_plan_drafts_show_approve_as_a_client_import_nothing_heavy(authority: Any) -> None:
    authority.report_in()
    p, heavy = client_run(authority, "li.wei", ["plan", TEXT, "--region", "region-1001", "--json"])
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    draft = json.loads(p.stdout)
    assert draft["mode"] == "server" and draft["status"] == "DRAFT", draft  # planned by the server, not here
    assert heavy == [], heavy

    for args in (["drafts", "--json"], ["drafts"], ["show", draft["draft_id"], "--json"], ["show", draft["draft_id"]]):
        p, heavy = client_run(authority, "li.wei", args)
        assert p.returncode == 0, (args, p.stdout + p.stderr[-2000:])
        assert heavy == [], (args, heavy)
    assert draft["draft_id"] in p.stdout

    p, heavy = client_run(authority, "chen.jing", ["approve", draft["draft_id"], "--version", str(draft["version"]),
                                                   "--plan-hash", draft["plan_hash"], "--json"])
    assert p.returncode == 0, p.stdout + p.stderr[-2000:]
    assert json.loads(p.stdout)["state"] == "APPROVED"
    assert heavy == [], heavy


@pytest.mark.timeout(300)
def test_a_refusal_as_a_client_keeps_its_code_and_imports_nothing_heavy(authority: Any) -> None:
    """A server's refusal comes back as the same coded error (exit 2, ``CODE: message``) without the planner."""
    p, heavy = client_run(authority, "li.wei", ["show", "d-000000000000"])
    assert p.returncode == 2, p.stdout + p.stderr[-2000:]
    assert "NOT_FOUND:" in p.stderr
    assert heavy == [], heavy
