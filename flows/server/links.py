"""Which address each vehicle is reached at: the authority's record, never the caller's word.

Through the server a dispatcher used to name any ``link`` address for a
dispatch (or a pause, a recall): vehicle binding refuses a *wrong vehicle*
(system id, autopilot, signing), but the address itself was the caller's. Now
the server owns it. A drone's link is, in order:

1. ``<home>/links.json`` — set by an admin on the server host with ``sortie
   admin link set DRONE CONN`` (audited in the ledger), for a vehicle whose
   address differs from the fleet file (a new radio, a simulator);
2. the ``link`` of the drone in the server world's ``fleet.json``.

A request may still carry a ``link`` (so a script that always passed one keeps
working), but it must equal the server's record for every drone it names;
anything else is ``OVERRIDE_REFUSED``. The server then dispatches, controls,
follows and reconciles with its own record for every drone of the plan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from flows.server.filestore import locked_json, read_json
from planner.errors import InvalidArgument, NotFound, OverrideRefused
from planner.world.model import World

__all__ = ["LinkStore", "resolve_links"]


class LinkStore:
    """``<home>/links.json``: drone id → pymavlink connection string, the admin's overrides of fleet.json."""

    def __init__(self, home: str | Path) -> None:
        self.path = Path(home) / "links.json"

    def all(self) -> dict[str, str]:
        return dict(read_json(self.path, {"links": {}})["links"])

    def set(self, drone_id: str, conn: str) -> str | None:
        """Record ``conn`` for ``drone_id``; returns the address it replaces (None: the fleet file's was used)."""
        from planner.world.schema import DroneModel

        try:
            DroneModel._pymavlink_link(conn)  # the fleet file's own check of a connection string
        except ValueError as exc:
            raise InvalidArgument(str(exc)) from None
        with locked_json(self.path, {"links": {}}) as data:
            before = data["links"].get(drone_id)
            data["links"][drone_id] = conn
        return before

    def unset(self, drone_id: str) -> str:
        with locked_json(self.path, {"links": {}}) as data:
            if drone_id not in data["links"]:
                raise NotFound(f"no link is recorded for {drone_id} in {self.path} (the fleet file's is used)")
            return str(data["links"].pop(drone_id))


def resolve_links(world: World, store: LinkStore, drones: Iterable[str],
                  asked: str | Mapping[str, str] | None) -> dict[str, str]:
    """The server's link for each drone of a plan; ``asked`` (the request's) must match it or is refused."""
    flying = sorted(set(drones))
    recorded = store.all()
    mine = {d: recorded.get(d) or world.drone(d).link for d in flying}
    if asked is None:
        return mine
    named: dict[str, Any]
    if isinstance(asked, str):
        if len(flying) != 1:
            raise OverrideRefused(f"one link was given but the plan flies {len(flying)} drones; the server knows "
                                  "each drone's link: give none")
        named = {flying[0]: asked}
    else:
        named = dict(asked)
    wrong = {d: c for d, c in named.items() if mine.get(d) != c}
    if wrong:
        raise OverrideRefused(
            "the server owns the vehicles' link addresses; "
            + "; ".join(f"{d}: {c!r} is not its record" + (f" ({mine[d]!r})" if d in mine else " (not in this plan)")
                        for d, c in sorted(wrong.items()))
            + " — leave --link out, or ask an admin: sortie admin link set DRONE CONN",
            details={"refused": sorted(wrong)},
        )
    return mine
