"""Commands to the simulated vehicle (COMMAND_LONG / COMMAND_INT → COMMAND_ACK), as each autopilot answers them.

Both autopilots answer every command with exactly one COMMAND_ACK on the
channel it came from (ArduPilot ``GCS_MAVLINK::handle_command_long``/``_int``
in ``libraries/GCS_MAVLink/GCS_Common.cpp``; PX4 ``Commander::answer_command``);
a repeated command is simply executed again, which is why a ground station
must not re-send blind. Faults (``FlightFaults.lose_ack_of`` /
``lose_command_of``) lose the first ACK or command of a MAV_CMD; ``refuse_with``
answers a MAV_CMD with a refusal (DENIED, TEMPORARILY_REJECTED, UNSUPPORTED,
FAILED) every time and executes nothing — what a handler that refuses does:
it returns its MAV_RESULT and that is the one COMMAND_ACK (ArduPilot
``GCS_MAVLINK::handle_command_long``; PX4 ``Commander::handle_command`` answers a
DO_SET_MODE whose mode transition is denied TEMPORARILY_REJECTED, every time the
transition stays denied, through ``Commander::answer_command``).

ArduCopter (``ArduCopter/GCS_MAVLink_Copter.cpp``, ``ArduCopter/mode*.cpp``, ``AP_Arming_Copter.cpp``):

- DO_SET_MODE: ``GCS_MAVLINK::handle_command_do_set_mode`` → ``Copter::set_mode``; AUTO needs a
  mission (``ModeAuto::init``: ``mission.present()``, and armed on the ground its first item must
  be a take-off: "Auto: Missing Takeoff Cmd").
- COMPONENT_ARM_DISARM: arming refused (FAILED, "PreArm: …" / "Arm: <mode> mode not armable")
  before the pre-arm checks pass or in a mode whose ``allows_arming`` is false (AUTO without
  AUTO_OPTIONS, RTL, LAND, BRAKE); disarming refused in the air unless forced with 21196
  (``AP_Arming_Copter::disarm``: "do not allow disarm via mavlink if we think we are flying").
- MISSION_START: ``handle_MAV_CMD_MISSION_START``: param1/param2 must be 0 (else DENIED), then
  ``set_mode(AUTO)``, ``set_auto_armed(true)`` and the mission starts — armed, the vehicle takes off.
- DO_PAUSE_CONTINUE: ``handle_command_pause_continue``: ``ModeAuto::pause`` only on a waypoint
  leg (``SubMode::WP``, destination not reached) — FAILED ("Failed to pause") during NAV_TAKEOFF,
  at a waypoint, or in any other mode; ``ModeAuto::resume`` always succeeds in AUTO.
- NAV_RETURN_TO_LAUNCH → RTL; NAV_LAND → LAND where it is (``handle_command_int_packet``).
- PREFLIGHT_REBOOT_SHUTDOWN: ``GCS_MAVLINK::handle_preflight_reboot``: FAILED while armed (unless param6 is
  the magic 20190226), UNSUPPORTED unless param1 is 1 or 3, else ACCEPTED and the vehicle reboots.
- DO_CHANGE_SPEED: ``ModeAuto::set_speed_xy`` (via ``GCS_MAVLINK_Copter::handle_command_do_change_speed``):
  the waypoint speed changes now, the leg in flight included.

PX4 (``src/modules/commander/Commander.cpp`` ``Commander::handle_command``): MISSION_START switches
to AUTO.MISSION and arms ("mission start"), DENIED without a valid mission or when arming is
refused; DO_SET_MODE with the main/sub mode of ``px4_custom_mode.h``; DO_PAUSE_CONTINUE has no
case (UNSUPPORTED), so a PX4 ground station holds with AUTO.LOITER.
"""

from __future__ import annotations

from typing import Any

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

from flows.vehicle.modes import NAV_TAKEOFF, mode_name  # noqa: E402

__all__ = ["on_command", "ARMABLE"]

FORCE_DISARM = 21196  # the magic param2 of MAV_CMD_COMPONENT_ARM_DISARM that skips the in-air check
FORCE_REBOOT = 20190226  # the magic param6 of MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN that reboots an armed vehicle
ARMABLE = {"ardupilot": frozenset({"STABILIZE", "GUIDED", "LOITER"}),  # ArduCopter/mode.h allows_arming
           "px4": frozenset({"LOITER", "AUTO", "STABILIZE"})}
_SETTABLE = {"ardupilot": frozenset({"STABILIZE", "GUIDED", "AUTO", "LOITER", "RTL", "LAND", "BRAKE"}),
             "px4": frozenset({"AUTO", "LOITER", "RTL", "LAND"})}


