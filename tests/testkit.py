"""The one kit of hand-built test values (no files): worlds, plans, rule contexts, process helpers.

Importable from every test as ``import testkit`` (``pythonpath = ["tests"]`` in
pyproject.toml). Two families live here:

* rule builders (``world``, ``drone``, ``dock``, ``simple_plan``, ``ctx`` ...):
  points are placed in metres with the same local frame the rules measure in
  (``planner.geo.projection.LocalFrame`` of the area), so boundary tests are exact;
* dispatch builders (``dispatch_world``, ``dispatch_plan``, ``wire_plan``):
  the small Helsinki world (a DJI M30T at DOCK-A, a handful of zones) and the
  hand-made plans that mission items, ground-station files and uploads are
  checked against.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any
from datetime import datetime, time, timedelta, timezone
from pathlib import Path

from shapely.geometry import Polygon, box

from planner.output.sortie_flight import TIMING
from planner.plan import Leg, Plan, Sortie, Waypoint
from planner.geo.projection import LocalFrame
from planner.world.model import (
    Applicability,
    Camera,
    CircleArea,
    Dock,
    Drone,
    Geozone,
    Lane,
    Poi,
    Region,
    Restriction,
    User,
    VerticalReference,
    Weather,
    WeatherHour,
    WeeklySlot,
    World,
    WorldDefaults,
    ZoneVolume,
)
from rules.context import EvaluationContext
from rules.loading import RuleSet, parse_rules

UTC = timezone.utc
T0 = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)  # a Friday
DOCK_LON, DOCK_LAT = 24.9449, 60.1652
FRAME = LocalFrame.for_point(DOCK_LON, DOCK_LAT)
DOCK_XY = FRAME.forward(DOCK_LON, DOCK_LAT)


def at(dx_m: float, dy_m: float) -> tuple[float, float]:
    """lon/lat of the point dx_m east, dy_m north of the dock, in the rules' frame."""
    return FRAME.inverse(DOCK_XY[0] + dx_m, DOCK_XY[1] + dy_m)


def drone(id: str = "D1", **kw: object) -> Drone:
    base = dict(
        id=id, model="Test 30T", dock_id="DOCK-A", tenant="t",
        capabilities=frozenset({"RGB_CAMERA", "THERMAL_CAMERA"}),
        battery_wh=200.0, battery_pct=100.0, flight_time_s=2400.0, hover_time_s=2000.0,
        cruise_speed_mps=10.0, inspection_speed_mps=5.0, max_wind_mps=12.0,
        min_temp_c=-20.0, max_temp_c=45.0, ip_rating="IP55", camera=None,
        status="ONLINE", last_telemetry_at=T0 - timedelta(seconds=30),
        autopilot="ardupilot", link="udp:127.0.0.1:14550",
    )
    base.update(kw)
    return Drone(**base)  # type: ignore[arg-type]


def dock(id: str = "DOCK-A", **kw: object) -> Dock:
    base = dict(id=id, name=id, tenant="t", lon=DOCK_LON, lat=DOCK_LAT, ground_alt_m=14.0, radius_m=5000.0, max_wind_mps=12.0)
    base.update(kw)
    return Dock(**base)  # type: ignore[arg-type]


def hour(t: datetime, **kw: object) -> WeatherHour:
    base = dict(
        time=t, wind_speed_10m_mps=3.0, wind_speed_80m_mps=4.0, wind_speed_120m_mps=5.0,
        wind_direction_10m_deg=200.0, wind_gusts_10m_mps=6.0, precipitation_mm=0.0, temperature_2m_c=5.0,
    )
    base.update(kw)
    return WeatherHour(**base)  # type: ignore[arg-type]


def calm_weather(start: datetime = T0 - timedelta(hours=2), n: int = 12, **kw: object) -> Weather:
    return Weather(tuple(hour(start + timedelta(hours=i), **kw) for i in range(n)))


