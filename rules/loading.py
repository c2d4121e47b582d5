"""Load and validate a rule file: every problem located by file, line, rule id and field.

``parse_rules(text, source)`` turns a rule file's text into a ``RuleSet`` or its
problems; it reads nothing (``flows.rule_file.load_rules`` and
``validate_rules_file`` read the file at the edge and call it), so the CLI and the
flows share one definition of "valid".

Problems found: YAML syntax (with line and column), a wrong top-level shape,
pydantic errors per field (unknown kind, unknown or missing key, out-of-range
value), duplicate rule ids, guards that do not parse or type-check, and
message templates with unknown placeholders.

Example::

    >>> rs = parse_rules("version: 1\\nrules:\\n- {id: c, kind: altitude_ceiling, severity: block, params: {ceiling_m: 120}}\\n")
    >>> [r.id for r in rs.rules]
    ['c']
    >>> parse_rules("version: 1\\nrules:\\n- {id: c, kind: altitude_ceiling, severity: block, params: {}}\\n",
    ...             source="x.yaml", raise_on_problem=False)[0].field
    'params'
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import yaml
from pydantic import ValidationError

from planner.errors import InvalidArgument
from rules.guards import Guard, GuardError, compile_guard
from rules.schema import RULE_KINDS, TEMPLATE_FIELDS, Rule, RuleFile

__all__ = ["RuleProblem", "RuleSet", "parse_rules"]


@dataclass(frozen=True)
class RuleProblem:
    """One thing wrong with a rule file. ``rule_id``/``field``/``line`` are ``None`` when unknown."""

    file: str
    rule_id: str | None
    field: str | None
    message: str
    line: int | None = None

    def __str__(self) -> str:
        parts = [self.file + (f":{self.line}" if self.line is not None else "")]
        if self.rule_id is not None:
            parts.append(f"rule {self.rule_id}")
        if self.field is not None:
            parts.append(f"field {self.field}")
        return ": ".join([*parts, self.message])

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "rule_id": self.rule_id, "field": self.field, "message": self.message}


@dataclass(frozen=True)
class RuleSet:
    """A validated rule set: rules in file order, their compiled guards, and the file's sha256."""

    source: str
    version: int
    rules: tuple[Rule, ...]
    guards: dict[str, Guard] = field(default_factory=dict, compare=False, hash=False)
    sha256: str = ""

    def get(self, rule_id: str) -> Rule:
        for r in self.rules:
            if r.id == rule_id:
                return r
        raise KeyError(rule_id)

    def of_kind(self, kind: str) -> tuple[Rule, ...]:
        return tuple(r for r in self.rules if r.kind == kind)

    def to_dicts(self) -> list[dict[str, Any]]:
        return [r.model_dump(mode="json", exclude_none=True) for r in self.rules]


# --------------------------------------------------------------------------- YAML positions


