"""How a landed flight ended, judged from what the vehicle showed: the follower's verdict at touchdown.

Pure: a ``DroneFlight`` (what was seen), its ``Expectation`` (what the plan
said) and whether an operator (or the authority's energy guard) recalled it in,
``(status, reason)`` out — nothing unknown is formatted or compared:

- **the mission done** (its last item reached or current; ArduPilot never reports
  the final NAV_LAND and resets MISSION_CURRENT once disarmed) and landed within
  ``LANDING_M`` of the planned landing point → SUCCEEDED (the monitor then
  measures the work on the track: ``flows.usecases.flown_work``); a landing
  below the plan's reserve is said, never silent;
- **recalled** → RECALLED near its dock (RTL) or where its landing in place
  began, in whatever mode it landed (ArduCopter's RTL lands in RTL), else
  ABORTED with the vehicle's figures;
- **a failsafe of the vehicle** (``flows.vehicle.failsafes``: it announced one, or
  its battery said LOW/CRITICAL, and it left its mission) → ABORTED, the reason
  starting with the failsafe's name (FAILSAFE_BATTERY: …);
- anything else → ABORTED with what was reached and the alerts.
"""

from __future__ import annotations

import math
from typing import Any

from flows.vehicle.flight_record import DroneFlight, Expectation

__all__ = ["judge_landing", "returned_home", "RECALL_HOME_M", "RECALL_LAND_M", "LANDING_M", "dist_m", "seqs_text"]

#: How far from its launch point a vehicle recalled home may land and still count as "at the dock", and how far
#: from where its landing began a vehicle told to land in place may come down.
RECALL_HOME_M = 25.0
RECALL_LAND_M = 60.0
#: How far from the planned landing point a completed mission may come down (GPS, wind, the autopilot's own
#: landing); the same margin as a recall home.
LANDING_M = 25.0


