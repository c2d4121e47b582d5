"""A simulated flight end to end: plan → approve → dispatch → launch → fly → monitor → report, with faults.

The draft is planned and approved once (the use cases on the demo world,
a real DuckDB ledger in a tmp dir); each case copies that SORTIE_HOME to its
own folder, starts the vehicle simulator on a free 127.0.0.1 UDP port,
dispatches over MAVLink, gives the simulator its flight at 500× (``attach_flights``),
launches it and follows it through one link (``launch_and_follow``: the launch use case's
pre-flight checks, then the autopilot's own sequence — the simulator does not take off
by itself — while the monitor follows), and builds the report. What is checked is what an operator relies on:
the ledger state and its events, the alerts, the report's words, and that an
injected STATUSTEXT that reads like a command changes nothing but the log.
"""

from __future__ import annotations

import math
import os
import shutil
import time
from dataclasses import replace
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("MAVLINK20", "1")

from shapely.geometry import LineString  # noqa: E402

from flows.context import resolve_now  # noqa: E402
from flows.ledger import open_ledger  # noqa: E402
from flows.usecases import dispatching, reading  # noqa: E402
from flows.usecases.common import load_world_at  # noqa: E402
from flows.sim.fly import attach_flights  # noqa: E402
from flows.usecases.flying import launch_and_follow  # noqa: E402
from flows.usecases.monitoring import monitor_mission  # noqa: E402
from flows.authority.views import report_artifact_key  # noqa: E402
from flows.usecases.report import build_report, markdown_for_artifact, write_report  # noqa: E402
from flows.vehicle.flight_record import MonitorOptions  # noqa: E402
from flows.sim.flight import FlightFaults  # noqa: E402
from flows.sim.vehicle import SimVehicle  # noqa: E402
from flows.usecases.grounds import Grounds  # noqa: E402
from testkit import sim_vehicle  # noqa: E402
from flows.errors import Conflict
from testkit import approved_draft_home  # noqa: E402

pytestmark = pytest.mark.timeout(120)

NOW = resolve_now("2026-11-29T06:58:00+02:00")  # M3TD-01 reported at 06:57:30: fresh enough to dispatch
PLANNER, APPROVER = "li.wei", "chen.jing"
TEXT, REGION = "inspect the hydrants today", "region-1002"
OPTS = MonitorOptions(timeout_s=40.0, start_wait_s=15.0, link_alert_s=1.0, link_lost_s=2.0)
COMMAND_TEXT = "switch to mode GUIDED and fly to 60.17,24.94"


@pytest.fixture(scope="module")
def approved_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, int]]:
    """One planned and approved draft in a template SORTIE_HOME."""
    home = tmp_path_factory.mktemp("approved")
    with approved_draft_home(home, now=NOW, text=TEXT, region_id=REGION, planner=PLANNER, approver=APPROVER) as d:
        assert len(d.sorties) == 1
        yield home, d.draft_id, d.version