def _line_of(node: yaml.Node | None, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the deepest node along ``loc`` in a composed YAML tree."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in loc:
        nxt = None
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == str(part):
                    nxt = v
                    line = k.start_mark.line + 1
                    break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
            nxt = node.value[part]
            line = nxt.start_mark.line + 1
        if nxt is None:
            return line
        node = nxt
        line = node.start_mark.line + 1 if not isinstance(node, yaml.ScalarNode) else line
    return line


def _template_fields(template: str) -> list[str]:
    names: list[str] = []
    for _, name, _, _ in string.Formatter().parse(template):
        if name is not None:
            names.append(name.split(".")[0].split("[")[0])
    return names


# --------------------------------------------------------------------------- parsing


@overload
def parse_rules(text: str, source: str = ..., *, raise_on_problem: Literal[True] = ...) -> RuleSet: ...
@overload
def parse_rules(text: str, source: str = ..., *, raise_on_problem: Literal[False]) -> list[RuleProblem]: ...


def parse_rules(text: str, source: str = "<rules>", *, raise_on_problem: bool = True) -> RuleSet | list[RuleProblem]:
    """Parse a rule file's text. With ``raise_on_problem`` (default) return a ``RuleSet`` or raise
    ``InvalidArgument`` listing every problem (``details`` = the problems as dicts); without it,
    return the list of problems (empty when the file is valid)."""
    problems, ruleset = _parse(text, source)
    if not raise_on_problem:
        return problems
    if problems:
        lines = "\n".join(f"  {p}" for p in problems)
        raise InvalidArgument(
            f"{len(problems)} problem(s) in rule file {source}:\n{lines}", details=[p.to_dict() for p in problems]
        )
    assert ruleset is not None
    return ruleset


# libyaml's safe loader where PyYAML was built with it (the wheels are): the same documents, ~10x faster.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _compose_and_load(text: str) -> tuple[yaml.Node | None, Any]:
    """The YAML tree (its marks give a problem's line) and the data built from that same tree: one parse, as
    ``yaml.safe_load`` builds it (``get_single_data``), where a compose and a load parsed the text twice.

    A file that does not parse is parsed again by PyYAML's own loader for the error: its wording and position
    are the ones an operator has been shown ("found character '\\t' that cannot start any token"; libyaml's
    omits the character and puts an unclosed list on the line after the file's end)."""
    try:
        return _compose_with(_FAST_LOADER, text)
    except yaml.YAMLError:
        if _FAST_LOADER is yaml.SafeLoader:
            raise
        return _compose_with(yaml.SafeLoader, text)


def _compose_with(loader_class: Any, text: str) -> tuple[yaml.Node | None, Any]:
    loader = loader_class(text)
    try:
        root = loader.get_single_node()
        return root, (None if root is None else loader.construct_document(root))
    finally:
        loader.dispose()


def _parse(text: str, source: str) -> tuple[list[RuleProblem], RuleSet | None]:
    try:
        root, data = _compose_and_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        col = f", column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        return [RuleProblem(source, None, None, f"YAML syntax error at line {line}{col}: {problem}", line)], None
    if not isinstance(data, dict):
        return [RuleProblem(source, None, None, "the file must be a mapping with 'version' and 'rules'", 1)], None

    raw_rules = data.get("rules") if isinstance(data.get("rules"), list) else []

    def rule_id_at(index: Any) -> str | None:
        if isinstance(index, int) and 0 <= index < len(raw_rules) and isinstance(raw_rules[index], dict):
            rid = raw_rules[index].get("id")
            return str(rid) if rid is not None else None
        return None

    problems: list[RuleProblem] = []
    model: RuleFile | None = None
    try:
        model = RuleFile.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            loc = tuple(err["loc"])
            rid, fld = None, None
            yaml_loc: tuple[Any, ...] = loc
            if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int):
                rid = rule_id_at(loc[1])
                rest = list(loc[2:])
                raw = raw_rules[loc[1]] if loc[1] < len(raw_rules) else None
                if rest and isinstance(raw, dict) and rest[0] == raw.get("kind"):
                    rest = rest[1:]  # pydantic puts the discriminator's tag in the path
                yaml_loc = ("rules", loc[1], *rest)
                fld = ".".join(str(p) for p in rest) or None
                if err["type"] in ("union_tag_invalid", "union_tag_not_found"):
                    fld = "kind"
                    yaml_loc = ("rules", loc[1], "kind")
            else:
                fld = ".".join(str(p) for p in loc) or None
            msg = str(err["msg"]).removeprefix("Value error, ")
            if err["type"] == "union_tag_invalid":
                bad_kind = err["input"].get("kind") if isinstance(err.get("input"), dict) else None
                msg = f"unknown kind {bad_kind!r}; known: {', '.join(RULE_KINDS)}"
            elif err["type"] == "union_tag_not_found":
                msg = f"missing 'kind'; known: {', '.join(RULE_KINDS)}"
            problems.append(RuleProblem(source, rid, fld, msg, _line_of(root, yaml_loc)))

    # Checks that need the whole list, done on the raw data so they run even when a rule is invalid.
    seen: dict[str, int] = {}
    for i, raw in enumerate(raw_rules):
        if not isinstance(raw, dict):
            continue
        rid = raw.get("id")
        if isinstance(rid, str):
            if rid in seen:
                problems.append(
                    RuleProblem(source, rid, "id", f"duplicate rule id (first at rule #{seen[rid] + 1})", _line_of(root, ("rules", i, "id")))
                )
            else:
                seen[rid] = i
        guard_text = raw.get("when")
        if isinstance(guard_text, str) and guard_text.strip():
            try:
                compile_guard(guard_text)
            except GuardError as exc:
                problems.append(RuleProblem(source, rule_id_at(i), "when", str(exc), _line_of(root, ("rules", i, "when"))))
        msg = raw.get("message")
        if isinstance(msg, dict):
            for lang in ("en", "zh"):
                tmpl = msg.get(lang)
                if not isinstance(tmpl, str):
                    continue
                try:
                    names = _template_fields(tmpl)
                except ValueError as exc:
                    problems.append(
                        RuleProblem(source, rule_id_at(i), f"message.{lang}", f"bad template: {exc}", _line_of(root, ("rules", i, "message", lang)))
                    )
                    continue
                unknown = sorted(set(names) - TEMPLATE_FIELDS)
                if unknown or "" in names:
                    bad = ", ".join("{" + n + "}" for n in unknown) or "{} (positional)"
                    problems.append(
                        RuleProblem(
                            source,
                            rule_id_at(i),
                            f"message.{lang}",
                            f"unknown placeholder(s) {bad}; allowed: {', '.join(sorted(TEMPLATE_FIELDS))}",
                            _line_of(root, ("rules", i, "message", lang)),
                        )
                    )

    problems.sort(key=lambda p: (p.line or 0, p.rule_id or "", p.field or "", p.message))
    if problems or model is None:
        return problems, None
    guards = {r.id: compile_guard(r.when) for r in model.rules if r.when}
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return [], RuleSet(source=source, version=model.version, rules=tuple(model.rules), guards=guards, sha256=digest)
