"""Neutral mission items from a plan sortie: the mission, the fence and the rally points.

One ``MissionItem`` is one row of a MAVLink mission (a ``MISSION_ITEM_INT`` on
the wire, a line of a ``.waypoints`` file, a SimpleItem of a QGroundControl
``.plan``). Everything that talks to a vehicle or writes a ground-station file
starts from the items made here, so the vehicle, the files and the read-back
comparison agree on one list.

Conventions (see FACTS.md, "MAVLink"):

- ``frame`` is the *plain* frame number (``MAV_FRAME_GLOBAL_RELATIVE_ALT`` = 3,
  ``MAV_FRAME_GLOBAL`` = 0, ``MAV_FRAME_MISSION`` = 2), as files store it;
  ``planner.output.mission_wire.wire_frame`` maps it to the ``_INT`` frame sent in ``MISSION_ITEM_INT``
  (3 → 6, 0 → 5), because the float ``MISSION_ITEM`` loses ~0.5–1 m.
- Dialect ``ardupilot``: seq 0 is the home slot (a placeholder at the dock that
  the vehicle ignores on upload and overwrites with its home on download), the
  takeoff is seq 1. ArduPilot stores a waypoint hold time as whole seconds, so
  holds are rounded up. Dialect ``px4``: no home slot, the takeoff is seq 0.
- Altitudes in the mission are metres relative to home (the dock). The plan's
  ``alt_m`` is above ground at the waypoint; without terrain data the two are
  taken as equal (flat ground around the dock), which is the usual assumption
  of a relative-altitude mission.
- The fence holds every PROHIBITED zone active during the sortie that reaches
  into the dock's range (exclusion polygons, or exclusion circles for circular
  zones) and the dock's range as an inclusion circle. A zone entirely above or
  entirely below the sortie's cruise band is left out (the fence is 2-D;
  excluding it would make the vehicle breach where the plan legally flies
  under or over it). The altitude ceiling is not a fence item in MAVLink:
  ``fence_params`` gives the autopilot parameters that set it and make the
  fence act (ArduPilot ``FENCE_ALT_MAX``, ``FENCE_ENABLE``, ``FENCE_TYPE`` =
  max altitude + polygons/circles; PX4 ``GF_MAX_VER_DIST``, ``GF_ACTION`` =
  return). The ceiling is the one the plan was made under (``ceiling_m`` of
  its parameters: the rule set's); a plan made without one gets no altitude
  fence (ArduPilot ``FENCE_TYPE`` = polygons/circles only).
- Rally points are the docks of the drone's tenant within the home dock's range,
  the home dock first.
- Fence and rally rows carry ``autocontinue`` 0, as QGroundControl and MAVSDK
  send them (they are not flown in order).

Pure: no I/O; pymavlink is imported for its constants only, from the MAVLink 2
``common`` dialect module (``mavutil`` would load the ``all`` dialect of both
protocol versions, seconds of import without cached bytecode). Importing the
v2 dialect module directly needs no ``MAVLINK20`` variable, so nothing here
touches the environment; the ``flows`` modules that import ``mavutil`` set it
first (FACTS.md, MAVLink).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from shapely.geometry import Point, Polygon

from planner.output import mav_ids as _M

from planner.errors import InvalidArgument
from planner.plan import Plan, Sortie, Waypoint
from planner.world.model import CircleArea, Dock, Drone, Restriction, VerticalReference, World

__all__ = [
    "Dialect",
    "EndAction",
    "MissionItem",
    "MissionSet",
    "MISSION",
    "FENCE",
    "RALLY",
    "MISSION_TYPE_NAMES",
    "FRAME_GLOBAL",
    "FRAME_MISSION",
    "FRAME_GLOBAL_RELATIVE_ALT",
    "dialect_of",
    "mission_items",
    "waypoint_rows",
    "fence_items",
    "rally_items",
    "fence_params",
    "mission_set",
    "command_name",
    "held_rows",
    "trigger_distance_m",
]

Dialect = Literal["ardupilot", "px4"]
EndAction = Literal["land", "rtl"]

MISSION: int = _M.MAV_MISSION_TYPE_MISSION  # 0
FENCE: int = _M.MAV_MISSION_TYPE_FENCE  # 1
RALLY: int = _M.MAV_MISSION_TYPE_RALLY  # 2
MISSION_TYPE_NAMES: dict[int, str] = {MISSION: "mission", FENCE: "fence", RALLY: "rally"}

FRAME_GLOBAL: int = _M.MAV_FRAME_GLOBAL  # 0
FRAME_MISSION: int = _M.MAV_FRAME_MISSION  # 2
FRAME_GLOBAL_RELATIVE_ALT: int = _M.MAV_FRAME_GLOBAL_RELATIVE_ALT  # 3


GF_ACTION_RETURN = 3  # PX4 GF_ACTION: 0 none, 1 warning, 2 hold, 3 return, 4 terminate, 5 land
DEFAULT_FRONT_OVERLAP = 0.7
FALLBACK_TRIGGER_DISTANCE_M = 10.0
SPEED_TYPE_GROUND = 1.0
M_PER_DEG_LAT = 110_540.0
M_PER_DEG_LON_EQUATOR = 111_320.0


@dataclass(frozen=True)
class MissionItem:
    """One mission row in plain numbers; lat/lon WGS84 degrees, ``alt_m`` in ``frame``'s reference."""

    seq: int
    command: int
    frame: int
    lat: float = 0.0
    lon: float = 0.0
    alt_m: float = 0.0
    param1: float = 0.0
    param2: float = 0.0
    param3: float = 0.0
    param4: float = 0.0
    current: int = 0
    autocontinue: int = 1
    mission_type: int = MISSION

    @property
    def params(self) -> tuple[float, float, float, float]:
        return (self.param1, self.param2, self.param3, self.param4)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form (for the ledger and ``--json``)."""
        return {
            "seq": self.seq,
            "command": self.command,
            "command_name": command_name(self.command),
            "frame": self.frame,
            "lat": round(self.lat, 8),
            "lon": round(self.lon, 8),
            "alt_m": round(self.alt_m, 3),
            "params": [round(p, 6) for p in self.params],
            "current": self.current,
            "autocontinue": self.autocontinue,
            "mission_type": self.mission_type,
        }


@dataclass(frozen=True)
class MissionSet:
    """Everything one vehicle receives for one sortie: fence, mission, rally, parameters."""

    drone_id: str
    dock_id: str
    sortie_index: int
    dialect: Dialect
    mission: tuple[MissionItem, ...]
    fence: tuple[MissionItem, ...]
    rally: tuple[MissionItem, ...]
    params: dict[str, float] = field(default_factory=dict)

    def items_of(self, mission_type: int) -> tuple[MissionItem, ...]:
        return {MISSION: self.mission, FENCE: self.fence, RALLY: self.rally}[mission_type]


def command_name(command: int) -> str:
    """``MAV_CMD_NAV_WAYPOINT`` for 16, or the number as text when unknown."""
    from pymavlink.dialects.v20 import common  # only to name a command (the plan path never needs it)

    entry = common.enums["MAV_CMD"].get(command)
    if entry is None:  # a vendor command read back from a vehicle: look in every dialect (heavy, rare)
        from pymavlink.dialects.v20 import all as every_dialect

        entry = every_dialect.enums["MAV_CMD"].get(command)
    return entry.name if entry is not None else str(command)


def held_rows(held: Mapping[int, Sequence[MissionItem]]) -> dict[str, list[dict[str, Any]]]:
    """What a vehicle holds (items per mission type) as JSON-able rows, named: ``{"fence": [...], "mission": [...]}``,
    each item with its command's name (what ``sortie read-mission`` and ``sortie sim-vehicle`` print)."""
    return {
        MISSION_TYPE_NAMES[t]: [
            {"seq": i.seq, "command": command_name(i.command), "frame": i.frame, "lat": i.lat, "lon": i.lon,
             "alt_m": i.alt_m, "params": list(i.params)}
            for i in items
        ]
        for t, items in sorted(held.items())
    }


