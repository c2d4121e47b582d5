"""``sortie admin vehicle bind``: bind a drone to its vehicle and give the vehicle its signing key, in one act.

What it does, in order (each step's failure leaves the previous binding as it
was and says so):

1. the vehicle is reached at the drone's link (``--link`` sets a new one) and
   its heartbeat must come from the system id given (``--system-id``) and the
   fleet entry's autopilot;
2. a fresh 32-byte key is made and kept beside the store's keys under a
   temporary name (the vehicle may take it before this process can write
   anything else, and a key the vehicle holds must never be lost);
3. SETUP_SIGNING goes over ``--setup-link`` (default the link: a vehicle that
   signs already takes it only on SERIAL0 or signed with its current key,
   which is used when the store has it) — ``flows.vehicle.provision``;
4. a link signed with the new key must hear the vehicle's signed frames and get
   its requests answered;
5. then the key takes its name in ``<home>/keys``, the binding and link are
   recorded in ``<home>/links.json`` (``flows.server.links``) and an audit row
   names the drone, the system id, the key reference and the proof — never the key.

Run it on the server host. With the server running, the vehicle must accept a
second ground station on that address (a UDP router or simulator does; a TCP
port of ArduPilot serves one client: use ``--setup-link`` on another port, or
bind before the server starts). The server applies a new binding at the next
request (its hub reopens the link bound to the new key).
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path
from typing import Any

from flows.errors import DeviceMismatch
from flows.server.links import LinkStore
from flows.vehicle.binding import DIALECT_AUTOPILOT, VehicleBinding
from flows.vehicle.keys import key_path, load_signing_key, write_signing_key
from flows.vehicle.provision import provision_signing
from planner.errors import InvalidArgument, NotFound, SortieError
from planner.world.model import World

__all__ = ["bind_vehicle", "default_key_ref"]


def default_key_ref(drone_id: str) -> str:
    """A key reference from a drone id: lower case, characters a file name allows."""
    return re.sub(r"[^a-z0-9_.-]", "-", drone_id.lower()).strip("-.") or "drone"


def bind_vehicle(home: Path, world: World, drone_id: str, *, system_id: int, component_id: int | None = None,
                 link: str | None = None, setup_link: str | None = None, key_ref: str | None = None,
                 timeout_s: float = 8.0) -> dict[str, Any]:
    """Provision and record the binding of ``drone_id`` (see the module docstring); returns what was done."""
    if not 1 <= system_id <= 255:
        raise InvalidArgument(f"--system-id {system_id}: a MAVLink system id is 1..255")
    store = LinkStore(home)
    if link is not None:
        store.check(link)
    drone = store.apply(world).drone(drone_id)  # NOT_FOUND for a drone not in the fleet
    keys = home / "keys"
    ref = key_ref or drone.signing_key or default_key_ref(drone_id)
    final = key_path(keys, ref)
    current = None
    if drone.signing_key:
        try:
            current = load_signing_key(keys, drone.signing_key)
        except NotFound:
            current = None
    key = secrets.token_bytes(32)
    pending = write_signing_key(keys, f"{ref}.pending", key)
    conn = link or drone.link
    expect = VehicleBinding(system_id=system_id, component_id=component_id,
                            autopilot=DIALECT_AUTOPILOT.get(drone.autopilot))
    try:
        done = provision_signing(conn, expect, key, setup_link=setup_link, current=current, timeout_s=timeout_s)
    except SortieError as exc:
        if isinstance(exc, DeviceMismatch) or (isinstance(exc.details, dict) and exc.details.get("nothing_sent")):
            pending.unlink(missing_ok=True)  # the vehicle never saw it
        raise
    os.replace(pending, final)
    if link is not None:
        store.set(drone_id, link)
    before = store.bind(drone_id, system_id=done.system_id, component_id=component_id, key_ref=ref)
    return {"drone_id": drone_id, "link": conn, "system_id": done.system_id, "component_id": component_id,
            "key_ref": ref, "before": before, "replaced_key": current is not None, **done.to_dict()}
