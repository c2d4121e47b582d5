"""The embedded (local) mode says so: every result and audit row carries ``mode: local, identity: asserted``.

In-process through the typer app on a fresh SORTIE_HOME (no planning: fast).
Also the refusals of a client whose SORTIE_SERVER is set: ``--as``, ``--world``
and ``--now`` are refused before anything is sent (the server is never reached).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from flows.ledger import open_ledger


def test_local_results_and_audit_rows_say_local_and_asserted(sortie_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SORTIE_SERVER", raising=False)
    r = CliRunner().invoke(app, ["drafts", "--as", "li.wei", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out == {"drafts": [], "mode": "local", "identity": "asserted"}
    (row,) = open_ledger(sortie_home).audit_rows(limit=5)
    assert row.command == "drafts" and row.args_redacted["mode"] == "local" and row.args_redacted["identity"] == "asserted"


@pytest.mark.parametrize("args", [
    ["approve", "d-x", "--version", "1", "--as", "chen.jing"],
    ["approve", "d-x", "--version", "1", "--now", "2026-12-06T07:00:00+02:00"],
    ["dispatch", "d-x", "--world", "data/demo-helsinki"],
    ["plan", "巡一遍", "--region", "region-1001", "--now", "2026-12-06T07:00:00+02:00"],
    ["drafts", "--as", "li.wei"],
])
def test_a_server_client_refuses_as_world_and_now(args: list[str], sortie_home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SORTIE_SERVER", "http://127.0.0.1:9")  # discard port: nothing may be sent
    monkeypatch.setenv("SORTIE_TOKEN", "sortie_0123456789abcdef_" + "x" * 43)
    r = CliRunner().invoke(app, [*args, "--json"])
    assert r.exit_code == 2, r.output
    assert json.loads(r.output)["error"]["code"] == "OVERRIDE_REFUSED"  # a kind of INVALID_ARGUMENT, named
    assert not (sortie_home / "ledger.duckdb").exists()


def test_a_server_client_without_a_reachable_server_is_server_unavailable(sortie_home: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SORTIE_SERVER", "http://127.0.0.1:9")
    monkeypatch.setenv("SORTIE_TOKEN", "sortie_0123456789abcdef_" + "x" * 43)
    r = CliRunner().invoke(app, ["drafts", "--json"])
    assert r.exit_code == 2 and json.loads(r.output)["error"]["code"] == "SERVER_UNAVAILABLE", r.output
    monkeypatch.delenv("SORTIE_TOKEN")
    r = CliRunner().invoke(app, ["drafts", "--json"])
    assert r.exit_code == 2 and json.loads(r.output)["error"]["code"] == "UNAUTHENTICATED", r.output