def dialect_of(drone: Drone) -> Dialect:
    """The mission dialect from the drone's ``autopilot`` field."""
    if drone.autopilot not in ("ardupilot", "px4"):
        raise InvalidArgument(f"drone {drone.id!r} has autopilot {drone.autopilot!r}; expected ardupilot or px4")
    return drone.autopilot


def trigger_distance_m(plan: Plan, drone: Drone, altitude_m: float) -> float:
    """Camera trigger spacing for a survey: the footprint along track less the front overlap.

    ``plan.parameters["trigger_distance_m"]`` wins if the planner chose it;
    otherwise ``2·h·tan(vfov/2)·(1 − front_overlap)`` with the drone's camera
    (front overlap from ``plan.parameters["front_overlap"]``, default 0.7); a
    drone without camera data gets a fixed 10 m.
    """
    given = plan.parameters.get("trigger_distance_m")
    if given is not None:
        return round(float(given), 2)
    if drone.camera is None or altitude_m <= 0:
        return FALLBACK_TRIGGER_DISTANCE_M
    overlap = float(plan.parameters.get("front_overlap", DEFAULT_FRONT_OVERLAP))
    footprint_m = 2.0 * altitude_m * math.tan(math.radians(drone.camera.vfov_deg) / 2.0)
    return round(max(footprint_m * (1.0 - overlap), 0.5), 2)


