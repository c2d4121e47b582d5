"""Launching one vehicle: pre-flight checks from its own state, then its autopilot's arm-and-start sequence.

Nothing flies until a ground station launches it (FACTS.md, "ArduCopter 4.6.3
SITL, observed"), and a launch is where a mistake costs an aircraft, so:

1. **Pre-flight checks** (``preflight``), each from what the vehicle itself
   reports on the bound link, none from a file:

   - ``heartbeat`` — heard within the last seconds, the expected autopilot;
   - ``disarmed`` — on the ground and not armed (never take over a vehicle
     someone else is flying);
   - ``prearm`` — SYS_STATUS's MAV_SYS_STATUS_PREARM_CHECK healthy: the
     autopilot's own pre-arm checks (EKF, sensors, fence, …) pass; ArduCopter
     SITL sets it 20–60 s after boot, so it is waited for (``prearm_wait_s``);
   - ``ekf`` — SYS_STATUS's AHRS bit not unhealthy;
   - ``gps`` — GPS_RAW_INT fix type 3D or better;
   - ``battery`` — the remaining charge covers the plan's need (the sortie's
     share of the battery with the plan's reserve kept);
   - ``home`` — HOME_POSITION at the planned dock (mission altitudes are
     relative to home, and RTL goes there);
   - the rule set's **vehicle rules** (``LaunchPlan.rule_checks``, one check per
     rule, named by its id): the vehicle's own live position at its dock — not
     its home, which ArduCopter moves to wherever it arms — and its failsafe
     parameters (read from it first with PARAM_REQUEST_READ: ``params_wanted``);
   - ``mission`` — the mission read back over the same link has the approved
     item count and hash (``mission_hash``: what the dialect preserves,
     ``planner.output.mission_wire``).

   A failing ``prearm`` check, and a refused arm, show the vehicle's own reasons
   (its "PreArm: …" / "Arm: …" STATUSTEXTs, ``VehicleView.prearm``).

2. **The dialect's sequence**, every step acknowledged or settled by the next
   message that shows it (``flows.vehicle.commands.VehicleController``):
   ArduPilot GUIDED → MAV_CMD_COMPONENT_ARM_DISARM(1) → AUTO →
   MAV_CMD_MISSION_START (arming is refused in AUTO: ``ModeAuto::allows_arming``;
   MISSION_START sets ``auto_armed`` and the take-off begins); PX4 one
   MAV_CMD_MISSION_START, which arms and enters Mission mode
   (``Commander::handle_command``).

3. **Nothing half-done left armed on the ground**: any failure after the arm
   step is followed by a disarm (never forced), and the outcome says whether
   the vehicle confirmed it.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from flows.vehicle.commands import (
    CommandJournal,
    ControlOptions,
    VehicleController,
    arm_command,
    disarm_command,
    distance_m,
    mission_start_command,
    set_mode_command,
)
from flows.vehicle.link import VehicleLink
from flows.vehicle.mission_client import MissionClient
from flows.vehicle.param_read import read_params
from flows.vehicle.view import VehicleView
from planner.output.mission_items import MISSION, MissionItem
from planner.output.mission_wire import compare_items, normalise_as_vehicle

__all__ = ["LaunchPlan", "LaunchOptions", "Check", "LaunchOutcome", "RuleChecks", "preflight", "launch_vehicle",
           "mission_hash", "prearm_reasons", "battery_needed_pct"]

Status = Literal["LAUNCHED", "PREFLIGHT_FAILED", "REFUSED"]


#: ``rule_checks(view, position_age_s)``: the rule set's checks of the vehicle's own state (``Check`` per rule).
RuleChecks = Callable[[VehicleView, "float | None"], "list[Check]"]


@dataclass(frozen=True)
class LaunchPlan:
    """What one vehicle must hold and have before it may fly: from the approved plan, the fleet entry and the
    rule set (``rule_checks`` judges the vehicle's live state; ``params_wanted`` are read from it first)."""

    drone_id: str
    dialect: str
    mission: tuple[MissionItem, ...]
    battery_needed_pct: float
    dock_lat: float
    dock_lon: float
    params_wanted: tuple[str, ...] = ()
    rule_checks: RuleChecks | None = field(default=None, compare=False)


@dataclass(frozen=True)
class LaunchOptions:
    """Bounds of one launch (wall seconds)."""

    prearm_wait_s: float = 90.0
    heartbeat_fresh_s: float = 3.0
    home_tolerance_m: float = 30.0
    readback_timeout_s: float = 20.0
    params_wait_s: float = 4.0  # for the parameters the rules read (PARAM_REQUEST_READ, asked twice)
    arm_reason_wait_s: float = 1.0  # after a refused arm, for the vehicle's "Arm: …" / "PreArm: …" text
    control: ControlOptions = field(default_factory=ControlOptions)


@dataclass(frozen=True)
class Check:
    """One pre-flight check: passed or not, what was measured against what."""

    name: str
    ok: bool
    detail: str
    measured: Any = None
    limit: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "measured": self.measured,
                "limit": self.limit}


