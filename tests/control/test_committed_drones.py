"""Issue 42: a drone committed to another draft (its dispatch not ended: DISPATCHED, LAUNCHED, IN_FLIGHT, LINK_LOST,
RECALLING) is not eligible when planning or replanning — it would be DEVICE_BUSY at dispatch.

The committed draft is really dispatched to the vehicle simulator over UDP (the ledger holds its drone as the
dispatch left it); the second request is planned and replanned on the same ledger and world.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from control.controlkit import NOW, OPERATOR, PLANNER, REGION, TEXT, Flight
from flows.usecases import planning
from flows.usecases.grounds import Grounds

pytestmark = pytest.mark.timeout(120)


def _drones(d: object) -> set[str]:
    return {s.drone for s in d.sorties}  # type: ignore[attr-defined]


def test_a_drone_dispatched_for_another_draft_is_left_out_of_a_plan_and_a_replan(fly: Callable[..., Flight]) -> None:
    f = fly("px4", launch=False, monitor=False)  # dispatched, on its dock: the ledger holds its drone
    held = f.ledger.get_draft(f.draft_id, f.version).plan["sorties"][0]["drone_id"]
    grounds = Grounds(ledger=f.ledger)
    later = NOW + timedelta(seconds=20)
    d = planning.plan_draft(text=TEXT + " again", region_id=REGION, requested_by=PLANNER, now=later, grounds=grounds)
    assert held not in _drones(d), d
    why = f"{held} is committed to draft {f.draft_id} v{f.version} (DISPATCHED)"
    if d.status == "WAITING_RESOURCE":
        assert any(why in m for m in d.missing), d.missing
    again = planning.replan(d.draft_id, requested_by=PLANNER, now=later + timedelta(seconds=5), grounds=grounds)
    assert again.version == d.version + 1 and held not in _drones(again), again
    # the first draft ends: its drone is free again
    rec = f.ledger.get_draft(f.draft_id, f.version)
    f.ledger.transition(f.draft_id, f.version, expected_state="DISPATCHED", expected_row_version=rec.row_version,
                        to_state="ABORTED", actor=OPERATOR, reason="cancelled before take-off", now=later)
    free = planning.plan_draft(text=TEXT, region_id=REGION, requested_by=PLANNER, now=later + timedelta(seconds=9),
                               grounds=grounds)
    assert held in _drones(free), free
