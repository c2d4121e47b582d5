"""Fixtures of the integrity tests: one approved draft in a real SORTIE_HOME, copied per test; a simulator."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from flows.ledger import open_ledger
from flows.usecases.grounds import Grounds
from integrity import kit


@pytest.fixture(scope="session")
def approved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(home, world, draft id): one planned and approved draft, planned once per session."""
    base = tmp_path_factory.mktemp("approved")
    world = kit.make_world(base)
    home = base / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        for k, v in kit.env_for(home, world).items():
            mp.setenv(k, v)
        from flows.usecases import decisions, planning

        s = planning.plan_draft(text=kit.TEXT, region_id="region-1001", requested_by="li.wei",
                                grounds=Grounds(ledger=open_ledger(), world_dir=str(world)),
                                now=kit.now())
        assert s.status == "DRAFT" and len({x.drone for x in s.sorties}) == 1, s
        decisions.approve(s.draft_id, s.version, approver="chen.jing", plan_hash=s.plan_hash, comment="ok",
                          now=kit.now(), grounds=Grounds(ledger=open_ledger()))
    return home, world, s.draft_id


@pytest.fixture
def home(approved: tuple[Path, Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private copy of the approved home, with the environment pointing at it."""
    src, world, _ = approved
    dst = tmp_path / "home"
    shutil.copytree(src, dst)
    for k, v in kit.env_for(dst, world).items():
        monkeypatch.setenv(k, v)
    yield dst


@pytest.fixture
def sim(approved: tuple[Path, Path, str]) -> Iterator[Any]:
    from testkit import sim_vehicle
    from flows.usecases.common import load_world_at

    _, world, draft = approved
    drone_id = open_ledger(approved[0]).get_draft(draft).plan["sorties"][0]["drone_id"]
    vehicle = sim_vehicle("udpin:127.0.0.1:0", load_world_at(world).drone(drone_id).autopilot).start()
    try:
        yield vehicle
    finally:
        vehicle.stop()


