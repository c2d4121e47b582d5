"""Two real Prefect workers and the CLI act on one ``sortie server`` at once; every race settles to one outcome.

The parts are real: the session's Prefect server (``conftest``), a ``sortie
server`` process on 127.0.0.1, two ``prefect.serve`` runner processes (the
workers, each serving ``dispatch-mission`` under its own deployment name, so
each run is known to run on its worker) holding the narrow service token, the
CLI as subprocesses holding a user token, one-time codes typed into the
approval form, and the vehicle simulator over MAVLink/UDP on 127.0.0.1 at the
address the server has on record. Neither worker has a ledger. The server
knows the Prefect API (the CLI does not): it wakes the runs waiting on what it
records, whichever client decided.

- D1: a run on each worker waits for approval; the CLI approves while each run
  is resumed with another approver's one-time code (or was already woken by the
  server after another decision) → one approval; then both runs and the CLI
  dispatch at once → one dispatch, one upload.
- D2: a run waits; its form approves (one-time code) while the CLI rejects → one
  decision, and the run ends by it.
- D3: a run waits; ``sortie approve`` (a client with no Prefect API at all) is
  recorded by the server, which wakes the run; ``sortie cancel`` races its
  dispatch → CANCELLED with nothing sent, or dispatched once and the cancel refused.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from testkit import free_port, stop_process_group

pytestmark = [pytest.mark.prefect, pytest.mark.slow, pytest.mark.timeout(420)]

REPO = Path(__file__).resolve().parents[2]
SORTIE = Path(sys.executable).parent / "sortie"
WORKER = """
import sys
from prefect import serve
from flows.orchestration.mission_flows import dispatch_mission
# no expire-draft deployment: a waiting run pauses in its worker's process and wakes within a second of a resume
serve(dispatch_mission.to_deployment(name=sys.argv[1], parameters={"expiry_deployment": "none/none",
                                                                 "poll_interval_s": 1}), limit=4, query_seconds=1)
