"""After a failed upload: clear what the dispatch touched and record exactly what the vehicle holds.

ArduPilot writes mission and rally items as they arrive, and a fence may have
been accepted before the mission was refused; a vehicle must not be left with
half a dispatch. Each touched mission type is cleared (MISSION_CLEAR_ALL with
its mission_type, fence last), then fence, mission and rally are read back —
twice, each after the link went quiet, and believed only when both agree.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from planner.output.mission_items import FENCE, MISSION, MISSION_TYPE_NAMES, RALLY, MissionSet
from planner.output.mission_wire import compare_items

if TYPE_CHECKING:
    from flows.vehicle.mission_client import MissionClient

__all__ = ["UPLOAD_ORDER", "leave_nothing_behind"]

UPLOAD_ORDER: tuple[int, ...] = (FENCE, MISSION, RALLY)
"""Fence first: a mission must never be flyable on a vehicle whose fence is stale (the one order: upload, read-back)."""
MISSION_TYPE_NAMES_ORDER = tuple(MISSION_TYPE_NAMES[t] for t in UPLOAD_ORDER)


def leave_nothing_behind(
    ml: "MissionClient", ms: MissionSet, result: Any, record: Any, deadline: float, touched: list[int]
) -> None:
    """After a failure: clear what this dispatch touched, then record what the vehicle holds.

    The fence is cleared last, so a mission is never left on a vehicle without
    the fence it was planned within. Sets ``cleared`` and ``holds``; when every
    touched type is confirmed empty, the outcome is known (FAILED) even if the
    upload itself ended uncertain.
    """
    cleared: list[str] = []
    for mtype in sorted(set(touched), key=lambda t: -UPLOAD_ORDER.index(t)):
        tr = ml.clear(mtype, deadline)
        record("clear", tr)
        if tr.outcome == "CLEARED":
            cleared.append(MISSION_TYPE_NAMES[mtype])
    result.cleared = tuple(cleared)
    holds: dict[str, Any] = {}
    for mtype in UPLOAD_ORDER:
        name = MISSION_TYPE_NAMES[mtype]
        # what a vehicle holds right after a failure is only believed when two read-backs agree, each
        # after the link has gone quiet (a late answer of an abandoned transfer must not pass for it)
        reads = []
        for _ in range(2):
            ml.drain(ml.retry_s, deadline)
            reads.append(ml.download(mtype, deadline))
        dl = reads[-1]
        if any(r.outcome != "DOWNLOADED" for r in reads) or reads[0].items != reads[1].items:
            record("holds", dl, detail=dl.detail or "two read-backs disagree")
            holds[name] = None
            continue
        planned = ms.items_of(mtype)
        matches = not compare_items(planned, dl.items, dialect=ms.dialect, mission_type=mtype)  # type: ignore[arg-type]
        count = len(dl.items)
        if ms.dialect == "ardupilot" and mtype == MISSION and count == 1:
            count = 0  # only the home slot: ArduPilot's empty mission
        holds[name] = {"count": count, "matches_plan": matches and count > 0}
        record("holds", dl, held=count, matches=matches)
    result.holds = holds
    touched_names = {MISSION_TYPE_NAMES[t] for t in touched}
    known_empty = all(holds.get(n) is not None and holds[n]["count"] == 0 for n in touched_names)
    result.left_nothing = known_empty  # also when nothing was touched: all(...) of nothing
    if not touched_names:
        summary = "nothing of this dispatch reached the vehicle"
    elif known_empty:
        summary = f"cleared {', '.join(sorted(touched_names))}: the vehicle holds nothing of this dispatch"
        result.status = "FAILED"
    else:
        parts = [f"{n} {'unknown' if holds.get(n) is None else str(holds[n]['count']) + ' items'}" for n in MISSION_TYPE_NAMES_ORDER]
        summary = (f"cleared {', '.join(cleared) or 'nothing'}; the vehicle now holds " + ", ".join(parts))
    result.detail = f"{result.detail}; {summary}"