@dataclass
class LaunchOutcome:
    """How one vehicle's launch went: the checks, each step's answer, and the vehicle's state at the end."""

    drone_id: str
    link: str
    dialect: str
    status: Status = "PREFLIGHT_FAILED"
    checks: list[Check] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    failed: str | None = None  # the check or step that stopped it
    detail: str = ""
    disarmed: bool | None = None  # after a failure once armed: whether the vehicle confirmed the disarm
    vehicle: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"drone_id": self.drone_id, "link": self.link, "dialect": self.dialect, "status": self.status,
                "checks": [c.to_dict() for c in self.checks], "steps": list(self.steps), "failed": self.failed,
                "detail": self.detail, "disarmed": self.disarmed, "vehicle": dict(self.vehicle)}


def mission_hash(items: tuple[MissionItem, ...] | list[MissionItem], dialect: str) -> str:
    """sha256 of a mission as the vehicle keeps it (``normalise_as_vehicle``; ArduPilot's home slot left out),
    so the approved items and the items read back hash alike exactly when they are the same mission."""
    rows = []
    for item in items:
        if dialect == "ardupilot" and item.seq == 0:
            continue
        n = normalise_as_vehicle(item, dialect)  # type: ignore[arg-type]
        rows.append([n.seq, n.command, n.frame, round(n.lat * 1e7), round(n.lon * 1e7), round(n.alt_m, 2),
                     [round(p, 3) for p in n.params], n.autocontinue])
    return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()


def _wait_for(link: VehicleLink, seconds: float, ready: Callable[[], bool]) -> None:
    link.pump(max(0.0, seconds), ready)


def preflight(link: VehicleLink, plan: LaunchPlan, options: LaunchOptions | None = None) -> list[Check]:
    """Every check of the module docstring, in order, from the vehicle's own answers on ``link`` (connected)."""
    opts = options or LaunchOptions()
    v = link.view
    checks: list[Check] = []
    age = time.monotonic() - link.seen.get("HEARTBEAT", 0.0)
    ok = age <= opts.heartbeat_fresh_s and link.dialect == plan.dialect
    checks.append(Check("heartbeat", ok, f"heard {age:.1f} s ago from a {link.dialect or 'unknown'} autopilot"
                        + ("" if link.dialect == plan.dialect else f", the fleet entry says {plan.dialect}"),
                        measured=round(age, 2), limit=opts.heartbeat_fresh_s))
    checks.append(Check("disarmed", not v.armed, f"{'armed' if v.armed else 'disarmed'} in mode {v.mode or '?'}",
                        measured=v.armed, limit=False))
    _wait_for(link, 5.0, lambda: link.view.prearm_ok is not None and link.view.gps_fix_type is not None
              and link.view.battery_pct is not None and link.view.home_lat is not None)
    _wait_for(link, opts.prearm_wait_s, lambda: link.view.prearm_ok is True)
    v = link.view
    if v.prearm_ok is None:
        checks.append(Check("prearm", False, "the vehicle reports no pre-arm state (SYS_STATUS PREARM_CHECK absent)"))
    else:
        checks.append(Check("prearm", v.prearm_ok, "pre-arm checks pass (SYS_STATUS PREARM_CHECK healthy)"
                            if v.prearm_ok else f"pre-arm checks fail after {opts.prearm_wait_s:g} s "
                            f"(SYS_STATUS PREARM_CHECK unhealthy): {prearm_reasons(v)}",
                            measured=v.prearm_ok if v.prearm_ok else list(v.prearm), limit=True))
    checks.append(Check("ekf", v.ahrs_ok is not False, "AHRS/EKF healthy" if v.ahrs_ok else
                        ("AHRS/EKF unhealthy (SYS_STATUS)" if v.ahrs_ok is False else "AHRS/EKF state not reported"),
                        measured=v.ahrs_ok))
    fix = v.gps_fix_type
    checks.append(Check("gps", fix is not None and fix >= 3,
                        "no GPS_RAW_INT from the vehicle" if fix is None else
                        f"GPS fix type {fix} with {v.satellites} satellites (3D or better needed)", measured=fix, limit=3))
    pct = v.battery_pct
    checks.append(Check("battery", pct is not None and pct >= plan.battery_needed_pct,
                        "no battery state from the vehicle" if pct is None else
                        f"{pct:.0f} % remaining, the sortie needs {plan.battery_needed_pct:.0f} % with its reserve",
                        measured=pct, limit=round(plan.battery_needed_pct, 1)))
    if v.home_lat is None or v.home_lon is None:
        checks.append(Check("home", False, "no HOME_POSITION from the vehicle: it has no home"))
    else:
        off = distance_m(v.home_lat, v.home_lon, plan.dock_lat, plan.dock_lon)
        checks.append(Check("home", off <= opts.home_tolerance_m,
                            f"home is {off:.1f} m from the planned dock", measured=round(off, 1),
                            limit=opts.home_tolerance_m))
    if plan.rule_checks is not None:
        if plan.params_wanted:
            read_params(link, plan.params_wanted, opts.params_wait_s)
        # the vehicle's position now (GLOBAL_POSITION_INT, a stream the link asked for): wait for a fresh one
        link.pump(opts.params_wait_s, lambda: time.monotonic() - link.seen.get("GLOBAL_POSITION_INT", -1e9) < 2.0)
        seen = link.seen.get("GLOBAL_POSITION_INT")
        checks.extend(plan.rule_checks(link.view, None if seen is None else time.monotonic() - seen))
    checks.append(_mission_check(link, plan, opts))
    checks.append(Check("mode", True, f"mode {link.view.mode or '?'} (the sequence sets its own)",
                        measured=link.view.mode))
    return checks


