"""Shared test plumbing: the golden-file switch and the hypothesis profiles."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

GOLDEN_DIR = Path(__file__).parent / "golden"

# Local runs draw fresh random examples every time (a newcomer's ``uv run pytest`` explores);
# a failure prints its ``@reproduce_failure`` blob, and ``--hypothesis-seed=N`` replays a run.
# Only CI (env ``CI`` set, as CI services and ``.ci/run`` do) is derandomised, so a red build
# is reproducible; a bug it cannot see is still found by the next local run.
_COMMON = dict(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.register_profile("ci", derandomize=True, **_COMMON)
settings.register_profile("dev", **_COMMON)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-golden",
        action="store_true",
        default=False,
        help="Rewrite tests/golden/ files from the current output (review the diff!).",
    )


class Golden:
    """Compare text against ``tests/golden/<case>/<name>``; rewrite with --update-golden."""

    def __init__(self, update: bool) -> None:
        self.update = update

    def check(self, case: str, name: str, text: str) -> None:
        path = GOLDEN_DIR / case / name
        if self.update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        if not path.exists():
            pytest.fail(f"golden file {path} is missing; make it with: uv run pytest --update-golden -k {case}")
        expected = path.read_text(encoding="utf-8")
        assert text == expected, f"{path} differs; if the change is intended: uv run pytest --update-golden -k {case} and review the diff"


    def check_plan(self, case: str, plan: object) -> None:
        """Pin a planned route: the canonical plan (one key per line, so diffs read well) and its GeoJSON."""
        import json

        from planner.plan import canonical_json, plan_to_geojson

        doc = json.loads(canonical_json(plan))  # the canonical precision, pretty-printed
        self.check(case, "plan.json", json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n")
        self.check(case, "route.geojson", json.dumps(plan_to_geojson(plan), sort_keys=True, indent=1) + "\n")


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Golden:
    return Golden(bool(request.config.getoption("--update-golden")))


@pytest.fixture
def sortie_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh SORTIE_HOME per test, so ledgers never leak between tests."""
    home = tmp_path / "sortie-home"
    home.mkdir()
    monkeypatch.setenv("SORTIE_HOME", str(home))
    return home
