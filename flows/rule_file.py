"""Reading a rule file from disk: the edge in front of ``rules.loading.parse_rules``.

The rules package parses text and never opens a file; this module reads the file once
(UTF-8) and hands the text over, so the CLI, the use cases and the flows share one
definition of "valid". Which file is ``flows.context.resolve_rules_file``'s to say.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from flows.context import resolve_rules_file
from planner.errors import InvalidArgument
from rules.loading import RuleProblem, RuleSet, parse_rules

__all__ = ["load_rules", "rule_set", "validate_rules_file"]


def _read(path: str | Path) -> tuple[str, str]:
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8"), str(p)
    except FileNotFoundError:
        raise InvalidArgument(f"rule file {p} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidArgument(f"rule file {p} cannot be read: {exc}") from None


@lru_cache(maxsize=4)
def _parsed(text: str, source: str) -> RuleSet:
    """The rule set of a file's text, parsed once per process (issue 27: a plan read the same file twice, each a
    full YAML parse and validation). Keyed by the text itself, so an edited file is parsed again; only valid
    files are kept (an ``InvalidArgument`` is raised again on each load). A ``RuleSet`` is frozen and its users
    only read it."""
    return parse_rules(text, source)


def load_rules(path: str | Path) -> RuleSet:
    """Read and validate a rule file; ``InvalidArgument`` lists every problem (also in ``details``)."""
    text, source = _read(path)
    return _parsed(text, source)


def rule_set(rules_path: str | Path | None) -> RuleSet:
    """The rule set (``--rules``, ``SORTIE_RULES``, else the bundled ``data/rules.yaml``); a missing file is an
    error, never a skip."""
    path = resolve_rules_file(rules_path)
    if not path.is_file():
        raise InvalidArgument(f"rule file {str(path)!r} does not exist; sortie does not plan or dispatch without rules")
    return load_rules(path)


def validate_rules_file(path: str | Path) -> list[RuleProblem]:
    """Every problem of a rule file (empty list when valid); a missing file is one problem."""
    try:
        text, source = _read(path)
    except InvalidArgument as exc:
        return [RuleProblem(str(path), None, None, exc.message)]
    return parse_rules(text, source, raise_on_problem=False)