def _mission_check(link: VehicleLink, plan: LaunchPlan, opts: LaunchOptions) -> Check:
    client = MissionClient(link, retry_s=min(1.0, opts.control.ack_timeout_s))
    dl = client.download(MISSION, time.monotonic() + opts.readback_timeout_s)
    want = mission_hash(plan.mission, plan.dialect)
    if dl.outcome != "DOWNLOADED":
        return Check("mission", False, f"the mission could not be read back ({dl.detail})", limit=want)
    got = mission_hash(dl.items, plan.dialect)
    diffs = compare_items(plan.mission, dl.items, dialect=plan.dialect, mission_type=MISSION)  # type: ignore[arg-type]
    ok = got == want and not diffs and len(dl.items) == len(plan.mission)
    detail = (f"{len(dl.items)} items read back, hash {got[:12]}… matches the approved mission" if ok else
              f"{len(dl.items)} items read back ({len(plan.mission)} approved), hash {got[:12]}… vs {want[:12]}…"
              + (f"; first difference: {diffs[0]}" if diffs else ""))
    return Check("mission", ok, detail, measured={"count": len(dl.items), "hash": got},
                 limit={"count": len(plan.mission), "hash": want})


def _sequence(dialect: str) -> list[Any]:
    if dialect == "px4":
        return [mission_start_command("px4")]
    return [set_mode_command("ardupilot", "GUIDED"), arm_command(), set_mode_command("ardupilot", "AUTO"),
            mission_start_command("ardupilot")]


def launch_vehicle(link: VehicleLink, plan: LaunchPlan, options: LaunchOptions | None = None, *,
                   checks: list[Check] | None = None, journal: CommandJournal | None = None) -> LaunchOutcome:
    """Check (unless ``checks`` were already made on this link) and launch one vehicle; never raises for the
    vehicle's answers — the outcome says LAUNCHED, PREFLIGHT_FAILED (a check) or REFUSED (a step). ``journal``:
    where each step (and a disarm after a refusal) is written before it is sent."""
    opts = options or LaunchOptions()
    out = LaunchOutcome(plan.drone_id, link.connection, plan.dialect)
    out.checks = checks if checks is not None else preflight(link, plan, opts)
    bad = [c for c in out.checks if not c.ok]
    if bad:
        out.status, out.failed = "PREFLIGHT_FAILED", bad[0].name
        out.detail = f"{plan.drone_id}: pre-flight check {bad[0].name} failed: {bad[0].detail}; nothing was sent"
        out.vehicle = link.view.to_dict()
        return out
    vc = VehicleController(link, opts.control, journal=journal)
    try:
        for cmd in _sequence(plan.dialect):
            step = vc.execute(cmd)
            out.steps.append(step.to_dict())
            started = cmd.name == "mission_start" and step.outcome == "ACCEPTED_UNCONFIRMED" and link.view.armed
            if step.in_effect or started:
                continue
            out.status, out.failed = "REFUSED", cmd.name
            out.detail = f"{plan.drone_id}: the launch stopped at {cmd.name}: {step.detail}"
            if cmd.name == "arm":  # the vehicle says why it will not arm in a STATUSTEXT right after its answer
                link.pump(opts.arm_reason_wait_s, lambda: bool(link.view.prearm))
                out.detail += f"; the vehicle says: {prearm_reasons(link.view)}"
            if link.view.armed:
                down = vc.execute(disarm_command())
                out.steps.append(down.to_dict())
                out.disarmed = down.in_effect
                out.detail += ("; disarmed again" if down.in_effect else
                               f"; the disarm did not take effect ({down.detail}): the vehicle may still be armed")
            else:
                out.disarmed = True
            break
        else:
            out.status = "LAUNCHED"
            out.detail = f"{plan.drone_id}: " + ", ".join(f"{s['name']} {s['result'] or s['outcome']}" for s in out.steps)
    finally:
        vc.close()
    out.vehicle = link.view.to_dict()
    return out


def prearm_reasons(view: VehicleView) -> str:
    """The vehicle's own reasons for refusing to arm, as it said them this session (its latest "PreArm: …" /
    "Arm: …" texts), or that it gave none."""
    if not view.prearm:
        return "it sent no PreArm/Arm text this session"
    return "; ".join(repr(t) for t in view.prearm)


def battery_needed_pct(battery_fraction: float, reserve_fraction: float) -> float:
    """The charge a sortie needs at take-off: its share of the full battery, with the reserve left at landing."""
    keep = min(max(reserve_fraction, 0.0), 0.95)
    return math.ceil(battery_fraction * 100.0 / (1.0 - keep) * 10.0) / 10.0
