"""What the authority owns beyond who/when/what: its vehicles' addresses, the flights it follows, its ledger.

Against the session's real ``sortie server`` on 127.0.0.1 (``conftest``), real
tokens, real HTTP, and the vehicle simulator flying over MAVLink/UDP on
127.0.0.1:

- a client's ``--as/--world/--now`` and ``SORTIE_USER/WORLD/NOW`` are refused
  (``OVERRIDE_REFUSED``, exit 2) by every state-changing command, never ignored;
- a dispatch's link address is the server's record (``sortie admin link set``,
  audited); a request naming another is refused and nothing is claimed;
- ``sortie monitor`` through the server has the server follow the flight; its
  ``flight.in_flight`` and ``flight.finished`` events reach ``sortie watch``,
  and no other tenant's screen;
- ``sortie reconcile`` and ``sortie ledger backup`` work through the API, with
  the dispatcher and admin roles.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

os.environ.setdefault("MAVLINK20", "1")

from flows.cli import app  # noqa: E402
from flows.ledger import open_ledger  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]

HYDRANTS = {"text": "inspect the hydrants today", "region_id": "region-1002"}  # one sortie, M3TD-01 (PX4)


@pytest.fixture(scope="module")
def authority(own_authority: Any) -> Any:
    """This module's own server: it plans, so its clock must not have run past the drones' telemetry
    (a shared server started by an earlier module may have)."""
    return own_authority


def _cli(authority: Any, user: str, args: list[str], **env: str) -> tuple[int, dict[str, Any]]:
    """One ``sortie`` command in-process as a client of the server (``--json``); (exit code, its JSON)."""
    base = {k: None for k in os.environ if k.startswith("SORTIE_")}
    base.update(SORTIE_SERVER=authority.url, SORTIE_TOKEN=authority.tokens[user], **env)
    r = CliRunner().invoke(app, [*args, "--json"], env=base)
    try:
        return r.exit_code, json.loads(r.stdout)
    except ValueError:
        raise AssertionError(f"sortie {args}: exit {r.exit_code}, not JSON: {r.output!r}") from None


@pytest.fixture(scope="module")
def approved(authority: Any) -> dict[str, Any]:
    """The hydrant inspection planned by li.wei and approved by chen.jing, through the server."""
    r = authority.call("li.wei", "POST", "/v1/plan", json=HYDRANTS)
    assert r.status_code == 200, r.text
    d = r.json()
    r = authority.call("chen.jing", "POST", f"/v1/drafts/{d['draft_id']}/approve",
                       json={"version": d["version"], "plan_hash": d["plan_hash"]})
    assert r.status_code == 200 and r.json()["status"] == "APPROVED", r.text
    return d


def test_local_overrides_are_refused_by_every_state_changing_command(authority: Any, approved: dict[str, Any],
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    d = approved["draft_id"]
    commands = {  # the command, and which of --as/--world/--now it takes
        "plan": (["plan", "巡一遍消防通道", "--region", "region-1001"], ("--as", "--world", "--now")),
        "replan": (["replan", d], ("--as", "--world", "--now")),
        "approve": (["approve", d, "--version", "1"], ("--as", "--world", "--now")),
        "reject": (["reject", d, "--version", "1", "--reason", "no"], ("--as", "--world", "--now")),
        "dispatch": (["dispatch", d, "--dry-run"], ("--as", "--world", "--now")),
        "cancel": (["cancel", d, "--reason", "no"], ("--as", "--world", "--now")),
        "pause": (["pause", d], ("--as", "--world", "--now")),
        "recall": (["recall", d, "--no-wait"], ("--as", "--world", "--now")),
        "monitor": (["monitor", d, "--timeout", "5"], ("--as", "--now")),
        "reconcile": (["reconcile", d], ("--as", "--world", "--now")),
    }
    values = {"--as": "chen.jing", "--world": str(authority.world), "--now": "2026-12-06T07:00:00+02:00"}
    env_values = {"SORTIE_USER": "chen.jing", "SORTIE_WORLD": str(authority.world),
                  "SORTIE_NOW": "2026-12-06T07:00:00+02:00"}
    ledger = open_ledger(authority.home)
    before = (len(ledger.list_drafts()), len(ledger.events(d)), len(ledger.dispatches(d)))
    for name, (args, options) in commands.items():
        tries = [(f"{o}", [*args, o, values[o]], {}) for o in options]
        tries += [(f"${k}", args, {k: v}) for k, v in env_values.items()]
        for what, argv, env in tries:
            code, out = _cli(authority, "chen.jing", argv, **env)
            assert code == 2 and out["error"]["code"] == "OVERRIDE_REFUSED", (name, what, out)
            assert what in out["error"]["details"]["refused"], (name, what, out)
    assert (len(ledger.list_drafts()), len(ledger.events(d)), len(ledger.dispatches(d))) == before
    # without them the same command reaches the server (the refusal was the override's, not the command's)
    code, out = _cli(authority, "chen.jing", ["dispatch", d, "--dry-run"])
    assert code in (0, 2) and out.get("error", {}).get("code") != "OVERRIDE_REFUSED", out
    # a Prefect worker is held to the same rule, parameters and environment alike (the one choice of authority)
    from flows.authority.choice import authority as choose
    from flows.errors import OverrideRefused

    monkeypatch.setenv("SORTIE_SERVER", authority.url)
    monkeypatch.setenv("SORTIE_TOKEN", authority.tokens["worker"])
    with pytest.raises(OverrideRefused) as refused:
        choose("prefect plan-draft", world=str(authority.world), now="2026-12-06T07:00:00+02:00", caller="prefect")
    assert refused.value.details["refused"] == ["world", "now"]
    monkeypatch.setenv("SORTIE_NOW", "2026-12-06T07:00:00+02:00")
    with pytest.raises(OverrideRefused, match=r"\$SORTIE_NOW"):
        choose("prefect plan-draft", caller="prefect")


def _admin(authority: Any, *args: str) -> tuple[int, dict[str, Any]]:
    r = CliRunner().invoke(app, [*args, "--home", str(authority.home), "--world", str(authority.world), "--json"])
    return r.exit_code, json.loads(r.stdout)


def test_the_server_owns_the_link_follows_the_flight_and_watch_prints_its_events(
    authority: Any, approved: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from flows.client.http import SortieClient
    from flows.sim.flight import FlightOptions, SimFlight
    from testkit import sim_vehicle
    from flows.usecases.common import load_world_at

    d, v = approved["draft_id"], approved["version"]
    authority.end_flights()
    world = load_world_at(authority.world)
    drone = world.drone("M3TD-01")
    dock = world.dock(drone.dock_id)
    # 20×: the server's launch and its follower reach the vehicle one after the other (the vehicle hub that will
    # share one link between them is issue 26's), so the flight must outlast the handover
    flight = SimFlight(FlightOptions(speedup=20.0, default_speed_mps=drone.cruise_speed_mps))
    sim = sim_vehicle("udpin:127.0.0.1:0", drone.autopilot, home=(dock.lat, dock.lon, dock.ground_alt_m),
                     heartbeat_s=0.1, rerequest_s=0.1, flight=flight).start()
    events: list[dict[str, Any]] = []

    def follow() -> None:  # the feed's events of record, until the flight's end (its 1 Hz progress aside)
        for e in SortieClient(authority.url, authority.tokens["li.wei"]).events(timeout_s=150):
            if e["type"] != "flight.progress":
                events.append(e)
            if e["type"] == "flight.finished":
                return

    feed = threading.Thread(target=follow, daemon=True)
    feed.start()
    other: list[dict[str, Any]] = []  # another tenant's screen: none of city-fire's dispatch or flight events
    other_feed = threading.Thread(target=lambda: other.extend(
        SortieClient(authority.url, authority.tokens["aino.virtanen"]).events(max_events=1, timeout_s=150)),
        daemon=True)
    other_feed.start()
    env = authority.env(SORTIE_SERVER=authority.url, SORTIE_TOKEN=authority.tokens["li.wei"])
    watch = subprocess.Popen([str(authority.sortie_bin), "watch", "--count", "4", "--no-progress", "--timeout", "150"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the link is the server's record: a caller's own address is refused, and nothing is claimed
        dispatch = f"/v1/drafts/{d}/dispatch"
        r = authority.call("chen.jing", "POST", dispatch, json={"version": v, "link": sim.address})
        assert r.status_code == 422 and r.json()["error"]["code"] == "OVERRIDE_REFUSED", r.text
        code, out = _cli(authority, "chen.jing", ["dispatch", d, "--link", sim.address])
        assert code == 2 and out["error"]["code"] == "OVERRIDE_REFUSED", out
        assert open_ledger(authority.home).dispatches(d) == [] and sim.stats.uploads_completed == 0
        assert _admin(authority, "admin", "link", "set", "M9-NOPE", sim.address)[1]["error"]["code"] == "NOT_FOUND"
        recorded = {x["drone_id"]: x["link"] for x in _admin(authority, "admin", "link", "list")[1]["links"]}
        code, out = _admin(authority, "admin", "link", "set", "M3TD-01", sim.address)
        assert code == 0 and out["before"] == recorded["M3TD-01"] and out["link"] == sim.address, out
        listed = {x["drone_id"]: x for x in _admin(authority, "admin", "link", "list")[1]["links"]}
        assert listed["M3TD-01"] == {"drone_id": "M3TD-01", "link": sim.address, "source": "links.json"}
        audit = [a.args_redacted for a in open_ledger(authority.home).audit_rows(limit=50) if a.command == "admin.link.set"]
        assert {"drone_id": "M3TD-01", "before": recorded["M3TD-01"], "after": sim.address} in [
            {k: a[k] for k in ("drone_id", "before", "after")} for a in audit]
        # the three screens (two feeds, `sortie watch`) are subscribed before anything they must see happens: a
        # process starting under load takes seconds to import and connect
        deadline = time.monotonic() + 90
        while authority.call("li.wei", "GET", "/v1/health").json()["event_streams"] < 3:
            assert watch.poll() is None and time.monotonic() < deadline, "sortie watch never subscribed"
            time.sleep(0.2)
        authority.report_in()
        code, out = _cli(authority, "chen.jing", ["dispatch", d])  # no --link: the server's record is used
        assert code == 0 and out["status"] == "ACKED", out
        assert sim.stats.uploads_completed >= 1
        assert flight.phase == "READY" and not flight.armed  # like a real autopilot, it waits for a launch
        code, out = _cli(authority, "chen.jing", ["launch", d, "--link", sim.address])
        assert code == 2 and out["error"]["code"] == "OVERRIDE_REFUSED", out
        code, out = _cli(authority, "chen.jing", ["launch", d])  # pre-flight checks, then the vehicle's sequence
        assert code == 0 and out["state"] == "LAUNCHED" and out["mode"] == "server", out
        # the server follows the flight; the client waits for its end in bounded requests and shows the progress
        # live meanwhile (issue 42: `sortie monitor` through a server printed nothing until the end)
        from flows.authority import MonitorRequest
        from flows.authority.remote import RemoteAuthority

        shown: list[tuple[str, str | None, int, float]] = []
        ended = RemoteAuthority(SortieClient(authority.url, authority.tokens["chen.jing"])).monitor(
            d, request=MonitorRequest(timeout_s=90), on_update=lambda f, what, data: shown.append(
                (what, data.get("state"), len(f.reached), time.monotonic())))
        t_end = time.monotonic()
        assert ended["state"] == "SUCCEEDED", ended
        progress = [s for s in shown if s[0] == "progress"]
        assert len(progress) >= 3 and progress[0][1] in ("LAUNCHED", "IN_FLIGHT"), shown
        assert progress[0][3] < t_end - 2.0 and progress[-1][2] > progress[0][2], progress  # live: before the end
        code, out = _cli(authority, "chen.jing", ["monitor", d, "--timeout", "90"])
        assert code == 0 and out["state"] == "SUCCEEDED" and out["mode"] == "server", out
        assert authority.call("li.wei", "GET", f"/v1/drafts/{d}").json()["status"] == "SUCCEEDED"
        # a second monitor joins nothing new: the recorded end
        again = authority.call("chen.jing", "POST", f"/v1/drafts/{d}/monitor", json={"wait_s": 30}).json()
        assert again["state"] == "SUCCEEDED" and again["result"]["already_ended"] is True, again
        out_text, err = watch.communicate(timeout=60)
    finally:
        sim.stop()
        if watch.poll() is None:
            watch.kill()
            watch.wait(timeout=10)
    feed.join(timeout=30)
    assert [(e["type"], e.get("state")) for e in events] == [
        ("dispatch.acked", None), ("flight.launch", "LAUNCHED"), ("flight.in_flight", "IN_FLIGHT"),
        ("flight.finished", "SUCCEEDED")], events
    assert all(e["draft_id"] == d for e in events)
    port = authority.call("aino.virtanen", "POST", "/v1/plan", json={"text": "巡一遍消防通道", "region_id": "region-2001"})
    assert port.status_code == 200, port.text
    other_feed.join(timeout=60)
    assert [(e["type"], e["draft_id"]) for e in other] == [("draft.recorded", port.json()["draft_id"])], other
    assert watch.returncode == 0, err
    lines = [ln.split()[0] for ln in out_text.splitlines() if ln.strip()]
    assert lines == ["dispatch.acked", "flight.launch", "flight.in_flight", "flight.finished"], out_text
    assert "state=SUCCEEDED" in out_text.splitlines()[-1]
    assert any(a.command == "server.monitor" and a.result_code == "OK"
               for a in open_ledger(authority.home).audit_rows(limit=50))
    # the Prefect monitor task on a worker asks the server too (and may not name a link)
    from flows.orchestration.monitor_flow import monitor_flight_task
    from flows.errors import OverrideRefused

    monkeypatch.setenv("SORTIE_SERVER", authority.url)
    monkeypatch.setenv("SORTIE_TOKEN", authority.tokens["worker"])
    for k in ("SORTIE_NOW", "SORTIE_WORLD", "SORTIE_USER"):
        monkeypatch.delenv(k, raising=False)
    out = monitor_flight_task.fn(d, None, None, "prefect", None, 30.0)  # no launch_as: it only follows
    assert out["state"] == "SUCCEEDED" and out["already_ended"] is True, out
    refused = monitor_flight_task.fn(d, None, "udpout:127.0.0.1:9", "prefect", None, 30.0)  # answered, not raised
    assert refused["refused"] == OverrideRefused.code, refused  # the run ends named OVERRIDE_REFUSED (named_end)


def test_reconcile_goes_through_the_api_for_a_dispatcher(authority: Any, approved: dict[str, Any]) -> None:
    d = approved["draft_id"]
    assert open_ledger(authority.home).dispatches(d), "needs the dispatch of the previous test"
    code, out = _cli(authority, "li.wei", ["reconcile", d])
    assert code == 2 and out["error"]["code"] == "FORBIDDEN", out  # a planner may not
    code, out = _cli(authority, "chen.jing", ["reconcile", d, "--link", "udpout:127.0.0.1:9"])
    assert code == 2 and out["error"]["code"] == "OVERRIDE_REFUSED", out
    code, out = _cli(authority, "chen.jing", ["reconcile", d])
    assert code == 0 and out["status"] == "ACKED" and out["mode"] == "server", out
    assert out["message"].startswith("nothing to settle")
    rows = [(a.command, a.result_code, a.actor) for a in open_ledger(authority.home).audit_rows(limit=50)]
    assert ("server.reconcile", "FORBIDDEN", "li.wei") in rows and ("server.reconcile", "OK", "chen.jing") in rows


def test_ledger_backup_through_the_api_needs_an_admin(authority: Any, tmp_path: Path) -> None:
    for key, user in (("admin", "admin"), ("chen.admin-scope", "chen.jing")):
        code, out = _admin(authority, "admin", "token", "create", user, "--scope", "read,admin")
        assert code == 0, out
        authority.tokens[key] = out["token"]
    code, out = _cli(authority, "chen.jing", ["ledger", "backup", str(tmp_path / "refused")])
    assert code == 2 and out["error"]["code"] == "FORBIDDEN" and "scopes" in out["error"]["message"], out
    code, out = _cli(authority, "chen.admin-scope", ["ledger", "backup", str(tmp_path / "refused")])
    assert code == 2 and out["error"]["code"] == "FORBIDDEN" and "admin role" in out["error"]["message"], out
    assert not (tmp_path / "refused").exists()
    code, out = _cli(authority, "admin", ["ledger", "backup", str(tmp_path / "copy")])
    assert code == 0 and out["verified"] is True and out["mode"] == "server", out
    server_copy = Path(out["server_dir"])
    assert server_copy.parent == authority.home / "backups" and (server_copy / "MANIFEST.json").is_file()
    manifest = json.loads((tmp_path / "copy" / "MANIFEST.json").read_text(encoding="utf-8"))
    assert manifest == json.loads((server_copy / "MANIFEST.json").read_text(encoding="utf-8"))
    assert (tmp_path / "copy" / manifest["file"]).read_bytes() == (server_copy / manifest["file"]).read_bytes()
    # the copy verifies on its own with the server's key, as a restore on the host would check it
    from flows.integrity.verify import verify_file
    from flows.ledger.signing import KeyStore

    report = verify_file(tmp_path / "copy" / manifest["file"], KeyStore(authority.home, mode="server"),
                         tmp_path / "copy" / (manifest["file"] + ".head"))
    assert report.ok and report.entries == manifest["entries"], report
    rows = [(a.command, a.result_code) for a in open_ledger(authority.home).audit_rows(limit=50)]
    assert ("server.ledger.backup", "OK") in rows and rows.count(("server.ledger.backup", "FORBIDDEN")) >= 1
