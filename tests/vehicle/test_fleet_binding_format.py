"""The fleet's optional binding keys: loaded when present, refused when malformed (that drone alone, issue 42), absent in
older worlds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from flows.context import DEMO_WORLD_DIR
from flows.world_folder import load_world


def _world(tmp_path: Path, **fields: object) -> Path:
    w = tmp_path / "world"
    shutil.copytree(DEMO_WORLD_DIR, w)
    fleet = json.loads((w / "fleet.json").read_text(encoding="utf-8"))
    fleet["drones"][0].update(fields)
    (w / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    return w


def test_an_older_fleet_has_no_binding(tmp_path: Path) -> None:
    w = _world(tmp_path)
    fleet = json.loads((w / "fleet.json").read_text(encoding="utf-8"))
    for key in ("mavlink_system_id", "mavlink_component_id", "signing_key"):
        fleet["drones"][0].pop(key, None)  # the demo world names its system ids; an older entry names none
    (w / "fleet.json").write_text(json.dumps(fleet), encoding="utf-8")
    d = load_world(w).drones[0]
    assert (d.mavlink_system_id, d.mavlink_component_id, d.signing_key) == (None, None, None)
    assert load_world(DEMO_WORLD_DIR).drones[0].mavlink_system_id == 1


def test_binding_keys_load(tmp_path: Path) -> None:
    d = load_world(_world(tmp_path, mavlink_system_id=11, mavlink_component_id=1, signing_key="m30t-01")).drones[0]
    assert (d.mavlink_system_id, d.mavlink_component_id, d.signing_key) == (11, 1, "m30t-01")


@pytest.mark.parametrize("fields", [{"mavlink_system_id": 0}, {"mavlink_system_id": 256}, {"mavlink_component_id": -1},
                                    {"signing_key": "../keys/x"}, {"signing_key": ""}, {"signing_key_hex": "00"}])
def test_malformed_binding_is_refused_with_its_path(tmp_path: Path, fields: dict[str, object]) -> None:
    """A malformed binding refuses its drone alone, located in fleet.json; the rest of the fleet loads."""
    demo = load_world(DEMO_WORLD_DIR)
    world = load_world(_world(tmp_path, **fields))
    (refused,) = world.refused_drones
    assert refused.id == demo.drones[0].id
    assert any("fleet.json" in p and "drones[0]" in p for p in refused.problems), refused.problems
    assert [d.id for d in world.drones] == [d.id for d in demo.drones[1:]]
