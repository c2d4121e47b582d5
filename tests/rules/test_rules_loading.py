"""Rule files: every problem located by file, line, rule id and field; the default set loads."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.context import RULES_FILE
from planner.errors import InvalidArgument
from flows.rule_file import load_rules, validate_rules_file
from rules.loading import parse_rules
from rules.schema import RULE_KINDS
from rules.schema import AltitudeCeilingRule

BAD = """\
version: 1
rules:
  - id: ceiling
    kind: altitude_ceiling
    severity: block
    params: {}
  - id: ceiling
    kind: altitude_ceilin
    severity: block
  - id: wind
    kind: weather
    severity: stop
    when: phase < 3
    params:
      wind_margin_mps: -1
      foo: 2
    message: {en: "bad {nope}", zh: "好"}
  - kind: battery_reserve
    severity: block
"""


def problems_of(tmp_path: Path, text: str, name: str = "rules.yaml"):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path, validate_rules_file(path)


def test_every_problem_is_located(tmp_path: Path) -> None:
    path, problems = problems_of(tmp_path, BAD)
    got = {(p.line, p.rule_id, p.field) for p in problems}
    assert got == {
        (6, "ceiling", "params"),
        (7, "ceiling", "id"),
        (8, "ceiling", "kind"),
        (12, "wind", "severity"),
        (13, "wind", "when"),
        (15, "wind", "params.wind_margin_mps"),
        (16, "wind", "params.foo"),
        (17, "wind", "message.en"),
        (18, None, "id"),
    }
    assert all(p.file == str(path) for p in problems)
    by_field = {p.field: p for p in problems}
    assert "exactly one of ceiling_m or ceiling_ft" in by_field["params"].message
    assert "duplicate" in by_field["id"].message or any("duplicate" in p.message for p in problems)
    assert "altitude_ceilin" in by_field["kind"].message and "altitude_ceiling" in by_field["kind"].message
    assert "data type mismatch" in by_field["when"].message
    assert "{nope}" in by_field["message.en"].message
    assert str(by_field["params.foo"]).startswith(f"{path}:16: rule wind: field params.foo: ")


def test_yaml_syntax_error_has_line(tmp_path: Path) -> None:
    _, problems = problems_of(tmp_path, "version: 1\nrules:\n  - id: [a\n    kind: x\n")
    (p,) = problems
    assert p.line is not None and p.line >= 3 and "YAML syntax error" in p.message and p.rule_id is None


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("rules: []\n", "version"),
        ("version: 1\nrules: []\n", "rules"),
        ("- a\n- b\n", None),
        ("version: 2\nrules: [{id: a, kind: dock_range, severity: block}]\n", "version"),
    ],
)
def test_top_level_shape(tmp_path: Path, text: str, field: str | None) -> None:
    _, problems = problems_of(tmp_path, text)
    assert field in {p.field for p in problems}


def test_missing_file_is_one_problem(tmp_path: Path) -> None:
    (p,) = validate_rules_file(tmp_path / "nope.yaml")
    assert "does not exist" in p.message


def test_load_rules_raises_with_all_problems_in_details(tmp_path: Path) -> None:
    path, problems = problems_of(tmp_path, BAD)
    with pytest.raises(InvalidArgument) as exc:
        load_rules(path)
    assert exc.value.code == "INVALID_ARGUMENT"
    assert len(exc.value.details) == len(problems) == 9
    assert {"file", "line", "rule_id", "field", "message"} == set(exc.value.details[0])


def test_default_rule_set_is_valid_and_covers_every_kind() -> None:
    assert validate_rules_file(RULES_FILE) == []
    rs = load_rules(RULES_FILE)
    assert {r.kind for r in rs.rules} == set(RULE_KINDS)
    ceiling = rs.of_kind("altitude_ceiling")[0]
    assert isinstance(ceiling, AltitudeCeilingRule) and ceiling.params.ceiling_limit_m == 120.0
    assert rs.get("battery-reserve").params.reserve_fraction == 0.25  # type: ignore[union-attr]
    assert rs.get("drone-online").params.max_telemetry_age_s == 300  # type: ignore[union-attr]
    assert len(rs.sha256) == 64


def test_documented_400ft_variant_loads() -> None:
    # the commented example in data/rules.yaml, uncommented, is a valid rule
    lines = [
        line[4:]
        for line in RULES_FILE.read_text(encoding="utf-8").splitlines()
        if line.startswith("  # ") and (line[4:].startswith("- id: ceiling-400ft") or line[4:].startswith("  "))
    ]
    assert len(lines) == 4
    rs = parse_rules("version: 1\nrules:\n" + "\n".join("  " + x for x in lines) + "\n", "variant.yaml")
    assert round(rs.get("ceiling-400ft").params.ceiling_limit_m, 2) == 121.92  # type: ignore[union-attr]


def test_adding_a_rule_of_an_existing_kind_is_yaml_only() -> None:
    text = RULES_FILE.read_text(encoding="utf-8") + "\n  - {id: ceiling-90m-night, kind: altitude_ceiling, severity: block, when: 'start_hour_utc >= 20', params: {ceiling_m: 90}}\n"
    rs = parse_rules(text, "extended.yaml")
    assert rs.get("ceiling-90m-night").kind == "altitude_ceiling" and "ceiling-90m-night" in rs.guards


def test_list_is_json_round_trippable() -> None:
    dumped = load_rules(RULES_FILE).to_dicts()
    assert dumped[0]["id"] == "airspace" and dumped[0]["params"]["buffer_m"] == 20
