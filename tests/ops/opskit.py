"""A live control room for the operations page's tests: ``sortie server`` with its vehicle hub (its clock running
from the demo world's morning), ``sortie sim-fleet`` flying the world's drones, people with their own tokens and
one-time codes.

- the world: a copy of the demo world whose drones' links are free UDP ports on 127.0.0.1 (the demo's fixed
  ports may be held by another test on this machine);
- the authority: ``sortie server --fleet live``, its clock started at the demo world's morning and running
  (``--allow-unsigned``: these drones are not bound to signing keys here, except where a test asks for the
  documented room, ``bound_fleet_speedup``), ``--fleet-silent-s`` short so an offline vehicle is said within seconds;
- the vehicles: ``sortie sim-fleet`` at ``--speedup`` (a sortie of the demo's patrol flies in about a minute of
  wall time), one process per group of drones so a test can silence one group;
- the people: a token each (``sortie admin token create`` does the same on the host), a one-time code secret for
  those who approve.

Every wait is bounded; every address is 127.0.0.1; ``close`` stops what ``open_ops_room`` started.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from control.roomkit import Room, wait_for
from fleet.fleetkit import clean_env
from testkit import free_port, stop_process_group

__all__ = ["OpsRoom", "open_ops_room", "free_link_world", "wait_for", "REPO"]

REPO = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
PEOPLE = ("li.wei", "chen.jing", "aino.virtanen")
#: The server's clock starts at the demo world's reference morning (its weather and daylight; as tests/control's
#: rooms) and runs on the real clock from there: the vehicles are live, only the calendar is the world's.
CLOCK = "2026-11-29T07:00:00+02:00"


@dataclass
class OpsRoom:
    """The running parts, and the calls a test makes on them as a person."""

    url: str
    world: Path
    home: Path
    base: Path
    tokens: dict[str, str]
    totp: dict[str, Any]
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    used: dict[str, int] = field(default_factory=dict)  # the last one-time code step handed out, per person

    http = Room.http  # the same calls as a person over HTTP as tests/control's rooms
    ok = Room.ok

    def fleet(self, user: str = "chen.jing") -> dict[str, dict[str, Any]]:
        return {d["id"]: d for d in self.ok(user, "GET", "/v1/fleet")["drones"]}

    def code(self, user: str) -> str:
        """A one-time code of a step not used yet that stays valid for the next few seconds (the server refuses a
        step already used: a replay; so a second code in the same 30 s waits for the next step)."""
        t = self.totp[user]
        while True:
            now = time.time()
            step, left = int(now // t.interval), t.interval - now % t.interval
            if step > self.used.get(user, -1) and left >= 4:
                self.used[user] = step
                return str(t.at(now))
            time.sleep(left + 0.2)

    def start_vehicles(self, name: str, drones: Iterable[str], speedup: float) -> None:
        self.procs[name] = _sim_fleet(self.base / f"{name}.log", self.world, self.home, drones, speedup)

    def wrong_code(self, user: str) -> str:
        """A code that is not the person's now (nor the step before or after): refused as wrong."""
        t, now = self.totp[user], time.time()
        near = {t.at(now + k * t.interval) for k in (-1, 0, 1)}
        return next(c for c in (f"{(int(t.at(now)) + k) % 1_000_000:06d}" for k in range(1, 5)) if c not in near)

    def command_received(self, drone: str, mode: str, after: float) -> float | None:
        """When (epoch seconds) a vehicle of this room logged that a ground station's command set ``mode``, the
        first time after ``after`` (``sortie sim-fleet`` stamps each log line with the wall clock, UTC)."""
        from datetime import datetime, timezone

        day = datetime.fromtimestamp(after, timezone.utc).date()
        mark = f" {drone}: mode {mode} on a ground station's command"
        for log in self.base.glob("*.log"):
            for line in log.read_text(errors="replace").splitlines():
                if line.endswith(mark) and line.startswith("sim: "):
                    clock = datetime.strptime(line.split()[1], "%H:%M:%S.%f").time()
                    at = datetime.combine(day, clock, timezone.utc).timestamp()
                    if at >= after - 1.0:
                        return at
        return None

    def stop(self, name: str) -> None:
        stop_process_group(self.procs.pop(name), term_timeout_s=10.0)

    def close(self) -> None:
        for name in reversed(list(self.procs)):
            self.stop(name)