"""


def _server_kit() -> Any:
    """tests/server/conftest.py: the authority's own test kit (``Authority``, its clean environment)."""
    spec = importlib.util.spec_from_file_location("sortie_authority_kit_race", REPO / "tests" / "server" / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _wait(what: str, probe: Callable[[], Any], budget_s: float, every_s: float = 0.5) -> Any:
    deadline = time.monotonic() + budget_s
    while not (value := probe()):
        assert time.monotonic() < deadline, f"timed out after {budget_s} s waiting for {what}"
        time.sleep(every_s)
    return value


@pytest.fixture(scope="module")
def stage(prefect_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The authority, its tokens and one-time-code secrets, and the two workers (started side by side)."""
    import pyotp

    from flows.context import DEMO_WORLD_DIR
    from flows.server.tokens import TokenStore
    from flows.server.totp import TotpStore

    kit = _server_kit()
    prefect_env = {k: v for k, v in prefect_server.env.items() if k.startswith("PREFECT_")}
    base = tmp_path_factory.mktemp("race")
    world, home = base / "world", base / "home"
    shutil.copytree(DEMO_WORLD_DIR, world)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with open(base / "server.log", "wb") as log:
            procs.append(subprocess.Popen(
                [str(SORTIE), "server", "--world", str(world), "--home", str(home), "--listen", f"127.0.0.1:{port}",
                 "--clock", kit.CLOCK, "--fleet", "file", "--allow-unsigned"], env=kit.clean_env(**prefect_env), cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True))
        store = TokenStore(home)  # what `sortie admin token create` does on the host
        tokens = {u: store.create(u)[1] for u in ("li.wei", "chen.jing")}
        tokens["worker"] = store.create("chen.jing", scopes=("service", "plan", "read", "dispatch"))[1]
        totp = {u: pyotp.parse_uri(TotpStore(str(home)).enroll(u)) for u in ("demo.approver", "chen.jing", "admin")}
        worker_env = dict(prefect_server.env, SORTIE_SERVER=url, SORTIE_TOKEN=tokens["worker"], PYTHONPATH=str(REPO),
                          SORTIE_HOME=str(base / "worker-has-no-ledger"))
        for k in ("SORTIE_NOW", "SORTIE_WORLD", "SORTIE_USER"):
            worker_env.pop(k, None)
        for name in ("w1", "w2"):
            with open(base / f"{name}.log", "wb") as log:
                procs.append(subprocess.Popen([sys.executable, "-c", WORKER, name], cwd=REPO, env=worker_env,
                                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
        kit._wait_up(url, procs[0], base / "server.log")
        yield {"url": url, "world": world, "home": home, "base": base, "tokens": tokens, "totp": totp, "kit": kit,
               "prefect_env": prefect_env}
    finally:
        for p in reversed(procs):
            stop_process_group(p, term_timeout_s=15.0)


def test_two_workers_and_the_cli_race_on_one_server_and_every_race_settles_once(stage: dict[str, Any]) -> None:
    import httpx
    from prefect import get_client
    from prefect.deployments import run_deployment

    from flows.ledger import open_ledger
    from flows.server.links import LinkStore
    from testkit import sim_vehicle
    from flows.usecases.common import load_world_at

    url, home, kit = stage["url"], stage["home"], stage["kit"]

    def http(user: str, method: str, path: str, **kw: Any) -> dict[str, Any]:
        r = httpx.request(method, url + path, headers={"Authorization": f"Bearer {stage['tokens'][user]}"},
                          timeout=120, **kw)
        assert r.status_code == 200, r.text
        return r.json()

    def cli(user: str, *args: str) -> subprocess.Popen[str]:
        env = kit.clean_env(SORTIE_SERVER=url, SORTIE_TOKEN=stage["tokens"][user])  # no Prefect API: the server wakes
        return subprocess.Popen([str(SORTIE), *args, "--json"], env=env, cwd=REPO, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)

    def done(p: subprocess.Popen[str]) -> tuple[int, dict[str, Any]]:
        out, err = p.communicate(timeout=120)
        return p.returncode, json.loads(out) if out.strip() else {"stderr": err}

    # the fleet reports in (as its feed would): telemetry stamped at the server's time, every few seconds
    skew = datetime.fromisoformat(http("chen.jing", "GET", "/v1/whoami")["server_time"]) - datetime.now(timezone.utc)
    reporting = threading.Event()

    def report_in() -> None:
        path = stage["world"] / "fleet.json"
        fleet = json.loads(path.read_text(encoding="utf-8"))
        stamp = (datetime.now(timezone.utc) + skew - timedelta(seconds=1)).replace(microsecond=0).isoformat()
        for d in fleet["drones"]:
            d["last_telemetry_at"] = stamp
        tmp = path.with_name(".fleet.json.tmp")
        tmp.write_text(json.dumps(fleet), encoding="utf-8")
        os.replace(tmp, path)  # the server never reads half a file

    def keep_reporting() -> None:
        while not reporting.wait(2.0):
            report_in()

    report_in()
    reporter = threading.Thread(target=keep_reporting, daemon=True)
    reporter.start()
    world = load_world_at(stage["world"])
    sims = {}
    for drone_id in ("M30T-01", "M3TD-01"):
        dock = world.dock(world.drone(drone_id).dock_id)
        sims[drone_id] = sim_vehicle("udpin:127.0.0.1:0", world.drone(drone_id).autopilot,
                                    home=(dock.lat, dock.lon, dock.ground_alt_m)).start()
        LinkStore(home).set(drone_id, sims[drone_id].address)  # the server's record (sortie admin link set)
    try:
        d1 = http("li.wei", "POST", "/v1/plan", json={"text": "巡一遍消防通道", "region_id": "region-1003"})
        d2 = http("li.wei", "POST", "/v1/plan", json={"text": "巡一遍消防通道", "region_id": "region-1001"})
        d3 = http("li.wei", "POST", "/v1/plan", json={"text": "inspect the hydrants today", "region_id": "region-1002"})
        assert [s["drone"] for s in d1["sorties"]] == ["M30T-01"] and [s["drone"] for s in d3["sorties"]] == ["M3TD-01"]

        def start(worker: str, d: dict[str, Any], **params: Any) -> Any:
            return run_deployment(f"dispatch-mission/{worker}", timeout=0,
                                  parameters={"draft_id": d["draft_id"], "version": d["version"], **params})

        def registered() -> bool:
            with get_client(sync_client=True) as c:
                try:
                    return all(c.read_deployment_by_name(f"dispatch-mission/{w}") for w in ("w1", "w2"))
                except Exception:  # noqa: BLE001 - not yet registered
                    return False

        _wait("both workers to serve", registered, 150, every_s=1.0)
        runs = {"r1": start("w1", d1), "r2": start("w2", d1), "r3": start("w1", d2, dry_run=True),
                "r4": start("w2", d3)}

        def states() -> dict[str, Any]:
            with get_client(sync_client=True) as c:
                return {n: c.read_flow_run(r.id).state for n, r in runs.items()}

        _wait("every run to wait for its approval", lambda: all(s.name == "Paused" for s in states().values()), 200,
              every_s=1.0)

        resumed: dict[str, Any] = {}

        def resume(name: str, d: dict[str, Any], decision: str, approver: str) -> None:
            """What the approval form's Resume button sends; retried while the server still says no (bounded).
            WOKEN: the run left its wait before the form reached it (the authority woke it after another decision)."""
            deadline = time.monotonic() + 60
            try:
                with get_client(sync_client=True) as c:
                    while True:
                        got = c.resume_flow_run(runs[name].id, run_input={
                            "draft_id": d["draft_id"], "version": d["version"], "plan_hash": d["plan_hash"],
                            "decision": decision, "approver": approver, "comment": "at the shared screen",
                            "code": stage["totp"][approver].now()})
                        resumed[name] = str(got.status.value).upper()
                        if resumed[name] != "ACCEPT" and not c.read_flow_run(runs[name].id).state.is_paused():
                            resumed[name] = "WOKEN"
                        if resumed[name] in ("ACCEPT", "WOKEN") or time.monotonic() > deadline:
                            return
                        time.sleep(1.0)
            except Exception as exc:  # noqa: BLE001 - reported by the test below
                resumed[name] = f"{type(exc).__name__}: {exc}"

        # D1: three approvals at once; D2: a form approval against a CLI rejection
        approve1 = cli("chen.jing", "approve", d1["draft_id"], "--version", "1")
        reject2 = cli("chen.jing", "reject", d2["draft_id"], "--version", "1", "--reason", "not today")
        forms = [threading.Thread(target=resume, args=args, daemon=True) for args in (
            ("r1", d1, "approve", "demo.approver"), ("r2", d1, "approve", "chen.jing"), ("r3", d2, "approve", "admin"))]
        for t in forms:
            t.start()
        # D3: `sortie approve` from a client without a Prefect API: the server records it and wakes the run;
        # `sortie cancel` races the run's dispatch
        code, out = done(cli("chen.jing", "approve", d3["draft_id"], "--version", "1"))
        # the server names the run it woke when the wake lands within its report wait (10 s); on a loaded machine
        # it may land after the answer, so the run's leaving its wait is what is held, bounded
        assert code == 0 and out["status"] == "APPROVED" and out["resumed_run"] in (None, str(runs["r4"].id)), out
        _wait("the server to wake D3's run", lambda: not states()["r4"].is_paused(), 60, every_s=1.0)
        cancel3 = cli("chen.jing", "cancel", d3["draft_id"], "--reason", "called off")
        # D1 approved by someone: the CLI dispatches too, while both runs do
        _wait("D1 approved", lambda: open_ledger(home).get_draft(d1["draft_id"], 1).state != "DRAFT", 60)
        dispatch1 = cli("chen.jing", "dispatch", d1["draft_id"])
        def ended() -> dict[str, Any] | None:  # each named (named_end: Prefect's plain Completed comes an instant before)
            now = states()
            return now if all(s.is_final() and s.name != "Completed" for s in now.values()) else None

        for t in forms:
            t.join(timeout=90)
        assert set(resumed) == {"r1", "r2", "r3"} and set(resumed.values()) <= {"ACCEPT", "WOKEN"}, resumed
        finals = _wait("every run to end", ended, 200, every_s=1.0)
        results = {"approve1": done(approve1), "reject2": done(reject2), "cancel3": done(cancel3),
                   "dispatch1": done(dispatch1)}
    finally:
        reporting.set()
        for sim in sims.values():
            sim.stop()

    ledger = open_ledger(home)
    # D1: one approval, one dispatch; every dispatcher got the one outcome
    (a1,) = ledger.approvals(d1["draft_id"], 1)
    assert a1.decision == "APPROVED" and a1.evidence["mode"] == "server"
    assert ledger.get_draft(d1["draft_id"], 1).state == "DISPATCHED"
    (disp1,) = ledger.dispatches(d1["draft_id"])
    assert disp1.status == "ACKED"
    kind = {n: st.type.value for n, st in finals.items()}  # Prefect's state type (the name says the draft's end)
    assert kind["r1"] == kind["r2"] == "COMPLETED", finals
    outs = [finals[n].result()["dispatch"] for n in ("r1", "r2")] + [results["dispatch1"][1]]
    assert {o["idempotency_key"] for o in outs} == {disp1.idempotency_key}
    assert [o["first"] for o in outs].count(True) == 1, outs
    approved_by_cli = results["approve1"][0] == 0
    assert approved_by_cli == (a1.evidence["identity"] == "token"), (results["approve1"], a1)
    if not approved_by_cli:
        assert results["approve1"][1]["error"]["code"] == "CONFLICT"
    # D2: one decision, and the run ended by it (a dry run when the approval won)
    (a2,) = ledger.approvals(d2["draft_id"], 1)
    s2 = ledger.get_draft(d2["draft_id"], 1).state
    assert (a2.decision, s2) in (("APPROVED", "APPROVED"), ("REJECTED", "REJECTED")), (a2, s2)
    assert (results["reject2"][0] == 0) == (a2.decision == "REJECTED"), results["reject2"]
    # the run's end is named for what happened: a dry run (Completed) or REJECTED (Cancelled, not green)
    r3 = finals["r3"].result(raise_on_failure=False)
    if s2 == "APPROVED" and finals["r3"].name == "DEVICE_BUSY":
        # D2 and D3 may fly the same drone: when D3's dispatch held it as D2's dry run checked, the dry run says so
        # at once (a dry run never waits for a busy drone), named, not a traceback
        assert kind["r3"] == "FAILED" and ledger.get_draft(d3["draft_id"], 1).state == "DISPATCHED", finals["r3"]
        assert a2.approver == "admin" and a2.evidence["identity"] == "totp"
    elif s2 == "APPROVED":
        assert kind["r3"] == "COMPLETED" and r3["state"] == s2, (finals["r3"], r3)
        assert a2.approver == "admin" and a2.evidence["identity"] == "totp" and r3["dispatch"]["status"] == "DRY_RUN"
    else:
        assert kind["r3"] == "CANCELLED" and finals["r3"].name == "REJECTED", finals["r3"]
    assert ledger.dispatches(d2["draft_id"]) == []
    # D3: cancelled with nothing sent, or dispatched once with the cancel refused
    s3 = ledger.get_draft(d3["draft_id"], 1).state
    if s3 == "CANCELLED":
        assert results["cancel3"][0] == 0 and ledger.dispatches(d3["draft_id"]) == []
        assert kind["r4"] == "CANCELLED", finals["r4"]
    else:
        assert s3 == "DISPATCHED" and len(ledger.dispatches(d3["draft_id"])) == 1, s3
        assert results["cancel3"][0] == 2 and results["cancel3"][1]["error"]["code"] == "CONFLICT", results["cancel3"]
        assert kind["r4"] == "COMPLETED", finals["r4"]
    print(f"race outcomes: D1 approved by {a1.approver} ({a1.evidence['identity']}), first dispatch by "
          f"{['run w1', 'run w2', 'CLI'][[o['first'] for o in outs].index(True)]}; D2 {s2}; D3 {s3}")
    # the workers acted through the server only (its clock, its identity check) and never held a ledger
    assert all((o["mode"], o["identity"]) == ("server", "token") for o in outs), outs
    assert not (stage["base"] / "worker-has-no-ledger").exists()
