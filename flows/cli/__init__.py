"""The ``sortie`` command line: one module per group of commands, all on one typer app.

Each ``*_cmds`` module registers its commands on ``flows.cli.app.app`` when imported.
Every ``sortie`` run, ``--help`` included, imports all of them, and without cached
bytecode each import is paid in full: at module level a command module imports only
typer, rich, ``flows.cli.app``, ``flows.context`` and the error tree (``planner.errors``, ``flows.errors``); the authority,
the ledger, the planner, rules, intents, pymavlink and Prefect are imported inside the
command that uses them (``tests/cli/test_cli_imports.py`` checks this).
"""

from __future__ import annotations

import atexit
import copy
import gc
import os
import sys
import threading
from collections.abc import MutableMapping
from typing import Any, NoReturn

# One import per command module (each registers its commands on the app).
from flows.cli import world_cmds  # noqa: E402,F401
from flows.cli import workflow_cmds  # noqa: E402,F401
from flows.cli import demo_cmds  # noqa: E402,F401
from flows.cli import intent_cmds  # noqa: E402,F401
from flows.cli import vehicle_cmds  # noqa: E402,F401
from flows.cli import serve_cmds  # noqa: E402,F401
from flows.cli import server_cmds  # noqa: E402,F401
from flows.cli import rules_cmds  # noqa: E402,F401
from flows.cli import monitor_cmds  # noqa: E402,F401
from flows.cli import control_cmds  # noqa: E402,F401
from flows.cli import launch_cmds  # noqa: E402,F401
from flows.cli import ledger_cmds  # noqa: E402,F401
from flows.cli import notify_cmds  # noqa: E402,F401
from flows.cli import fleet_cmds  # noqa: E402,F401
from flows.cli.app import app  # noqa: E402
from typer import main as typer_main  # noqa: E402

__all__ = ["app", "command_for", "console", "exit_without_teardown", "main"]


#: the cyclic collector's first threshold for a ``sortie`` process (CPython's default: 700 allocations)
GC_GEN0_THRESHOLD = 20_000
#: ... and for a command that plans once and exits (``PLANNING_COMMANDS``)
GC_GEN0_THRESHOLD_PLANNING = 200_000
PLANNING_COMMANDS = frozenset({"plan", "replan"})


def single_threaded_blas(environ: MutableMapping[str, str]) -> None:
    """OpenBLAS with one thread unless the operator said otherwise (``OPENBLAS_NUM_THREADS``), set before numpy loads.

    numpy's OpenBLAS starts a thread per core when it is loaded, and they spin waiting for work that never comes:
    nothing of sortie multiplies matrices large enough to share out (its arrays are distance tables and a few
    coordinates). On the 2-core machine kind ``import numpy`` took 0.19-0.21 CPU s for 0.12 s of wall time, 0.07-0.08
    with one thread, and the embedded demo plan 1.46-2.02 CPU s (median 1.80) against 1.51-1.86 (1.65), eight pairs
    (issue 27). The server's planning processes inherit it.
    """
    environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    """Console-script entry point.

    The cyclic garbage collector runs every ``GC_GEN0_THRESHOLD`` net allocations instead of every 700: a
    ``sortie plan`` allocates the objects of some thousand imported modules that all live to the end, and at the
    default the collector ran about 260 times to free some 1,700 objects, 0.21 of its 2.9 CPU s on the loaded 2-core machine (issue 27). Cycles are
    still collected (reference counting frees everything else at once); peak memory of the demo plan is unchanged
    (205 MB), and the older generations keep CPython's ratios.

    A planning command (``PLANNING_COMMANDS``) runs once and exits, and the collections it still made at 20,000
    cost more as its heap grew (seven after the imports, 0.11-0.13 CPU s of the demo plan; each young generation
    it scans is the imported modules' long-lived objects): at ``GC_GEN0_THRESHOLD_PLANNING`` none of them runs
    after ``main`` starts, 0.01 s, and the demo plan's peak memory stays 208 MB. Long-running commands (the
    server, the demo, the monitors) keep ``GC_GEN0_THRESHOLD``: their cycles are collected as before.
    """
    single_threaded_blas(os.environ)
    args = sys.argv[1:]
    first = GC_GEN0_THRESHOLD_PLANNING if args and args[0] in PLANNING_COMMANDS else GC_GEN0_THRESHOLD
    gc.set_threshold(first, *gc.get_threshold()[1:])
    command_for(args)()


def console() -> NoReturn:
    """The ``sortie`` executable (``[project.scripts]``): ``main``, and after a planning command an exit that skips
    the interpreter's teardown (``exit_without_teardown``).

    ``main`` itself ends the way a click program does (``SystemExit``), so a test or a bench can run a command in
    its own process and go on.
    """
    args = sys.argv[1:]
    if not (args and args[0] in PLANNING_COMMANDS):
        main()
        raise SystemExit(0)  # main ends with SystemExit; a command that returns is a success
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    exit_without_teardown(code)


def exit_without_teardown(code: object) -> NoReturn:
    """End the process as ``SystemExit(code)`` would, without the interpreter's teardown, when nothing is left to wait
    for.

    After a ``sortie plan`` the interpreter's own finalisation (clearing ~900 modules, a last collection over the
    ~150,000 objects they hold, freeing them one by one) cost 0.10-0.20 of the demo plan's ~1.2 CPU s, and it
    changes nothing outside the process: every ledger unit of work has closed its connection, every file was
    written inside a ``with``. So the atexit functions run (the logging handlers' flush, ``flows.ledger.shared``'s
    close, Pillow's), the standard streams are flushed, and ``os._exit`` ends the process with the code — the
    technique of Instagram's "Dismissing Python Garbage Collection" (``atexit.register(os._exit, 0)``). When a
    thread other than the main one is still alive, the normal exit runs instead: it waits for a non-daemon
    thread, as Python does. The exit code is the one ``SystemExit`` gives: ``None`` 0, an integer itself,
    anything else printed to standard error and 1; a standard stream that cannot be flushed (a reader that went
    away) is 120, as in Python's own finalisation.
    """
    if threading.active_count() > 1:
        raise SystemExit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            status = status or 120
    os._exit(status & 0xFF)


def command_for(args: list[str]) -> Any:
    """What runs ``sortie ARGS``: the whole app, or, when ``ARGS`` starts with the name of a command or a command
    group, the app with only that one in it.

    typer turns every registered command into a click command (reading each function's signature and type hints)
    before it parses anything: 35 of them, 0.04-0.06 CPU s of every run, to run one. With only the named one
    registered the parse, the help, the errors and the exit codes are the same (``tests/cli/test_cli_commands.py``
    compares them); ``sortie``, ``sortie --help`` and an unknown name get the whole app (its list, its suggestions).
    """
    name = args[0] if args else ""
    commands = [c for c in app.registered_commands if c.name == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    one = copy.copy(app)
    one.registered_commands, one.registered_groups = commands, groups
    return typer_main.get_group(one)  # a group even with one command: `sortie plan …` keeps its command name