def bare_world(
    *, name: str = "t", timezone: str = "UTC", attribution: str = "", drones: Iterable[Drone] = (), docks: Iterable[Dock] = (),
    zones: Iterable[Geozone] = (), lanes: Iterable[Lane] = (), regions: Iterable[Region] = (), pois: Iterable[Poi] = (),
    weather: Weather = Weather(()), users: Iterable[User] = (),
) -> World:
    """A World of exactly what is given (default WorldDefaults, no weather): the one place tests build one."""
    return World(
        name=name, timezone=timezone, defaults=WorldDefaults(), attribution=attribution,
        drones=tuple(drones), docks=tuple(docks), zones=tuple(zones), lanes=tuple(lanes), regions=tuple(regions),
        pois=tuple(pois), weather=weather, users=tuple(users),
    )


def world(drones=None, docks=None, zones=(), weather=None) -> World:  # type: ignore[no-untyped-def]
    return bare_world(
        name="test", timezone="Europe/Helsinki",
        drones=drones if drones is not None else (drone(),),
        docks=docks if docks is not None else (dock(),),
        zones=zones, weather=weather if weather is not None else calm_weather(),
    )


def permanent() -> tuple[Applicability, ...]:
    return (Applicability(permanent=True),)


def fri_sat_14_22(start: datetime | None = None, end: datetime | None = None) -> tuple[Applicability, ...]:
    return (Applicability(permanent=False, start=start, end=end, schedule=(WeeklySlot(frozenset({4, 5}), time(14), time(22)),)),)


def circle_zone(
    id: str, dx_m: float, dy_m: float, radius_m: float, restriction: Restriction = Restriction.PROHIBITED,
    lower_m: float | None = 0.0, upper_m: float | None = 120.0, ref: VerticalReference = VerticalReference.AGL,
    applicability: tuple[Applicability, ...] | None = None, message: str = "zone message",
) -> Geozone:
    lon, lat = at(dx_m, dy_m)
    vol = ZoneVolume(CircleArea(lon, lat, radius_m), lower_m, ref, upper_m, ref)
    return Geozone(id, f"{id} name", restriction, (vol,), applicability or permanent(), message, "test")


def box_zone(
    id: str, x0: float, y0: float, x1: float, y1: float, restriction: Restriction = Restriction.PROHIBITED,
    lower_m: float | None = 0.0, upper_m: float | None = 120.0, ref: VerticalReference = VerticalReference.AGL,
    applicability: tuple[Applicability, ...] | None = None, message: str = "zone message",
) -> Geozone:
    """A zone whose corners are at these metre offsets from the dock (a rectangle in the frame)."""
    ring = [at(x0, y0), at(x1, y0), at(x1, y1), at(x0, y1)]
    vol = ZoneVolume(Polygon(ring), lower_m, ref, upper_m, ref)
    return Geozone(id, f"{id} name", restriction, (vol,), applicability or permanent(), message, "test")


def wp(dx_m: float, dy_m: float, alt_m: float, action: str = "WAYPOINT") -> Waypoint:
    lon, lat = at(dx_m, dy_m)
    return Waypoint(lon=lon, lat=lat, alt_m=alt_m, action=action)  # type: ignore[arg-type]


def leg(points: list[tuple[float, float, float]], kind: str = "transit", duration_s: float = 60.0, energy_wh: float = 1.0) -> Leg:
    return Leg(kind=kind, waypoints=tuple(wp(*p) for p in points), distance_m=0.0, duration_s=duration_s, energy_wh=energy_wh)  # type: ignore[arg-type]


def sortie(legs: list[Leg], index: int = 0, drone_id: str = "D1", dock_id: str = "DOCK-A",
           start_at: datetime = T0, energy_wh: float | None = None) -> Sortie:
    e = sum(l.energy_wh for l in legs) if energy_wh is None else energy_wh
    return Sortie(index=index, drone_id=drone_id, dock_id=dock_id, start_at=start_at, legs=tuple(legs),
                  distance_m=0.0, duration_s=sum(l.duration_s for l in legs), energy_wh=e, battery_fraction=0.0)


