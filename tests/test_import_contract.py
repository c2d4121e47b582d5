"""The package boundaries of DESIGN.md, enforced by walking every module's imports (AST, no execution).

planner/ and rules/ are the pure core: no flows, no DuckDB, no Prefect, no LLM clients.
intents/ may use planner.errors and nothing else of planner (nor rules, nor flows).
planner/ never imports rules/ or flows/, and of intents/ only the Intent type.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE_FORBIDDEN = ("flows", "duckdb", "prefect", "openai", "instructor")


def imported_modules(path: Path, package_root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in ``path``, relative ones resolved.

    ``import_module("x")`` / ``__import__("x")`` with a constant name count too, so a
    dynamic import cannot slip past.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(package_root).with_suffix("")
    package_parts = list(rel.parts[:-1]) if rel.name != "__init__" else list(rel.parts[:-1])
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package_parts[: len(package_parts) - (node.level - 1)] if node.level > 1 else package_parts
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            # "from planner.world import files as world_files" imports planner.world.files
            out.extend((node.lineno, f"{module}.{alias.name}") for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                out.append((node.lineno, node.args[0].value))
    return out


def _is(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def violations(package: str, rule: object) -> list[str]:
    """Every ``file:line imports module`` in ``package`` for which ``rule(module)`` returns a reason."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, module in imported_modules(path):
            reason = rule(module)  # type: ignore[operator]
            if reason:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {module} ({reason})")
    return found


def _core_rule(module: str) -> str | None:
    for bad in CORE_FORBIDDEN:
        if _is(module, bad):
            return f"the pure core must not import {bad}"
    return None


def _planner_rule(module: str) -> str | None:
    if _core_rule(module):
        return _core_rule(module)
    if _is(module, "rules"):
        return "planner must not depend on rules"
    if _is(module, "intents") and not (_is(module, "intents.intent") or module in ("intents", "intents.Intent")):
        return "planner may use only the Intent type of intents"
    return None


def _intents_rule(module: str) -> str | None:
    if _is(module, "planner") and module not in ("planner", "planner.errors") and not _is(module, "planner.errors"):
        return "intents may import planner.errors only"
    if _is(module, "rules") or _is(module, "flows"):
        return "intents must not import rules or flows"
    return None


@pytest.mark.parametrize(("package", "rule"), [("planner", _planner_rule), ("rules", _core_rule),
                                               ("intents", _intents_rule)])
def test_package_boundaries(package: str, rule: object) -> None:
    assert (ROOT / package).is_dir()
    assert violations(package, rule) == []


def test_the_checker_sees_every_kind_of_import(tmp_path: Path) -> None:
    """The contract test must be able to fail: feed it a module that breaks every rule."""
    pkg = tmp_path / "planner" / "sub"
    pkg.mkdir(parents=True)
    bad = pkg / "bad.py"
    bad.write_text(
        "import duckdb\n"
        "import prefect.flows as pf\n"
        "from flows.cli import app\n"
        "from openai import OpenAI\n"
        "from .. import errors\n"
        "from ...flows import context\n"
        "import importlib\n"
        "importlib.import_module('instructor')\n"
        "def f():\n"
        "    import rules.engine\n",
        encoding="utf-8",
    )
    mods = [m for _, m in imported_modules(bad, tmp_path)]
    assert {"duckdb", "prefect.flows", "flows.cli", "openai", "planner", "planner.errors", "flows.context",
            "instructor", "rules.engine"} <= set(mods)
    reasons = {m: _planner_rule(m) for m in mods}
    assert all(reasons[m] for m in ("duckdb", "prefect.flows", "flows.cli", "openai", "instructor", "rules.engine"))
    assert reasons["planner.errors"] is None
    assert _intents_rule("planner.world.model") and _intents_rule("planner.errors") is None
    assert _intents_rule("planner.errors.InvalidArgument") is None


# --------------------------------------------------------------------------- no I/O, env, clock or chance in the core
# planner/ and rules/ are functions of their arguments. Each call below reaches outside the
# process (files, environment, clock, an unseeded generator); none may appear in the core.
_IO_CALL_SUFFIXES = (
    ".read_text", ".read_bytes", ".write_text", ".write_bytes", ".open", ".iterdir", ".rglob", ".glob",
    ".exists", ".is_file", ".is_dir", ".stat", ".mkdir", ".unlink", ".rmdir", ".touch", ".rename", ".replace_file",
)
_IO_CALLS = {"open", "input", "os.listdir", "os.scandir", "os.walk", "os.remove", "os.getenv", "os.putenv",
             "os.system", "io.open", "tempfile.mkdtemp", "tempfile.mkstemp"}
