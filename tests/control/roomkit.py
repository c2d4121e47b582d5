"""The control room of ``test_control_room``: a real Prefect server, a real ``sortie server`` that knows it, a worker.

- the Prefect server: ``tests/orchestration/conftest.py``'s starter (a migrated SQLite copy, 127.0.0.1, a free port);
- the authority: ``sortie server`` as a subprocess on the demo world, its clock started at the world's reference
  time, with ``PREFECT_API_URL`` (it wakes waiting runs) and a 1 s sweeper; tokens issued on its home, one-time
  code secrets enrolled there;
- the worker: ``prefect.serve`` in a subprocess serving ``dispatch-mission``, ``expire-draft``, ``monitor-mission``
  and the control deployments under the name ``room``, with ``SORTIE_SERVER`` and the narrow service token and no
  ledger, so a waiting run *suspends* (it has an expiry deployment) and is restarted by the worker on resume —
  exactly the path where an input is read a minute after it was typed. It can be frozen (SIGSTOP, a worker that
  does nothing for a while), stopped and started again;
- the fleet reports in (its telemetry stamped at the server's time every 2 s, as a feed would).

Every wait here is bounded in time; every address is 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx

from testkit import free_port, stop_process_group

REPO = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
CLOCK = "2026-11-29T07:00:00+02:00"
NAME = "room"
WORKER = """
import sys
from prefect import serve
from flows.orchestration.control_flows import pause_mission, recall_mission, resume_mission
from flows.orchestration.expiry_flow import expire_draft
from flows.orchestration.mission_flows import dispatch_mission
from flows.orchestration.monitor_flow import monitor_mission
n = sys.argv[1]
serve(dispatch_mission.to_deployment(name=n, parameters={"expiry_deployment": f"expire-draft/{n}", "poll_interval_s": 1,
                                                         "busy_retry_s": 2}),
      expire_draft.to_deployment(name=n), monitor_mission.to_deployment(name=n, parameters={"timeout_s": 120}),
      recall_mission.to_deployment(name=n), pause_mission.to_deployment(name=n),
      resume_mission.to_deployment(name=n), limit=8, query_seconds=1)
"""


def load_conftest(path: Path, name: str) -> Any:
    """A conftest of another test folder as a module (its starters), registered so its dataclasses resolve."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def wait_for(what: str, probe: Callable[[], Any], budget_s: float, every_s: float = 0.5) -> Any:
    deadline = time.monotonic() + budget_s
    while not (value := probe()):
        assert time.monotonic() < deadline, f"timed out after {budget_s} s waiting for {what}"
        time.sleep(every_s)
    return value