def free_link_world(dest: Path) -> Path:
    """A copy of the demo world whose drones talk on free UDP ports of 127.0.0.1."""
    from flows.context import DEMO_WORLD_DIR

    shutil.copytree(DEMO_WORLD_DIR, dest)
    path = dest / "fleet.json"
    fleet = json.loads(path.read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["link"] = f"udpout:127.0.0.1:{free_port('udp')}"
    path.write_text(json.dumps(fleet, ensure_ascii=False, indent=1), encoding="utf-8")
    return dest


def _sim_fleet(log_path: Path, world: Path, home: Path, drones: Iterable[str],
               speedup: float) -> subprocess.Popen[bytes]:
    only = [a for d in drones for a in ("--only", d)]
    with open(log_path, "ab") as log:
        return subprocess.Popen(
            [str(SORTIE), "sim-fleet", "--world", str(world), "--home", str(home), "--speedup", str(speedup), *only],
            env=clean_env(), cwd=REPO, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _bind_fleet(world: Path, home: Path, log_path: Path, budget_s: float = 120.0) -> None:
    """``sortie admin vehicle bind`` for every drone of the world, as docs/ops.md's shift does before the server
    starts: each vehicle gets its signing key and proves it signs (a vehicle still booting is asked again)."""
    drones = [d["id"] for d in json.loads((world / "fleet.json").read_text(encoding="utf-8"))["drones"]]
    end = time.monotonic() + budget_s
    with open(log_path, "ab") as log:
        for d in drones:
            while True:
                done = subprocess.run([str(SORTIE), "admin", "vehicle", "bind", d, "--system-id", "1", "--world",
                                       str(world), "--home", str(home)], env=clean_env(), cwd=REPO, stdout=log,
                                      stderr=subprocess.STDOUT, timeout=max(1.0, end - time.monotonic()))
                if done.returncode == 0:
                    break
                assert time.monotonic() < end, f"{d} not bound within {budget_s:g} s: {log_path}"
                time.sleep(1.0)


def open_ops_room(base: Path, *, server_env: dict[str, str] | None = None, silent_s: float = 4.0,
                  totp_users: Iterable[str] = ("chen.jing",), clock: str | None = CLOCK,
                  world: Path | None = None, bound_fleet_speedup: float | None = None) -> OpsRoom:
    """The authority on a free-link demo world (or ``world``, made by the caller), its tokens and one-time codes;
    vehicles are started by the test (``start_vehicles``). ``clock=None``: the server on the real clock (as a
    control room runs it). ``bound_fleet_speedup``: the documented room instead — every drone's vehicle started
    (``sortie sim-fleet``, the proc "vehicles") and bound to its signing key before the server, which then serves
    signed links only (no ``--allow-unsigned``). The caller closes it."""
    import pyotp

    from flows.server.tokens import TokenStore
    from flows.server.totp import TotpStore

    base.mkdir(parents=True, exist_ok=True)
    world, home = world or free_link_world(base / "world"), base / "home"
    procs: dict[str, subprocess.Popen[bytes]] = {}
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    try:
        if bound_fleet_speedup is not None:
            procs["vehicles"] = _sim_fleet(base / "vehicles.log", world, home, (), bound_fleet_speedup)
            _bind_fleet(world, home, base / "bind.log")
        unsigned = () if bound_fleet_speedup is not None else ("--allow-unsigned",)
        with open(base / "server.log", "wb") as log:
            procs["server"] = server = subprocess.Popen(
                [str(SORTIE), "server", "--world", str(world), "--home", str(home), "--listen", f"127.0.0.1:{port}",
                 *(("--clock", clock) if clock else ()), "--sweep-s", "1", "--fleet-silent-s", str(silent_s),
                 *unsigned], env=clean_env(**(server_env or {})), cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
    except BaseException:
        for proc in procs.values():
            stop_process_group(proc)
        raise
    store = TokenStore(home)
    tokens = {u: store.create(u)[1] for u in PEOPLE}
    totp = {u: pyotp.parse_uri(TotpStore(str(home)).enroll(u)) for u in totp_users}
    room = OpsRoom(url, world, home, base, tokens, totp, procs)
    try:
        def up() -> bool:
            assert server.poll() is None, (base / "server.log").read_text(errors="replace")
            try:
                return httpx.get(f"{url}/v1/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for("sortie server to answer", up, 60)
    except BaseException:
        room.close()
        raise
    return room
