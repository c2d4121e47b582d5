"""One request, one world snapshot: the authority's request context takes its world once, whatever it runs.

A real ``sortie server`` app (``flows.server.api.create_app``) served by uvicorn on 127.0.0.1 in a thread of
this process (so the loads can be counted), real tokens, real HTTP. Before the request context, a decision
loaded the world for the visibility check, again for the decider and again inside the use case; then the
context loaded it once (strictly) and pinned it for every use case the request runs; now (issue 27) it takes
the server's cached snapshot (``flows.server.world_cache``): a folder that did not change is parsed by no
request at all, and one that changed is parsed once. Also counted: the ledger's draft reads a request makes
(the context reads the draft once; the use cases read what their conditional writes need).
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from testkit import free_port

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

CLOCK = "2026-11-29T07:00:00+02:00"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    import uvicorn

    from flows.context import DEMO_WORLD_DIR
    from flows.server.api import create_app
    from flows.server.run import make_config
    from flows.server.tokens import TokenStore

    base = tmp_path_factory.mktemp("context")
    world = base / "world"
    shutil.copytree(DEMO_WORLD_DIR, world)
    fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["last_telemetry_at"] = CLOCK  # the server's clock starts here and runs: the dispatch rule allows 60 s (a loaded machine needs them)
    (world / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    config = make_config(world, base / "home", CLOCK, fleet="file", allow_unsigned=True)
    tokens = {u: TokenStore(config.home).create(u)[1] for u in ("li.wei", "chen.jing")}
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.1)
    try:
        yield {"url": url, "tokens": tokens, "world": world, "home": config.home}
    finally:
        server.should_exit = True
        thread.join(timeout=20)


def _counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    import planner.world.files
    from flows.ledger.store import Store

    counts = {"world": 0, "draft": 0}
    parse, get = planner.world.files.parse_world, Store.get_draft

    def parse_world(files: Any, root: str = "") -> Any:
        counts["world"] += 1
        return parse(files, root)

    def get_draft(self: Any, *args: Any, **kw: Any) -> Any:
        counts["draft"] += 1
        return get(self, *args, **kw)

    monkeypatch.setattr(planner.world.files, "parse_world", parse_world)
    monkeypatch.setattr(Store, "get_draft", get_draft)
    return counts


def test_a_steady_world_is_parsed_by_no_request(served: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    def call(user: str, method: str, path: str, **kw: Any) -> dict[str, Any]:
        r = httpx.request(method, served["url"] + path, headers={"Authorization": f"Bearer {served['tokens'][user]}"},
                          timeout=120, **kw)
        assert r.status_code == 200, r.text
        return r.json()

    d = call("li.wei", "POST", "/v1/plan", json={"text": "inspect the hydrants today", "region_id": "region-1002"})
    draft, version = d["draft_id"], d["version"]
    counts = _counted(monkeypatch)
    seen: dict[str, tuple[int, int]] = {}
    for name, user, method, path, body in (
        ("show", "chen.jing", "GET", f"/v1/drafts/{draft}", None),
        ("log", "chen.jing", "GET", f"/v1/drafts/{draft}/log", None),
        ("approve", "chen.jing", "POST", f"/v1/drafts/{draft}/approve", {"version": version,
                                                                          "plan_hash": d["plan_hash"]}),
        ("dispatch (dry run)", "chen.jing", "POST", f"/v1/drafts/{draft}/dispatch", {"dry_run": True}),
        ("cancel", "chen.jing", "POST", f"/v1/drafts/{draft}/cancel", {"reason": "counted"}),
    ):
        counts.update(world=0, draft=0)
        out = call(user, method, path, json=body) if body is not None else call(user, method, path)
        assert out["mode"] == "server", out
        seen[name] = (counts["world"], counts["draft"])
    print("world parses, draft reads per request:", seen)
    assert {name: w for name, (w, _) in seen.items()} == dict.fromkeys(seen, 0), seen
    # the folder changes (the fleet feed rewrites fleet.json): the next request parses it once, the one after none
    fleet = served["world"] / "fleet.json"
    doc = json.loads(fleet.read_text(encoding="utf-8"))
    doc["drones"][0]["battery_pct"] = 77
    fleet.write_text(json.dumps(doc), encoding="utf-8")
    for expected in (1, 0):
        counts.update(world=0)
        call("chen.jing", "GET", f"/v1/drafts/{draft}")
        assert counts["world"] == expected, (expected, counts)


def test_the_world_is_pinned_once_per_change_not_per_request(served: dict[str, Any],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Reads pin no world while neither the world folder nor the admin's links change; a change of either is pinned
    by the next request, once, and that request's world carries it (issue 44: pinning per request was a tenth of a
    read's CPU)."""
    from flows.server.links import LinkStore
    from flows.usecases.grounds import Grounds

    pins: list[Any] = []
    pinned = Grounds.pinned

    def counted(self: Grounds, world: Any) -> Grounds:
        pins.append(world)
        return pinned(self, world)

    monkeypatch.setattr(Grounds, "pinned", counted)

    def read() -> None:
        r = httpx.get(served["url"] + "/v1/drafts", headers={"Authorization": f"Bearer {served['tokens']['chen.jing']}"},
                      timeout=120)
        assert r.status_code == 200, r.text

    read()
    pins.clear()
    for _ in range(5):
        read()
    assert pins == []
    LinkStore(served["home"]).set("M30T-01", "udp:127.0.0.1:14999")
    try:
        read()
        read()
        assert len(pins) == 1
        assert {d.id: d.link for d in pins[0].drones}["M30T-01"] == "udp:127.0.0.1:14999"
    finally:
        LinkStore(served["home"]).unset("M30T-01")