def dist_m(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    kx = math.cos(math.radians((lat1 + lat2) / 2.0)) * 111_320.0
    return math.hypot((lon2 - lon1) * kx, (lat2 - lat1) * 111_320.0)


def seqs_text(seqs: list[int], most: int = 8) -> str:
    """``1, 2, 3`` or, for a long list, ``90, 92, 94, 96, 98, 99 … 353`` (the report lists them all)."""
    if len(seqs) <= most:
        return ", ".join(map(str, seqs))
    return ", ".join(map(str, seqs[: most - 2])) + f" … {seqs[-1]}"


def _planned_landing(exp: Expectation) -> tuple[float, float] | None:
    if exp.landing_lat is not None and exp.landing_lon is not None:
        return exp.landing_lat, exp.landing_lon
    if exp.dock_lat is not None and exp.dock_lon is not None:
        return exp.dock_lat, exp.dock_lon
    return None


def _reserve_note(f: DroneFlight, exp: Expectation) -> str:
    """"; landed with 18 % where the plan keeps a reserve of 25 %" when below the reserve, else ""."""
    if exp.profile is None or f.battery_start_pct is None or f.battery_pct is None:
        return ""
    reserve = exp.profile.reserve_fraction * f.battery_start_pct
    if f.battery_pct >= reserve:
        return ""
    return f"; landed with {f.battery_pct:.0f} % of its battery where the plan keeps a reserve of {reserve:.0f} %"


def _failsafe(f: DroneFlight) -> dict[str, Any] | None:
    """The first failsafe the vehicle announced or showed during the flight, if any."""
    return f.failsafes[0] if f.failsafes else None


def judge_landing(f: DroneFlight, exp: Expectation, *, recalled: bool) -> tuple[str, str]:
    """(status, reason) of a flight that just landed and disarmed (see the module docstring)."""
    reached = set(f.reached)
    here = f.track[-1] if f.track else None
    last = exp.nav_seqs[-1] if exp.nav_seqs else None
    done = last is not None and (last in reached or (f.highest_current is not None and f.highest_current >= last))
    fs = _failsafe(f)
    if recalled and not (done and f.mode == "AUTO"):
        return _after_recall(f, exp, reached, fs)
    if done:
        target = _planned_landing(exp)
        if here is None:
            return "ABORTED", (f"landed after the last item (item {last}), but the vehicle sent no position: where it "
                               "came down is unknown")
        off = 0.0 if target is None else dist_m(here[2], here[1], target[0], target[1])
        if off <= LANDING_M:
            return "SUCCEEDED", (f"landed and disarmed {off:.0f} m from the planned landing point after the last item "
                                 f"(item {last}); all {f.nav_total} items flown (mode {f.mode})" + _reserve_note(f, exp))
        return "ABORTED", (f"the last item (item {last}) was reached but the vehicle came down {off:.0f} m from the "
                           f"planned landing point (limit {LANDING_M:g} m), in mode {f.mode}")
    top = max(reached) if reached else None
    flown = f"{len(reached)} of {f.nav_total} items reached" + (f" (last item {top})" if top is not None else "")
    if fs is not None:
        where = "" if here is None else f" at {here[2]:.6f},{here[1]:.6f}"
        return "ABORTED", (f"{fs['name']}: the vehicle's failsafe took over at t={fs['t_s']:g} s ({fs['evidence']}); "
                           f"it landed{where} in mode {f.mode} with {flown}" + _reserve_note(f, exp))
    why = [f"landed in mode {f.mode} with {flown}"]
    why += [a["message"] for a in f.alerts if a["kind"] in ("battery_low", "mode_change")]
    return "ABORTED", "; ".join(why)


def _after_recall(f: DroneFlight, exp: Expectation, reached: set[int], fs: dict[str, Any] | None) -> tuple[str, str]:
    """Landed after a recall: RECALLED near its dock (or where a landing in place began), in any mode; else
    ABORTED with the vehicle's figures."""
    missing = [s for s in exp.nav_seqs if s not in reached]
    top = max(reached) if reached else None
    flown = f"{len(reached)} of {f.nav_total} items reached" + (f" (last item {top})" if top is not None else "")
    not_flown = f"{len(missing)} not flown: items {seqs_text(missing)}" if missing else "nothing left unflown"
    also = f"; {fs['name']} seen during the flight ({fs['evidence']})" if fs is not None else ""
    here = f.track[-1] if f.track else None
    in_place = (f.recall or {}).get("mode") == "LAND" or (f.recall is None and f.mode == "LAND")
    if here is None:
        return "ABORTED", (f"recalled and landed in mode {f.mode}, but the vehicle sent no position: where it came "
                           f"down is unknown; {flown}; {not_flown}{also}")
    if in_place:
        start = f.recall or {}
        lat, lon = start.get("lat"), start.get("lon")
        off = None if lat is None or lon is None else dist_m(here[2], here[1], lat, lon)
        if off is None or off <= RECALL_LAND_M:
            return "RECALLED", (f"recalled: landed in place at {here[2]:.6f},{here[1]:.6f} in mode {f.mode}; {flown}; "
                                f"{not_flown}{also}")
        return "ABORTED", f"told to land in place but came down {off:.0f} m away; {flown}; {not_flown}{also}"
    home = (exp.dock_lat, exp.dock_lon) if exp.dock_lat is not None else \
        ((f.track[0][2], f.track[0][1]) if f.track else None)
    ok, where, _ = returned_home(here[2], here[1], home if home is None or home[1] is not None else None, exp.rally)
    if ok:
        return "RECALLED", f"recalled: {where}, in mode {f.mode}; {flown}; {not_flown}{also}"
    return "ABORTED", f"recalled to its dock but {where}, in mode {f.mode}; {flown}; {not_flown}{also}"


def returned_home(lat: float, lon: float, dock: tuple[float, float] | None,
                  rally: tuple[tuple[float, float], ...]) -> tuple[bool, str, float | None]:
    """Where a vehicle recalled home came down, judged as ArduCopter's RTL chooses where to go: the nearest of home
    and the mission's rally points (``AP_Rally::calc_best_rally_or_home_location``; the rally points are the
    tenant's docks, the home dock first: ``planner.output.mission_items.rally_items``). (home or a rally point
    within ``RECALL_HOME_M``, the words, metres from its own dock). The follower's verdict and ``sortie recall
    --wait``'s are this one."""
    off = None if dock is None else dist_m(lat, lon, dock[0], dock[1])
    if off is not None and off <= RECALL_HOME_M:
        return True, f"returned and landed {off:.0f} m from the dock", off
    nearest = min(((dist_m(lat, lon, r_lat, r_lon), r_lat, r_lon) for r_lat, r_lon in rally[1:]), default=None)
    if nearest is not None and nearest[0] <= RECALL_HOME_M:
        return True, (f"returned to the mission's nearest rally point and landed {nearest[0]:.0f} m from it "
                      f"({nearest[1]:.6f},{nearest[2]:.6f}, another dock)"
                      + ("" if off is None else f", {off:.0f} m from its own dock")), off
    where = "at an unknown distance from the dock" if off is None else f"{off:.0f} m from the dock"
    return False, f"landed {where} (limit {RECALL_HOME_M:g} m)", off
