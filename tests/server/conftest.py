"""A real ``sortie server`` process on 127.0.0.1 with real tokens, for the tests of the authority.

One server for the session (the authority's modules share it; each test plans its own drafts), on a copy of the demo world (its zones kept) under a
fresh home; the clock starts at the demo world's reference time and runs.
The fixture's tokens are issued by ``TokenStore`` in this process, which is what
``sortie admin token create`` does on the host (the command itself is tested in
``test_authority`` and ``test_hardening``; a process per token cost ~1 s). The
drones' telemetry is stamped at the server's time before a dispatch, as the
fleet feed does in the field (``report_in``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from flows.context import DEMO_WORLD_DIR
from flows.server.tokens import TokenStore
from testkit import free_port, stop_process_group

ROOT = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
CLOCK = "2026-11-29T07:00:00+02:00"
TEXT = "这块地今天巡一遍消防通道"


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SORTIE_") and not k.startswith("PREFECT_")}
    env.update({"COLUMNS": "200", **extra})
    return env


def sortie(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SORTIE), *args], env=clean_env(**env), cwd=ROOT, capture_output=True, text=True,
                          timeout=280)


@dataclass
class Authority:
    url: str
    world: Path
    home: Path
    proc: subprocess.Popen[bytes]
    tokens: dict[str, str] = field(default_factory=dict)
    plans_made: int = 0

    sortie_bin = SORTIE

    @staticmethod
    def env(**extra: str) -> dict[str, str]:
        return clean_env(**extra)

    @staticmethod
    def sortie(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
        return sortie(args, **env)

    def token(self, user: str, *args: str) -> str:
        p = sortie(["admin", "token", "create", user, "--home", str(self.home), "--world", str(self.world), "--json",
                    *args])
        assert p.returncode == 0, p.stderr + p.stdout
        return json.loads(p.stdout)["token"]

    def client(self, user: str | None = None, token: str | None = None) -> httpx.Client:
        tok = token if token is not None else (self.tokens[user] if user else None)
        headers = {"Authorization": f"Bearer {tok}"} if tok else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=240)

    def call(self, user: str, method: str, path: str, **kw: Any) -> httpx.Response:
        with self.client(user) as c:
            return c.request(method, path, **kw)

    def end_flights(self) -> None:
        """A drone flies one mission at a time (DEVICE_BUSY): what an earlier test left DISPATCHED ends first."""
        from datetime import datetime, timezone

        from flows.ledger import open_ledger

        led = open_ledger(self.home)
        for r in led.list_drafts():
            if r.state == "DISPATCHED":
                led.transition(r.draft_id, r.version, expected_state="DISPATCHED", expected_row_version=r.row_version,
                               to_state="ABORTED", actor="test", reason="cancelled before take-off",
                               now=datetime.now(timezone.utc))

    def report_in(self) -> None:
        """The drones report: telemetry stamped at the server's current time."""
        now = self.call("chen.jing", "GET", "/v1/drafts", params={"limit": 1}).json()["server_time"]
        path = self.world / "fleet.json"
        fleet = json.loads(path.read_text(encoding="utf-8"))
        for d in fleet["drones"]:
            d["last_telemetry_at"] = now
        tmp = path.with_name(".fleet.json.tmp")
        tmp.write_text(json.dumps(fleet), encoding="utf-8")
        os.replace(tmp, path)  # the server's world cache never reads half a file

    @contextlib.contextmanager
    def flying(self, drone_id: str = "M3TD-01", speedup: float = 20.0) -> Iterator[tuple[Any, Any]]:
        """The drone's vehicle simulator at its dock (``speedup`` × real time) as (the vehicle, its flight), recorded as
        the drone's link on this server (``sortie admin link set``); stopped after."""
        from typer.testing import CliRunner

        from flows.cli import app
        from flows.sim.flight import FlightOptions, SimFlight
        from flows.usecases.common import load_world_at
        from testkit import sim_vehicle

        world = load_world_at(self.world)
        drone = world.drone(drone_id)
        dock = world.dock(drone.dock_id)
        flight = SimFlight(FlightOptions(speedup=speedup, default_speed_mps=drone.cruise_speed_mps))
        sim = sim_vehicle("udpin:127.0.0.1:0", drone.autopilot, home=(dock.lat, dock.lon, dock.ground_alt_m),
                          heartbeat_s=0.1, rerequest_s=0.1, flight=flight).start()
        try:
            linked = CliRunner().invoke(app, ["admin", "link", "set", drone_id, sim.address, "--home", str(self.home),
                                              "--world", str(self.world), "--json"])
            assert linked.exit_code == 0, linked.output
            yield sim, flight
        finally:
            sim.stop()

    def plan(self, user: str = "li.wei") -> dict[str, Any]:
        """A new draft of the demo request; the drones report first (a session's server clock runs on past the file's
        telemetry, and a module may plan long after the server started).

        Each call is another request (the text ends in one more "。", which the grammar reads as the demo's): the same
        words in the same second of the server's clock are the same request, and a plan decided in half a second
        returned the draft of the call before."""
        self.report_in()
        text = TEXT + "。" * self.plans_made
        self.plans_made += 1
        r = self.call(user, "POST", "/v1/plan", json={"text": text, "region_id": "region-1001"})
        assert r.status_code == 200, r.text
        d = r.json()
        assert d["status"] == "DRAFT" and d["verdict"] != "block", d
        return d