def plan(sorties: list[Sortie], area: Polygon | None = None) -> Plan:
    if area is None:
        lo, la = at(-2000, -2000)
        hi_lo, hi_la = at(2000, 2000)
        area = box(lo, la, hi_lo, hi_la)
    # the figures are the test's own: marked as timed by the planner's model, so the rules read them as given
    return Plan(mission_type="AREA_SURVEY", planned_for=sorties[0].start_at if sorties else T0, area_wgs84=area,
                altitude_m=50.0, sorties=tuple(sorties), parameters={"timing": TIMING})


def simple_plan(points: list[tuple[float, float, float]], **kw: object) -> Plan:
    """One sortie: a vertical takeoff under the first point, a transit leg through ``points``,
    a vertical landing under the last point (so only leg 1 goes anywhere)."""
    (x0, y0, a0), (x1, y1, a1) = points[0], points[-1]
    legs = [
        Leg("takeoff", (wp(x0, y0, 0, "TAKEOFF"), wp(x0, y0, a0)), 0.0, 60.0, 1.0),
        leg(points),
        Leg("landing", (wp(x1, y1, a1), wp(x1, y1, 0, "LAND")), 0.0, 60.0, 1.0),
    ]
    return plan([sortie(legs, **kw)])  # type: ignore[arg-type]


def ctx(now: datetime = T0, sensors: tuple[str, ...] = (), auth: dict[str, str] | None = None, phase: str = "plan") -> EvaluationContext:
    return EvaluationContext(now=now, required_sensors=frozenset(sensors), authorisations=auth or {}, phase=phase)  # type: ignore[arg-type]


def one_rule(kind: str, severity: str = "block", params: str = "{}", rid: str = "r", extra: str = "") -> RuleSet:
    return parse_rules(f"version: 1\nrules:\n  - {{id: {rid}, kind: {kind}, severity: {severity}, params: {params}{extra}}}\n", "test.yaml")


# --- dispatch builders: the small Helsinki world and hand-made plans --------------------------

DISPATCH_T0 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
DISPATCH_DOCKS = (
    Dock("DOCK-A", "Fire station roof", "city-fire", 24.9410, 60.1700, 12.0, 3000.0, 12.0),
    Dock("DOCK-B", "Depot", "city-fire", 24.9600, 60.1750, 4.0, 3000.0, 12.0),
    Dock("DOCK-X", "Elsewhere", "other", 24.9420, 60.1710, 5.0, 3000.0, 12.0),
    Dock("DOCK-Z", "Far away", "city-fire", 25.5000, 60.4000, 5.0, 3000.0, 12.0),
)


def m30t(*, last_telemetry_at: datetime, tenant: str = "t", autopilot: str = "ardupilot",
         link: str = "udp:127.0.0.1:14550", **kw: object) -> Drone:
    """M30T-01 at DOCK-A with the DJI Matrice 30T's published figures (263.2 Wh, 41 min cruise, 36 min hover)."""
    base: dict[str, object] = dict(
        id="M30T-01", model="DJI Matrice 30T", dock_id="DOCK-A", tenant=tenant,
        capabilities=frozenset({"RGB_CAMERA"}), battery_wh=263.2, battery_pct=96.0,
        flight_time_s=2460.0, hover_time_s=2160.0, cruise_speed_mps=12.0, inspection_speed_mps=7.0,
        max_wind_mps=12.0, min_temp_c=-20.0, max_temp_c=50.0, ip_rating="IP55",
        camera=Camera(hfov_deg=84.0, vfov_deg=66.0), status="ONLINE", last_telemetry_at=last_telemetry_at,
        autopilot=autopilot, link=link,
    )
    base.update(kw)
    return Drone(**base)  # type: ignore[arg-type]


def agl_zone(zid: str, restriction: Restriction, horizontal: Polygon | CircleArea, lower_m: float | None = None,
             applicability: tuple[Applicability, ...] = ()) -> Geozone:
    """A one-volume zone from ``lower_m`` (None = ground) to 120 m AGL, named by its id."""
    vol = ZoneVolume(horizontal=horizontal, lower_m=lower_m, lower_ref=VerticalReference.AGL, upper_m=120.0, upper_ref=VerticalReference.AGL)
    return Geozone(id=zid, name=zid, restriction=restriction, volumes=(vol,), applicability=applicability, message="", source="test")


