"""Fixtures of the control tests: approved drafts per dialect, and ``fly`` (a dispatched, launched, flying simulator).

See ``controlkit`` for what they are made of.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

os.environ.setdefault("MAVLINK20", "1")

from control.controlkit import KEY, LAUNCH, MONITOR, NOW, OPERATOR, Flight, Template, _plan_approved  # noqa: E402,F401
from flows.context import DEMO_WORLD_DIR  # noqa: E402
from flows.ledger import open_ledger  # noqa: E402
from flows.sim.flight import FlightFaults, FlightOptions, SimFlight  # noqa: E402
from testkit import sim_vehicle  # noqa: E402
from flows.usecases import dispatching  # noqa: E402
from flows.usecases.common import load_world_at  # noqa: E402
from flows.usecases.grounds import Grounds  # noqa: E402
from flows.usecases.monitoring import monitor_mission  # noqa: E402


@pytest.fixture(scope="session")
def templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Template]:
    """One approved draft, flown by a PX4 vehicle as planned, or by an ArduPilot one: the same ledger dispatched
    against a copy of the world whose M3TD-01 runs ArduPilot (dispatch and the monitor take the dialect from it);
    "signed": that ArduPilot with a MAVLink signing key (the fleet entry names it; the key is in the home's store)."""
    home = tmp_path_factory.mktemp("approved")
    draft_id, version = _plan_approved(home, None)
    worlds = {}
    for name, extra in (("ardupilot", {}), ("signed", {"signing_key": "m3td-01"})):
        world = tmp_path_factory.mktemp(f"{name}-world") / "world"
        shutil.copytree(DEMO_WORLD_DIR, world)
        fleet = json.loads((world / "fleet.json").read_text(encoding="utf-8"))
        for d in fleet["drones"]:
            if d["id"] == "M3TD-01":
                d["autopilot"] = "ardupilot"
                d.update(extra)
        (world / "fleet.json").write_text(json.dumps(fleet, indent=2), encoding="utf-8")
        worlds[name] = world
    return {"px4": Template(home, draft_id, version, "px4", None),
            "ardupilot": Template(home, draft_id, version, "ardupilot", worlds["ardupilot"]),
            "signed": Template(home, draft_id, version, "ardupilot", worlds["signed"], signing=True),
            "unapproved": Template(home.with_name(home.name + "-unapproved"), draft_id, version, "px4", None)}


@pytest.fixture
def approved_home(templates: dict[str, Template], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Template:
    """A private SORTIE_HOME holding the approved draft (nothing dispatched)."""
    t = templates["px4"]
    home = tmp_path / "approved"
    shutil.copytree(t.home, home)
    monkeypatch.setenv("SORTIE_HOME", str(home))
    return Template(home, t.draft_id, t.version, t.dialect, None)


@pytest.fixture
def fly(templates: dict[str, Template], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., Flight]]:
    """``fly(dialect, faults=…, monitor=True, speedup=…, before_dispatch=…)`` → a dispatched, launched, flying
    ``Flight`` (``before_dispatch()`` runs on its home before the dispatch, the drone still free).

    The simulated vehicle has two ports, as a vehicle with a telemetry radio and a companion link does: SERIAL0
    takes the dispatch, the launch and the operators' commands, SERIAL1 the monitor (a UDP port answers whoever
    spoke last, so two ground stations on one port would take each other's answers). ``faults`` are injected once
    the vehicle flies (the launch's own commands are not what they test); ``climb_mps`` slows the take-off."""
    started: list[Flight] = []

    def start(dialect: str = "px4", *, faults: FlightFaults | None = None, monitor: bool = True,
              speedup: float = 150.0, climb_mps: float = 5.0, launch: bool = True,
              before_dispatch: Callable[[], None] | None = None) -> Flight:
        t = templates[dialect]
        home = tmp_path / f"home-{dialect}-{len(started)}"
        shutil.copytree(t.home, home)
        monkeypatch.setenv("SORTIE_HOME", str(home))
        if t.signing:
            from flows.vehicle.keys import write_signing_key

            write_signing_key(home / "keys", "m3td-01", KEY)
        rec = open_ledger().get_draft(t.draft_id, t.version)
        world = load_world_at(t.world_dir or rec.world_dir)
        drone = world.drone(rec.plan["sorties"][0]["drone_id"])
        dock = world.dock(drone.dock_id)
        options = FlightOptions(speedup=speedup, default_speed_mps=drone.cruise_speed_mps, climb_mps=climb_mps)
        flight = SimFlight(options)
        sim = sim_vehicle(["udpin:127.0.0.1:0", "udpin:127.0.0.1:0"], drone.autopilot,
                         home=(dock.lat, dock.lon, dock.ground_alt_m), heartbeat_s=0.1, rerequest_s=0.1, flight=flight,
                         signing_key=KEY if t.signing else None).start()
        f = Flight(t.draft_id, t.version, dialect, sim, flight, open_ledger(), (dock.lat, dock.lon),
                   world_dir=t.world_dir)
        started.append(f)
        control_link = sim.addresses[1] if t.signing else sim.address  # signed: a port that drops unsigned messages
        if before_dispatch is not None:
            before_dispatch()  # on this home's ledger, while the drone is still free
        disp = dispatching.dispatch(t.draft_id, t.version, actor=OPERATOR, now=NOW, link=control_link, timeout_s=15.0,
                                    grounds=Grounds(ledger=open_ledger(), world_dir=t.world_dir))
        assert disp.status == "ACKED", disp
        if monitor:
            def follow() -> None:
                f.monitor_result.append(monitor_mission(
                    t.draft_id, t.version, grounds=Grounds(ledger=f.ledger), actor="monitor", now=NOW, options=MONITOR,
                    link=sim.address if t.signing else sim.addresses[1],  # the port the operators do not use
                    on_update=lambda fl, what, data: f.updates.append((what, dict(data)))))

            f.monitor_thread = threading.Thread(target=follow, daemon=True)
            f.monitor_thread.start()
        if not launch:
            return f  # dispatched, on the ground, waiting for a launch that never comes
        launched = f.launch_with()
        assert launched.state == "LAUNCHED", launched
        f.launch = launched
        f.launch_commands = len(flight.commands)
        if faults is not None:
            flight.options = replace(flight.options, faults=faults)
        deadline = time.monotonic() + 15.0
        while flight.phase != "FLYING":
            assert time.monotonic() < deadline, f"the simulated vehicle did not take off ({flight.phase})"
            time.sleep(0.01)
        return f

    yield start
    for f in started:
        if f.monitor_thread is not None:
            f.monitor_thread.join(MONITOR.timeout_s + 5)
        f.sim.stop()
