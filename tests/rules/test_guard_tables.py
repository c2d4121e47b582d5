"""rule-engine's parser tables are built once (``rules/guard_tables.py``), not in every process that loads rules.

The committed tables must be the installed grammar's (PLY checks the same
signature and silently builds its own tables when it differs: slow, never
wrong); a fresh interpreter that compiles a guard must not run PLY's table
builder; and guards must read the same with the tables as without them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_tables_are_the_installed_grammars() -> None:
    import rule_engine
    from rule_engine._vendor.ply import yacc

    from rules import guard_tables

    parser = rule_engine.parser.Parser
    pdict = {k: getattr(parser, k) for k in dir(parser)}
    pdict.update(__file__=sys.modules[parser.__module__].__file__, __package__="rule_engine.parser")
    reflect = yacc.ParserReflect(pdict)
    reflect.get_all()
    assert guard_tables._lr_signature == reflect.signature(), (
        f"rules/guard_tables.py is not rule-engine {rule_engine.__version__}'s grammar: "
        "run `uv run python scripts/make_guard_tables.py` and commit the result")
    assert guard_tables._tabversion == yacc.__tabversion__


@pytest.mark.timeout(120)
def test_a_fresh_process_compiles_guards_without_building_parser_tables() -> None:
    probe = (
        "import sys, json\n"
        "from rules.guards import compile_guard, GUARD_DEFAULTS\n"
        "g = compile_guard('phase == \"dispatch\" and \"THERMAL_CAMERA\" in required_sensors')\n"
        "import rule_engine._vendor.ply.yacc as yacc\n"
        "built = []\n"
        "orig = yacc.LRGeneratedTable.__init__\n"
        "yacc.LRGeneratedTable.__init__ = lambda self, *a, **k: (built.append(1), orig(self, *a, **k))[1]\n"
        "from rule_engine.parser import Parser\n"
        "Parser()  # what rule-engine's import did: reads the registered tables when they match\n"
        "print(json.dumps({'built': len(built), 'tables': sys.modules['rule_engine.parser.parsetab'].__name__,\n"
        "  'match': g.matches({**GUARD_DEFAULTS, 'phase': 'dispatch', 'required_sensors': {'THERMAL_CAMERA'}}),\n"
        "  'miss': g.matches({**GUARD_DEFAULTS, 'phase': 'plan'})}))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=100, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"built": 0, "tables": "rules.guard_tables", "match": True, "miss": False}, (got, out.stderr)
