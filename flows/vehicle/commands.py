"""Commanding a flying vehicle: COMMAND_LONG, its COMMAND_ACK, bounded retries, a lost ACK settled by evidence.

``VehicleController`` opens its own link to one vehicle (the vehicle, or the
router in front of it, answers every ground station that talks to it, so the
monitor keeps following while a controller commands), learns the vehicle's
ids, autopilot and state from its HEARTBEAT and MISSION_CURRENT, and runs one
``Command`` at a time:

1. **Already in effect?** If the vehicle's own state already shows the
   command's effect (paused, in RTL, …) nothing is sent (a repeated
   ``sortie pause`` is a no-op, not a second command).
2. **Send once, wait for COMMAND_ACK** (``ack_timeout_s``). ACCEPTED is then
   confirmed by the vehicle's state (``confirm_timeout_s``); IN_PROGRESS waits
   on; TEMPORARILY_REJECTED is tried again (bounded); DENIED, FAILED,
   UNSUPPORTED are refusals, reported with the vehicle's words.
3. **No ACK: settle by evidence, never by sending twice blind.** The command
   or its ACK was lost, and the two need opposite answers. The next
   HEARTBEAT (mode) — or for ArduPilot's pause, which keeps mode AUTO, the
   next MISSION_CURRENT (``mission_state`` PAUSED, ArduCopter
   ``GCS_MAVLINK_Copter::mission_state``) — received after the ACK timeout
   decides: in effect → SETTLED (the ACK was lost); not in effect → the
   command never arrived, so it is sent again with ``confirmation`` + 1 (the
   MAVLink field for a retransmission), at most ``max_attempts`` times.
4. Before every send ``may_send()`` is asked (a resume checks the ledger: a
   recall recorded meanwhile wins, and the resume is abandoned).

Telemetry is data: nothing received is ever turned into a command here; the
commands are the caller's.

Dialects: ArduCopter pauses a mission with ``MAV_CMD_DO_PAUSE_CONTINUE``
(``GCS_MAVLINK_Copter::handle_command_pause_continue``); PX4's commander does
not handle it (``Commander::handle_command`` answers UNSUPPORTED), so a PX4
vehicle is held by ``MAV_CMD_DO_SET_MODE`` AUTO.LOITER and resumed with
AUTO.MISSION. Return to launch is ``MAV_CMD_NAV_RETURN_TO_LAUNCH`` and land in
place ``MAV_CMD_NAV_LAND`` on both.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

os.environ.setdefault("MAVLINK20", "1")
from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants; mavutil is loaded when a link opens)

from flows.vehicle.modes import mode_name  # noqa: E402
from planner.errors import DeviceUnavailable, InvalidArgument  # noqa: E402

__all__ = [
    "VehicleView",
    "Command",
    "CommandOutcome",
    "ControlOptions",
    "VehicleController",
    "pause_command",
    "hold_command",
    "resume_command",
    "rtl_command",
    "land_command",
    "result_name",
    "distance_m",
]

GCS_SYSTEM_ID = 255
CONTROL_COMPONENT_ID = _M.MAV_COMP_ID_MISSIONPLANNER  # 190: the ground station that commands
_PX4_MAIN_AUTO, _PX4_SUB_LOITER, _PX4_SUB_MISSION = 4, 3, 4  # px4_custom_mode.h
_ARDU_MODE_NUMBER = {"AUTO": 3, "LOITER": 5, "RTL": 6, "LAND": 9}  # ArduCopter/mode.h Mode::Number

Outcome = Literal["CONFIRMED", "SETTLED", "ALREADY", "ACCEPTED_UNCONFIRMED", "REFUSED", "NO_ANSWER", "ABANDONED"]


def result_name(code: int) -> str:
    """``MAV_RESULT_DENIED`` → ``DENIED``."""
    entry = _M.enums["MAV_RESULT"].get(int(code))
    return entry.name.replace("MAV_RESULT_", "") if entry is not None else f"RESULT_{code}"


def distance_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Ground distance on a local flat earth (fine over a few km)."""
    kx = math.cos(math.radians((lat1 + lat2) / 2.0)) * 111_320.0
    return math.hypot((lon2 - lon1) * kx, (lat2 - lat1) * 111_320.0)