DISPATCH_ZONES = (
    agl_zone("NFZ-POLY", Restriction.PROHIBITED, Polygon([(24.945, 60.171), (24.947, 60.171), (24.947, 60.172), (24.945, 60.172)])),
    agl_zone("NFZ-CIRCLE", Restriction.PROHIBITED, CircleArea(24.935, 60.168, 150.0)),
    agl_zone("NFZ-FAR", Restriction.PROHIBITED, CircleArea(25.5, 60.5, 500.0)),
    agl_zone("AUTH", Restriction.REQ_AUTHORISATION, CircleArea(24.941, 60.170, 500.0)),
    agl_zone("NFZ-HIGH", Restriction.PROHIBITED, CircleArea(24.950, 60.172, 100.0), lower_m=200.0),
    agl_zone("NFZ-LATER", Restriction.PROHIBITED, CircleArea(24.952, 60.172, 100.0),
             applicability=(Applicability(permanent=False, start=datetime(2027, 1, 1, tzinfo=UTC)),)),
)


def dispatch_world(autopilot: str = "ardupilot", link: str = "udpout:127.0.0.1:9", *, name: str = "dispatch-test",
                   docks: int = len(DISPATCH_DOCKS), zones: int = len(DISPATCH_ZONES)) -> World:
    """The M30T at DOCK-A with the first ``docks`` of DISPATCH_DOCKS and the first ``zones`` of
    DISPATCH_ZONES (the upload tests keep the fence small: one dock, the two no-fly zones)."""
    drone = m30t(last_telemetry_at=DISPATCH_T0, tenant="city-fire", autopilot=autopilot, link=link)
    return bare_world(name=name, timezone="Europe/Helsinki", attribution="test", drones=(drone,),
                      docks=DISPATCH_DOCKS[:docks], zones=DISPATCH_ZONES[:zones])


def wire_world(autopilot: str = "ardupilot", link: str = "udpout:127.0.0.1:9", *, name: str = "dispatch-test", docks: int = 1) -> World:
    """dispatch_world with only the two no-fly zones (a small fence for uploads over the wire)."""
    return dispatch_world(autopilot, link, name=name, docks=docks, zones=2)


DISPATCH_AREA = Polygon([(24.9428, 60.1708), (24.9448, 60.1708), (24.9448, 60.1718), (24.9428, 60.1718)])