@dataclass
class Room:
    """The running parts and the calls a test makes on them."""

    url: str
    world: Path
    home: Path
    base: Path
    worker_env: dict[str, str]
    tokens: dict[str, str]
    totp: dict[str, Any]
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    skew: timedelta = timedelta(0)
    _reporting: threading.Event = field(default_factory=threading.Event)
    _planned_at: dict[tuple[str, str], float] = field(default_factory=dict)

    # -- the authority over HTTP

    def http(self, user: str, method: str, path: str, **kw: Any) -> httpx.Response:
        return httpx.request(method, self.url + path, headers={"Authorization": f"Bearer {self.tokens[user]}"},
                             timeout=150, **kw)

    def ok(self, user: str, method: str, path: str, **kw: Any) -> dict[str, Any]:
        r = self.http(user, method, path, **kw)
        assert r.status_code == 200, r.text
        return r.json()

    def plan(self, region: str, text: str = "巡一遍消防通道") -> dict[str, Any]:
        """A new draft for the request. The server's clock counts whole seconds and the same request at the same
        second is the same draft (an idempotent repeat), so a test that asks again within a second (a fast machine
        does: CI planned, approved and dispatched a draft and asked again inside one) first lets a second pass."""
        since = time.monotonic() - self._planned_at.get((region, text), -10.0)
        if since < 1.05:
            time.sleep(1.05 - since)
        d = self.ok("li.wei", "POST", "/v1/plan", json={"text": text, "region_id": region})
        self._planned_at[(region, text)] = time.monotonic()
        assert d["status"] == "DRAFT" and d["verdict"] != "block" and d.get("created", True), d
        return d

    def ledger(self) -> Any:
        from flows.ledger import open_ledger

        return open_ledger(self.home)

    def sortie(self, *args: str) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SORTIE_", "PREFECT_"))}
        return subprocess.run([str(SORTIE), *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=120)

    # -- the fleet reports in

    def report_in(self) -> None:
        path = self.world / "fleet.json"
        fleet = json.loads(path.read_text(encoding="utf-8"))
        stamp = (datetime.now(timezone.utc) + self.skew - timedelta(seconds=1)).replace(microsecond=0).isoformat()
        for d in fleet["drones"]:
            d["last_telemetry_at"] = stamp
        tmp = path.with_name(".fleet.json.tmp")
        tmp.write_text(json.dumps(fleet), encoding="utf-8")
        os.replace(tmp, path)  # the server never reads half a file

    def keep_reporting(self) -> None:
        self.skew = datetime.fromisoformat(self.ok("chen.jing", "GET", "/v1/whoami")["server_time"]) - \
            datetime.now(timezone.utc)
        self.report_in()

        def loop() -> None:
            while not self._reporting.wait(2.0):
                self.report_in()

        threading.Thread(target=loop, daemon=True).start()

    # -- the worker

    def start_worker(self) -> None:
        with open(self.base / "worker.log", "ab") as log:
            self.procs["worker"] = subprocess.Popen([sys.executable, "-c", WORKER, NAME], cwd=REPO,
                                                    env=self.worker_env, stdout=log, stderr=subprocess.STDOUT,
                                                    start_new_session=True)

    def stop_worker(self) -> None:
        """Stop the worker once the runs it started have exited.

        A suspended run records Suspended and then its process exits; a worker stopped in that instant takes the
        exiting run down with it and Prefect marks the run crashed, so a later Submit is refused (ABORT). An
        operator stops a worker that is idle; so does this."""
        wait_for("the worker's runs to exit", lambda: self._run_processes() == [], 60.0, 0.5)
        stop_process_group(self.procs.pop("worker"), term_timeout_s=15.0)

    def _run_processes(self) -> list[int]:
        """Processes in the worker's group other than the worker (its flow-run subprocesses), read from /proc."""
        group = self.procs["worker"].pid
        out = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == group:
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, pgrp, ...
            if fields[0] != "Z" and int(fields[2]) == group:
                out.append(int(entry.name))
        return out

    def freeze_worker(self, frozen: bool) -> None:
        """SIGSTOP / SIGCONT the worker and its runs: a worker that does nothing for a while, then carries on."""
        os.killpg(self.procs["worker"].pid, signal.SIGSTOP if frozen else signal.SIGCONT)

    def served(self) -> bool:
        from prefect import get_client

        with get_client(sync_client=True) as c:
            try:
                return all(c.read_deployment_by_name(f"{f}/{NAME}") for f in ("dispatch-mission", "expire-draft",
                                                                               "monitor-mission", "recall-mission"))
            except Exception:  # noqa: BLE001 - not registered yet
                return False

    # -- runs, as the UI starts and resumes them

    def start_run(self, flow: str, **parameters: Any) -> Any:
        from prefect.deployments import run_deployment

        return run_deployment(f"{flow}/{NAME}", parameters=parameters, timeout=0)

    def run(self, run_id: Any) -> Any:
        from prefect import get_client

        with get_client(sync_client=True) as c:
            return c.read_flow_run(run_id)

    def wait_final(self, run_id: Any, budget_s: float) -> Any:
        """The run once it has its named end (``named_end``: Prefect's plain Completed comes an instant before)."""
        return wait_for(f"run {run_id} to end", lambda: (r := self.run(run_id)).state.is_final()
                        and r.state.name != "Completed" and r, budget_s, 1.0)

    def answers(self, run_id: Any) -> int:
        """How many inputs the run has answered (its ``sortie-answer-<n>`` run inputs)."""
        from prefect import get_client

        with get_client(sync_client=True) as c:
            return len(c.filter_flow_run_input(run_id, key_prefix="sortie-answer-", limit=50, exclude_keys=set()))

    def wait_suspended(self, run_id: Any, answered: int, budget_s: float = 150.0) -> Any:
        """Until the run waits (Suspended) having answered ``answered`` inputs."""
        return wait_for(f"run {run_id} to wait with {answered} answers",
                        lambda: (r := self.run(run_id)).state.name == "Suspended" and self.answers(run_id) == answered
                        and r, budget_s, 1.0)

    def submit(self, run_id: Any, d: dict[str, Any], approver: str, code: str, decision: str = "approve") -> str:
        """What the approval form's Submit sends (Prefect's resume with the run input)."""
        from prefect import get_client

        with get_client(sync_client=True) as c:
            got = c.resume_flow_run(run_id, run_input={
                "draft_id": d["draft_id"], "version": d["version"], "plan_hash": d["plan_hash"], "decision": decision,
                "approver": approver, "comment": "at the control room's screen", "code": code})
        return str(got.status.value).upper()

    def logs(self, run_id: Any) -> list[str]:
        from prefect import get_client
        from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

        with get_client(sync_client=True) as c:
            rows = c.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])), limit=200)
        return [r.message for r in rows]

    def logged(self, run_id: Any, *needles: str, budget_s: float = 30.0) -> list[str]:
        """The run's log once a line holds every needle (a run's logs reach the API a moment after it acts)."""
        return wait_for(f"a log line with {needles}", lambda: (lines := self.logs(run_id)) and any(
            all(n in m for n in needles) for m in lines) and lines, budget_s, 1.0)

    def close(self) -> None:
        self._reporting.set()
        for p in reversed(list(self.procs.values())):
            try:
                os.killpg(p.pid, signal.SIGCONT)  # a frozen worker cannot stop
            except ProcessLookupError:
                pass
            stop_process_group(p, term_timeout_s=15.0)


