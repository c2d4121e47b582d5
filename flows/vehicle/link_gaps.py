"""A telemetry gap in flight: what it records, and when silence means the vehicle has surely come down.

Why a module of its own: a lost link is a state, not an end (issue 42). The
follower (``flows.vehicle.follow``) opens a gap when a vehicle that armed goes
silent for ``link_lost_s``, closes it when telemetry returns, and ends the
flight LOST only when the silence outlasts what the vehicle could still fly:
the battery it last reported × the drone's endurance × a margin, plus a grace,
counted on the vehicle's own clock. The rate at which that clock ran against
the wall clock while it was heard is measured (``clock_rate``), so a
simulator's speed-up counts as the vehicle's time. Pure: numbers in, numbers
and sentences out.
"""

from __future__ import annotations

from typing import Any

__all__ = ["clock_rate", "endurance_left_s", "open_gap", "close_gap", "lost_reason"]


def clock_rate(first: tuple[float, float] | None, last: tuple[float, float] | None) -> float:
    """Vehicle seconds per wall second between two (vehicle s, wall s) readings (1 until measured)."""
    if first is None or last is None:
        return 1.0
    dv, dw = last[0] - first[0], last[1] - first[1]
    if dv <= 0 or dw <= 0:
        return 1.0
    rate = dv / dw
    # a real vehicle's clock is measured over 2 s (transport jitter); a clock 5x faster is a simulator's speed-up,
    # plain within 0.1 s (at 500x a sortie flies in seconds: waiting 2 s would miss it)
    return min(max(rate, 0.1), 10_000.0) if dw >= 2.0 or (dw >= 0.1 and rate >= 5.0) else 1.0


def endurance_left_s(battery_pct: float | None, endurance_s: float, margin: float, grace_s: float) -> float | None:
    """Vehicle seconds it can still be flying after the loss at the most (None: unknown, never declared LOST)."""
    if endurance_s <= 0 or battery_pct is None:
        return None
    return battery_pct / 100.0 * endurance_s * margin + grace_s


def open_gap(before: dict[str, Any], *, t_s: float, silent_s: float, lost_wall: float, rate: float,
             left_s: float | None, nav_total: int) -> tuple[dict[str, Any], str]:
    """The gap's record (``before``: where the vehicle was last seen) and the sentence that says it."""
    gap = {"from_t_s": round(t_s, 1), "before": before, "clock_rate": round(rate, 2),
           "endurance_left_s": None if left_s is None else round(left_s, 0), "back_t_s": None, "silent_s": None,
           "lost_wall": lost_wall, "resent": []}
    where = "unknown" if before["lat"] is None else f"{before['lat']:.6f},{before['lon']:.6f}"
    message = (f"no telemetry for {silent_s:.1f} s at item {before['seq']} ({before['reached']} of {nav_total} items "
               f"reached), last seen {where} in mode {before['mode']}: it may still be flying")
    return gap, message


def close_gap(gap: dict[str, Any], *, now_wall: float, t_s: float) -> None:
    """Telemetry is back: how long it was silent (wall s) and the vehicle's time it came back at."""
    gap["silent_s"] = round(now_wall - gap.pop("lost_wall"), 1)
    gap["back_t_s"] = round(t_s, 1)


def lost_reason(gap: dict[str, Any], silent_s: float) -> str | None:
    """Why the vehicle is LOST after ``silent_s`` wall seconds of silence in ``gap``; None while it may still fly."""
    left = gap["endurance_left_s"]
    if left is None or silent_s * gap["clock_rate"] <= left:
        return None
    b = gap["before"]
    return (f"ENDURANCE_EXCEEDED: no telemetry for {silent_s:.0f} s (about {silent_s * gap['clock_rate']:.0f} s of the "
            f"vehicle's time) since item {b['seq']}, longer than it could still fly with {b['battery_pct']} % of its "
            f"battery ({left:.0f} s at most); last seen {b['lat']},{b['lon']} in mode {b['mode']}")
