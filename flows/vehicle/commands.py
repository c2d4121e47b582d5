"""Commanding a vehicle: COMMAND_LONG, its COMMAND_ACK, bounded retries, a lost ACK settled by evidence.

``VehicleController`` speaks through one ``VehicleLink`` (``flows.vehicle.link``:
opened with the drone's binding, so every command is signed when the drone has
a key, and with the streams that confirm a command asked for — ArduPilot sends
no MISSION_CURRENT on a port nobody asked, and its pause shows only there). It
runs one ``Command`` at a time:

1. **Already in effect?** If the vehicle's own state already shows the
   command's effect (paused, in RTL, armed, …) nothing is sent (a repeated
   ``sortie pause`` is a no-op, not a second command).
2. **Send once, wait for COMMAND_ACK** (``ack_timeout_s``). ACCEPTED is then
   confirmed by the vehicle's state (``confirm_timeout_s``); IN_PROGRESS waits
   on; TEMPORARILY_REJECTED is tried again (bounded; still rejected at the
   last attempt, it is the refusal); DENIED, FAILED, UNSUPPORTED are refusals,
   reported REFUSED with the vehicle's word — never as a silent link
   (NO_ANSWER is only for a vehicle that did not answer), never papered over
   by another command.
3. **No ACK: settle by evidence, never by sending twice blind.** The next
   message named by the command's ``evidence`` (HEARTBEAT for a mode or the
   armed flag, MISSION_CURRENT for ArduPilot's pause, EXTENDED_SYS_STATE for a
   take-off) received after the ACK timeout decides: in effect → SETTLED (the
   ACK was lost); not in effect → the command never arrived, so it is sent
   again with ``confirmation`` + 1 (the MAVLink field for a retransmission), at
   most ``max_attempts`` times.
4. Before every send ``may_send()`` is asked (a resume checks the ledger: a
   recall recorded meanwhile wins, and the resume is abandoned).
5. **Journaled.** With a ``journal`` (``CommandJournal``: the ledger's vehicle
   command journal, ``flows.usecases.command_journal``), a command that is
   going to be sent is written there first and its outcome after; a process
   that dies in between leaves a ``sent`` entry that the authority settles
   from the vehicle's state (``flows.usecases.settling``).

Telemetry is data: nothing received is ever turned into a command here.

Dialects: ArduCopter pauses with ``MAV_CMD_DO_PAUSE_CONTINUE``
(``GCS_MAVLINK_Copter::handle_command_pause_continue``; refused while taking off
or at a waypoint: ``ModeAuto::pause``); a hold that must be forced uses BRAKE,
which holds by itself (``ModeBrake``), never LOITER or POSHOLD, which follow the
pilot's throttle and descend without one (FACTS.md). PX4's commander does not
handle DO_PAUSE_CONTINUE, so a PX4 vehicle is held with AUTO.LOITER (Hold) and
resumed with AUTO.MISSION. Return to launch is ``MAV_CMD_NAV_RETURN_TO_LAUNCH``,
land in place ``MAV_CMD_NAV_LAND``; the launch steps (mode, arm, mission start)
are ``flows.vehicle.launch``'s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants; mavutil is loaded when a link opens)

from flows.vehicle.binding import VehicleBinding  # noqa: E402
from flows.vehicle.vehicles import PER_CALL, Vehicles  # noqa: E402
from flows.vehicle.view import VehicleView  # noqa: E402
from planner.errors import InvalidArgument

__all__ = [
    "VehicleView",
    "Command",
    "CommandOutcome",
    "ControlOptions",
    "VehicleController",
    "CommandJournal",
    "pause_command",
    "brake_command",
    "resume_command",
    "rtl_command",
    "land_command",
    "set_mode_command",
    "arm_command",
    "disarm_command",
    "mission_start_command",
    "result_name",
    "distance_m",
]

CONTROL_COMPONENT_ID = _M.MAV_COMP_ID_MISSIONPLANNER  # 190: the ground station that commands
_PX4_MAIN_AUTO = 4  # px4_custom_mode.h: PX4_CUSTOM_MAIN_MODE_AUTO
_PX4_SUB = {"LOITER": 3, "AUTO": 4, "RTL": 5, "LAND": 6}  # PX4_CUSTOM_SUB_MODE_AUTO_{LOITER,MISSION,RTL,LAND}
_ARDU_MODE_NUMBER = {"STABILIZE": 0, "AUTO": 3, "GUIDED": 4, "LOITER": 5, "RTL": 6, "LAND": 9, "BRAKE": 17}

Outcome = Literal["CONFIRMED", "SETTLED", "ALREADY", "ACCEPTED_UNCONFIRMED", "REFUSED", "NO_ANSWER", "ABANDONED"]
Evidence = Literal["HEARTBEAT", "MISSION_CURRENT", "EXTENDED_SYS_STATE"]


def result_name(code: int) -> str:
    """``MAV_RESULT_DENIED`` → ``DENIED``."""
    entry = _M.enums["MAV_RESULT"].get(int(code))
    return entry.name.replace("MAV_RESULT_", "") if entry is not None else f"RESULT_{code}"


def distance_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Ground distance on a local flat earth (fine over a few km)."""
    kx = math.cos(math.radians((lat1 + lat2) / 2.0)) * 111_320.0
    return math.hypot((lon2 - lon1) * kx, (lat2 - lat1) * 111_320.0)


