"""The layering is a checked contract: import-linter's contracts in pyproject.toml hold.

``[tool.importlinter]`` in pyproject.toml declares the layers (bench > flows > rules | intents >
planner; within flows cli > orchestration | server > authority > client > usecases > fleet >
integrity > vehicle > ledger > context) and the intended structure of docs/architecture.md: one way
in (the CLI and the flows import the ledger, use cases, integrity checks, vehicles and hub only
through ``flows.authority``), the server serves the Authority, a vehicle only through a Vehicles
port, a simulator is a vehicle — forbidden contracts on direct imports, each exception one named
import with its reason — that no production module imports a simulator, that the core imports no
database, workflow engine or LLM client, and that no sibling modules import each other in a cycle.
This test runs ``lint-imports`` on them, so ``uv run pytest`` enforces them (every contract of
pyproject.toml reported KEPT); the second test shows the same machinery fails on a breach, and lets
a path through the way in pass.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint(cwd: Path, extra_path: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if extra_path is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(extra_path), env.get("PYTHONPATH", "")])
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_import_contracts_of_pyproject_hold() -> None:
    done = _lint(ROOT)
    report = done.stdout + done.stderr
    assert done.returncode == 0, report
    flat = " ".join(report.split())  # the report wraps long names
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    names = {c["id"]: c["name"] for c in contracts}
    for contract in ("top", "flows", "one-way-in", "server-serves-the-authority", "vehicles-through-the-port",
                     "simulator-is-a-vehicle", "no-simulator-in-production", "acyclic"):
        assert f"{names[contract]} KEPT" in flat, (contract, report)
    assert all(f"{name} KEPT" in flat for name in names.values()), report
    assert "BROKEN" not in report


def test_a_breach_of_the_same_contract_kinds_is_reported(tmp_path: Path) -> None:
    """A toy project with an upward import, a simulator import, a cycle and a use case reached around its one way in:
    every contract breaks, and only the import that goes around the way in is reported."""
    pkg = tmp_path / "toy"
    for sub, text in {
        "__init__.py": "",
        "low.py": "import toy.high\n",  # upward
        "high.py": "import toy.low\n",  # ... and so a cycle
        "sim.py": "",
        "prod.py": "import toy.sim\n",
        "core.py": "",
        "gate.py": "import toy.core\n",  # the one way in
        "ui.py": "import toy.gate\n",  # through it: allowed (an indirect import)
        "shortcut.py": "import toy.core\n",  # around it: reported
    }.items():
        (pkg / sub).parent.mkdir(parents=True, exist_ok=True)
        (pkg / sub).write_text(text, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.importlinter]\nroot_packages = ["toy"]\n'
        '[[tool.importlinter.contracts]]\nname = "layers"\ntype = "layers"\nlayers = ["toy.high", "toy.low"]\n'
        '[[tool.importlinter.contracts]]\nname = "no sim"\ntype = "forbidden"\n'
        'source_modules = ["toy.prod"]\nforbidden_modules = ["toy.sim"]\n'
        '[[tool.importlinter.contracts]]\nname = "acyclic"\ntype = "acyclic_siblings"\nancestors = ["toy"]\n'
        '[[tool.importlinter.contracts]]\nname = "one way in"\ntype = "forbidden"\n'
        'source_modules = ["toy.ui", "toy.shortcut"]\nforbidden_modules = ["toy.core"]\n'
        'allow_indirect_imports = true\n',
        encoding="utf-8",
    )
    done = _lint(tmp_path, extra_path=tmp_path)
    report = done.stdout + done.stderr
    assert done.returncode != 0, report
    assert "Contracts: 0 kept, 4 broken." in report, report
    assert "toy.shortcut is not allowed to import toy.core" in report and "toy.ui is not allowed" not in report
