"""``flows.rule_file.load_rules`` parses a rule file once per process and never serves a stale or invalid one.

A ``sortie plan`` asked for the rule set twice (the request's altitude limits, then the plan's evaluation), and each
load was a full YAML parse and validation of the same text (issue 27). The parse is now kept by the file's text: the
same text gives the same ``RuleSet`` object, an edited file is parsed again, and a file with problems raises every
time it is loaded.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.rule_file import load_rules
from planner.errors import InvalidArgument

ROOT = Path(__file__).resolve().parents[2]


def test_the_same_file_is_parsed_once(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text((ROOT / "data" / "rules.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    first = load_rules(path)
    assert load_rules(path) is first
    assert load_rules(str(path)) is first  # the same source, named as text


def test_an_edited_file_is_parsed_again(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("version: 1\nrules:\n- {id: c, kind: altitude_ceiling, severity: block, params: {ceiling_m: 120}}\n",
                    encoding="utf-8")
    before = load_rules(path)
    path.write_text("version: 1\nrules:\n- {id: c, kind: altitude_ceiling, severity: block, params: {ceiling_m: 90}}\n",
                    encoding="utf-8")
    after = load_rules(path)
    assert after is not before and after.sha256 != before.sha256
    assert after.get("c").params.ceiling_m == 90 and before.get("c").params.ceiling_m == 120


def test_an_invalid_file_raises_on_every_load(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("version: 1\nrules:\n- {id: c, kind: altitude_ceiling, severity: block, params: {}}\n",
                    encoding="utf-8")
    for _ in range(2):
        with pytest.raises(InvalidArgument) as err:
            load_rules(path)
        assert err.value.code == "INVALID_ARGUMENT" and err.value.details[0]["field"] == "params"
