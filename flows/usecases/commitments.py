"""The drones another draft holds, laid over the world before planning: a committed drone is not eligible.

Why: a dispatch holds its drones until its mission ends (``flows.ledger.claims.busy_with``:
DISPATCHED, LAUNCHED, IN_FLIGHT, RECALLING, LINK_LOST, or a dispatch in progress or
unsettled). The dispatch refuses a held drone (DEVICE_BUSY), but planning read only the
world, so a plan or a replan could pick a drone sitting DISPATCHED on its dock for another
draft and fail only at dispatch (issue 42). Here the ledger's holdings become
``Drone.committed_to`` and ``rules.eligibility`` leaves those drones out, naming the draft
that holds each. The draft being (re)planned does not hold its own drones against itself.
"""

from __future__ import annotations

from dataclasses import replace

from flows.ledger import Ledger
from planner.world.model import World

__all__ = ["with_commitments"]


def with_commitments(world: World, ledger: Ledger, *, draft_id: str | None = None) -> World:
    """``world`` whose drones held by a dispatch of a draft other than ``draft_id`` say by which."""
    held: dict[str, str] = {}
    for b in ledger.holding([d.id for d in world.drones]):
        if b["draft_id"] == draft_id:
            continue
        for drone_id in b["drones"]:
            held.setdefault(drone_id, f"draft {b['draft_id']} v{b['version']} ({b['state'] or b['status']})")
    if not held:
        return world
    return replace(world, drones=tuple(replace(d, committed_to=held[d.id]) if d.id in held else d
                                       for d in world.drones))