def _sortie(plan: Plan, sortie: Sortie | int) -> Sortie:
    if isinstance(sortie, Sortie):
        return sortie
    for s in plan.sorties:
        if s.index == sortie:
            return s
    raise InvalidArgument(f"the plan has no sortie {sortie}; it has {[s.index for s in plan.sorties]}")


def _hold_s(hold_s: float, dialect: Dialect) -> float:
    if hold_s <= 0:
        return 0.0
    return float(math.ceil(hold_s - 1e-9)) if dialect == "ardupilot" else round(hold_s, 2)


def mission_items(
    plan: Plan,
    sortie: Sortie | int,
    world: World,
    *,
    dialect: Dialect | None = None,
    end: EndAction = "land",
    trigger_m: float | None = None,
) -> tuple[MissionItem, ...]:
    """The mission rows for one sortie, numbered from 0 in the dialect's layout (``waypoint_rows``).

    TAKEOFF → NAV_TAKEOFF (added at the dock if the sortie does not start with
    one); a change of speed → DO_CHANGE_SPEED before the
    waypoint it applies to; INSPECT and holds → NAV_WAYPOINT with the hold in
    param1; CAMERA_ON/OFF → NAV_WAYPOINT then DO_SET_CAM_TRIGG_DIST (distance,
    0); LAND → NAV_LAND at the dock, or RETURN_TO_LAUNCH with ``end="rtl"`` or
    when the sortie has no LAND.
    """
    s = _sortie(plan, sortie)
    drone = world.drone(s.drone_id)
    dialect = dialect or dialect_of(drone)
    wps = s.waypoints
    if not wps:
        raise InvalidArgument(f"sortie {s.index} has no waypoints")
    flight_alts = [w.alt_m for w in wps if w.alt_m > 0 and w.action not in ("LAND",)]
    trig = trigger_m if trigger_m is not None else trigger_distance_m(plan, drone, max(flight_alts, default=plan.altitude_m))
    return waypoint_rows(wps, world.dock(s.dock_id), dialect, default_alt=flight_alts[0] if flight_alts else plan.altitude_m,
                         trigger_m=trig, end=end)[0]


