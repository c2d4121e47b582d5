"""Headless Chromium driven over the Chrome DevTools protocol, for the operations page's tests and screenshots.

Why the protocol from Python and not a browser-automation package: the suite already has a WebSocket client
(``websockets``, one of Prefect's dependencies), Chromium comes from the system's packages
(``apt-get install -y chromium``, which ``.ci/run`` does), and the tests need only a few calls: open a page,
evaluate JavaScript, type into a field, take a screenshot. The browser starts with a fresh profile, no network
of its own (no component updates, sync or background fetches) and its DevTools port chosen by itself
(``--remote-debugging-port=0``, read back from ``DevToolsActivePort``: no race for a free port). Every wait is
bounded; JavaScript errors and failed requests on the page are collected (``errors``) so a test can say none
happened.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from testkit import stop_process_group

__all__ = ["Chromium", "chromium_path", "FLAGS"]

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions",
         "--hide-scrollbars", "--mute-audio", "--remote-allow-origins=*")


def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class Chromium:
    """One headless browser with one page (a tab), its profile in ``profile``; close it with ``close``."""

    def __init__(self, profile: Path, *, width: int = 1440, height: int = 900, start_budget_s: float = 60.0) -> None:
        exe = chromium_path()
        if exe is None:
            raise RuntimeError("chromium is not installed (Debian: apt-get install -y chromium)")
        profile.mkdir(parents=True, exist_ok=True)
        self.width, self.height = width, height
        self.errors: list[str] = []
        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--window-size={width},{height}", "--remote-debugging-port=0",
             f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            port = self._port(profile / "DevToolsActivePort", start_budget_s)
            self.ws = self._page_socket(port, start_budget_s)
            self._next = 0
            for domain in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
                self.call(domain)
            self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                      mobile=False)
        except BaseException:
            stop_process_group(self.proc)
            raise

    def _port(self, active: Path, budget_s: float) -> int:
        deadline = time.monotonic() + budget_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited at start ({self.proc.returncode})")
            try:
                return int(active.read_text().splitlines()[0])
            except (OSError, ValueError, IndexError):
                time.sleep(0.1)
        raise RuntimeError("chromium did not open its DevTools port")

    def _page_socket(self, port: int, budget_s: float) -> Any:
        import urllib.request

        from websockets.sync.client import connect

        deadline = time.monotonic() + budget_s
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=5) as resp:
                    pages = [t for t in json.load(resp) if t.get("type") == "page"]
                if pages:
                    # Read on while the test waits elsewhere for minutes (a shift's Prefect steps): the page's
                    # events queue up unbounded rather than stopping the reader, whose keepalive would then time
                    # out and close the connection; loopback needs no keepalive.
                    return connect(pages[0]["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024, open_timeout=10,
                                   max_queue=None, ping_interval=None)
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("chromium's page did not answer on its DevTools port")
            time.sleep(0.2)

    # -- the protocol

    def call(self, method: str, timeout_s: float = 60.0, **params: Any) -> dict[str, Any]:
        """One DevTools command and its result; the events that arrive meanwhile are read for errors."""
        self._next += 1
        mine = self._next
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{method}: no answer in {timeout_s} s")
            msg = json.loads(self.ws.recv(timeout=left))
            if msg.get("id") == mine:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result", {}))
            self._event(msg)

    def _event(self, msg: dict[str, Any]) -> None:
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.errors.append(f"exception: {d.get('text')} {(d.get('exception') or {}).get('description', '')}")
        elif method == "Runtime.consoleAPICalled" and p.get("type") == "error":
            self.errors.append("console.error: " + " ".join(str(a.get("value", a.get("description")))
                                                             for a in p.get("args", [])))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            self.errors.append(f"log: {p['entry'].get('text')}")
        elif method == "Network.responseReceived" and p.get("response", {}).get("status", 0) >= 500:
            self.errors.append(f"HTTP {p['response']['status']}: {p['response'].get('url')}")

    # -- what a test does on the page

    def goto(self, url: str, ready: str = "document.readyState === 'complete'", budget_s: float = 30.0) -> None:
        self.call("Page.navigate", url=url)
        self.wait(ready, budget_s, what=f"{url} to load")

    def js(self, expression: str) -> Any:
        """The value of ``expression`` in the page (awaited if it is a promise); a thrown error fails the test."""
        out = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in out:
            raise AssertionError(f"page script failed: {out['exceptionDetails'].get('text')} in {expression[:120]}")
        return out.get("result", {}).get("value")

    def wait(self, expression: str, budget_s: float, *, what: str | None = None, every_s: float = 0.1) -> Any:
        """Until ``expression`` is truthy in the page; its value."""
        deadline = time.monotonic() + budget_s
        while True:
            value = self.js(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out after {budget_s} s waiting for {what or expression}")
            time.sleep(every_s)

    def click(self, selector: str) -> float:
        """A real mouse click at the middle of the element (it must be visible: a hidden one is a test failure).

        Returns when the page's click event happened (epoch seconds, the browser's own stamp of the input event):
        a latency measured from it starts where an operator's click does, not at this harness's first message to
        the browser (four DevTools round trips earlier, seconds on a loaded machine)."""
        box = self.js(f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null; "
                      "e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect(); "
                      "window.__clickedAt = null; const h = (ev) => { document.removeEventListener('click', h, "
                      "true); window.__clickedAt = (performance.timeOrigin + ev.timeStamp) / 1000; }; "
                      "document.addEventListener('click', h, true); "
                      "return r.width && r.height ? [r.left + r.width / 2, r.top + r.height / 2] : null; })()")
        if not box:
            raise AssertionError(f"nothing visible to click at {selector}")
        x, y = box
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        at = self.js("window.__clickedAt")
        if not at:
            raise AssertionError(f"the click at {selector} made no click event (the page redrew under the pointer?)")
        return float(at)

    def type(self, selector: str, text: str) -> None:
        """Click into the field, select what it holds, and type ``text`` over it as keyboard input."""
        self.click(selector)
        self.js(f"document.querySelector({json.dumps(selector)}).select()")
        self.call("Input.insertText", text=text)

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - the browser goes anyway
            pass
        stop_process_group(self.proc, term_timeout_s=10.0)