def on_command(flight: Any, vehicle: Any, msg: Any) -> None:
    """One COMMAND_LONG/COMMAND_INT: execute it, then answer COMMAND_ACK to its sender (faults aside)."""
    cmd = int(msg.command)
    faults = flight.options.faults
    if flight._lost_commands[cmd] < faults.lose_command_of.count(cmd):
        flight._lost_commands[cmd] += 1
        vehicle.log(f"flight: command {cmd} lost on the way in (fault)")
        return
    params = [float(msg.param1), float(msg.param2), float(msg.param3), float(msg.param4)]
    if msg.get_type() == "COMMAND_INT":
        params += [msg.x / 1e7, msg.y / 1e7, float(msg.z)]
    else:
        params += [float(msg.param5), float(msg.param6), float(msg.param7)]
    refusal = dict(faults.refuse_with).get(cmd)
    result = refusal if refusal is not None else _execute(flight, vehicle, cmd, params)
    flight.commands.append({"t_s": round(flight.sim_t, 2), "command": cmd, "params": params[:4],
                            "confirmation": int(getattr(msg, "confirmation", 0)), "result": result,
                            "mode": flight.mode, "lat": flight.lat, "lon": flight.lon, "alt_m": flight.alt_m})
    if flight._lost_acks[cmd] < faults.lose_ack_of.count(cmd):
        flight._lost_acks[cmd] += 1
        vehicle.log(f"flight: COMMAND_ACK of {cmd} lost on the way back (fault); the command was executed")
        return
    src = (msg.get_srcSystem(), msg.get_srcComponent())
    vehicle.send(lambda m: m.command_ack_send(cmd, result, 0, 0, src[0], src[1]))
    if cmd == _M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN and result == _M.MAV_RESULT_ACCEPTED:
        vehicle.reboot("MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN")  # after its ACK, as SITL makes sure of


def _execute(flight: Any, vehicle: Any, cmd: int, p: list[float]) -> int:
    px4 = flight._dialect == "px4"
    if cmd == _M.MAV_CMD_COMPONENT_ARM_DISARM:
        return _arm_disarm(flight, vehicle, p)
    if cmd == _M.MAV_CMD_MISSION_START:
        return _mission_start_px4(flight, vehicle) if px4 else _mission_start(flight, vehicle, p)
    if cmd == _M.MAV_CMD_DO_PAUSE_CONTINUE:
        return _M.MAV_RESULT_UNSUPPORTED if px4 else _pause_continue(flight, vehicle, p)
    if cmd == _M.MAV_CMD_DO_SET_MODE:
        if not int(p[0]) & _M.MAV_MODE_FLAG_CUSTOM_MODE_ENABLED:
            return _M.MAV_RESULT_DENIED
        if px4:
            wanted = mode_name((int(p[1]) << 16) | (int(p[2]) << 24), _M.MAV_AUTOPILOT_PX4)
        else:
            wanted = mode_name(int(p[1]), _M.MAV_AUTOPILOT_ARDUPILOTMEGA)
        if wanted not in _SETTABLE[flight._dialect]:
            return _M.MAV_RESULT_DENIED
        return set_mode(flight, vehicle, wanted)
    if cmd == _M.MAV_CMD_NAV_RETURN_TO_LAUNCH:
        return set_mode(flight, vehicle, "RTL")
    if cmd == _M.MAV_CMD_NAV_LAND:
        return set_mode(flight, vehicle, "LAND")
    if cmd == _M.MAV_CMD_PREFLIGHT_REBOOT_SHUTDOWN:
        if flight.armed and int(p[5]) != FORCE_REBOOT:
            return _M.MAV_RESULT_FAILED
        return _M.MAV_RESULT_ACCEPTED if p[0] in (1.0, 3.0) else _M.MAV_RESULT_UNSUPPORTED
    if cmd == _M.MAV_CMD_DO_CHANGE_SPEED and not px4:
        return _change_speed(flight, p)
    return _M.MAV_RESULT_UNSUPPORTED


def set_mode(flight: Any, vehicle: Any, mode: str) -> int:
    """Switch flight mode on a ground station's request (``Copter::set_mode``: the same mode again is fine)."""
    flying = flight.phase == "FLYING"
    if mode == "AUTO":
        if not flight.items:
            return _M.MAV_RESULT_FAILED  # ModeAuto::init: no mission
        if flight.armed and not flying and flight.items[flight.cur].command != NAV_TAKEOFF:
            flight.text(vehicle, _M.MAV_SEVERITY_CRITICAL, "Auto: Missing Takeoff Cmd")
            return _M.MAV_RESULT_FAILED
    if mode == flight.mode:
        return _M.MAV_RESULT_ACCEPTED
    vehicle.log(f"mode {mode} on a ground station's command")  # when the vehicle got it: the stop's latency
    if flying and mode == "RTL":
        flight.start_rtl(vehicle, "RTL: returning home (GCS command)", _M.MAV_SEVERITY_INFO)
        return _M.MAV_RESULT_ACCEPTED
    flight.enter_mode(vehicle, mode)
    if flying:
        flight.text(vehicle, _M.MAV_SEVERITY_INFO, {"LAND": "Landing here (GCS command)", "AUTO": "Mission resumed",
                                                    "BRAKE": "Braking: holding position", "GUIDED": "Holding position",
                                                    }.get(mode, f"Mode {mode}"))
    elif flight._dialect == "px4" and mode == "AUTO" and flight.armed and flight.items:
        flight.take_off(vehicle)  # PX4: armed in Mission mode, the navigator takes off
    return _M.MAV_RESULT_ACCEPTED