@dataclass(frozen=True)
class Command:
    """One command and the vehicle state that shows it is in effect (``evidence`` names where to look)."""

    name: str
    command: int
    params: tuple[float, float, float, float, float, float, float]
    in_effect: Callable[[VehicleView], bool]
    evidence: Evidence = "HEARTBEAT"


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


def _p(*values: float) -> tuple[float, float, float, float, float, float, float]:
    out = [float(v) for v in values] + [0.0] * 7
    return (out[0], out[1], out[2], out[3], out[4], out[5], out[6])


def set_mode_command(dialect: str, mode: str, name: str | None = None) -> Command:
    """MAV_CMD_DO_SET_MODE with the dialect's custom mode (ArduCopter ``Mode::Number``; PX4 main AUTO + sub mode)."""
    base = float(_M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED)
    if dialect == "px4":
        if mode not in _PX4_SUB:
            raise InvalidArgument(f"no PX4 mode {mode!r} here (one of {', '.join(sorted(_PX4_SUB))})")
        params = _p(base, _PX4_MAIN_AUTO, _PX4_SUB[mode])
    else:
        if mode not in _ARDU_MODE_NUMBER:
            raise InvalidArgument(f"no ArduCopter mode {mode!r} here (one of {', '.join(sorted(_ARDU_MODE_NUMBER))})")
        params = _p(base, _ARDU_MODE_NUMBER[mode])
    return Command(name or mode.lower(), _M.MAV_CMD_DO_SET_MODE, params, lambda v: v.mode == mode)


def brake_command(dialect: str) -> Command:
    """A hold that holds by itself: ArduCopter BRAKE (``ModeBrake``: stops and holds position, no pilot needed);
    PX4 AUTO.LOITER (Hold). Never LOITER/POSHOLD on ArduCopter: without a pilot's throttle they descend."""
    return set_mode_command(dialect, "LOITER" if dialect == "px4" else "BRAKE", "hold")


def pause_command(dialect: str) -> Command:
    """Hold the vehicle where it is, mission kept: DO_PAUSE_CONTINUE(0) on ArduPilot, AUTO.LOITER on PX4.

    ArduCopter refuses the pause (FAILED) while it is not flying a waypoint leg: during NAV_TAKEOFF, while
    it holds at a waypoint (``ModeAuto::pause``). That refusal is the answer; the caller reports it."""
    if dialect == "px4":
        return set_mode_command("px4", "LOITER", "pause")
    return Command("pause", _M.MAV_CMD_DO_PAUSE_CONTINUE, _p(0), lambda v: v.paused, evidence="MISSION_CURRENT")


def resume_command(dialect: str, mode: str = "AUTO") -> Command:
    """Go on with the mission: back to AUTO from a hold by mode (PX4 Hold, ArduCopter BRAKE/GUIDED), else
    DO_PAUSE_CONTINUE(1) (ArduCopter ``ModeAuto::resume``)."""
    if dialect == "px4" or mode in ("BRAKE", "GUIDED", "LOITER"):
        return Command("resume", _M.MAV_CMD_DO_SET_MODE, set_mode_command(dialect, "AUTO").params,
                       lambda v: v.mode == "AUTO" and not v.paused)
    return Command("resume", _M.MAV_CMD_DO_PAUSE_CONTINUE, _p(1),
                   lambda v: v.mode == "AUTO" and v.mission_state == _M.MISSION_STATE_ACTIVE, evidence="MISSION_CURRENT")


