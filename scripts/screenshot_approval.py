"""Bring a dispatch run to its approval wait and screenshot the Prefect UI's approval form.

    uv run python scripts/screenshot_approval.py [--out docs/approval-form.png] [--keep]

What it does, all on 127.0.0.1 and in a throw-away folder:

1. starts ``prefect server start`` with the UI on a free port (from the cached,
   migrated database the tests make, if there is one);
2. runs ``plan_mission`` on the demo world (the draft artifact
   ``draft-<id>-v<n>`` is published) and then ``dispatch_mission`` for that
   draft in a thread: it pauses and waits for approval;
3. starts headless Chromium (Debian ``chromium``) with the flags that make the
   UI render without a network or a GPU, drives it over the DevTools protocol:
   opens the run page, clicks **Resume** so the input form opens, and saves a
   PNG of it; also a PNG of the draft artifact page;
4. stops everything.

Not part of the test suite (CI machines have no Chromium). ``--keep`` leaves
the server running for a look by hand.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--virtual-time-budget=15000",
    "--hide-scrollbars",
    "--window-size=1400,1100",
]
DEMO_NOW = "2026-11-29T06:58:20+02:00"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, budget_s: float) -> None:
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {budget_s} s")


def start_server(root: Path) -> tuple[subprocess.Popen[bytes], str]:
    db = root / "prefect.db"
    cached = sorted((Path(tempfile.gettempdir()) / "sortie-prefect-cache").glob("prefect-*.db"))
    if cached:
        shutil.copyfile(cached[-1], db)
    port = free_port()
    env = dict(os.environ)
    env.pop("PREFECT_API_URL", None)
    env.update(
        PREFECT_HOME=str(root / "home"),
        PREFECT_API_DATABASE_CONNECTION_URL=f"sqlite+aiosqlite:///{db}",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_UI_ENABLED="true",
        PREFECT_SERVER_UI_ENABLED="true",
        # the UI's JavaScript calls this URL; the default is :4200
        PREFECT_UI_API_URL=f"http://127.0.0.1:{port}/api",
        PREFECT_SERVER_UI_API_URL=f"http://127.0.0.1:{port}/api",
    )
    log = (root / "server.log").open("wb")
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("prefect")), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    wait_http(f"http://127.0.0.1:{port}/api/health", 180)
    return proc, f"http://127.0.0.1:{port}"


class Chromium:
    """Headless Chromium driven over the DevTools protocol (navigate, evaluate, screenshot)."""

    def __init__(self, profile: Path) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            ["chromium", *CHROMIUM_FLAGS[:-3], "--hide-scrollbars", "--window-size=1400,1100",
             f"--remote-debugging-port={self.port}", f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        wait_http(f"http://127.0.0.1:{self.port}/json/version", 60)
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json/list", timeout=5) as resp:
            page = next(t for t in json.load(resp) if t["type"] == "page")
        from websockets.sync.client import connect

        self.ws = connect(page["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024)
        self.next_id = 0
        self.call("Page.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=1400, height=1100, deviceScaleFactor=1, mobile=False)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=60))
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def goto(self, url: str, settle_s: float) -> None:
        self.call("Page.navigate", url=url)
        time.sleep(settle_s)

    def js(self, expression: str) -> Any:
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True).get("result", {}).get("value")

    def wait_js(self, expression: str, budget_s: float) -> Any:
        deadline = time.monotonic() + budget_s
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.5)
        return None

    def screenshot(self, path: Path, full_page: bool = False) -> None:
        if full_page:
            height = self.js("Math.max(...[...document.querySelectorAll('*')].map(e => e.scrollHeight))") or 1100
            self.call("Emulation.setDeviceMetricsOverride", width=1400, height=min(int(height), 5000), deviceScaleFactor=1, mobile=False)
            time.sleep(2)
        data = self.call("Page.captureScreenshot", format="png")["data"]
        if full_page:
            self.call("Emulation.setDeviceMetricsOverride", width=1400, height=1100, deviceScaleFactor=1, mobile=False)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=10)


CLICK_RESUME = """
(() => {
  const b = [...document.querySelectorAll('button')].find(x => x.innerText.trim() === 'Resume');
  if (!b) return false; b.click(); return true;
})()
"""
FORM_OPEN = "!!document.querySelector('[role=dialog], .p-modal') && document.body.innerText.includes('Approver')"


def stop_server(server: subprocess.Popen[bytes], root: Path) -> None:
    """Flush this process's Prefect logs and events, stop the server's process group, remove its folder."""
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all(timeout=5)
    EventsWorker.drain_all(timeout=5)
    os.killpg(server.pid, signal.SIGTERM)
    server.wait(timeout=20)
    shutil.rmtree(root, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(REPO / "docs" / "approval-form.png"))
    parser.add_argument("--artifact-out", default=str(REPO / "docs" / "draft-artifact.png"))
    parser.add_argument("--keep", action="store_true", help="leave the server running afterwards")
    args = parser.parse_args()
    if shutil.which("chromium") is None:
        print("chromium is not installed (Debian: apt-get install -y chromium)", file=sys.stderr)
        return 2

    root = Path(tempfile.mkdtemp(prefix="sortie-shot-"))
    server, base = start_server(root)
    os.environ.update(PREFECT_API_URL=f"{base}/api", PREFECT_HOME=str(root / "home"), SORTIE_HOME=str(root / "sortie"))
    import prefect.context

    prefect.context.refresh_global_settings_context()
    from flows.orchestration.mission_flows import dispatch_mission, plan_mission
    from flows.orchestration.resume import find_waiting_runs

    chrome: Chromium | None = None
    try:
        out = plan_mission(text="巡一遍消防通道", requested_by="li.wei", region_id="region-1001", now=DEMO_NOW)
        print("planned", out)
        threading.Thread(
            target=dispatch_mission,
            kwargs=dict(draft_id=out["draft_id"], version=out["version"], now=DEMO_NOW, poll_interval_s=2),
            daemon=True,
        ).start()
        deadline = time.monotonic() + 120
        while not (runs := find_waiting_runs(out["draft_id"], out["version"])):
            if time.monotonic() > deadline:
                raise RuntimeError("the dispatch run never reached its approval wait")
            time.sleep(0.5)
        run_url = f"{base}/runs/flow-run/{runs[0].id}"
        print("waiting run", run_url)

        from prefect.artifacts import Artifact

        artifact = Artifact.get(out["artifact_key"])
        chrome = Chromium(root / "chrome")
        chrome.goto(f"{base}/artifacts/artifact/{artifact.id}", 2)
        chrome.wait_js("document.body.innerText.includes('How to approve')", 40)
        time.sleep(3)
        chrome.screenshot(Path(args.artifact_out), full_page=True)
        print("saved", args.artifact_out)

        chrome.goto(run_url, 2)
        if not chrome.wait_js(CLICK_RESUME, 40):
            print("no Resume button found; saving the run page as it is", file=sys.stderr)
        elif not chrome.wait_js(FORM_OPEN, 20):
            print("the input form did not open; saving what is shown", file=sys.stderr)
        time.sleep(2)
        chrome.screenshot(Path(args.out))
        print("saved", args.out)
        if args.keep:
            print(f"server left running at {base} (pid {server.pid}); Ctrl-C to stop")
            while True:
                time.sleep(3600)
    finally:
        if chrome is not None:
            chrome.close()
        stop_server(server, root)
    return 0


if __name__ == "__main__":
    sys.exit(main())
