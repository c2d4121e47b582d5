"""``sortie rules validate [FILE]`` and ``sortie rules list``: look at a rule file before it gates missions.

``validate`` reports *every* problem of a rule file (file, line, rule id,
field, message) and exits 2 when there is any, so it can gate a CI job over an
operator's rules. ``list`` shows the rules a deployment would load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from flows.cli.app import JsonOpt, app, console, run
from flows.cli.app import markup_escape as escape
from flows.context import RULES_FILE
from planner.errors import InvalidArgument

__all__ = ["rules_app", "rules_listing", "rules_problems"]

rules_app = typer.Typer(name="rules", help="Validate and list the declarative rule set.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")

FileArg = Annotated[Path | None, typer.Argument(help="Rule file (default: the bundled data/rules.yaml).")]


def rules_problems(path: Path) -> dict[str, Any]:
    """``{"file", "valid": True, "rules": n}`` or ``InvalidArgument`` whose details list every problem."""
    from flows.rule_file import load_rules, validate_rules_file  # rule-engine and the evaluators: only when used

    problems = validate_rules_file(path)
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise InvalidArgument(f"{len(problems)} problem(s) in rule file {path}:\n{lines}", details=[p.to_dict() for p in problems])
    return {"file": str(path), "valid": True, "rules": len(load_rules(path).rules)}


def rules_listing(path: Path) -> dict[str, Any]:
    """The loaded rules as JSON-able data (what ``rules list`` prints)."""
    from flows.rule_file import load_rules

    rs = load_rules(path)
    return {"file": rs.source, "sha256": rs.sha256, "version": rs.version, "rules": rs.to_dicts()}


@rules_app.command("validate")
def validate_cmd(file: FileArg = None, as_json: JsonOpt = False) -> None:
    """Report every problem of a rule file; exit 2 when there is one."""
    path = file or RULES_FILE

    def render(r: dict[str, Any]) -> None:
        console.print(f"[green]OK[/]: {escape(r['file'])} — {r['rules']} rules, no problems")

    run(lambda: rules_problems(path), as_json, render)


@rules_app.command("list")
def list_cmd(
    file: Annotated[Path | None, typer.Option("--file", help="Rule file (default: the bundled data/rules.yaml).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Show the rules of a rule file: id, kind, severity, guard and parameters."""
    path = file or RULES_FILE

    def render(r: dict[str, Any]) -> None:
        console.print(f"[bold]{escape(r['file'])}[/] (version {r['version']}, sha256 {r['sha256'][:12]})")
        for rule in r["rules"]:
            colour = "red" if rule["severity"] == "block" else "yellow"
            guard = f"  when: {escape(rule['when'])}" if rule.get("when") else ""
            console.print(f"  [bold]{escape(rule['id'])}[/]  {rule['kind']}  [{colour}]{rule['severity']}[/]{guard}")
            params = ", ".join(f"{k}={v}" for k, v in sorted(rule.get("params", {}).items()))
            if params:
                console.print(f"      {escape(params)}", highlight=False)

    run(lambda: rules_listing(path), as_json, render)
