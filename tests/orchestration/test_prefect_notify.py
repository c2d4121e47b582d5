"""Approval needed → someone is told: the automations of ``flows.orchestration.notify`` on a real server.

A real Prefect server (the session's, on 127.0.0.1), a real webhook receiver
(``http.server`` on 127.0.0.1) behind a real ``CustomWebhookNotificationBlock``,
and a real ``dispatch-mission`` run on a real draft that pauses for approval:
the server's triggers service sees the run's ``sortie.approval.waiting`` event
and its actions service posts to the webhook — once for the version, even
after a refused input makes the run wait again. The run also refreshes the ``pending-approvals``
table artifact as it starts waiting and once it is decided. The proactive reminder uses a short window
(Prefect's floor is 10 s) so the test stays bounded.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.prefect, pytest.mark.timeout(180)]

NOW = "2026-11-29T06:58:31+02:00"


class Hook:
    """A webhook receiver on 127.0.0.1 that keeps every JSON body it is sent."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        received = self.bodies

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                received.append(json.loads(data or b"{}"))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def wait(self, what: str, count: int, budget_s: float) -> list[dict[str, Any]]:
        deadline = time.monotonic() + budget_s
        while len([b for b in self.bodies if what in b.get("subject", "")]) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what!r} notification after {budget_s} s; got {self.bodies}")
            time.sleep(0.5)
        return [b for b in self.bodies if what in b.get("subject", "")]


@pytest.fixture
def hook() -> Iterator[Hook]:
    h = Hook()
    yield h
    h.server.shutdown()
    h.server.server_close()


@pytest.fixture
def sortie_home(prefect_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SORTIE_HOME", str(tmp_path / "home"))
    return tmp_path


def test_a_waiting_run_notifies_the_webhook_and_a_long_wait_reminds(sortie_home: Path, hook: Hook) -> None:
    """setup → a dispatch run pauses → 'approval needed' naming the draft; no decision → the deadline reminder."""
    from prefect import get_client
    from prefect.artifacts import Artifact

    from flows.context import DEMO_WORLD_DIR
    from flows.orchestration.mission_flows import dispatch_mission
    from flows.orchestration.pending_board import PENDING_ARTIFACT_KEY
    from flows.orchestration.notify import DEADLINE_AUTOMATION, WAITING_AUTOMATION, ensure_notifications
    from flows.authority.choice import authority

    world = sortie_home / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    first = ensure_notifications(webhook=hook.url, window_s=40, warn_before_s=30)
    again = ensure_notifications(webhook=hook.url, window_s=40, warn_before_s=30)  # idempotent: replaced, not doubled
    with get_client(sync_client=True) as client:
        assert [len(client.read_automations_by_name(n)) for n in (WAITING_AUTOMATION, DEADLINE_AUTOMATION)] == [1, 1]
    assert first.block_document_id == again.block_document_id

    draft = authority("plan", as_user="li.wei", world=str(world), now=NOW).plan("巡一遍消防通道", region_id="region-1001")
    box: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: box.update(result=dispatch_mission(
        draft_id=draft["draft_id"], version=draft["version"], world=str(world), now=NOW, approval_window_s=40,
        poll_interval_s=1, return_state=True)), daemon=True)
    thread.start()
    waiting = hook.wait("approval needed", 1, 60)
    assert f"{draft['draft_id']}:v{draft['version']}" in waiting[0]["body"]
    assert "dispatch-mission" in waiting[0]["subject"] and "sortie pending" in waiting[0]["body"]
    board = Artifact.get(PENDING_ARTIFACT_KEY)  # refreshed by the run as it started waiting
    assert board is not None and board.type == "table"
    rows = json.loads(board.data) if isinstance(board.data, str) else board.data
    assert [r["draft"] for r in rows] == [f"{draft['draft_id']} v{draft['version']}"]
    assert rows[0]["who may approve"] == "admin, chen.jing, demo.approver" and rows[0]["tenant"] == "city-fire"
    # a refused input makes the run wait again: no second "approval needed" (once per waiting version), and the
    # reminder's count is not restarted by it
    from flows.authority.waking import find_waiting_runs

    deadline = time.monotonic() + 30  # the notice is sent as the run starts waiting: its pause may land just after
    while not (waiting_runs := find_waiting_runs(draft["draft_id"], draft["version"])):
        assert time.monotonic() < deadline, "the run that sent 'approval needed' never waited"
        time.sleep(0.25)
    (run,) = waiting_runs
    with get_client(sync_client=True) as client:
        client.resume_flow_run(run.id, run_input={
            "draft_id": draft["draft_id"], "version": draft["version"], "plan_hash": draft["plan_hash"],
            "decision": "approve", "approver": "li.wei", "comment": "my own"})  # four-eyes: refused
    deadline = time.monotonic() + 60
    while not (again := find_waiting_runs(draft["draft_id"], draft["version"])) or again[0].state.timestamp <= \
            run.state.timestamp:
        assert time.monotonic() < deadline, "the run did not wait again after the refused input"
        time.sleep(0.5)
    reminder = hook.wait("deadline close", 1, 40)  # 10 s after the wait began, its wait has not ended
    assert f"{draft['draft_id']}:v{draft['version']}" in reminder[0]["body"]
    # the authority records the rejection and wakes the run itself
    out = authority("reject", as_user="chen.jing", world=str(world), now=NOW).reject(
        draft["draft_id"], draft["version"], reason="test over")
    assert out["resumed_run"] is not None
    thread.join(60)
    assert not thread.is_alive() and box["result"].name == "REJECTED"  # the run's named end state
    after = Artifact.get(PENDING_ARTIFACT_KEY)  # refreshed once the decision was made
    assert after is not None and after.type == "markdown" and "Nothing waits" in str(after.data)
    assert len(hook.wait("approval needed", 1, 1)) == 1  # one wait, one notification


