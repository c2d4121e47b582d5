"""The typer application and the one way every command reports results and errors.

A command body asks the authority (``flows.authority``) and returns a JSON-able dict (or
raises ``SortieError``). ``run`` prints it: as JSON with ``--json``, otherwise
through the command's ``render`` function. A ``SortieError`` becomes
``CODE: message`` on stderr (or ``{"error": {...}}`` with ``--json``) and exit
code 2; anything else is an internal error, exit 1, traceback only with
``SORTIE_DEBUG=1``.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Annotated, Any

import typer

from flows.safe_text import clean, clean_tree, escape_json_text
from planner.errors import SortieError

__all__ = ["app", "console", "err_console", "run", "JsonOpt", "WorldOpt", "NowOpt", "RulesOpt", "AsOpt", "DraftArg", "EXIT_USER", "EXIT_INTERNAL",
           "markup_escape"]

EXIT_USER = 2
EXIT_INTERNAL = 1

app = typer.Typer(
    name="sortie",
    help="Natural-language drone inspection requests to safe, approved, dispatched missions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: typer's rich help imports rich, markdown-it and pygments (~0.1 CPU s)
)


class _LazyConsole:
    """A rich ``Console`` made on first use: most commands never print through rich, and importing it costs about a
    tenth of a CPU second of every ``sortie`` process (``sortie --help`` included). ``real`` is the console itself,
    for the rich parts that want the object (a progress bar)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Any = None

    @property
    def real(self) -> Any:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


console: Any = _LazyConsole(soft_wrap=True)  # long paths stay on one line when piped
err_console: Any = _LazyConsole(stderr=True)


def markup_escape(text: str) -> str:
    """rich's markup escape, imported when a command prints (not when the CLI loads)."""
    from rich.markup import escape

    return escape(text)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
WorldOpt = Annotated[
    str | None,
    typer.Option("--world", help="World folder (default: $SORTIE_WORLD, then the bundled demo world)."),
]
RulesOpt = Annotated[
    str | None,
    typer.Option("--rules", help="Rule file (default: $SORTIE_RULES, then the bundled data/rules.yaml)."),
]
NowOpt = Annotated[
    str | None,
    typer.Option("--now", help="Planning 'now' as ISO 8601 with offset (default: $SORTIE_NOW, then the clock)."),
]
AsOpt = Annotated[str | None, typer.Option("--as", help="Act as this user id (default: $SORTIE_USER).")]
DraftArg = Annotated[str, typer.Argument(help="Draft id.")]


def _dump(obj: Any) -> str:
    return escape_json_text(json.dumps(obj, ensure_ascii=False, indent=2, sort_keys=True, default=str))


def run(body: Callable[[], dict[str, Any]], as_json: bool, render: Callable[[dict[str, Any]], None] | None = None,
        succeeded: Callable[[dict[str, Any]], bool] | None = None) -> None:
    """Run a command body and report its result or error; never a traceback for a user error.

    ``succeeded`` judges a result that reports an outcome (a flight that ended ABORTED is
    reported in full, then exits ``EXIT_USER``): the exit code follows the outcome, 0 only
    for success, so a script never mistakes a reported failure for a success.
    """
    try:
        result = body()
    except SortieError as exc:
        if as_json:
            print(_dump({"error": exc.to_dict()}))
        else:
            # Plain text: a message may contain "[lon, lat]" (not markup) and must not be wrapped.
            print(f"{exc.code}: {clean(exc.message)}", file=sys.stderr)
        raise typer.Exit(EXIT_USER) from None
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except Exception as exc:  # noqa: BLE001 - the shell's last line of defence
        if os.environ.get("SORTIE_DEBUG"):
            traceback.print_exc()
        payload = {"code": "INTERNAL", "message": f"{type(exc).__name__}: {exc}"}
        if as_json:
            print(_dump({"error": payload}))
        else:
            print(f"INTERNAL: {type(exc).__name__}: {clean(str(exc))} (set SORTIE_DEBUG=1 for a traceback)",
                  file=sys.stderr)
        raise typer.Exit(EXIT_INTERNAL) from None
    if as_json:
        print(_dump(result))
    elif render is not None:
        render(clean_tree(result))  # every string a render prints is terminal-safe (flows.safe_text)
    else:
        console.print(_dump(result), highlight=False, markup=False)  # json.dumps escapes every C0 control
    if succeeded is not None and not succeeded(result):
        raise typer.Exit(EXIT_USER)
