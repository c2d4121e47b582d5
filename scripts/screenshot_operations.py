"""Screenshots of the control room's day in the Prefect UI: the pending list, a refused input, the end states.

    uv run python scripts/screenshot_operations.py [--docs docs] [--keep]

All on 127.0.0.1 in a throw-away folder (the server and Chromium helpers of
``scripts/screenshot_approval.py``):

1. a Prefect server with its UI, and three drafts of the demo world whose
   ``dispatch-mission`` runs wait for approval (paused, in threads of this
   process) → ``docs/pending-approvals.png``: the ``pending-approvals`` table
   artifact the waiting runs refresh;
2. the requester approves their own draft through the run's form (four-eyes):
   the run refuses it and waits again → ``docs/refused-input.png``: the run
   page with its log line and the draft artifact's refusal note;
3. the runs are then ended in each way a waiting run can end: approved and
   dispatched to the vehicle simulator (UDP on 127.0.0.1), rejected, left to
   expire, refused until the run gives up → ``docs/end-states.png``: the flow
   runs list with the state names.

Not part of the test suite (CI machines have no Chromium: ``apt-get install -y chromium``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from screenshot_approval import REPO, Chromium, start_server, stop_server  # noqa: E402

NOW = "2026-11-29T06:58:{s:02d}+02:00"  # the demo telemetry (06:57:30) is fresh enough to dispatch
REQUESTS = (("巡一遍消防通道", "region-1001"), ("inspect the hydrants today", "region-1002"), ("巡一遍消防通道", "region-1003"),
            ("inspect the hydrants today", "region-1001"))


def wait_for(what: str, probe: Any, budget_s: float) -> Any:
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.5)
    raise RuntimeError(f"timed out waiting for {what}")


def run_in_thread(fn: Any, **kwargs: Any) -> dict[str, Any]:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - reported by the caller
            box["error"] = exc

    box["thread"] = threading.Thread(target=target, daemon=True)
    box["thread"].start()
    return box


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", default=str(REPO / "docs"))
    parser.add_argument("--keep", action="store_true", help="leave the server running afterwards")
    args = parser.parse_args()
    docs = Path(args.docs)
    if shutil.which("chromium") is None:
        print("chromium is not installed (Debian: apt-get install -y chromium)", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="sortie-ops-shot-"))
    server, base = start_server(root)
    os.environ.update(PREFECT_API_URL=f"{base}/api", PREFECT_HOME=str(root / "home"), SORTIE_HOME=str(root / "sortie"),
                      PREFECT_LOGGING_LEVEL="WARNING")
    import prefect.context

    prefect.context.refresh_global_settings_context()
    from prefect import get_client
    from prefect.artifacts import Artifact

    from flows.context import DEMO_WORLD_DIR
    from flows.orchestration.artifacts import summary_dict
    from flows.orchestration.mission_flows import dispatch_mission
    from flows.orchestration.pending_board import PENDING_ARTIFACT_KEY
    from flows.orchestration.resume import find_waiting_runs
    from flows.sim.vehicle import SimVehicle
    from flows.usecases import service

    world = root / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    chrome: Chromium | None = None
    sims: list[Any] = []
    try:
        drafts, boxes = [], []
        for i, (text, region) in enumerate(REQUESTS):
            now = NOW.format(s=10 + i)
            d = summary_dict(service.plan_draft(text=text, region_id=region, requested_by="li.wei", world_dir=str(world),
                                                now=__import__("datetime").datetime.fromisoformat(now)))
            if not d.get("plan_hash") or d.get("status") != "DRAFT":
                print("skipped", region, d.get("status"))
                continue
            links = {}
            for drone in sorted({s["drone"] for s in d["sorties"]}):
                sim = SimVehicle("udpin:127.0.0.1:0", service.load_world_at(str(world)).drone(drone).autopilot).start()
                sims.append(sim)
                links[drone] = sim.address
            window = 60 if i == 2 else 1800  # the third one is left to expire
            boxes.append(run_in_thread(dispatch_mission, draft_id=d["draft_id"], version=d["version"], world=str(world),
                                       now=now, link=links, approval_window_s=window, poll_interval_s=1))
            drafts.append(d)
        runs = [wait_for("a waiting run", lambda d=d: find_waiting_runs(d["draft_id"], d["version"]), 120)[0] for d in drafts]
        print("waiting:", [(d["draft_id"], r.name) for d, r in zip(drafts, runs)])
        time.sleep(2)

        chrome = Chromium(root / "chrome")
        board = wait_for("the pending board", lambda: Artifact.get(PENDING_ARTIFACT_KEY), 30)  # the latest version
        chrome.goto(f"{base}/artifacts/artifact/{board.id}", 3)
        chrome.wait_js("document.body.innerText.includes('who may approve')", 40)
        time.sleep(2)
        chrome.screenshot(docs / "pending-approvals.png")
        print("saved pending-approvals.png", board.id)

        # 2. the requester approves their own draft: four-eyes refuses it; the run waits again
        first = drafts[0]
        base_input = {"draft_id": first["draft_id"], "version": first["version"], "plan_hash": first["plan_hash"],
                      "comment": ""}
        with get_client(sync_client=True) as client:
            client.resume_flow_run(runs[0].id, run_input=dict(base_input, decision="approve", approver="li.wei"))
        wait_for("the run to wait again", lambda: (st := client_state(runs[0].id)).name in ("Paused", "Suspended")
                 and st.id != runs[0].state.id, 60)
        time.sleep(3)
        chrome.goto(f"{base}/runs/flow-run/{runs[0].id}", 3)
        chrome.wait_js("document.body.innerText.includes('four-eyes') || document.body.innerText.includes('refused')", 30)
        time.sleep(2)
        chrome.screenshot(docs / "refused-input.png")
        print("saved refused-input.png")

        # 3. end states: approved → dispatched, rejected, expired (window 60 s), refused until it gives up
        with get_client(sync_client=True) as client:
            client.resume_flow_run(runs[0].id, run_input=dict(base_input, decision="approve", approver="chen.jing"))
            second = drafts[1]
            client.resume_flow_run(runs[1].id, run_input={
                "draft_id": second["draft_id"], "version": second["version"], "plan_hash": second["plan_hash"],
                "decision": "reject", "approver": "chen.jing", "comment": "not today"})
        if len(drafts) > 3:  # the requester insists: refused each time until the run gives up (REFUSED)
            fourth, seen = drafts[3], None
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                run = client_run(runs[3].id)
                if run.state.is_final():
                    break
                if run.state.name in ("Paused", "Suspended") and run.state.id != seen:
                    seen = run.state.id
                    with get_client(sync_client=True) as client:
                        client.resume_flow_run(runs[3].id, run_input={
                            "draft_id": fourth["draft_id"], "version": fourth["version"], "plan_hash": fourth["plan_hash"],
                            "decision": "approve", "approver": "li.wei", "comment": "my own"})
                time.sleep(1)
        for box in boxes:
            box["thread"].join(150)
        print("ended:", [(r.name, client_run(r.id).state.name) for r in runs])
        chrome.goto(f"{base}/runs", 4)
        chrome.wait_js("document.body.innerText.includes('dispatch-mission')", 40)
        time.sleep(3)
        chrome.js("document.querySelector('.flow-run-list, [class*=flow-run-list], [class*=runs-list]')?.scrollIntoView()")
        time.sleep(1)
        chrome.screenshot(docs / "end-states.png", full_page=True)
        print("saved end-states.png")
        if args.keep:
            print(f"server left running at {base} (pid {server.pid}); Ctrl-C to stop")
            while True:
                time.sleep(3600)
    finally:
        if chrome is not None:
            chrome.close()
        for sim in sims:
            sim.stop()
        stop_server(server, root)
    return 0


def client_run(run_id: Any) -> Any:
    from prefect import get_client

    with get_client(sync_client=True) as client:
        return client.read_flow_run(run_id)


def client_state(run_id: Any) -> Any:
    return client_run(run_id).state


if __name__ == "__main__":
    sys.exit(main())