def rtl_command() -> Command:
    """Return to launch (both dialects: MAV_CMD_NAV_RETURN_TO_LAUNCH; in effect when the mode is RTL)."""
    return Command("rtl", _M.MAV_CMD_NAV_RETURN_TO_LAUNCH, _p(0), lambda v: v.mode == "RTL")


def land_command() -> Command:
    """Land where it is (MAV_CMD_NAV_LAND with lat/lon 0: the current position; in effect when the mode is LAND)."""
    return Command("land", _M.MAV_CMD_NAV_LAND, _p(0), lambda v: v.mode == "LAND")


def arm_command() -> Command:
    """MAV_CMD_COMPONENT_ARM_DISARM(1): in effect when the heartbeat says armed."""
    return Command("arm", _M.MAV_CMD_COMPONENT_ARM_DISARM, _p(1), lambda v: v.armed)


def disarm_command() -> Command:
    """MAV_CMD_COMPONENT_ARM_DISARM(0), never forced: an autopilot refuses it in the air (``AP_Arming_Copter::disarm``)."""
    return Command("disarm", _M.MAV_CMD_COMPONENT_ARM_DISARM, _p(0), lambda v: not v.armed)


def mission_start_command(dialect: str) -> Command:
    """MAV_CMD_MISSION_START (first and last item 0: ArduCopter DENIES others): in effect once the vehicle is
    armed in its mission mode and off the ground (EXTENDED_SYS_STATE, else the altitude)."""
    return Command("mission_start", _M.MAV_CMD_MISSION_START, _p(0, 0),
                   lambda v: v.armed and v.mode == "AUTO" and v.airborne, evidence="EXTENDED_SYS_STATE")


@dataclass(frozen=True)
class ControlOptions:
    """Bounds of one controller (wall seconds)."""

    connect_timeout_s: float = 5.0
    ack_timeout_s: float = 1.0
    settle_timeout_s: float = 2.0
    confirm_timeout_s: float = 3.0
    in_progress_timeout_s: float = 5.0
    max_attempts: int = 3
    stream_ack_s: float = 1.0

    def __post_init__(self) -> None:
        if min(self.connect_timeout_s, self.ack_timeout_s, self.settle_timeout_s, self.confirm_timeout_s) <= 0:
            raise InvalidArgument("control timeouts must be > 0")
        if not 1 <= self.max_attempts <= 10:
            raise InvalidArgument("max_attempts must be within 1..10")


class CommandJournal(Protocol):
    """Where a controller writes a command before it sends it (``sending``: returns the entry) and its outcome."""

    def sending(self, cmd: Command) -> Any: ...

    def answered(self, entry: Any, out: CommandOutcome) -> None: ...


