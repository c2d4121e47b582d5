"""Who must answer on a drone's link: its MAVLink ids, its autopilot, its signing key.

A fleet entry binds a drone to a vehicle (``mavlink_system_id``,
``mavlink_component_id``, ``autopilot``, ``signing_key`` by reference); the link
refuses a heartbeat from any other (``DeviceMismatch``) and signs with the key
read from the key store (``flows.vehicle.keys``), never from the world folder.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from planner.world.model import Drone

__all__ = ["AUTOPILOT_DIALECT", "DIALECT_AUTOPILOT", "VehicleBinding", "binding_for", "binding_from_record"]

AUTOPILOT_DIALECT = {3: "ardupilot", 12: "px4"}  # MAV_AUTOPILOT_ARDUPILOTMEGA, MAV_AUTOPILOT_PX4
DIALECT_AUTOPILOT = {v: k for k, v in AUTOPILOT_DIALECT.items()}


@dataclass(frozen=True)
class VehicleBinding:
    """Who must answer on a drone's link: its MAVLink ids, its autopilot, and its signing key (if any)."""

    system_id: int | None = None
    component_id: int | None = None
    autopilot: int | None = None
    signing_key: bytes | None = field(default=None, repr=False)
    key_ref: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"system_id": self.system_id, "component_id": self.component_id, "autopilot": self.autopilot,
                "signed": self.signing_key is not None, "key_ref": self.key_ref}

    def link_kwargs(self) -> dict[str, Any]:
        return {"expect_system": self.system_id, "expect_component": self.component_id,
                "expect_autopilot": self.autopilot, "signing_key": self.signing_key}


def binding_for(drone: Drone, key_store: Path | None = None) -> VehicleBinding:
    """The binding of a fleet entry; its signing key is read from ``key_store`` (default SORTIE_HOME/keys)."""
    key = None
    if drone.signing_key:
        from flows.context import sortie_home
        from flows.vehicle.keys import load_signing_key

        key = load_signing_key(key_store if key_store is not None else sortie_home() / "keys", drone.signing_key)
    return VehicleBinding(
        system_id=drone.mavlink_system_id, component_id=drone.mavlink_component_id,
        autopilot=DIALECT_AUTOPILOT.get(drone.autopilot), signing_key=key, key_ref=drone.signing_key,
    )


def binding_from_record(recorded: dict[str, Any], key_store: Path) -> VehicleBinding:
    """The binding a dispatch recorded for a vehicle (``VehicleBinding.to_dict``), its key read again from the
    store by reference: later commands go to the vehicle the mission was uploaded to, signed as the upload was."""
    key = None
    if recorded.get("key_ref"):
        from flows.vehicle.keys import load_signing_key

        key = load_signing_key(key_store, recorded["key_ref"])
    return VehicleBinding(system_id=recorded.get("system_id"), component_id=recorded.get("component_id"),
                          autopilot=recorded.get("autopilot"), signing_key=key, key_ref=recorded.get("key_ref"))