@dataclass(frozen=True)
class VehicleView:
    """What the vehicle last said about itself (HEARTBEAT, MISSION_CURRENT, GLOBAL_POSITION_INT)."""

    autopilot: int = _M.MAV_AUTOPILOT_ARDUPILOTMEGA
    mode: str = ""
    armed: bool = False
    mission_state: int | None = None
    seq: int | None = None
    lat: float | None = None
    lon: float | None = None
    alt_m: float | None = None

    @property
    def dialect(self) -> str:
        return "px4" if self.autopilot == _M.MAV_AUTOPILOT_PX4 else "ardupilot"

    @property
    def paused(self) -> bool:
        """Held in the mission: mode LOITER (PX4 AUTO.LOITER, ArduCopter LOITER) or ArduPilot AUTO paused."""
        if self.mode == "LOITER":
            return True
        return self.dialect == "ardupilot" and self.mode == "AUTO" and self.mission_state == _M.MISSION_STATE_PAUSED

    @property
    def returning(self) -> bool:
        return self.mode in ("RTL", "LAND")

    def to_dict(self) -> dict[str, Any]:
        return {"dialect": self.dialect, "mode": self.mode, "armed": self.armed, "paused": self.paused,
                "mission_state": self.mission_state, "seq": self.seq, "lat": self.lat, "lon": self.lon,
                "alt_m": None if self.alt_m is None else round(self.alt_m, 1)}


@dataclass(frozen=True)
class Command:
    """One command and the vehicle state that shows it is in effect (``evidence`` names where to look)."""

    name: str
    command: int
    params: tuple[float, float, float, float, float, float, float]
    in_effect: Callable[[VehicleView], bool]
    evidence: Literal["HEARTBEAT", "MISSION_CURRENT"] = "HEARTBEAT"


@dataclass
class CommandOutcome:
    """How one command went: what was sent, what came back, what the vehicle's state says."""

    name: str
    command: int
    outcome: Outcome
    result: str | None = None
    attempts: int = 0
    acks: int = 0
    detail: str = ""
    duration_s: float = 0.0
    view: VehicleView = field(default_factory=VehicleView)

    @property
    def in_effect(self) -> bool:
        return self.outcome in ("CONFIRMED", "SETTLED", "ALREADY")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "command": self.command, "outcome": self.outcome, "result": self.result,
                "attempts": self.attempts, "acks": self.acks, "detail": self.detail,
                "duration_s": round(self.duration_s, 3), "in_effect": self.in_effect, "vehicle": self.view.to_dict()}


def _set_mode_params(dialect: str, mode: str) -> tuple[float, float, float, float, float, float, float]:
    base = float(_M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED)
    if dialect == "px4":
        sub = {"LOITER": _PX4_SUB_LOITER, "AUTO": _PX4_SUB_MISSION}[mode]
        return (base, float(_PX4_MAIN_AUTO), float(sub), 0.0, 0.0, 0.0, 0.0)
    return (base, float(_ARDU_MODE_NUMBER[mode]), 0.0, 0.0, 0.0, 0.0, 0.0)


def hold_command(dialect: str) -> Command:
    """Hold by mode: MAV_CMD_DO_SET_MODE to LOITER (PX4 AUTO.LOITER; ArduCopter LOITER, whose AUTO later resumes
    the current item: ArduCopter mode_auto.cpp ModeAuto::init → mission.start_or_resume())."""
    return Command("pause", _M.MAV_CMD_DO_SET_MODE, _set_mode_params(dialect, "LOITER"), lambda v: v.mode == "LOITER")


def pause_command(dialect: str) -> Command:
    """Hold the vehicle where it is, mission kept: DO_PAUSE_CONTINUE(0) on ArduPilot, AUTO.LOITER on PX4.

    ArduCopter refuses the pause (FAILED) while it is not flying a waypoint leg, for instance while it holds at
    a waypoint (ModeAuto::pause: ``wp_nav->reached_wp_destination()``); the caller then holds by mode
    (``hold_command``)."""
    if dialect == "px4":
        return hold_command("px4")
    return Command("pause", _M.MAV_CMD_DO_PAUSE_CONTINUE, (0.0, 0, 0, 0, 0, 0, 0), lambda v: v.paused,
                   evidence="MISSION_CURRENT")


def resume_command(dialect: str, mode: str = "AUTO") -> Command:
    """Go on with the mission: back to AUTO from a LOITER hold (both dialects), else DO_PAUSE_CONTINUE(1)."""
    if dialect == "px4" or mode == "LOITER":
        return Command("resume", _M.MAV_CMD_DO_SET_MODE, _set_mode_params(dialect, "AUTO"),
                       lambda v: v.mode == "AUTO" and not v.paused)
    return Command("resume", _M.MAV_CMD_DO_PAUSE_CONTINUE, (1.0, 0, 0, 0, 0, 0, 0),
                   lambda v: v.mode == "AUTO" and v.mission_state == _M.MISSION_STATE_ACTIVE, evidence="MISSION_CURRENT")


def rtl_command() -> Command:
    """Return to launch (both dialects: MAV_CMD_NAV_RETURN_TO_LAUNCH; in effect when the mode is RTL)."""
    return Command("rtl", _M.MAV_CMD_NAV_RETURN_TO_LAUNCH, (0.0, 0, 0, 0, 0, 0, 0), lambda v: v.mode == "RTL")