def open_room(base: Path, prefect_env: dict[str, str]) -> Room:
    """The authority (tokens, one-time codes), the worker, the fleet reporting in; the caller closes it."""
    import pyotp

    from flows.context import DEMO_WORLD_DIR
    from flows.server.tokens import TokenStore
    from flows.server.totp import TotpStore

    world, home = base / "world", base / "home"
    shutil.copytree(DEMO_WORLD_DIR, world)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server_env = {k: v for k, v in os.environ.items() if not k.startswith(("SORTIE_", "PREFECT_"))} | prefect_env
    with open(base / "server.log", "wb") as log:
        server = subprocess.Popen(
            [str(SORTIE), "server", "--world", str(world), "--home", str(home), "--listen", f"127.0.0.1:{port}",
             "--clock", CLOCK, "--sweep-s", "1", "--fleet", "file",  # file telemetry: keep_reporting stamps it
             "--allow-unsigned"],  # the demo world's drones are not bound to signing keys here
            env=server_env, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    store = TokenStore(home)  # what `sortie admin token create` does on the host
    tokens = {u: store.create(u)[1] for u in ("li.wei", "chen.jing")}
    tokens["worker"] = store.create("chen.jing", scopes=("service", "plan", "read", "dispatch"))[1]
    totp = {u: pyotp.parse_uri(TotpStore(str(home)).enroll(u)) for u in ("demo.approver", "chen.jing")}
    worker_env = dict(prefect_env, SORTIE_SERVER=url, SORTIE_TOKEN=tokens["worker"], PYTHONPATH=str(REPO),
                      SORTIE_HOME=str(base / "worker-has-no-ledger"))
    worker_env.update({k: v for k, v in os.environ.items()
                       if not k.startswith(("SORTIE_", "PREFECT_")) and k not in worker_env})
    room = Room(url, world, home, base, worker_env, tokens, totp, {"server": server})
    try:
        room.start_worker()
        deadline = time.monotonic() + 60
        while True:
            assert server.poll() is None, (base / "server.log").read_text(errors="replace")
            try:
                if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "sortie server did not come up"
            time.sleep(0.2)
        room.keep_reporting()
        wait_for("the worker to serve", room.served, 150, 1.0)
    except BaseException:
        room.close()
        raise
    return room