def dispatch_plan(n_sweep: int = 4) -> Plan:
    """One survey sortie from DOCK-A: takeoff, transit, an ``n_sweep``-point lawnmower, an inspection hold, landing."""
    dock_lon, dock_lat = 24.9410, 60.1700
    sweep = [Waypoint(24.9430 + 0.0004 * (i // 2), 60.1710 + 0.0006 * (i % 2 if (i // 2) % 2 == 0 else 1 - i % 2), 50.0,
                      "WAYPOINT", 7.0) for i in range(n_sweep)]
    sweep[0] = replace(sweep[0], action="CAMERA_ON")
    sweep[-1] = replace(sweep[-1], action="CAMERA_OFF")
    legs = (
        Leg("takeoff", (Waypoint(dock_lon, dock_lat, 50.0, "TAKEOFF"),), 50.0, 10.0, 1.0),
        Leg("transit", (Waypoint(dock_lon, dock_lat, 50.0, "TAKEOFF"), Waypoint(24.9425, 60.1705, 50.0, "WAYPOINT", 12.0)), 120.0, 10.0, 1.0),
        Leg("sweep", tuple(sweep), 300.0, 45.0, 5.0, target_id="AREA-1"),
        Leg("inspect", (Waypoint(24.9440, 60.1702, 40.0, "INSPECT", 7.0, hold_s=10.5, target_id="POI-1"),), 50.0, 20.0, 2.0, target_id="POI-1"),
        Leg("landing", (Waypoint(dock_lon, dock_lat, 40.0, "WAYPOINT", 12.0), Waypoint(dock_lon, dock_lat, 0.0, "LAND")), 200.0, 30.0, 3.0),
    )
    sortie = Sortie(index=0, drone_id="M30T-01", dock_id="DOCK-A", start_at=DISPATCH_T0, legs=legs,
                    distance_m=720.0, duration_s=115.0, energy_wh=12.0, battery_fraction=0.05)
    return Plan(mission_type="survey", planned_for=DISPATCH_T0, area_wgs84=DISPATCH_AREA, altitude_m=50.0, sorties=(sortie,),
                coverage_fraction=0.98, parameters={"front_overlap": 0.7, "ceiling_m": 120.0})


def wire_plan() -> Plan:
    """A shorter survey sortie (three sweep points, no transit leg) for uploads over the wire."""
    lon0, lat0 = 24.9410, 60.1700
    legs = (
        Leg("takeoff", (Waypoint(lon0, lat0, 50.0, "TAKEOFF"),), 50.0, 10.0, 1.0),
        Leg("sweep", (
            Waypoint(24.94301, 60.17101, 50.0, "CAMERA_ON", 7.0),
            Waypoint(24.94302, 60.17163, 50.0, "WAYPOINT", 7.0),
            Waypoint(24.94343, 60.17164, 50.0, "CAMERA_OFF", 7.0),
        ), 300.0, 45.0, 5.0, target_id="AREA-1"),
        Leg("inspect", (Waypoint(24.94401, 60.17021, 40.0, "INSPECT", 7.0, hold_s=10.5, target_id="POI-1"),),
            50.0, 20.0, 2.0, target_id="POI-1"),
        Leg("landing", (Waypoint(lon0, lat0, 40.0, "WAYPOINT", 12.0), Waypoint(lon0, lat0, 0.0, "LAND")), 200.0, 30.0, 3.0),
    )
    sortie = Sortie(0, "M30T-01", "DOCK-A", DISPATCH_T0, legs, 600.0, 105.0, 11.0, 0.05)
    return Plan("survey", DISPATCH_T0, DISPATCH_AREA, 50.0, (sortie,), coverage_fraction=0.98,
                parameters={"ceiling_m": 120.0})


# --- processes and ports -----------------------------------------------------------------------

def free_port(kind: str = "tcp") -> int:
    """A 127.0.0.1 port (``tcp`` or ``udp``) that was free a moment ago and has no listener now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM if kind == "tcp" else socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def popen_ctrl_c(args: list[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen`` of a child that a SIGINT stops as Ctrl-C would, whatever this process inherited.

    A suite started in the background of a non-interactive shell (``pytest … &``) inherits SIGINT ignored, and so
    would every child it spawns: Python then installs no KeyboardInterrupt handler, and a test that stops its child
    with SIGINT waits for nothing (seen: ``sortie sim-fleet`` timed out after 60 s). A signal that is caught is
    reset to its default at exec, so with Python's own handler in place for the spawn the child starts with
    SIGINT at its default, as under a terminal. Called from the main thread (``signal.signal`` requires it).
    """
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(args, **kwargs)
    finally:
        signal.signal(signal.SIGINT, previous)


def stop_process_group(proc: subprocess.Popen[bytes], term_timeout_s: float = 10.0) -> None:
    """SIGTERM the process group (started with ``start_new_session=True``), SIGKILL after a bounded wait."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=term_timeout_s)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)



# --- simulated vehicles ---------------------------------------------------------------------------

#: The simulator is realistic by default (``flows.sim.vehicle``: 10 s of boot, 35 s to pass pre-arm, 1× clock);
#: a test that is not about those delays says so by using these.
READY_AT_ONCE: dict[str, float] = {"boot_s": 0.0, "prearm_s": 0.0}
SIM_SPEEDUP = 20.0  # the vehicle's clock in tests: heartbeats at 20 Hz wall, a minute of flight in 3 s


def sim_vehicle(listen: str | list[str] | None = None, dialect: str = "ardupilot", *, ready_at_once: bool = True,
                speedup: float = SIM_SPEEDUP, **kwargs: Any) -> Any:
    """A ``SimVehicle`` for a test (not started): ArduPilot on TCP and PX4 on UDP as their SITLs, by default on a
    port the OS picks; its clock ``speedup`` times the wall clock; ``ready_at_once`` — the test is not about the boot
    or pre-arm delays (pass ``boot_s`` / ``prearm_s`` to test one of them)."""
    from flows.sim.vehicle import SimVehicle

    if listen is None:
        listen = "tcpin:127.0.0.1:0" if dialect == "ardupilot" else "udpin:127.0.0.1:0"
    options: dict[str, Any] = {**(READY_AT_ONCE if ready_at_once else {}), "speedup": speedup, **kwargs}
    return SimVehicle(listen, dialect, **options)  # type: ignore[arg-type]


@contextmanager
def approved_draft_home(home: Path, *, now: datetime, text: str = "inspect the hydrants today",
                        region_id: str = "region-1002", planner: str = "li.wei", approver: str = "chen.jing") -> Iterator[Any]:
    """``home`` holding one planned and approved draft (yielded), on the demo world."""
    from flows.ledger import open_ledger
    from flows.usecases import decisions, planning
    from flows.usecases.grounds import Grounds

    grounds = Grounds(ledger=open_ledger(home))
    d = planning.plan_draft(text=text, region_id=region_id, requested_by=planner, now=now, grounds=grounds)
    assert d.status == "DRAFT" and d.verdict == "pass", (d.status, d.verdict)
    decisions.approve(d.draft_id, d.version, approver=approver, plan_hash=d.plan_hash, comment="looks right",
                      now=now, grounds=grounds)
    yield d


__all__ = [
    # rule builders (metres from the dock, in the rules' frame)
    "DOCK_LAT", "DOCK_LON", "FRAME", "T0", "UTC", "at", "box_zone", "calm_weather", "circle_zone", "ctx", "dock", "drone",
    "fri_sat_14_22", "hour", "leg", "one_rule", "permanent", "plan", "simple_plan", "sortie", "world", "wp",
    # any world
    "bare_world",
    # dispatch builders (the small Helsinki world)
    "DISPATCH_AREA", "DISPATCH_DOCKS", "DISPATCH_T0", "DISPATCH_ZONES", "agl_zone", "dispatch_plan", "dispatch_world",
    "m30t", "wire_plan", "wire_world",
    # processes and ports
    "free_port", "stop_process_group",
    # simulated vehicles
    "READY_AT_ONCE", "SIM_SPEEDUP", "sim_vehicle",
    # a home with an approved draft
    "approved_draft_home",
]


def demo_world_copy(dest: Path, reported_at: str = "2026-11-29T06:59:40+02:00") -> Path:
    """A copy of the demo world at ``dest`` whose drones all reported in at ``reported_at`` (20 s before the
    demo's reference time, so a plan at that time passes the telemetry rule)."""
    import json
    import shutil

    from flows.context import DEMO_WORLD_DIR

    shutil.copytree(DEMO_WORLD_DIR, dest)
    fleet = json.loads((dest / "fleet.json").read_text(encoding="utf-8"))
    for d in fleet["drones"]:
        d["last_telemetry_at"] = reported_at
    (dest / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    return dest


def ledger_version(draft_id: str) -> Any:
    """A minimal first version of a draft for the ledger's own tests (a ``flows.ledger.NewVersion``): one sortie
    naming a drone after the draft, so every draft's plan, and so its hash, differs."""
    from flows.ledger import NewVersion
    from flows.ledger.records import sha256_json

    plan = {"sorties": [{"drone_id": f"D-{draft_id}"}]}
    return NewVersion(draft_id=draft_id, version=1, state="DRAFT", request_key=f"rk-{draft_id}", tenant="t",
                      region_id=None, requested_by="a", request_text="r", intent=None, plan=plan,
                      plan_hash=sha256_json(plan), findings=[], verdict="pass", missing=[], world_name="w",
                      world_dir="w", world_hash="wh")
