"""What a simulated flight is told before it starts: the faults to inject and the vehicle's figures.

Kept apart from ``flows.sim.flight`` (the flight's state machine) because tests,
the demo and the CLI build these values without flying anything.

Times: a fault's *moment* is on the vehicle's clock (seconds of flight, or an
item), a link fault's *duration* on the wall clock — a link stall is a
property of the link, and the ground station measures it with its own clock,
whatever the simulator's speed-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from planner.errors import InvalidArgument

__all__ = ["FlightFaults", "FlightOptions"]


@dataclass(frozen=True)
class FlightFaults:
    """What goes wrong in flight; the default is nothing.

    - ``drain_factor``: the pack drains that many times faster than the power drawn says;
    - ``link_loss_after_s``: after that many seconds of flight the link is gone for good;
    - ``stall_after_s`` + ``stall_s``: after that many seconds of flight the link stalls for ``stall_s`` wall
      seconds (nothing in or out, the vehicle flies on), then comes back;
    - ``abort_at_seq``: the vehicle switches to RTL when the mission reaches that item;
    - ``inject_text`` at ``inject_at_seq``: a STATUSTEXT that reads like a command (it changes nothing);
    - ``lose_ack_of`` / ``lose_command_of``: the first COMMAND_ACK / COMMAND of those MAV_CMDs is lost (a command
      listed k times loses k);
    - ``refuse_with``: (MAV_CMD, MAV_RESULT) pairs answered so every time, nothing executed;
    - ``reboot_after_s``: a watchdog reboot that many seconds after landing (a new session: boot time goes back).
    """

    drain_factor: float = 1.0
    link_loss_after_s: float | None = None
    stall_after_s: float | None = None
    stall_s: float = 8.0
    abort_at_seq: int | None = None
    inject_text: str | None = None
    inject_at_seq: int = 2
    lose_ack_of: tuple[int, ...] = ()
    lose_command_of: tuple[int, ...] = ()
    refuse_with: tuple[tuple[int, int], ...] = ()  # (MAV_CMD, MAV_RESULT): answered so, nothing executed
    reboot_after_s: float | None = None

    def __post_init__(self) -> None:
        if not 0.1 <= self.drain_factor <= 50.0:
            raise InvalidArgument(f"drain_factor {self.drain_factor} must be within 0.1..50")
        for name in ("link_loss_after_s", "stall_after_s", "reboot_after_s"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise InvalidArgument(f"{name} must be >= 0")
        if not 0 < self.stall_s <= 600:
            raise InvalidArgument("stall_s must be within (0, 600] wall seconds")
        if self.inject_text is not None and not 0 < len(self.inject_text.encode("utf-8")) <= 50:
            raise InvalidArgument("inject_text must be 1..50 bytes (one STATUSTEXT)")
        if any(result in (0, 5) for _, result in self.refuse_with):  # ACCEPTED, IN_PROGRESS: not a refusal
            raise InvalidArgument("refuse_with answers a refusal: DENIED, TEMPORARILY_REJECTED, UNSUPPORTED or FAILED")

    def describe(self) -> list[str]:
        out: list[str] = []
        if self.drain_factor != 1.0:
            out.append(f"battery drains {self.drain_factor:g}× faster than the power drawn")
        if self.link_loss_after_s is not None:
            out.append(f"link lost after {self.link_loss_after_s:g} s of flight")
        if self.stall_after_s is not None:
            out.append(f"link stalls {self.stall_s:g} s (wall) after {self.stall_after_s:g} s of flight")
        if self.abort_at_seq is not None:
            out.append(f"mission aborted (RTL) at item {self.abort_at_seq}")
        if self.inject_text is not None:
            out.append(f"injected STATUSTEXT at item {self.inject_at_seq}: {self.inject_text!r}")
        if self.lose_ack_of:
            out.append(f"first COMMAND_ACK lost for command(s) {', '.join(map(str, self.lose_ack_of))}")
        if self.lose_command_of:
            out.append(f"first COMMAND lost for command(s) {', '.join(map(str, self.lose_command_of))}")
        for cmd, result in self.refuse_with:
            out.append(f"command {cmd} answered with MAV_RESULT {result}, not executed")
        if self.reboot_after_s is not None:
            out.append(f"reboots {self.reboot_after_s:g} s after landing")
        return out


@dataclass(frozen=True)
class FlightOptions:
    """How the simulated vehicle flies: its figures, its clock and its faults.

    The airframe and battery default to a DJI Matrice 30T class quadcopter (263.2 Wh, ≈385 W cruise, ≈439 W
    hover; FACTS.md "Multirotor energy"). ``battery_pct`` None keeps the vehicle's own charge.
    ``speedup`` None keeps the vehicle's clock rate (``SimVehicle(speedup=…)``); a number sets it while this
    flight is attached. ``params`` are the vehicle's parameters to set (its own names and units, as a ground
    station would); ``default_speed_mps`` / ``climb_mps`` set the dialect's waypoint speed and climb rate
    (ArduCopter WPNAV_SPEED / WPNAV_SPEED_UP, PX4 MPC_XY_CRUISE / MPC_TKO_SPEED). Nothing here starts a
    flight: a ground station launches it (``flows.sim.flight``).
    """

    speedup: float | None = None
    step_s: float = 0.05
    default_speed_mps: float | None = None
    climb_mps: float | None = None
    disarm_delay_s: float = 10.0  # armed on the ground without taking off (DISARM_DELAY, COM_DISARM_PRFLT): wall s
    battery_wh: float = 263.2
    battery_pct: float | None = None
    cruise_power_w: float = 385.0
    hover_power_w: float = 439.0
    cruise_speed_mps: float = 10.0  # where cruise_power_w was measured (the power curve passes through it)
    params: Mapping[str, float] = field(default_factory=dict)
    faults: FlightFaults = field(default_factory=FlightFaults)

    def __post_init__(self) -> None:
        if self.speedup is not None and not 1.0 <= self.speedup <= 10_000.0:
            raise InvalidArgument(f"speedup {self.speedup} must be within 1..10000")
        if self.battery_wh <= 0 or (self.battery_pct is not None and not 0 <= self.battery_pct <= 100):
            raise InvalidArgument("battery_wh must be > 0 and battery_pct within [0, 100]")
        if not 0 < self.step_s <= 1.0:
            raise InvalidArgument("step_s must be within (0, 1]")
        if self.hover_power_w <= 0 or self.cruise_power_w <= 0:
            raise InvalidArgument("hover_power_w and cruise_power_w must be > 0")

    def param_overrides(self, dialect: str) -> dict[str, float]:
        """The parameters this flight sets on its vehicle."""
        out = dict(self.params)
        speed, up = ("WPNAV_SPEED", "WPNAV_SPEED_UP") if dialect == "ardupilot" else ("MPC_XY_CRUISE", "MPC_TKO_SPEED")
        scale = 100.0 if dialect == "ardupilot" else 1.0
        if self.default_speed_mps is not None:
            out.setdefault(speed, self.default_speed_mps * scale)
        if self.climb_mps is not None:
            out.setdefault(up, self.climb_mps * scale)
        return out
