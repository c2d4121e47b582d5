"""What a simulated flight is told before it starts: the faults to inject and the vehicle's figures.

Kept apart from ``flows.sim.flight`` (the flight's state machine) because tests,
the demo and ``sortie sim-flight`` build these values without flying anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.errors import InvalidArgument

__all__ = ["FlightFaults", "FlightOptions"]


@dataclass(frozen=True)
class FlightFaults:
    """What goes wrong in flight; the default is nothing."""

    drain_factor: float = 1.0
    link_loss_after_s: float | None = None
    abort_at_seq: int | None = None
    inject_text: str | None = None
    inject_at_seq: int = 2
    lose_ack_of: tuple[int, ...] = ()
    lose_command_of: tuple[int, ...] = ()
    refuse_with: tuple[tuple[int, int], ...] = ()  # (MAV_CMD, MAV_RESULT): answered so, nothing executed

    def __post_init__(self) -> None:
        if not 0.1 <= self.drain_factor <= 50.0:
            raise InvalidArgument(f"drain_factor {self.drain_factor} must be within 0.1..50")
        if self.link_loss_after_s is not None and self.link_loss_after_s < 0:
            raise InvalidArgument("link_loss_after_s must be >= 0")
        if self.inject_text is not None and not 0 < len(self.inject_text.encode("utf-8")) <= 50:
            raise InvalidArgument("inject_text must be 1..50 bytes (one STATUSTEXT)")
        if any(result in (0, 5) for _, result in self.refuse_with):  # ACCEPTED, IN_PROGRESS: not a refusal
            raise InvalidArgument("refuse_with answers a refusal: DENIED, TEMPORARILY_REJECTED, UNSUPPORTED or FAILED")

    def describe(self) -> list[str]:
        out: list[str] = []
        if self.drain_factor != 1.0:
            out.append(f"battery drains {self.drain_factor:g}× faster than the model")
        if self.link_loss_after_s is not None:
            out.append(f"link lost after {self.link_loss_after_s:g} s of flight")
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
        return out


@dataclass(frozen=True)
class FlightOptions:
    """How the simulated vehicle flies: time scale, kinematics, battery and faults.

    Defaults are a DJI Matrice 30T class quadcopter (263.2 Wh, ≈385 W cruise,
    ≈439 W hover; FACTS.md "Multirotor energy"). Nothing here starts a flight:
    a ground station launches it (``flows.sim.flight``).
    """

    speedup: float = 100.0
    step_s: float = 0.5
    max_steps_per_tick: int = 40
    telemetry_hz: float = 25.0
    default_speed_mps: float = 10.0
    climb_mps: float = 5.0
    descent_mps: float = 3.0
    no_pilot_descent_mps: float = 2.5  # LOITER with the throttle at its minimum (observed: 2.4 m/s at the ground)
    disarm_delay_s: float = 10.0  # armed on the ground without taking off (DISARM_DELAY, COM_DISARM_PRFLT), wall s
    rtl_alt_m: float = 30.0
    battery_wh: float = 263.2
    battery_pct: float = 96.0
    cruise_power_w: float = 385.0
    hover_power_w: float = 439.0
    failsafe_pct: float = 20.0
    faults: FlightFaults = field(default_factory=FlightFaults)

    def __post_init__(self) -> None:
        if not 1.0 <= self.speedup <= 10_000.0:
            raise InvalidArgument(f"speedup {self.speedup} must be within 1..10000")
        if self.battery_wh <= 0 or not 0 < self.battery_pct <= 100:
            raise InvalidArgument("battery_wh must be > 0 and battery_pct within (0, 100]")
        if self.telemetry_hz <= 0 or self.step_s <= 0:
            raise InvalidArgument("telemetry_hz and step_s must be > 0")
