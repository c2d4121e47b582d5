"""The Prefect side of stopping a mission, against a real Prefect server on 127.0.0.1.

- a ``dispatch-mission`` run waiting for approval ends CANCELLED (Prefect's own state) when the draft is
  cancelled through the authority (it records the cancel and wakes the run; the run re-reads the ledger);
- the ``recall-mission`` flow, as an operator starts it from the UI, brings a flying simulator home and the
  run completes with the draft RECALLED.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from control.controlkit import APPROVER_ONLY, NOW, OPERATOR, Flight, Template
from flows.ledger import open_ledger

pytestmark = [pytest.mark.prefect, pytest.mark.timeout(240)]

_PREFECT_CONFTEST = Path(__file__).resolve().parents[1] / "orchestration" / "conftest.py"


def _server_kit() -> Any:
    """tests/orchestration/conftest.py's server starter (one way to run a Prefect server in tests)."""
    spec = importlib.util.spec_from_file_location("sortie_prefect_server_kit", _PREFECT_CONFTEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def prefect_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    kit = _server_kit()
    with kit.pointed_at(*kit.start_server(tmp_path_factory.mktemp("prefect"))) as server:
        yield server.api_url


def _read_run(run_id: Any) -> Any:
    from prefect import get_client

    with get_client(sync_client=True) as client:
        return client.read_flow_run(run_id)


def test_cancel_ends_the_run_waiting_for_approval_as_cancelled(prefect_api: str, templates: dict[str, Template],
                                                                tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flows.authority.choice import authority
    from flows.authority.waking import find_waiting_runs
    from flows.orchestration.mission_flows import dispatch_mission

    t = templates["unapproved"]
    home = tmp_path / "home"
    shutil.copytree(t.home, home)
    monkeypatch.setenv("SORTIE_HOME", str(home))
    box: dict[str, Any] = {}

    def wait_for_approval() -> None:
        try:
            box["result"] = dispatch_mission(draft_id=t.draft_id, version=t.version, now=NOW.isoformat(),
                                             poll_interval_s=1, approval_window_s=600)
        except BaseException as exc:  # noqa: BLE001 - a cancelled run raises; the test reads its state
            box["error"] = exc

    thread = threading.Thread(target=wait_for_approval, daemon=True)
    thread.start()
    deadline = time.monotonic() + 90
    while not (runs := find_waiting_runs(t.draft_id, t.version)):
        assert time.monotonic() < deadline and thread.is_alive(), f"no run waits: {box}"
        time.sleep(0.3)
    out = authority("sortie cancel", as_user=APPROVER_ONLY, now=NOW).cancel(t.draft_id, reason="request withdrawn")
    assert out["state"] == "CANCELLED" and out["run_id"] == str(runs[0].id)  # as `sortie cancel` does
    thread.join(60)
    assert not thread.is_alive()
    run = _read_run(runs[0].id)
    assert run.state.type.value == "CANCELLED", run.state
    assert "cancelled in the ledger" in (run.state.message or "")
    assert open_ledger().dispatches(t.draft_id) == []


def test_the_recall_flow_brings_the_vehicle_home(prefect_api: str, fly: Callable[..., Flight]) -> None:
    from flows.orchestration.control_flows import recall_mission

    f = fly("px4")
    f.wait_reached(3)
    f.pace(20.0)
    result = recall_mission(draft_id=f.draft_id, operator=OPERATOR, code="123456", reason="from the UI", wait_s=30.0,
                            now=NOW.isoformat())
    assert result["state"] == "RECALLED", result
    assert result["vehicles"][0]["outcome"] == "CONFIRMED" and result["vehicles"][0]["landed"]["mode"] == "RTL"
    assert f.monitored().state == "RECALLED"
    assert [e[1] for e in f.events()][-2:] == ["RECALLING", "RECALLED"]
