"""The embedded authority and ``sortie server``'s client answer the same actions with the same results.

The same sequence runs twice on the same world folder at the same time of day: once on the embedded
authority (``LocalAuthority``, a fresh ``SORTIE_HOME``, identities asserted), once through a real ``sortie
server`` on 127.0.0.1 with real tokens (``RemoteAuthority``; the server's routes run the same
``LocalAuthority`` with the identity its token proved). A caller cannot tell which it has except by
``mode``: every result has the same fields with the same values where they do not depend on who stamped
them, and every refusal is the same coded exception.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from flows.authority import Authority
from flows.authority.local import LocalAuthority
from flows.authority.remote import RemoteAuthority
from flows.authority.session import Session
from flows.client.http import SortieClient
from flows.ledger import open_ledger
from flows.usecases.actor import Actor
from flows.usecases.grounds import Grounds
from planner.errors import SortieError

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

_SERVER_CONFTEST = Path(__file__).resolve().parents[1] / "server" / "conftest.py"
#: Stamped by whoever answered (a server adds its clock), or ids and times of this run.
_STAMPS = {"mode", "identity", "clock", "server_time"}
_VARYING = {"draft_id", "created_time", "row_version", "files", "notes", "versions", "idempotency_key", "plan_hash",
            "planned_for", "sorties", "findings", "world_hash", "checks", "message", "resumed_run", "coverage"}


def _server_kit() -> Any:
    spec = importlib.util.spec_from_file_location("sortie_authority_kit_parity", _SERVER_CONFTEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with _server_kit().start_authority(tmp_path_factory.mktemp("parity")) as a:
        yield a


def _remote(server: Any, user: str) -> RemoteAuthority:
    return RemoteAuthority(SortieClient(server.url, server.tokens[user]))


def _local(home: Path, world: Path, user: str, now: datetime) -> LocalAuthority:
    return LocalAuthority(Grounds(ledger=open_ledger(home), world_dir=world), Session(actor=Actor(user), now_given=now))


def _code(call: Callable[[], Any]) -> str:
    try:
        call()
    except SortieError as exc:
        return exc.code
    raise AssertionError("no refusal")


def _run(as_user: Callable[[str], Authority]) -> dict[str, Any]:
    """One sequence of actions; what each answered (the result, or the refusal's code)."""
    planner, approver = as_user("li.wei"), as_user("chen.jing")
    out: dict[str, Any] = {}
    d = out["plan"] = planner.plan("巡一遍消防通道", region_id="region-1001")
    draft, version = d["draft_id"], d["version"]
    out["show"] = approver.show(draft, version)
    out["drafts"] = approver.drafts(5)["drafts"][0]
    out["pending"] = [{k: v for k, v in p.items() if k in ("version", "approvers", "four_eyes", "tenant")}
                      for p in approver.pending()["pending"] if p["draft_id"] == draft]
    out["unknown"] = _code(lambda: approver.show("d-nope"))
    out["not yet approved"] = _code(lambda: approver.dispatch(draft, version, dry_run=True))
    out["wrong hash"] = _code(lambda: approver.approve(draft, version, plan_hash="0" * 64))
    out["planner approves"] = _code(lambda: planner.approve(draft, version, plan_hash=d["plan_hash"]))
    out["approve"] = approver.approve(draft, version, plan_hash=d["plan_hash"], comment="parity")
    out["again"] = _code(lambda: approver.approve(draft, version, plan_hash=d["plan_hash"]))
    out["log"] = [(e["from_state"], e["to_state"], e["actor"]) for e in approver.log(draft)["events"]]
    out["cancel"] = approver.cancel(draft, reason="parity test over")
    out["cancel again"] = approver.cancel(draft, reason="twice")
    out["dispatch cancelled"] = _code(lambda: approver.dispatch(draft, version, dry_run=True))
    return out


def _shape(value: Any) -> Any:
    """A result without what depends on who stamped it or on this run's ids and times."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items()) if k not in _STAMPS | _VARYING}
    return value


def test_local_and_remote_answer_the_same_sequence_alike(server: Any, tmp_path: Path) -> None:
    server.report_in()
    now = datetime.fromisoformat(_remote(server, "chen.jing").whoami()["server_time"])
    embedded = _run(lambda user: _local(tmp_path / "home", server.world, user, now))
    remote = _run(lambda user: _remote(server, user))

    assert embedded.keys() == remote.keys()
    for step in embedded:
        got, want = embedded[step], remote[step]
        if isinstance(want, dict) and "mode" in want:
            assert (got["mode"], want["mode"]) == ("local", "server"), step
            assert set(got) - _STAMPS == set(want) - _STAMPS, (step, set(got) ^ set(want))
        assert _shape(got) == _shape(want), step
    assert embedded["plan"]["plan_hash"] and remote["plan"]["plan_hash"]
    assert {k: v for k, v in embedded.items() if isinstance(v, str)} == {
        "unknown": "NOT_FOUND", "not yet approved": "APPROVAL_REQUIRED", "wrong hash": "APPROVAL_STALE",
        "planner approves": "FORBIDDEN", "again": "CONFLICT", "dispatch cancelled": "CONFLICT"}
    assert embedded["log"][-1] == ("DRAFT", "APPROVED", "chen.jing")
    assert (embedded["cancel"]["state"], embedded["cancel again"]["changed"]) == ("CANCELLED", False)