def land_command() -> Command:
    """Land where it is (MAV_CMD_NAV_LAND with lat/lon 0: the current position; in effect when the mode is LAND)."""
    return Command("land", _M.MAV_CMD_NAV_LAND, (0.0, 0, 0, 0, 0, 0, 0), lambda v: v.mode == "LAND")


@dataclass(frozen=True)
class ControlOptions:
    """Bounds of one controller (wall seconds)."""

    connect_timeout_s: float = 5.0
    ack_timeout_s: float = 1.0
    settle_timeout_s: float = 2.0
    confirm_timeout_s: float = 3.0
    in_progress_timeout_s: float = 5.0
    max_attempts: int = 3

    def __post_init__(self) -> None:
        if min(self.connect_timeout_s, self.ack_timeout_s, self.settle_timeout_s, self.confirm_timeout_s) <= 0:
            raise InvalidArgument("control timeouts must be > 0")
        if not 1 <= self.max_attempts <= 10:
            raise InvalidArgument("max_attempts must be within 1..10")


class VehicleController:
    """One link to one vehicle for commands; use as a context manager so the socket is closed."""

    def __init__(self, link: str, options: ControlOptions | None = None) -> None:
        self.link = link
        self.options = options or ControlOptions()
        from pymavlink import mavutil  # loads every dialect: only when a vehicle is actually commanded

        try:
            self.conn = mavutil.mavlink_connection(link, source_system=GCS_SYSTEM_ID, source_component=CONTROL_COMPONENT_ID)
        except Exception as exc:  # noqa: BLE001 - pymavlink raises many kinds for a bad string or socket
            raise DeviceUnavailable(f"cannot open MAVLink link {link!r}: {exc}") from None
        self.view = VehicleView()
        self.target: tuple[int, int] | None = None
        self.sent: list[dict[str, Any]] = []
        self._acks: list[tuple[float, Any]] = []
        self._last: dict[str, float] = {}  # message type → monotonic time of the last one received
        self._last_hello = 0.0

    def __enter__(self) -> "VehicleController":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass

    # --- reading ---------------------------------------------------------------------------

    def _hello(self) -> None:
        now = time.monotonic()
        if now - self._last_hello >= 0.5:
            self._last_hello = now
            try:
                self.conn.mav.heartbeat_send(_M.MAV_TYPE_GCS, _M.MAV_AUTOPILOT_INVALID, 0, 0, _M.MAV_STATE_ACTIVE)
            except OSError:
                pass

    def _handle(self, msg: Any) -> None:
        kind = msg.get_type()
        if kind == "BAD_DATA" or msg.get_srcSystem() in (0, GCS_SYSTEM_ID):
            return
        if kind == "HEARTBEAT":
            if msg.type == _M.MAV_TYPE_GCS:
                return
            if self.target is None:
                self.target = (msg.get_srcSystem(), msg.get_srcComponent())
            armed = bool(msg.base_mode & _M.MAV_MODE_FLAG_SAFETY_ARMED)
            self.view = VehicleView(int(msg.autopilot), mode_name(int(msg.custom_mode), int(msg.autopilot)), armed,
                                    self.view.mission_state, self.view.seq, self.view.lat, self.view.lon, self.view.alt_m)
        elif self.target is not None and msg.get_srcSystem() != self.target[0]:
            return
        elif kind == "MISSION_CURRENT":
            state = getattr(msg, "mission_state", None)
            self.view = VehicleView(self.view.autopilot, self.view.mode, self.view.armed,
                                    None if state in (None, 0) else int(state), int(msg.seq),
                                    self.view.lat, self.view.lon, self.view.alt_m)
        elif kind == "GLOBAL_POSITION_INT":
            self.view = VehicleView(self.view.autopilot, self.view.mode, self.view.armed, self.view.mission_state,
                                    self.view.seq, msg.lat / 1e7, msg.lon / 1e7, msg.relative_alt / 1000.0)
        elif kind == "COMMAND_ACK":
            self._acks.append((time.monotonic(), msg))
        self._last[kind] = time.monotonic()

    def pump(self, seconds: float, until: Callable[[], bool] | None = None) -> bool:
        """Read telemetry for up to ``seconds`` (bounded) or until ``until()``; True if ``until`` became true."""
        deadline = time.monotonic() + max(0.0, seconds)
        while True:
            if until is not None and until():
                return True
            now = time.monotonic()
            if now >= deadline:
                return False
            self._hello()
            try:
                msg = self.conn.recv_match(blocking=True, timeout=min(0.05, deadline - now))
            except OSError:
                msg = None
            if msg is not None:
                self._handle(msg)

    def connect(self) -> VehicleView:
        """Say hello and wait for the vehicle's heartbeat and mission state; ``DeviceUnavailable`` if silent."""
        t0 = time.monotonic()
        if not self.pump(self.options.connect_timeout_s, lambda: self.target is not None):
            raise DeviceUnavailable(f"no heartbeat from {self.link} within {self.options.connect_timeout_s:g} s")
        # one MISSION_CURRENT too (ArduPilot's pause shows only there); a vehicle on the ground may not send it
        self.pump(1.0, lambda: self._last.get("MISSION_CURRENT", 0.0) > t0 and self._last.get("GLOBAL_POSITION_INT", 0.0) > t0)
        return self.view

    def _fresh(self, kind: str, after: float, timeout_s: float) -> bool:
        return self.pump(timeout_s, lambda: self._last.get(kind, 0.0) > after)

    # --- commanding ------------------------------------------------------------------------

    def _send(self, cmd: Command, confirmation: int) -> float:
        assert self.target is not None
        p = cmd.params
        sent_at = time.monotonic()
        self.conn.mav.command_long_send(self.target[0], self.target[1], cmd.command, confirmation, *p)
        self.sent.append({"name": cmd.name, "command": cmd.command, "confirmation": confirmation,
                          "params": list(p[:4])})
        return sent_at

    def _ack_after(self, command: int, since: float) -> Any | None:
        for t, ack in self._acks:
            if t >= since and int(ack.command) == command:
                return ack
        return None

    def execute(self, cmd: Command, may_send: Callable[[], str | None] | None = None) -> CommandOutcome:
        """Run one command to a known outcome within the bounds (see the module docstring)."""
        opts = self.options
        t0 = time.monotonic()
        if self.target is None:
            self.connect()
        out = CommandOutcome(cmd.name, cmd.command, "NO_ANSWER")

        def done(outcome: Outcome, detail: str, result: str | None = None) -> CommandOutcome:
            out.outcome, out.detail, out.view, out.duration_s = outcome, detail, self.view, time.monotonic() - t0
            if result is not None:
                out.result = result
            return out

        if cmd.in_effect(self.view):
            return done("ALREADY", f"the vehicle already shows it ({self.view.mode}); nothing was sent")
        confirmation = 0
        while out.attempts < opts.max_attempts:
            veto = may_send() if may_send is not None else None
            if veto:
                return done("ABANDONED", veto)
            sent_at = self._send(cmd, confirmation)
            out.attempts += 1
            confirmation += 1
            self.pump(opts.ack_timeout_s, lambda: self._ack_after(cmd.command, sent_at) is not None)
            ack = self._ack_after(cmd.command, sent_at)
            while ack is not None and int(ack.result) == _M.MAV_RESULT_IN_PROGRESS:
                out.acks += 1
                since = time.monotonic()
                if not self.pump(opts.in_progress_timeout_s, lambda: self._ack_after(cmd.command, since) is not None):
                    ack = None
                    break
                ack = self._ack_after(cmd.command, since)
            if ack is None:
                # Lost command or lost ACK: the vehicle's own state says which (never a blind second send).
                settle_from = time.monotonic()
                if not self._fresh(cmd.evidence, settle_from, opts.settle_timeout_s):
                    return done("NO_ANSWER", f"no COMMAND_ACK and no {cmd.evidence} within "
                                f"{opts.ack_timeout_s + opts.settle_timeout_s:g} s: the vehicle is silent")
                if cmd.in_effect(self.view):
                    return done("SETTLED", f"no COMMAND_ACK, but the next {cmd.evidence} shows it in effect "
                                f"(mode {self.view.mode}): the ACK was lost, the command was not sent again")
                continue  # the vehicle shows no effect: the command was lost; send it again (bounded)
            out.acks += 1
            name = result_name(int(ack.result))
            out.result = name
            if int(ack.result) == _M.MAV_RESULT_TEMPORARILY_REJECTED:
                self.pump(opts.ack_timeout_s)
                continue
            if int(ack.result) != _M.MAV_RESULT_ACCEPTED:
                return done("REFUSED", f"the vehicle answered {name} (mode {self.view.mode})", name)
            since = time.monotonic()
            if self.pump(opts.confirm_timeout_s, lambda: self._last.get(cmd.evidence, 0.0) > since and cmd.in_effect(self.view)):
                return done("CONFIRMED", f"ACCEPTED and the vehicle's {cmd.evidence} shows it (mode {self.view.mode})", name)
            return done("ACCEPTED_UNCONFIRMED", f"ACCEPTED but the vehicle's state does not show it within "
                        f"{opts.confirm_timeout_s:g} s (mode {self.view.mode})", name)
        return done("NO_ANSWER", f"no effect after {out.attempts} attempt(s)")

    def wait_landed(self, timeout_s: float) -> bool:
        """Follow the vehicle until it disarms after flight (landed), bounded; True when it did."""
        return self.pump(timeout_s, lambda: self.target is not None and not self.view.armed)
