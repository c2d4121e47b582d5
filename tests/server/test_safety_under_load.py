"""Issue 27 against a real ``sortie server`` over HTTP: an approval and a recall are answered promptly while sixteen
readers hammer the server.

The readers run in a process of their own (``reader_load.py``), so the probes
here share no GIL with them: what is measured is the server. Each probe is
timed idle first, then under the load; the bound is the brief's, a ratio with
an allowance for a shared machine: under load < 3 x idle + 0.5 s (medians).
Before the safety gate (``flows.server.gate``) an approval under this load
took 1.5-4 s against about 0.1 s idle — it waited for the ledger's write lock
while the batched read audits held it at a seventeenth of the GIL — so this
fails without it.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.slow

READERS = 16
LOAD_S = 20.0
HERE = Path(__file__).resolve().parent


def _timed(c: httpx.Client, path: str, body: dict[str, Any]) -> tuple[float, int]:
    t = time.perf_counter()
    r = c.post(path, json=body)
    return time.perf_counter() - t, r.status_code


def _approve(c: httpx.Client, d: dict[str, Any]) -> float:
    dt, status = _timed(c, f"/v1/drafts/{d['draft_id']}/approve", {"version": d["version"], "plan_hash": d["plan_hash"]})
    assert status == 200, status
    return dt


def _recall(c: httpx.Client, d: dict[str, Any]) -> float:
    """A recall of an approved version that never flew: refused (409) through the safety lane, audited at once."""
    dt, status = _timed(c, f"/v1/drafts/{d['draft_id']}/recall", {"reason": "probe"})
    assert status == 409, status
    return dt


def test_an_approval_and_a_recall_answer_under_sixteen_readers_within_three_times_their_idle_latency(
        own_authority: Any) -> None:
    a = own_authority
    drafts = [a.plan() for _ in range(6)]
    with a.client("chen.jing") as c:
        for _ in range(3):  # warm: the first requests of a fresh server import and open what later ones reuse
            c.get("/v1/drafts")
        idle_approve = [_approve(c, d) for d in drafts[:2]]
        idle_recall = [_recall(c, drafts[0]) for _ in range(3)]
        load = subprocess.Popen(
            [sys.executable, str(HERE / "reader_load.py"), a.url, a.tokens["chen.jing"], str(LOAD_S), str(READERS),
             *[d["draft_id"] for d in drafts]], stdout=subprocess.PIPE, text=True)
        try:
            time.sleep(3.0)  # the readers are connected and reading
            loaded_approve, loaded_recall = [], []
            for d in drafts[2:]:
                loaded_approve.append(_approve(c, d))
                time.sleep(0.5)
                loaded_recall.append(_recall(c, drafts[0]))
                time.sleep(0.5)
            loaded_recall.append(_recall(c, drafts[1]))
            health = httpx.get(f"{a.url}/v1/health", timeout=30).json()
            out, _ = load.communicate(timeout=LOAD_S + 60)
        finally:
            if load.poll() is None:
                load.kill()
                load.wait(10)
    readers = json.loads(out.strip().splitlines()[-1])
    figures = {"idle_approve": idle_approve, "loaded_approve": loaded_approve, "idle_recall": idle_recall,
               "loaded_recall": loaded_recall, "readers": readers, "gate": health.get("safety_gate")}
    # the load was real: the readers kept the server busy the whole time, and none was refused
    assert readers["reads"] >= 5 * LOAD_S and readers["failed"] == 0, figures
    print(json.dumps(figures))
    for kind in ("approve", "recall"):
        idle, loaded = statistics.median(figures[f"idle_{kind}"]), statistics.median(figures[f"loaded_{kind}"])
        assert loaded < 3 * idle + 0.5, (kind, figures)
    assert health["safety_gate"]["closed"] >= len(loaded_approve) + len(loaded_recall), figures  # the gate did it