def waypoint_rows(
    wps: tuple[Waypoint, ...], dock: Dock, dialect: Dialect, *, default_alt: float, trigger_m: float, end: EndAction = "land"
) -> tuple[tuple[MissionItem, ...], tuple[int | None, ...]]:
    """A sortie's mission rows from its joined waypoints (``Sortie.waypoints``) flown from ``dock``, and per
    row the index of the waypoint it comes from (``None``: the home slot, an added take-off or waypoint).
    The rows are the ones a vehicle flies fast:

    * One nav row per place: a waypoint where the vehicle already is (the end of a transit that is the
      start of a lane, a lane end that is the next lane's start) gets no NAV_WAYPOINT of its own — a
      zero-length leg makes ArduCopter stop there (``planner.flight.ardupilot``) — only its commands.
    * The "do" rows before a nav row apply to the leg to it: the speed change first, then the camera.
      A camera switched off and on again at one place is not switched at all.
    * The first waypoint after the take-off is where the take-off ends (one is added there if the plan's
      first point is elsewhere), and the first speed change follows it: ArduCopter's waypoint
      controller starts at WPNAV_SPEED with that waypoint and would drop a speed set before it
      (``planner.output.mission_flight``).
    """
    rows: list[dict[str, Any]] = []
    source: list[int | None] = []
    if dialect == "ardupilot":
        rows.append(dict(command=_M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL, lat=dock.lat, lon=dock.lon, alt_m=dock.ground_alt_m))
        source.append(None)
    speed_now: float | None = None
    camera_now = 0.0  # trigger distance in force (0: off)
    pending_speed: tuple[float, int] | None = None
    pending_camera: tuple[float, int] | None = None
    last_nav: tuple[float, float, float] | None = None
    waypoints_seen = 0
    landed = False

    def add(row: dict[str, Any], k: int | None) -> None:
        rows.append(row)
        source.append(k)

    def flush() -> None:
        nonlocal pending_speed, pending_camera, camera_now
        if pending_speed is not None:
            add(dict(command=_M.MAV_CMD_DO_CHANGE_SPEED, frame=FRAME_MISSION, param1=SPEED_TYPE_GROUND, param2=pending_speed[0],
                     param3=-1.0), pending_speed[1])
        if pending_camera is not None and pending_camera[0] != camera_now:
            camera_now = pending_camera[0]
            add(dict(command=_M.MAV_CMD_DO_SET_CAM_TRIGG_DIST, frame=FRAME_MISSION, param1=camera_now,
                     param3=1.0 if camera_now > 0 else 0.0), pending_camera[1])
        pending_speed = pending_camera = None

    def nav(w: Waypoint, k: int, command: int, param1: float = 0.0, alt: float | None = None) -> None:
        nonlocal last_nav
        row = dict(command=command, frame=FRAME_GLOBAL_RELATIVE_ALT, lat=round(w.lat, 7), lon=round(w.lon, 7),
                   alt_m=round(w.alt_m if alt is None else alt, 2), param1=param1)
        add(row, k)
        last_nav = (row["lat"], row["lon"], row["alt_m"])

    if wps[0].action != "TAKEOFF":
        # A multicopter mission must start with a take-off; the plan's first point is not one.
        add(dict(command=_M.MAV_CMD_NAV_TAKEOFF, frame=FRAME_GLOBAL_RELATIVE_ALT, lat=round(dock.lat, 7),
                 lon=round(dock.lon, 7), alt_m=round(default_alt, 2)), None)
        last_nav = (round(dock.lat, 7), round(dock.lon, 7), round(default_alt, 2))
    for k, w in enumerate(wps):
        if landed:
            break
        if w.action == "TAKEOFF":
            nav(w, k, _M.MAV_CMD_NAV_TAKEOFF, alt=w.alt_m if w.alt_m > 0 else default_alt)
            continue
        if w.action == "LAND":
            flush()
            if end == "rtl":
                add(dict(command=_M.MAV_CMD_NAV_RETURN_TO_LAUNCH, frame=FRAME_MISSION), k)
            else:
                nav(w, k, _M.MAV_CMD_NAV_LAND, alt=0.0)
            landed = True
            continue
        hold = _hold_s(w.hold_s, dialect)
        here = (round(w.lat, 7), round(w.lon, 7), round(w.alt_m, 2))
        if waypoints_seen and hold == 0 and here == last_nav:
            pass  # already there: no leg, only the waypoint's camera command below
        else:
            if w.speed_mps > 0 and (speed_now is None or abs(w.speed_mps - speed_now) > 1e-6):
                speed_now = round(w.speed_mps, 2)
                pending_speed = (speed_now, k)
            if waypoints_seen == 0 and last_nav is not None and here[:2] != last_nav[:2]:
                # start the waypoint controller where the take-off ends, so the first leg gets its speed
                add(dict(command=_M.MAV_CMD_NAV_WAYPOINT, frame=FRAME_GLOBAL_RELATIVE_ALT, lat=last_nav[0], lon=last_nav[1],
                         alt_m=last_nav[2]), None)
                waypoints_seen += 1
            if waypoints_seen == 0:
                held, pending_speed = pending_speed, None  # set after the controller starts (docstring)
                nav(w, k, _M.MAV_CMD_NAV_WAYPOINT, param1=hold)
                pending_speed = held
            else:
                flush()
                nav(w, k, _M.MAV_CMD_NAV_WAYPOINT, param1=hold)
            waypoints_seen += 1
        if w.action == "CAMERA_ON":
            pending_camera = (trigger_m, k)
        elif w.action == "CAMERA_OFF":
            pending_camera = (0.0, k)
    if not landed:
        flush()
        add(dict(command=_M.MAV_CMD_NAV_RETURN_TO_LAUNCH, frame=FRAME_MISSION), None)
    items = tuple(MissionItem(seq=i, mission_type=MISSION, **row) for i, row in enumerate(rows))
    return items, tuple(source)