def _wait_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sortie server exited: {log.read_text(errors='replace')}")
        try:
            if httpx.get(f"{url}/v1/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"sortie server did not come up: {log.read_text(errors='replace')}")


@contextlib.contextmanager
def start_authority(base: Path, sweep_s: float = 0.0) -> Iterator[Authority]:
    """A ``sortie server`` on the demo world (every drone reported in 20 s before the server's clock starts).

    The server's clock runs from ``CLOCK``: five minutes of wall time after the
    start the drones' telemetry is older than the rules allow for planning, so
    a module that plans long after another one started the server takes its own
    (``authority`` overridden at module scope).
    """
    world, home = base / "world", base / "home"
    shutil.copytree(DEMO_WORLD_DIR, world)
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["last_telemetry_at"] = "2026-11-29T06:59:40+02:00"
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = base / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(SORTIE), "server", "--world", str(world), "--home", str(home), "--listen", f"127.0.0.1:{port}",
             "--clock", CLOCK, "--sweep-s", str(sweep_s),  # 0: no sweeper, deadlines judged by hand (test_sweeper)
             "--fleet", "file",  # a simulated clock: the file's telemetry (report_in) says who is online
             "--allow-unsigned"],  # its worlds' drones have no signing keys (tests/fleet/test_bound_links.py binds)
            env=clean_env(), cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
    try:
        _wait_up(url, proc, log)
        a = Authority(url=url, world=world, home=home, proc=proc)
        store = TokenStore(home)
        for user in ("li.wei", "chen.jing", "aino.virtanen", "demo.approver"):
            a.tokens[user] = store.create(user)[1]
        a.tokens["worker"] = store.create("chen.jing", scopes=("service", "plan", "read", "dispatch"),
                                          label="prefect worker")[1]
        yield a
    finally:
        stop_process_group(proc)


@pytest.fixture(scope="session")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Authority]:
    with start_authority(tmp_path_factory.mktemp("authority")) as a:
        yield a


@pytest.fixture(scope="module")
def own_authority(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Authority]:
    """A server for one module alone (its clock starts when the module does)."""
    with start_authority(tmp_path_factory.mktemp("authority-own")) as a:
        yield a


@pytest.fixture(scope="module")
def sweeping_authority(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Authority]:
    """A server of one module's own whose sweeper runs every second (``flows.server.rounds``)."""
    with start_authority(tmp_path_factory.mktemp("authority-swept"), sweep_s=1.0) as a:
        yield a
