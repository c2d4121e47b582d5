"""Cancel and the flight controls through a real ``sortie server`` on 127.0.0.1 (the authority's API).

The same use cases as the CLI (``flows.usecases.control``), with the identity
from the bearer token: a planner's token may not cancel (403), an approver's
may (CANCELLED, once: a repeat changes nothing), a dispatch after it is
refused (409), and a pause of a mission that is not in the air is a 409
CONFLICT. Every request is audited by the server (``server.cancel``, …).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

_SERVER_CONFTEST = Path(__file__).resolve().parents[1] / "server" / "conftest.py"


def _server_kit() -> Any:
    """tests/server/conftest.py: a real ``sortie server`` process with real tokens (the authority's own kit)."""
    spec = importlib.util.spec_from_file_location("sortie_authority_kit", _SERVER_CONFTEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from _server_kit().authority.__wrapped__(tmp_path_factory)


def _code(r: Any) -> str:
    return r.json()["error"]["code"]


def test_cancel_through_the_server_is_role_checked_idempotent_and_audited(authority: Any) -> None:
    r = authority.call("li.wei", "POST", "/v1/plan", json={"text": "inspect the hydrants today",
                                                         "region_id": "region-1002"})
    assert r.status_code == 200, r.text
    draft = r.json()
    d, v = draft["draft_id"], draft["version"]
    r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/approve", json={"version": v, "plan_hash": draft["plan_hash"]})
    assert r.status_code == 200 and r.json()["status"] == "APPROVED", r.text

    r = authority.call("li.wei", "POST", f"/v1/drafts/{d}/cancel", json={"reason": "not needed"})
    assert r.status_code == 403 and _code(r) == "FORBIDDEN", r.text
    r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/pause", json={})
    assert r.status_code == 409 and _code(r) == "CONFLICT" and "in flight" in r.json()["error"]["message"], r.text
    cli = authority.sortie(["pause", d, "--json"], SORTIE_SERVER=authority.url, SORTIE_TOKEN=authority.tokens["chen.jing"])
    assert cli.returncode == 2 and '"CONFLICT"' in cli.stdout, cli.stdout + cli.stderr  # the CLI as the server's client
    r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/recall", json={"wait_s": 500})
    assert r.status_code == 422, r.text  # an HTTP call follows a landing for at most 120 s

    r = authority.call("demo.approver", "POST", f"/v1/drafts/{d}/cancel", json={"reason": "done by hand"})
    assert r.status_code == 200, r.text
    out = r.json()
    assert (out["state"], out["changed"], out["mode"], out["identity"]) == ("CANCELLED", True, "server", "token")
    again = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/cancel", json={"reason": "twice"}).json()
    assert (again["state"], again["changed"]) == ("CANCELLED", False)

    r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"version": v})
    assert r.status_code == 409, r.text
    log = authority.call("chen.jing", "GET", f"/v1/drafts/{d}/log").json()
    last = log["events"][-1]
    assert (last["from_state"], last["to_state"], last["actor"]) == ("APPROVED", "CANCELLED", "demo.approver"), last
    assert "done by hand" in last["reason"]

    from flows.ledger import open_ledger

    audit = [(a.command, a.result_code, a.actor) for a in open_ledger(authority.home).audit_rows(limit=50)
             if a.command in ("server.cancel", "server.pause", "server.recall")]
    assert ("server.cancel", "FORBIDDEN", "li.wei") in audit and ("server.cancel", "OK", "demo.approver") in audit
    assert audit.count(("server.pause", "CONFLICT", "chen.jing")) == 2  # over HTTP, and from the CLI


def test_a_recall_through_the_server_of_a_mission_that_never_took_off_says_not_started(authority: Any) -> None:
    """The server route and the CLI as its client: nothing to recall, NOT_STARTED (exit 2), nothing sent."""
    import json

    from flows.ledger import open_ledger

    authority.end_flights()
    authority.report_in()
    r = authority.call("li.wei", "POST", "/v1/plan", json={"text": "inspect the hydrants today",
                                                         "region_id": "region-1002"})
    assert r.status_code == 200, r.text
    d, v = r.json()["draft_id"], r.json()["version"]
    r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/approve", json={"version": v,
                                                                            "plan_hash": r.json()["plan_hash"]})
    assert r.status_code == 200, r.text
    with authority.flying("M3TD-01") as (_, flight):
        authority.report_in()
        r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/dispatch", json={"version": v})
        assert r.status_code == 200 and r.json()["status"] == "ACKED", r.text
        assert flight.phase == "READY" and not flight.armed  # dispatched, never launched: on the ground
        cli = authority.sortie(["recall", d, "--reason", "storm", "--json"], SORTIE_SERVER=authority.url,
                               SORTIE_TOKEN=authority.tokens["chen.jing"])
        assert cli.returncode == 2, cli.stdout + cli.stderr  # reported in full, then non-zero: not "recalled"
        out = json.loads(cli.stdout)
        assert (out["outcome"], out["state"], out["mode"]) == ("NOT_STARTED", "ABORTED", "server"), out
        assert out["message"].startswith("nothing to recall: the mission never took off"), out["message"]
        assert out["vehicles"][0]["outcome"] == "ON_GROUND" and out["vehicles"][0]["sent"] == [], out
        r = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/recall", json={"reason": "again"})  # asks the vehicle
        assert r.status_code == 200 and r.json()["state"] == "ABORTED" and not r.json()["changed"], r.text
        assert r.json()["vehicles"][0]["outcome"] == "ON_GROUND", r.text
        assert flight.commands == [] and flight.phase == "READY"  # nothing was ever sent to the vehicle
    last = [e for e in open_ledger(authority.home).events(d) if e.version == v][-1]
    assert (last.from_state, last.to_state, last.actor) == ("DISPATCHED", "ABORTED", "chen.jing"), last
    assert "never took off" in last.reason and "storm" in last.reason