def _local_xy(lon: float, lat: float, dock: Dock) -> tuple[float, float]:
    """Equirectangular metres about the dock: good to well under 1 % within a dock's range."""
    kx = M_PER_DEG_LON_EQUATOR * math.cos(math.radians(dock.lat))
    return ((lon - dock.lon) * kx, (lat - dock.lat) * M_PER_DEG_LAT)


def _zone_limit_agl_m(limit_m: float | None, ref: VerticalReference, dock: Dock, unbounded: float) -> float:
    """A zone limit in metres above the dock's ground (AMSL/WGS84 limits less the dock's ground altitude)."""
    if limit_m is None:
        return unbounded
    if ref == VerticalReference.AGL:
        return limit_m
    return limit_m - dock.ground_alt_m


def fence_items(plan: Plan, sortie: Sortie | int, world: World) -> tuple[MissionItem, ...]:
    """Fence rows: the dock's range as an inclusion circle, then each relevant PROHIBITED zone.

    A zone counts when it applies at the sortie's start or end, reaches into
    the dock's range, and its vertical extent meets the sortie's cruise band
    (lowest to highest waypoint, take-off and landing aside).
    Polygons lose their closing vertex and their holes (excluding the whole
    outline is the safe side).
    """
    s = _sortie(plan, sortie)
    dock = world.dock(s.dock_id)
    cruise = [w.alt_m for w in s.waypoints if w.action not in ("TAKEOFF", "LAND") and w.alt_m > 0]
    top_m = max(cruise, default=plan.altitude_m)
    bottom_m = min(cruise, default=plan.altitude_m)
    rows: list[dict[str, Any]] = [
        dict(command=_M.MAV_CMD_NAV_FENCE_CIRCLE_INCLUSION, frame=FRAME_GLOBAL, lat=dock.lat, lon=dock.lon, param1=float(dock.radius_m))
    ]
    reach = Point(0.0, 0.0).buffer(dock.radius_m, 64)
    for zone in world.zones:
        if zone.restriction != Restriction.PROHIBITED:
            continue
        if not zone.applies_during(s.start_at, s.end_at):  # a zone opening mid-sortie is fenced too
            continue
        for vol in zone.volumes:
            if _zone_limit_agl_m(vol.lower_m, vol.lower_ref, dock, 0.0) >= top_m:
                continue  # starts above the highest waypoint: flying under it is legal
            if _zone_limit_agl_m(vol.upper_m, vol.upper_ref, dock, math.inf) <= bottom_m:
                continue  # ends below the lowest cruise waypoint: flying over it is legal
            h = vol.horizontal
            if isinstance(h, CircleArea):
                cx, cy = _local_xy(h.lon, h.lat, dock)
                if math.hypot(cx, cy) - h.radius_m > dock.radius_m:
                    continue
                rows.append(
                    dict(command=_M.MAV_CMD_NAV_FENCE_CIRCLE_EXCLUSION, frame=FRAME_GLOBAL, lat=h.lat, lon=h.lon, param1=float(h.radius_m))
                )
                continue
            ring = list(h.exterior.coords)[:-1]
            local = Polygon([_local_xy(x, y, dock) for x, y in ring])
            if not local.is_valid:
                local = local.buffer(0)
            if not local.intersects(reach):
                continue
            n = float(len(ring))
            for lon, lat in ring:
                rows.append(
                    dict(command=_M.MAV_CMD_NAV_FENCE_POLYGON_VERTEX_EXCLUSION, frame=FRAME_GLOBAL, lat=round(lat, 7), lon=round(lon, 7), param1=n)
                )
    return tuple(MissionItem(seq=i, mission_type=FENCE, autocontinue=0, **row) for i, row in enumerate(rows))