def _change_speed(flight: Any, p: list[float]) -> int:
    """``GCS_MAVLINK_Copter::handle_command_do_change_speed`` → ``Mode::set_speed_xy`` (AUTO only; speed type 0/1)."""
    modes = flight.modes
    auto = getattr(modes, "auto", None)
    if p[1] <= 0 or int(p[0]) not in (0, 1) or flight.mode != "AUTO" or auto is None:
        return _M.MAV_RESULT_FAILED
    auto.set_speed(p[1])
    return _M.MAV_RESULT_ACCEPTED


def _arm_disarm(flight: Any, vehicle: Any, p: list[float]) -> int:
    if int(p[0]) == 1:
        if flight.armed:
            return _M.MAV_RESULT_ACCEPTED
        reason = vehicle.prearm_failure()
        if reason is not None:
            if flight._dialect == "ardupilot":
                flight.texts_sent.append(f"PreArm: {reason}")
                vehicle.say_prearm(reason)  # AP_Arming::arm → pre_arm_checks(report=true)
            else:
                flight.text(vehicle, _M.MAV_SEVERITY_CRITICAL, "Preflight Fail: ekf2 missing data")
            return _M.MAV_RESULT_FAILED
        if flight.mode not in ARMABLE[flight._dialect]:
            flight.text(vehicle, _M.MAV_SEVERITY_CRITICAL, f"Arm: {flight.mode} mode not armable")
            return _M.MAV_RESULT_FAILED
        flight.arm(vehicle)
        return _M.MAV_RESULT_ACCEPTED
    if int(p[0]) == 0:
        if not flight.armed:
            return _M.MAV_RESULT_ACCEPTED
        if flight.phase == "FLYING" and int(p[1]) != FORCE_DISARM:
            return _M.MAV_RESULT_FAILED  # AP_Arming_Copter::disarm: not while flying
        if flight.phase == "FLYING":
            flight.phase = "LANDED"  # forced in the air: it falls
            flight.body.pos = (flight.body.pos[0], flight.body.pos[1], 0.0)
            flight.body.vel = (0.0, 0.0, 0.0)
        flight.disarm(vehicle)
        return _M.MAV_RESULT_ACCEPTED
    return _M.MAV_RESULT_DENIED


def _mission_start(flight: Any, vehicle: Any, p: list[float]) -> int:
    if p[0] != 0 or p[1] != 0:
        return _M.MAV_RESULT_DENIED  # "first-item/last item not supported"
    if set_mode(flight, vehicle, "AUTO") != _M.MAV_RESULT_ACCEPTED:
        return _M.MAV_RESULT_FAILED
    if flight.armed and flight.phase == "READY":
        flight.take_off(vehicle)
    return _M.MAV_RESULT_ACCEPTED


def _mission_start_px4(flight: Any, vehicle: Any) -> int:
    if not flight.items or flight.phase not in ("READY", "FLYING"):
        return _M.MAV_RESULT_DENIED  # no valid mission
    if flight.phase == "FLYING":
        return _M.MAV_RESULT_ACCEPTED
    if not vehicle.prearm_ok():
        flight.text(vehicle, _M.MAV_SEVERITY_CRITICAL, f"Preflight Fail: {vehicle.prearm_failure()}")
        return _M.MAV_RESULT_DENIED
    if not flight.armed:
        flight.arm(vehicle)
    flight.mode = "AUTO"
    flight.take_off(vehicle)
    return _M.MAV_RESULT_ACCEPTED


def _pause_continue(flight: Any, vehicle: Any, p: list[float]) -> int:
    if int(p[0]) == 0:
        if flight.mode == "AUTO" and flight.on_leg():
            flight.set_paused(True)  # wp_nav->set_pause(): brakes and holds, mode stays AUTO
            return _M.MAV_RESULT_ACCEPTED
        flight.text(vehicle, _M.MAV_SEVERITY_INFO, "Failed to pause")
        return _M.MAV_RESULT_FAILED
    if int(p[0]) == 1:
        if flight.mode == "AUTO" and flight.phase == "FLYING":
            flight.set_paused(False)  # ModeAuto::resume: wp_nav->set_resume(), always true
            return _M.MAV_RESULT_ACCEPTED
        flight.text(vehicle, _M.MAV_SEVERITY_INFO, "Failed to resume")
        return _M.MAV_RESULT_FAILED
    return _M.MAV_RESULT_DENIED
