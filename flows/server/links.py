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

The same file holds the admin's **bindings** (issue 38): who must answer on a
drone's link — its MAVLink system id (and component), and the reference of the
signing key in ``<home>/keys`` — set by ``sortie admin vehicle bind``, which
provisions the key on the vehicle in the same command (SETUP_SIGNING,
``flows.vehicle.provision``). A binding is applied over the fleet file's entry
(``LinkStore.apply``) to the world every request judges, so the hub, the
upload, launch, commands and the follower all bind to the same vehicle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from flows.errors import OverrideRefused
from flows.server.filestore import CurrentJson, locked_json
from flows.vehicle.keys import key_path
from planner.errors import InvalidArgument, NotFound
from planner.world.model import Drone, World

__all__ = ["LinkStore", "resolve_links", "unbound_drones", "require_bound"]

#: ``links.json`` before an admin wrote one (shared by every read: never changed)
_NO_LINKS: dict[str, Any] = {"links": {}}


class LinkStore:
    """``<home>/links.json``: drone id → pymavlink connection string, the admin's overrides of fleet.json, and
    drone id → binding (system id, component id, signing key reference)."""

    def __init__(self, home: str | Path) -> None:
        self.path = Path(home) / "links.json"
        self._current = CurrentJson(self.path, _NO_LINKS)
        self._applied: tuple[World, Mapping[str, Any], World] | None = None  # the last ``apply``: world, file, answer

    def _file(self) -> Mapping[str, Any]:
        """The file's object (shared, never changed; the same object while the file does not change)."""
        return self._current.read()

    def all(self) -> dict[str, str]:
        return dict(self._file().get("links", {}))

    def bindings(self) -> dict[str, dict[str, Any]]:
        return {k: dict(v) for k, v in self._file().get("bindings", {}).items()}

    def bind(self, drone_id: str, *, system_id: int, component_id: int | None, key_ref: str) -> dict[str, Any] | None:
        """Record the binding of ``drone_id``; returns the one it replaces (None: the fleet file's applied)."""
        with locked_json(self.path, {"links": {}}) as data:
            bindings = data.setdefault("bindings", {})
            before = bindings.get(drone_id)
            bindings[drone_id] = {"system_id": int(system_id), "component_id": component_id, "key_ref": key_ref}
        return before

    def apply(self, world: World) -> World:
        """``world`` whose drones have the admin's link and binding where one is recorded (the rest untouched); the
        same world object while neither the world nor the file changed (the server's requests share one snapshot)."""
        file, last = self._file(), self._applied
        if last is not None and last[0] is world and last[1] is file:
            return last[2]
        applied = self._applied_to(world, file)
        self._applied = (world, file, applied)
        return applied

    @staticmethod
    def _applied_to(world: World, file: Mapping[str, Any]) -> World:
        links, bindings = file.get("links", {}), file.get("bindings", {})
        if not links and not bindings:
            return world

        def one(d: Drone) -> Drone:
            b = bindings.get(d.id)
            d = replace(d, link=links.get(d.id) or d.link)
            if b is None:
                return d
            return replace(d, mavlink_system_id=b["system_id"], signing_key=b["key_ref"],
                           mavlink_component_id=b.get("component_id") or d.mavlink_component_id)

        return replace(world, drones=tuple(one(d) for d in world.drones))

    @staticmethod
    def check(conn: str) -> None:
        """``InvalidArgument`` unless ``conn`` is a connection string the fleet file would take."""
        from planner.world.schema import DroneModel

        try:
            DroneModel._pymavlink_link(conn)  # the fleet file's own check of a connection string
        except ValueError as exc:
            raise InvalidArgument(str(exc)) from None

    def set(self, drone_id: str, conn: str) -> str | None:
        """Record ``conn`` for ``drone_id``; returns the address it replaces (None: the fleet file's was used)."""
        self.check(conn)
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


def unbound_drones(world: World, key_store: Path) -> dict[str, str]:
    """The drones of ``world`` (after ``LinkStore.apply``) that do not bind their vehicle: no system id, no
    signing key reference, or a key the store does not hold (drone → why)."""
    out: dict[str, str] = {}
    for d in world.drones:
        if d.mavlink_system_id is None:
            out[d.id] = "no MAVLink system id"
        elif not d.signing_key:
            out[d.id] = "no signing key"
        else:
            try:
                held = key_path(key_store, d.signing_key).is_file()
            except InvalidArgument:
                held = False
            if not held:
                out[d.id] = f"its signing key {d.signing_key!r} is not in the key store"
    return out


def require_bound(world: World, key_store: Path, *, allow_unsigned: bool) -> dict[str, str]:
    """The unbound drones of ``world`` (``unbound_drones``); ``InvalidArgument`` naming them unless
    ``allow_unsigned`` — a server whose vehicles anyone on their network can impersonate does not start by default."""
    unbound = unbound_drones(world, key_store)
    if unbound and not allow_unsigned:
        raise InvalidArgument(
            f"{len(unbound)} drone(s) do not bind their vehicle: "
            + "; ".join(f"{d}: {why}" for d, why in sorted(unbound.items()))
            + " — bind each with `sortie admin vehicle bind DRONE --system-id N` (it provisions the signing key), "
            "or start with --allow-unsigned to serve them unsigned (shown in /v1/health, on every fleet row and in "
            "the audit)", details={"unbound": unbound})
    return unbound
