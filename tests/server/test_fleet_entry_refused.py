"""Issue 42: one fleet.json entry with an unknown key is refused alone; the rest of the world stays up.

A real ``sortie server`` (subprocess, real HTTP, real tokens) on the demo world whose fleet file gets one drone entry
with a key the schema does not know. Before, the whole world failed to load and every request answered
WORLD_UNAVAILABLE. Now that drone is listed REFUSED with its located problem, and planning goes on with the others.
"""

from __future__ import annotations

import json
import os

import pytest

from server.conftest import Authority

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


def test_an_unknown_key_refuses_its_drone_alone(own_authority: Authority) -> None:
    a = own_authority
    path = a.world / "fleet.json"
    fleet = json.loads(path.read_text(encoding="utf-8"))
    refused = next(d for d in fleet["drones"] if d["id"] == "M3TD-02")
    refused["colour"] = "red"  # a typo'd or custom key outside "extensions"
    tmp = path.with_name(".fleet.json.tmp")
    tmp.write_text(json.dumps(fleet), encoding="utf-8")
    os.replace(tmp, path)

    d = a.plan()  # the rest of the world plans (no WORLD_UNAVAILABLE)
    assert d["status"] == "DRAFT" and "M3TD-02" not in {s["drone"] for s in d["sorties"]}, d
    rows = a.call("chen.jing", "GET", "/v1/fleet")
    assert rows.status_code == 200, rows.text
    by_id = {r["id"]: r for r in rows.json()["drones"]}
    row = by_id["M3TD-02"]
    fault = row["fault"]
    assert row["status"] == "REFUSED" and fault["code"] == "FLEET_ENTRY_REFUSED", row
    assert "unknown key 'colour'" in fault["message"] and "$.drones[" in fault["message"], row
    assert {r["status"] for i, r in by_id.items() if i != "M3TD-02"} != {"REFUSED"}