def rally_items(plan: Plan, sortie: Sortie | int, world: World) -> tuple[MissionItem, ...]:
    """Rally rows: the home dock, then the tenant's other docks within its range (by id).

    Each at the plan's altitude above that dock, expressed relative to home.
    """
    s = _sortie(plan, sortie)
    home = world.dock(s.dock_id)
    docks = [home] + [
        d
        for d in world.docks
        if d.id != home.id and d.tenant == home.tenant and math.hypot(*_local_xy(d.lon, d.lat, home)) <= home.radius_m
    ]
    rows = [
        dict(
            command=_M.MAV_CMD_NAV_RALLY_POINT,
            frame=FRAME_GLOBAL_RELATIVE_ALT,
            lat=d.lat,
            lon=d.lon,
            alt_m=round(plan.altitude_m + (d.ground_alt_m - home.ground_alt_m), 2),
        )
        for d in docks
    ]
    return tuple(MissionItem(seq=i, mission_type=RALLY, autocontinue=0, **row) for i, row in enumerate(rows))


def fence_params(plan: Plan, dialect: Dialect) -> dict[str, float]:
    """The altitude ceiling (MAVLink fences are 2-D) and fence enforcement, as autopilot parameters."""
    ceiling = plan.parameters.get("ceiling_m")
    if dialect == "ardupilot":
        # FENCE_TYPE bits: 1 max altitude + 4 polygons and circles; not 2, the home circle of FENCE_RADIUS.
        if ceiling is None:
            return {"FENCE_ENABLE": 1.0, "FENCE_TYPE": 4.0}
        return {"FENCE_ALT_MAX": float(ceiling), "FENCE_ENABLE": 1.0, "FENCE_TYPE": 5.0}
    if ceiling is None:
        return {"GF_ACTION": float(GF_ACTION_RETURN)}
    return {"GF_MAX_VER_DIST": float(ceiling), "GF_ACTION": float(GF_ACTION_RETURN)}


def mission_set(
    plan: Plan,
    sortie: Sortie | int,
    world: World,
    *,
    dialect: Dialect | None = None,
    end: EndAction = "land",
) -> MissionSet:
    """Fence, mission, rally and ceiling parameters for one sortie's vehicle."""
    s = _sortie(plan, sortie)
    d = dialect or dialect_of(world.drone(s.drone_id))
    return MissionSet(
        drone_id=s.drone_id,
        dock_id=s.dock_id,
        sortie_index=s.index,
        dialect=d,
        mission=mission_items(plan, s, world, dialect=d, end=end),
        fence=fence_items(plan, s, world),
        rally=rally_items(plan, s, world),
        params=fence_params(plan, d),
    )