_CLOCK_CALLS = {"datetime.now", "datetime.utcnow", "datetime.today", "date.today", "time.time", "time.time_ns",
                "time.monotonic", "time.perf_counter", "time.sleep", "datetime.datetime.now", "datetime.date.today"}
_FORBIDDEN_MODULES = ("random", "subprocess", "shutil", "socket", "tempfile", "secrets", "uuid")
#: Exceptions, as (file, function) pairs so that I/O anywhere else still fails: none. The world
#: folder and the rule file are read at the edge (``flows.world_folder``, ``flows.rule_file``);
#: ``planner.world.files`` and ``rules.loading`` parse their content.
IO_ALLOWED: set[tuple[str, str]] = set()


def impurities(path: Path, root: Path = ROOT) -> list[str]:
    """``file:line what`` for each file, environment, clock or chance access in ``path`` (AST, no execution)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    rel = path.relative_to(root).as_posix()
    found: list[str] = []

    def visit(node: ast.AST, scope: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = scope
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{scope}.{child.name}" if scope else child.name
            what = _impure(child)
            if what and (rel, inner) not in IO_ALLOWED:
                found.append(f"{rel}:{child.lineno} {what} (in {inner or 'module level'})")
            visit(child, inner)

    visit(tree, "")
    return found


def _impure(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and ast.unparse(node) in ("os.environ", "sys.argv", "sys.stdin"):
        return f"reads {ast.unparse(node)}"
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        for name in names:
            if name.split(".")[0] in _FORBIDDEN_MODULES:
                return f"imports {name}"
    if isinstance(node, ast.Call):
        name = ast.unparse(node.func)
        if name in _IO_CALLS or name.endswith(_IO_CALL_SUFFIXES):
            return f"calls {name}() (file or process I/O)"
        if name in _CLOCK_CALLS or name.endswith((".now", ".utcnow", ".today")):
            return f"calls {name}() (the clock)"
        if ".random." in f".{name}" and not (name.endswith("default_rng") and (node.args or node.keywords)):
            return f"calls {name}() (chance without a seed)"
    return None


@pytest.mark.parametrize("package", ["planner", "rules"])
def test_the_core_reads_no_file_environment_clock_or_chance(package: str) -> None:
    found = [f for path in sorted((ROOT / package).rglob("*.py")) for f in impurities(path)]
    assert found == []


def test_the_purity_checker_sees_every_kind_of_access(tmp_path: Path) -> None:
    bad = tmp_path / "planner" / "bad.py"
    bad.parent.mkdir()
    bad.write_text(
        "import os, random\n"
        "from datetime import datetime\n"
        "import numpy as np\n"
        "from pathlib import Path\n"
        "X = os.environ.get('A')\n"
        "def f(p):\n"
        "    t = datetime.now()\n"
        "    np.random.default_rng()\n"
        "    np.random.rand(3)\n"
        "    ok = np.random.default_rng(7)\n"
        "    return open(p).read() + Path(p).read_text()\n",
        encoding="utf-8",
    )
    found = impurities(bad, tmp_path)
    assert [f.split(" ", 1)[0] for f in found] == [
        "planner/bad.py:1", "planner/bad.py:5", "planner/bad.py:7", "planner/bad.py:8", "planner/bad.py:9",
        "planner/bad.py:11", "planner/bad.py:11",
    ], found


def test_flows_choose_mavlink2_in_one_place() -> None:
    """``mavutil`` picks the protocol version when first imported (FACTS.md, MAVLink): in flows it is imported by
    ``flows.mavlink`` alone, which sets ``MAVLINK20`` at module level first, and no other flows module touches
    ``MAVLINK20``. (planner/ imports the v2 dialect module directly and touches no environment.)"""
    importers, setters = [], []
    for path in sorted((ROOT / "flows").rglob("*.py")):
        name = str(path.relative_to(ROOT))
        if any(_is(m, "pymavlink.mavutil") for _, m in imported_modules(path)):
            importers.append(name)
        if "MAVLINK20" in path.read_text(encoding="utf-8") and name != "flows/mavlink.py":
            setters.append(name)
    assert importers == ["flows/mavlink.py"]
    assert setters == []
    tree = ast.parse((ROOT / "flows" / "mavlink.py").read_text(encoding="utf-8"))
    sets = [n.lineno for n in tree.body if "MAVLINK20" in ast.unparse(n) and "environ" in ast.unparse(n)]
    uses = [n.lineno for n in tree.body if "mavutil" in ast.unparse(n) and isinstance(n, ast.ImportFrom)]
    assert sets and uses and min(sets) < min(uses)
