"""What the authority stands on, in one value: its ledger (and so its home and keys), its world, its rule set,
where plans are decided, and how its vehicles are reached.

Why one value, passed: every use case used to find these for itself — the
home in ``SORTIE_HOME`` (which ``sortie server`` set for the whole process),
the world through a ContextVar a request pinned, the planning process through
another, a held vehicle link through a process-wide register keyed by its
address — so nobody could tell what a call would touch without running it.
Now whoever builds the authority builds its ``Grounds`` once
(``flows.authority.choice`` for the CLI and the flows, ``flows.server.kit``
per request, ``flows.server.rounds`` for the server's own rounds) and every
use case receives it:

- ``ledger``: the record; its folder is the **home** (draft folders, the
  control lock) and holds the **key store** (``keys/``: the ledger's signing
  key and the vehicles' MAVLink keys);
- ``world_dir``: the authority's world folder; ``None`` (the embedded mode
  without ``--world``) means each draft's own recorded world;
- ``snapshot``: the one world this call judges by — ``sortie server`` takes
  its world once per request, strictly, with the drones as their vehicles
  report them (``seen(pin=True)``); without one, each use is a fresh load;
- ``source``: how the authority's own world is had when no snapshot is
  pinned (the server's ``WorldCache``: one parse per content); ``None``: loaded
  from its folder;
- ``strict``: a world whose zone data cannot be read is refused
  (``WORLD_UNAVAILABLE``) instead of read as a world without zones (the server);
- ``rules``: the rule file;
- ``decide``: where a plan's decision runs (the server's planning process,
  ``flows.server.plan_pool``; ``None``: in this process);
- ``vehicles``: the ``Vehicles`` port (``flows.vehicle.vehicles``): a vehicle
  hub's held links, or a link opened per call;
- ``live``: the vehicle hub whose state the fleet is judged by, if any
  (``sortie demo``'s; the server's is already in its snapshot).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flows.context import resolve_world_dir

if TYPE_CHECKING:
    from flows.ledger import Ledger
    from flows.vehicle.vehicles import Vehicles
    from planner.world.model import World
    from rules.loading import RuleSet

__all__ = ["Grounds", "Decide"]

#: ``decide(req, extraction, area, world, rules, now, first_version, budget)`` → ``drafting.draft_versions``' answer.
Decide = Callable[..., Any]


def _per_call() -> Vehicles:
    from flows.vehicle.vehicles import PER_CALL

    return PER_CALL


@dataclass(frozen=True)
class Grounds:
    """The ledger, world, rules, decider and vehicles of one authority (see the module doc)."""

    ledger: Ledger
    world_dir: str | Path | None = None
    rules: str | Path | None = None
    strict: bool = False
    snapshot: tuple[Path, World] | None = None
    source: Callable[[], World] | None = None
    decide: Decide | None = None
    vehicles: Vehicles = field(default_factory=_per_call)
    live: Any = None

    @property
    def home(self) -> Path:
        """The authority's home: the ledger's folder (draft folders, the control lock, ``keys/``)."""
        return self.ledger.path.parent

    @property
    def key_store(self) -> Path:
        """Where the vehicles' MAVLink signing keys are (``<home>/keys``)."""
        return self.home / "keys"

    def world_folder(self, recorded: str | Path | None = None) -> Path:
        """The folder a use case's world comes from: the authority's, else the one a draft recorded."""
        return resolve_world_dir(self.world_dir or recorded)

    def world(self, recorded: str | Path | None = None) -> World:
        """The world of ``world_folder(recorded)``: this call's snapshot when it is that folder's, else the
        authority's ``source`` for its own folder, else loaded now (strictly when ``strict``)."""
        from flows.usecases.common import load_world_at

        if self.snapshot is not None and self.world_dir is not None:
            return self.snapshot[1]  # the authority's own folder, whatever was recorded: the one it is pinned to
        root = self.world_folder(recorded)
        if self.snapshot is not None and self.snapshot[0] == root.resolve():
            return self.snapshot[1]
        if self.source is not None and root.resolve() == self.world_folder().resolve():
            return self.source()
        return load_world_at(root, strict=self.strict)

    def pinned(self, world: World) -> Grounds:
        """These grounds with ``world`` as the one snapshot of the authority's own folder."""
        return replace(self, snapshot=(self.world_folder().resolve(), world))

    def seen(self, *, pin: bool = False) -> Grounds:
        """These grounds as one call sees them: with a live hub (and no snapshot yet), pinned to the world whose
        drones say what their vehicles say — the one place the fleet's live state is laid over the world; with
        ``pin`` (a server request: one world for everything it does) pinned even without a hub."""
        if self.snapshot is not None or (self.live is None and not pin):
            return self
        world = self.world()
        return self.pinned(world if self.live is None else self.live.world(world))

    def rule_set(self) -> RuleSet:
        """The rule set (``rules``, ``SORTIE_RULES``, else the bundled file); a missing file is an error."""
        from flows.usecases.common import load_rules

        return load_rules(self.rules)