def _fly(approved_home: tuple[Path, str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
         faults: FlightFaults | None, params: dict[str, float] | None = None, charge_pct: float | None = None,
         options: MonitorOptions = OPTS) -> tuple[dict[str, Any], SimVehicle, str, int]:
    template, draft_id, version = approved_home
    home = tmp_path / "home"
    shutil.copytree(template, home)
    monkeypatch.setenv("SORTIE_HOME", str(home))
    world = load_world_at(None)
    drone = world.drone(reading.show_draft(draft_id, version, ledger=open_ledger()).sorties[0].drone)
    dock = world.dock(drone.dock_id)
    sim = sim_vehicle("udpin:127.0.0.1:0", drone.autopilot, home=(dock.lat, dock.lon, dock.ground_alt_m),
                      rerequest_s=0.1, params=params).start()
    try:
        disp = dispatching.dispatch(draft_id, version, actor=APPROVER, now=NOW, link=sim.address, timeout_s=15.0,
                                    grounds=Grounds(ledger=open_ledger()))
        assert disp.status == "ACKED" and disp.draft_status == "DISPATCHED"
        grounds = Grounds(ledger=open_ledger())
        attach_flights({drone.id: sim}, world, speedup=500.0, faults=faults,
                       charge_pct=None if charge_pct is None else {drone.id: charge_pct})
        launched, result = launch_and_follow(draft_id, version, launch_as=APPROVER, grounds=grounds, now=NOW,
                                             actor="monitor", options=options)
        report = build_report(draft_id, version, grounds=grounds)
        write_report(report, home=grounds.home)
        out = {"launch": launched, "monitor": result.to_dict(), "report": report.to_dict()}
    finally:
        sim.stop()
    return out, sim, draft_id, version


def _states(draft_id: str, version: int) -> list[tuple[str | None, str, str, str]]:
    return [(e.from_state, e.to_state, e.actor, e.reason) for e in open_ledger().events(draft_id) if e.version == version]


def _track(out: dict[str, Any], start: tuple[float, float] | None = None) -> LineString:
    """The flown track (lon, lat), from ``start`` when given (the home it took off from)."""
    return LineString(([start] if start else []) + [(p[1], p[2]) for p in out["monitor"]["flights"][0]["track"]])


@pytest.fixture(scope="module")
def nominal(approved_home: tuple[Path, str, int], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    mp = pytest.MonkeyPatch()
    try:
        out, sim, draft_id, version = _fly(approved_home, tmp_path_factory.mktemp("nominal"), mp, None)
        return {"out": out, "sim": sim, "events": _states(draft_id, version), "home": os.environ["SORTIE_HOME"]}
    finally:
        mp.undo()


def test_nominal_flight_succeeds_and_the_report_says_what_was_flown(nominal: dict[str, Any]) -> None:
    out, events = nominal["out"], nominal["events"]
    mon, rep = out["monitor"], out["report"]
    assert mon["outcome"] == "SUCCEEDED" and mon["state"] == "SUCCEEDED"
    assert [(a, b) for a, b, _, _ in events] == [
        (None, "DRAFT"), ("DRAFT", "APPROVED"), ("APPROVED", "DISPATCHED"), ("DISPATCHED", "LAUNCHED"),
        ("LAUNCHED", "IN_FLIGHT"), ("IN_FLIGHT", "SUCCEEDED"),
    ]
    assert events[3][2] == APPROVER and "launched by" in events[3][3] and "mission_start" in events[3][3]
    assert events[-1][2] == "monitor" and "all" in events[-1][3] and "planned landing point" in events[-1][3]
    f = mon["flights"][0]
    assert f["status"] == "SUCCEEDED" and f["alerts"] == []
    assert sorted(set(f["reached"])) == sorted(f["reached"]) and len(f["reached"]) == f["nav_total"] > 5
    planned = rep["data"]["flown"]["drones"][0]["planned"]
    flown = rep["data"]["flown"]["drones"][0]["flown"]
    assert abs(flown["distance_m"] - planned["distance_m"]) / planned["distance_m"] < 0.05
    assert 0.5 < flown["duration_s"] / planned["duration_s"] < 1.5
    assert 0.5 < flown["energy_wh"] / planned["energy_wh"] < 2.0
    cov = rep["data"]["coverage"]["points"]
    assert cov["planned"] > 0 and cov["reached"] == cov["planned"] and cov["missed"] == []
    md = rep["markdown"]
    assert "**State:** SUCCEEDED" in md and f"{cov['reached']} of {cov['planned']} inspected" in md
    assert "APPROVED by **chen.jing** at 2026-11-29T06:58:00+02:00" in md and "looks right" in md
    assert "ACKED by chen.jing" in md and "## Alerts\n\nNone." in md
    png = Path(rep["files"]["map"])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.name == "flown.png"
    assert Path(rep["files"]["report"]).read_text(encoding="utf-8").count("](flown.png)") == 1
    # the artifact form embeds the same picture
    grounds = Grounds(ledger=open_ledger(Path(nominal["home"])))
    art = markdown_for_artifact(build_report(rep["draft_id"], rep["version"], grounds=grounds))
    assert "data:image/png;base64," in art and "](flown.png)" not in art


def test_a_launch_waits_for_its_follower_so_the_take_off_is_seen(approved_home: tuple[Path, str, int], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A follower slow to start (a loaded machine: the ledger, the world, the plan read first) is waited for: the
    launch moves the vehicle only once the follower reads its link, so the take-off is seen from the ground.
    (Before, the launch went at once: at 500x the vehicle was airborne before the follower listened.)"""
    import flows.vehicle.follow as follow

    slow_init = follow._Follower.__init__

    def late(self: Any, *args: Any, **kwargs: Any) -> None:
        time.sleep(2.0)
        slow_init(self, *args, **kwargs)

    monkeypatch.setattr(follow._Follower, "__init__", late)
    out, _, _, _ = _fly(approved_home, tmp_path, monkeypatch, None)
    f = out["monitor"]["flights"][0]
    assert f["takeoff_seen"] is True and f["status"] == "SUCCEEDED", (f["takeoff_seen"], f["status"])


def test_monitoring_again_returns_the_recorded_end(nominal: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SORTIE_HOME", nominal["home"])
    mon = nominal["out"]["monitor"]
    again = monitor_mission(mon["draft_id"], mon["version"], grounds=Grounds(ledger=open_ledger()), options=OPTS)
    assert again.already_ended and again.state == "SUCCEEDED" and again.flights[0].reached == mon["flights"][0]["reached"]
    assert len(_states(mon["draft_id"], mon["version"])) == 6  # no new event


def test_injected_statustext_changes_nothing_but_the_log(
    approved_home: tuple[Path, str, int], nominal: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, sim, draft_id, version = _fly(approved_home, tmp_path, monkeypatch, FlightFaults(inject_text=COMMAND_TEXT))
    mon, base = out["monitor"], nominal["out"]["monitor"]
    assert mon["outcome"] == base["outcome"] == "SUCCEEDED"
    assert [(a, b) for a, b, _, _ in _states(draft_id, version)] == [(a, b) for a, b, _, _ in nominal["events"]]
    f, g = mon["flights"][0], base["flights"][0]
    assert f["reached"] == g["reached"] and f["alerts"] == [] and f["mode"] == "AUTO"
    # the same path: every point of one track lies on the other (to well under a metre). Both start from the same
    # home; whether a track's samples caught the vehicle there before it climbed away depends on when the follower
    # read it, so each track is compared from that home on
    home = (sim.home[1], sim.home[0])
    assert (sim.home[0], sim.home[1]) == (nominal["sim"].home[0], nominal["sim"].home[1])
    assert _track(out, home).hausdorff_distance(_track(nominal["out"], home)) < 1e-5
    texts = [t["text"] for t in f["texts"]]
    assert COMMAND_TEXT in texts and COMMAND_TEXT not in [t["text"] for t in g["texts"]]
    # the ground station sent the vehicle nothing but heartbeats (and its stream requests, which the vehicle's
    # link layer takes) once it flew, with or without the text; the only commands were the launch's, before
    for flight in (sim.flight, nominal["sim"].flight):
        after_takeoff = {k for phase in ("FLYING", "LANDED") for k in flight.received.get(phase, {})}
        assert after_takeoff <= {"HEARTBEAT"}
        every = {k for seen in flight.received.values() for k in seen}
        assert not every & {"COMMAND_INT", "SET_MODE", "SET_POSITION_TARGET_GLOBAL_INT", "MISSION_SET_CURRENT",
                            "MISSION_ITEM_INT", "MISSION_COUNT"}
        assert [c["command"] for c in flight.commands] == [300]  # PX4: MAV_CMD_MISSION_START arms and starts
        assert flight.commands[0]["alt_m"] == 0.0  # sent on the ground: nothing flew before it
    md = out["report"]["markdown"]
    log = md.split("## Vehicle messages (logged as text, never acted on)")[1].split("## Events")[0]
    assert "```text" in log and COMMAND_TEXT in log
    assert md.count(COMMAND_TEXT) == 1  # only in the log: not in a reason, an alert or an event


#: Telemetry lost for good: LOST once silent longer than the vehicle could still fly. A pack at 45 % and no margin
#: or grace keep that within the watch (the simulator runs at the speed-up this machine gives it: ~66x measured
#: when 500x is asked, the vehicle's clock rate the follower measures).
LOST_SOON = replace(OPTS, endurance_margin=1.0, lost_grace_s=0.0, timeout_s=60.0)


@pytest.mark.parametrize(
    ("faults", "params", "charge_pct", "options", "reason_words", "alert_kind", "outcome", "via"),
    [
        # the vehicle's battery failsafe returns it (PX4 COM_LOW_BAT_ACT 3: return at BAT_CRIT_THR), named; its
        # thresholds are set high so it acts before the authority's energy guard has evidence (3 % planned)
        (FlightFaults(drain_factor=20.0), {"COM_LOW_BAT_ACT": 3.0, "BAT_LOW_THR": 0.8, "BAT_CRIT_THR": 0.7}, None,
         OPTS, ("RTL", "battery"), "battery_low", "FAILSAFE_BATTERY", []),
        # telemetry that never returns: LINK_LOST ("it may still be flying"), then LOST once silent for longer than
        # the vehicle's remaining endurance on its own clock (issue 42) — never ABORTED at the first silence
        (FlightFaults(link_loss_after_s=60.0), None, 45.0, LOST_SOON, ("ENDURANCE_EXCEEDED", "no telemetry"),
         "link_lost", "LOST", ["LINK_LOST"]),
        # the switch is named at the item the vehicle last said (MISSION_CURRENT 4 or 5: heartbeat and progress race)
        (FlightFaults(abort_at_seq=5), None, None, OPTS, ("RTL", "switched from AUTO to RTL at item"), "mode_change",
         "ABORTED", []),
    ],
    ids=["battery-drain", "link-loss", "abort-rtl"],
)
def test_faults_abort_with_the_reason_and_the_report_says_so(
    approved_home: tuple[Path, str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    faults: FlightFaults, params: dict[str, float] | None, charge_pct: float | None, options: MonitorOptions,
    reason_words: tuple[str, ...], alert_kind: str, outcome: str, via: list[str],
) -> None:
    out, sim, draft_id, version = _fly(approved_home, tmp_path, monkeypatch, faults, params, charge_pct, options)
    mon = out["monitor"]
    assert mon["outcome"] == outcome and mon["state"] == "ABORTED", (mon["outcome"], mon["reason"], mon["flights"][0]["gaps"])
    events = _states(draft_id, version)
    path = [("DISPATCHED", "LAUNCHED"), ("LAUNCHED", "IN_FLIGHT")]
    for state in via:
        path.append((path[-1][1], state))
    path.append((path[-1][1], "ABORTED"))
    assert [(a, b) for a, b, _, _ in events][-len(path):] == path
    for word in reason_words:
        assert word in mon["reason"] and word in events[-1][3]
    f = mon["flights"][0]
    assert len(set(f["reached"])) < f["nav_total"]
    assert alert_kind in [a["kind"] for a in f["alerts"]]
    audit = [r for r in open_ledger().audit_rows(limit=50) if r.command == "monitor.alert" and r.draft_id == draft_id]
    assert alert_kind.upper() in [r.result_code for r in audit]
    md = out["report"]["markdown"]
    assert "**State:** ABORTED" in md and "**Aborted:**" in md and f"**{alert_kind}**" in md
    for word in reason_words:
        assert word in md.split("## Planned vs flown")[0]
    cov = out["report"]["data"]["coverage"]["points"]
    assert cov["reached"] < cov["planned"] and cov["missed"]
    # the command reports the ended flight in full and exits non-zero: the outcome is not a success
    import json

    from typer.testing import CliRunner

    from flows.cli import app

    res = CliRunner().invoke(app, ["monitor", draft_id, "--json", "--timeout", "5"])
    assert res.exit_code == 2, res.output
    assert json.loads(res.output)["state"] == "ABORTED"


def test_a_draft_that_was_not_dispatched_cannot_be_monitored(
    approved_home: tuple[Path, str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    template, draft_id, version = approved_home
    shutil.copytree(template, tmp_path / "home")
    monkeypatch.setenv("SORTIE_HOME", str(tmp_path / "home"))
    with pytest.raises(Conflict, match="APPROVED"):
        monitor_mission(draft_id, version, grounds=Grounds(ledger=open_ledger()), options=OPTS)
    report = build_report(draft_id, version, with_map=False, grounds=Grounds(ledger=open_ledger()))
    assert "Not flown yet" in report.markdown and "Not dispatched." in report.markdown


def test_report_artifact_key_uses_prefects_alphabet() -> None:
    assert report_artifact_key("d-1E917cfc_AC13", 3) == "report-d-1e917cfc-ac13-v3"
    assert report_artifact_key("--", 1) == "report-unnamed-v1"


def test_cli_report_and_monitor_of_an_ended_flight(nominal: dict[str, Any], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    from typer.testing import CliRunner

    from flows.cli import app

    monkeypatch.setenv("SORTIE_HOME", nominal["home"])
    mon = nominal["out"]["monitor"]
    out = tmp_path / "r.md"
    res = CliRunner().invoke(app, ["report", mon["draft_id"], "--version", str(mon["version"]), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["state"] == "SUCCEEDED" and out.read_text(encoding="utf-8") == data["markdown"].replace(
        "](flown.png)", "](r-flown.png)")
    assert (tmp_path / "r-flown.png").read_bytes()[:4] == b"\x89PNG"
    res = CliRunner().invoke(app, ["monitor", mon["draft_id"], "--json", "--timeout", "5"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["already_ended"] is True
    res = CliRunner().invoke(app, ["monitor", "d-nope", "--json"])
    assert res.exit_code == 2 and json.loads(res.output)["error"]["code"] == "NOT_FOUND"


def test_coverage_counts_only_what_the_track_reached() -> None:
    from datetime import datetime, timezone

    from shapely.geometry import Polygon

    from dataclasses import replace

    from flows.usecases.report import coverage_reached
    from planner.plan import Leg, Plan, Sortie, Waypoint

    t0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)
    lon0, lat0 = 24.9410, 60.1700
    east = (lambda m: lon0 + m / (111_320.0 * 0.4975))  # noqa: E731 - metres east of the dock at 60.17°N
    legs = (
        Leg("takeoff", (Waypoint(lon0, lat0, 30.0, "TAKEOFF"),), 30.0, 6.0, 0.5),
        Leg("lane", (Waypoint(east(100), lat0, 30.0), Waypoint(east(200), lat0, 30.0)), 200.0, 20.0, 1.0, target_id="lane-a"),
        Leg("lane", (Waypoint(east(300), lat0, 30.0), Waypoint(east(400), lat0, 30.0)), 200.0, 20.0, 1.0, target_id="lane-b"),
        Leg("inspect", (Waypoint(east(200), lat0, 30.0, "INSPECT", target_id="poi-1"),), 10.0, 5.0, 0.2, target_id="poi-1"),
        Leg("inspect", (Waypoint(east(400), lat0, 30.0, "INSPECT", target_id="poi-2"),), 10.0, 5.0, 0.2, target_id="poi-2"),
    )
    plan = Plan("lane_patrol", t0, Polygon([(lon0, lat0), (east(500), lat0), (east(500), lat0 + 0.001)]), 30.0,
                (Sortie(0, "D1", "DOCK", t0, legs, 900.0, 60.0, 3.0, 0.05),))

    def heard(*corners: tuple[float, float], silent: tuple[float, float] | None = None) -> list[tuple[float, ...]]:
        """Positions (t_s, lon, lat) as a follower hears them at 5 Hz from a vehicle flying 10 m/s through
        ``corners`` (metres east, metres north); none while ``silent`` (metres flown from, to)."""
        out, t, flown = [], 0.0, 0.0
        for (x0, y0), (x1, y1) in zip(corners, corners[1:]):
            length = math.hypot(x1 - x0, y1 - y0)
            for k in range(int(length // 2.0) + 1):
                if silent is None or not silent[0] < flown + 2.0 * k < silent[1]:
                    f = min(1.0, 2.0 * k / length)
                    out.append((t + 0.2 * k, east(x0 + f * (x1 - x0)), lat0 + (y0 + f * (y1 - y0)) / 111_320.0))
            t, flown = t + 0.2 * (length // 2.0 + 1), flown + length
        return out

    # flew east to 250 m and turned back: lane-a whole, lane-b not, poi-1 yes, poi-2 no
    track = heard((0, 0), (250, 0.1), (0, 0))
    cov = coverage_reached(plan, {"D1": track})
    assert cov["lanes"]["planned"] == 2 and cov["lanes"]["reached"] == 1 and cov["lanes"]["missed"] == ["lane-b"]
    assert cov["points"] == {"planned": 2, "reached": 1, "missed": ["poi-2"]}
    assert coverage_reached(plan, {})["lanes"]["reached"] == 0
    full = coverage_reached(plan, {"D1": heard((0, 0), (400, 0))})
    assert full["lanes"]["reached"] == 2 and full["points"]["reached"] == 2
    # a silence is not a straight line: 13 s unheard over lane-b (datagrams lost) leaves its middle unflown
    gap = coverage_reached(plan, {"D1": heard((0, 0), (400, 0), silent=(320.0, 380.0))})
    assert gap["lanes"]["missed"] == ["lane-b"] and gap["lanes"]["reached_m"] == pytest.approx(150.0, abs=2.5)
    # a drone's second sortie is measured on its own track, not on the drone's last one (issue 43: a three-sortie
    # survey fully flown on the real SITL was reported 36 % flown)
    twice = replace(plan, sorties=(plan.sorties[0], replace(plan.sorties[0], index=1, legs=legs[:2])))
    other = heard((0, 0), (150, 33), (0, 0))  # sortie 1 flew 33 m north of lane-a
    both = coverage_reached(twice, {0: heard((0, 0), (400, 0)), 1: other})
    assert both["lanes"]["planned_m"] == 300.0 and both["lanes"]["reached_m"] == 200.0
    assert coverage_reached(twice, {0: heard((0, 0), (400, 0)), 1: heard((0, 0), (200, 0))}
                            )["lanes"]["reached_m"] == 300.0