def test_notify_setup_command_is_idempotent_and_refuses_bad_input(prefect_server: Any, hook: Hook) -> None:
    from prefect import get_client
    from typer.testing import CliRunner

    from flows.cli import app
    from flows.orchestration.notify import DEADLINE_AUTOMATION, INTRUSION_AUTOMATION, WAITING_AUTOMATION

    every = (WAITING_AUTOMATION, DEADLINE_AUTOMATION, INTRUSION_AUTOMATION)
    for _ in range(2):
        got = CliRunner().invoke(app, ["notify", "setup", "--webhook", hook.url, "--json"])
        assert got.exit_code == 0, got.output
        assert set(json.loads(got.stdout)["automations"]) == set(every)
    with get_client(sync_client=True) as client:
        assert [len(client.read_automations_by_name(n)) for n in every] == [1, 1, 1]
    by_block = CliRunner().invoke(app, ["notify", "setup", "--block", "custom-webhook/sortie-approvals", "--no-deadline",
                                        "--json"])
    assert by_block.exit_code == 0, by_block.output
    assert list(json.loads(by_block.stdout)["automations"]) == [WAITING_AUTOMATION, INTRUSION_AUTOMATION]
    for bad, code in ((["--webhook", "ftp://x"], "INVALID_ARGUMENT"), (["--block", "no-such-block"], "NOT_FOUND"),
                      (["--block", "email/no-such-block"], "NOT_FOUND"),
                      (["--webhook", hook.url, "--warn-before-s", "4000"], "INVALID_ARGUMENT"), ([], "INVALID_ARGUMENT")):
        got = CliRunner().invoke(app, ["notify", "setup", *bad])
        assert got.exit_code == 2 and code in got.output, got.output


def test_an_intrusion_on_a_drones_link_reaches_the_room_as_a_prefect_notification(prefect_server: Any, hook: Hook,
                                                                                   tmp_path: Path) -> None:
    """A real vehicle hub (``flows.fleet.hub``) following a simulated vehicle over UDP, its ``publish`` wrapped as
    ``sortie server`` wraps it (``telling_prefect``); forged MAVLink traffic sent to the hub's socket → the hub's
    ``fleet.intrusion`` → the Prefect event ``sortie.fleet.intrusion`` → the automation ``sortie: fleet intrusion``
    (made by ``sortie notify setup``) → the webhook, naming the drone, its tenant and what the link refused."""
    from datetime import datetime, timezone

    from fleet.rawpeer import forge_flight, forger
    from flows.authority.prefect_notices import telling_prefect
    from flows.fleet.hub import VehicleHub
    from flows.fleet.live import Freshness
    from flows.fleet.watch import HoldTimes
    from flows.orchestration.notify import ensure_notifications
    from testkit import bare_world, drone, sim_vehicle

    ensure_notifications(webhook=hook.url, deadline=False)
    feed: list[tuple[str, str | None, dict[str, Any]]] = []
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.2, home=(60.17, 24.941, 12.0)) as sim:
        hub = VehicleHub(now=lambda: datetime.now(timezone.utc), links=dict, key_store=tmp_path / "keys",
                         publish=telling_prefect(lambda *event: feed.append(event)), silent_after_s=1.5,
                         times=HoldTimes(heartbeat_timeout_s=1.0), freshness=Freshness(1.5, 1.5, 1.5))
        try:
            hub.follow(bare_world(drones=[drone("D1", link=sim.address, tenant="city-fire")]))
            deadline = time.monotonic() + 10
            while (watch := hub.watch_of("D1")) is None or watch.held is None:
                assert time.monotonic() < deadline, "the hub never held the vehicle's link"
                time.sleep(0.05)
            attacker = forger(tuple(watch.held.conn.port.getsockname()[:2]))
            try:
                for _ in range(20):
                    forge_flight(attacker)
                    time.sleep(0.05)
            finally:
                attacker.close()
            told = hook.wait("intrusion on D1", 1, 60)
        finally:
            hub.stop()
    assert [k for k, _, _ in feed].count("fleet.intrusion") >= 1  # the feed still has it (sortie watch, /ops)
    assert "(forged)" in told[0]["subject"], told
    assert "D1 of city-fire" in told[0]["body"] and "refused on its link" in told[0]["body"], told
