"""``sortie NAME …`` builds only the command it runs, and says exactly what the whole app says (issue 27).

typer makes a click command of every registered command (reading each signature and its type hints) before it parses
the arguments: 0.04-0.06 CPU s of every run. ``flows.cli.command_for`` registers only the named command or group;
this compares it with the whole app, in a fresh process, on every command's and group's help, on the errors a parse
can end in (unknown option, missing argument, unknown subcommand, a refused request) and on their exit codes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_DRIVER = """
import contextlib, io, json, sys
from flows.cli import app, command_for
cases = json.loads(sys.argv[1])
out = []
for args in cases:
    row = {}
    for mode in ("whole", "one"):
        stdout, stderr = io.StringIO(), io.StringIO()
        code = None
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                (app if mode == "whole" else command_for(args))(args=args, prog_name="sortie")
            except SystemExit as exc:
                code = exc.code
        row[mode] = [code, stdout.getvalue(), stderr.getvalue()]
    row["built"] = sorted(getattr(command_for(args), "commands", {"<whole app>": 0}))
    out.append(row)
print(json.dumps(out))
"""


def _names() -> tuple[list[str], list[str]]:
    from flows.cli import app

    return [c.name for c in app.registered_commands], [g.name for g in app.registered_groups]


def _run(cases: list[list[str]], tmp_path: Path) -> list[dict]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "SORTIE_HOME": str(tmp_path / "home"), "COLUMNS": "100",
           "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run([sys.executable, "-c", _DRIVER, json.dumps(cases)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=240, check=True)
    return json.loads(done.stdout)


@pytest.mark.timeout(300)
def test_each_command_alone_says_what_the_whole_app_says(tmp_path: Path) -> None:
    commands, groups = _names()
    assert "plan" in commands and "ledger" in groups
    cases = [[name, "--help"] for name in commands + groups]
    cases += [[g] for g in groups]  # a group without its subcommand
    cases += [["plan"], ["plan", "--bogus"], ["show"], ["ledger", "nosuch"], ["approve", "d-x", "--version", "x"],
              ["nosuch"], ["--help"], []]
    rows = _run(cases, tmp_path)
    for args, row in zip(cases, rows):
        assert row["one"] == row["whole"], f"sortie {' '.join(args)}: {row}"
    built = {" ".join(args): row["built"] for args, row in zip(cases, rows)}
    assert built["plan --help"] == ["plan"] and built["ledger --help"] == ["ledger"]  # only the one it runs
    assert built["nosuch"] == built["--help"] == built[""] == ["<whole app>"]
    codes = {" ".join(args): row["one"][0] for args, row in zip(cases, rows)}
    assert codes["plan --help"] == 0 and codes["plan --bogus"] == 2 and codes["nosuch"] == 2  # the errors stayed errors
    assert codes["plan"] == 2  # a plan without a request is refused (INVALID_ARGUMENT), not run
