"""One session of the simulated vehicle: its clock from boot to the next reboot.

An autopilot's clock (``AP_HAL::millis``, what ``time_boot_ms`` and SYSTEM_TIME carry) starts at
boot and goes back to 0 when it reboots (FACTS.md: "A rebooted vehicle starts a new session …
the HEARTBEAT/SYSTEM_TIME boot time goes back"). The simulator's clock runs ``speedup`` times the
wall clock, as SITL's ``--speedup`` does; one loop turn advances it by at most ``max_sim_s`` of its
own time and ``max_wall_s`` of wall time, so an overloaded loop slows the vehicle down rather than
making it jump. While it restarts the vehicle is silent.
"""

from __future__ import annotations

__all__ = ["Session"]


class Session:
    """The vehicle's clock (``clock_s``: seconds since boot) and when it booted, in wall time."""

    def __init__(self, up_s: float = 0.0) -> None:
        self.clock_s = float(up_s)  # ``up_s``: booted that long ago
        self.boot_clock_s = float(up_s)
        self.booted_wall: float | None = None
        self.silent_until = 0.0
        self._last_wall: float | None = None

    @property
    def booted(self) -> bool:
        return self.booted_wall is not None

    def boot(self, now: float) -> None:
        self.booted_wall = self._last_wall = now

    def running(self, now: float) -> bool:
        """Booted, and not restarting."""
        return self.booted_wall is not None and now >= self.booted_wall and now >= self.silent_until

    def advance(self, now: float, speedup: float, max_sim_s: float, max_wall_s: float) -> float:
        """Where this turn takes the clock: the wall time since the last turn × ``speedup``, within the turn's
        bounds. The caller moves ``clock_s`` there, in one go or in steps (``SimVehicle._periodic``)."""
        wall_dt = min(max_wall_s, max(0.0, now - (self._last_wall if self._last_wall is not None else now)))
        self._last_wall = now
        return self.clock_s + min(max_sim_s, wall_dt * speedup)

    def restart(self, now: float, silent_s: float) -> None:
        """A reboot: silent for ``silent_s`` wall seconds, then booted again with the clock at 0."""
        self.silent_until = now + silent_s
        self.clock_s = self.boot_clock_s = 0.0
        self.booted_wall = self._last_wall = now + silent_s

    def boot_ms(self) -> int:
        return int(self.clock_s * 1000.0 + 1e-6) & 0xFFFFFFFF  # a step to 0.2 s is 200 ms, not 199.99…