class VehicleController:
    """Commands to one vehicle through a ``VehicleLink``; a context manager (closes the link it opened itself).

    ``link``: a connected ``VehicleLink`` (kept open: its owner closes it) or a connection string, opened here
    through ``vehicles`` (the authority's port: a held link is lent) with ``binding`` and the streams that
    confirm commands. ``journal``: where each command is written before it is sent (module docstring, 5).
    """

    def __init__(self, link: Any, options: ControlOptions | None = None, *, binding: VehicleBinding | None = None,
                 streams: Any = None, vehicles: Vehicles = PER_CALL, journal: CommandJournal | None = None) -> None:
        from flows.vehicle.link import CONTROL_STREAMS, VehicleLink  # pymavlink: only when commanded

        self.options = options or ControlOptions()
        self.journal = journal
        if isinstance(link, VehicleLink):
            self.link, self._owned = link, False
        else:
            self.link = vehicles.open(str(link), binding, connect=False,
                                  streams=CONTROL_STREAMS if streams is None else streams,
                                  heartbeat_timeout_s=self.options.connect_timeout_s,
                                  stream_ack_s=self.options.stream_ack_s, component_id=CONTROL_COMPONENT_ID)
            self._owned = True
        self.sent: list[dict[str, Any]] = []
        self._acks: list[tuple[float, Any]] = []
        self._unsubscribe = self.link.subscribe(self._watch)

    def __enter__(self) -> "VehicleController":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._unsubscribe()
        if self._owned:
            self.link.close()

    @property
    def view(self) -> VehicleView:
        return self.link.view

    @property
    def connected(self) -> bool:
        return bool(self.link.target_system)

    def _watch(self, msg: Any) -> None:
        if msg.get_type() == "COMMAND_ACK":
            self._acks.append((time.monotonic(), msg))

    def pump(self, seconds: float, until: Callable[[], bool] | None = None) -> bool:
        """Read telemetry for up to ``seconds`` (bounded) or until ``until()``; True if ``until`` became true."""
        return self.link.pump(seconds, until)

    def connect(self) -> VehicleView:
        """Hello, the vehicle's heartbeat and the streams that confirm commands; ``DeviceUnavailable`` (with the
        likely causes) if silent. Then waits up to 1 s for a MISSION_CURRENT and a position, which a vehicle on
        the ground may not send."""
        t0 = time.monotonic()
        if not self.connected:
            self.link.connect(time.monotonic() + self.options.connect_timeout_s)
        seen = self.link.seen
        self.pump(1.0, lambda: seen.get("MISSION_CURRENT", 0.0) > t0 and seen.get("GLOBAL_POSITION_INT", 0.0) > t0)
        return self.view

    def _send(self, cmd: Command, confirmation: int) -> float:
        sent_at = time.monotonic()
        self.link.command_long(cmd.command, cmd.params, confirmation)
        self.sent.append({"name": cmd.name, "command": cmd.command, "confirmation": confirmation,
                          "params": list(cmd.params[:4])})
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
        if not self.connected:
            self.connect()
        out = CommandOutcome(cmd.name, cmd.command, "NO_ANSWER")
        entry: list[Any] = []  # the journal's entry once the command is written there

        def done(outcome: Outcome, detail: str, result: str | None = None) -> CommandOutcome:
            out.outcome, out.detail, out.view, out.duration_s = outcome, detail, self.view, time.monotonic() - t0
            if result is not None:
                out.result = result
            if entry and self.journal is not None:
                self.journal.answered(entry[0], out)
            return out

        if cmd.in_effect(self.view):
            return done("ALREADY", f"the vehicle already shows it ({self.view.mode}); nothing was sent")
        if self.journal is not None:
            entry.append(self.journal.sending(cmd))  # written before anything goes out; raises: nothing is sent
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
                if not self.link.fresh(cmd.evidence, settle_from, opts.settle_timeout_s):
                    return done("NO_ANSWER", f"no COMMAND_ACK and no {cmd.evidence} within "
                                f"{opts.ack_timeout_s + opts.settle_timeout_s:g} s: the vehicle is silent"
                                + self.link.unanswered_hint())
                if cmd.in_effect(self.view):
                    return done("SETTLED", f"no COMMAND_ACK, but the next {cmd.evidence} shows it in effect "
                                f"(mode {self.view.mode}): the ACK was lost, the command was not sent again")
                continue  # the vehicle shows no effect: the command was lost; send it again (bounded)
            out.acks += 1
            name = result_name(int(ack.result))
            out.result = name
            if int(ack.result) == _M.MAV_RESULT_TEMPORARILY_REJECTED and out.attempts < opts.max_attempts:
                self.pump(opts.ack_timeout_s)
                continue
            if int(ack.result) != _M.MAV_RESULT_ACCEPTED:
                return done("REFUSED", f"the vehicle refused it: answered {name}"
                            + (f" to {out.attempts} attempts" if out.attempts > 1 else "") + f" (mode {self.view.mode})",
                            name)
            since = time.monotonic()
            if self.pump(opts.confirm_timeout_s,
                         lambda: self.link.seen.get(cmd.evidence, 0.0) > since and cmd.in_effect(self.view)):
                return done("CONFIRMED", f"ACCEPTED and the vehicle's {cmd.evidence} shows it (mode {self.view.mode})", name)
            return done("ACCEPTED_UNCONFIRMED", f"ACCEPTED but the vehicle's {cmd.evidence} does not show it within "
                        f"{opts.confirm_timeout_s:g} s (mode {self.view.mode})", name)
        return done("NO_ANSWER", f"no effect after {out.attempts} attempt(s)")

    def wait_landed(self, timeout_s: float) -> bool:
        """Follow the vehicle until it disarms after flight (landed), bounded; True when it did."""
        return self.pump(timeout_s, lambda: self.connected and not self.view.armed)

