"""The dispatch fault matrix: both autopilots × every loss point × drop rates 0–30 %, over real UDP.

Each case starts the simulator (``flows.sim.vehicle``, the mission protocol of
ArduPilot or PX4 as their sources have it) on a free port of 127.0.0.1 and
dispatches a small plan to it with ``upload_plan``. A loss point loses one
message once per mission type (``count``, ``item:N``, ``request:N``, the final
``ack``); the drop rate loses that fraction of every message both ways.

The property, whatever happened on the link: ACCEPTED means the vehicle holds
exactly the approved fence, mission and rally; anything else is an honest
FAILED/UNCERTAIN whose ``holds`` says what the vehicle holds (checked against
the simulator's own storage). With no random loss every single loss point must
end ACCEPTED — a lost message is what the protocol's retries are for.

Runtime: timers scaled for loopback (50 ms retries); the drop-0 rows cover
every loss point, the lossy rows the points where the protocol changes hands.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

os.environ.setdefault("MAVLINK20", "1")

from flows.sim.vehicle import SimVehicle  # noqa: E402
from testkit import sim_vehicle  # noqa: E402
from flows.vehicle.upload import UploadResult, upload_plan  # noqa: E402
from flows.errors import DispatchFailed, DispatchUncertain
from planner.output.mission_items import FENCE, MISSION, MISSION_TYPE_NAMES, RALLY, mission_set  # noqa: E402
from planner.output.mission_wire import compare_items  # noqa: E402
from testkit import wire_plan, wire_world  # noqa: E402

FAST = dict(timeout_s=8.0, retry_s=0.05, max_retries=10, heartbeat_timeout_s=3.0)
SIM_FAST = dict(heartbeat_s=0.05, rerequest_s=0.05, transfer_timeout_s=1.0)
HOME = (60.1699, 24.9409, 13.5)
TYPES = (FENCE, MISSION, RALLY)
N_MISSION = {d: len(mission_set(wire_plan(), 0, wire_world(d)).mission) for d in ("ardupilot", "px4")}


def _points(dialect: str) -> list[str]:
    n = N_MISSION[dialect]  # the longest list; "*" loses item/request N of every type that has one
    return ["count:*", "ack:*"] + [f"item:*:{k}" for k in range(n)] + [f"request:*:{k}" for k in range(n)]


LOSSLESS = [pytest.param(d, p, id=f"{d}-{p.replace(':*', '').replace(':', '')}") for d in ("ardupilot", "px4") for p in _points(d)]
LOSSY_POINTS = ("none", "count:*", "item:*:0", "item:*:5", "request:*:0", "request:*:5", "ack:*")
LOSSY = [
    pytest.param(d, drop, p, id=f"{d}-drop{int(drop * 100)}-{p.replace(':*', '').replace(':', '')}")
    for d in ("ardupilot", "px4") for drop in (0.1, 0.3) for p in LOSSY_POINTS
]


def _held(sim: SimVehicle, dialect: str) -> dict[str, Any]:
    """What the simulator stores, in the terms of ``UploadResult.holds``."""
    ms = mission_set(wire_plan(), 0, wire_world(dialect))
    out: dict[str, Any] = {}
    for t, items in sim.missions.items():
        n = len(items)
        if dialect == "ardupilot" and t == MISSION and n == 1:
            n = 0
        out[MISSION_TYPE_NAMES[t]] = {
            "count": n,
            "matches_plan": n > 0 and not compare_items(ms.items_of(t), items, dialect=dialect, mission_type=t),  # type: ignore[arg-type]
        }
    return out


def _dispatch(dialect: str, **sim_kwargs: Any) -> tuple[SimVehicle, UploadResult | None, Exception | None]:
    world, plan = wire_world(dialect), wire_plan()
    # up_s: up for ten minutes, so a NO_SPACE is a refusal, not a vehicle still booting (which is asked again)
    sim = sim_vehicle("udpin:127.0.0.1:0", dialect, home=HOME if dialect == "ardupilot" else None,  # type: ignore[arg-type]
                     up_s=600.0, **{**SIM_FAST, **sim_kwargs})
    with sim:
        try:
            outcome = upload_plan(plan, world, link=sim.address, **FAST)  # type: ignore[arg-type]
            return sim, outcome.uploads[0], None
        except (DispatchFailed, DispatchUncertain) as exc:
            d = exc.details["uploads"][0]
            return sim, UploadResult(
                drone_id=d["drone_id"], sortie_index=d["sortie_index"], link=d["link"], dialect=d["dialect"],
                status=d["status"], holds=d["holds"], detail=d["detail"], cleared=tuple(d["cleared"]), attempts=d["attempts"],
            ), exc


def _check(sim: SimVehicle, dialect: str, result: UploadResult | None, exc: Exception | None) -> None:
    held = _held(sim, dialect)
    assert result is not None
    if exc is None:
        assert result.status == "ACCEPTED"
        assert all(h["matches_plan"] for h in held.values()), f"ACCEPTED but the vehicle holds {held}"
        return
    assert result.status in ("FAILED", "UNCERTAIN"), result.status
    assert result.holds is not None, "a failed dispatch says what the vehicle holds"
    for name, h in result.holds.items():
        if h is not None:  # None: it could not be read, and the record says so
            assert h == held[name], f"{name}: recorded {h}, the vehicle holds {held[name]} ({result.detail})"
    if isinstance(exc, DispatchFailed) and result.cleared:
        assert all(held[n]["count"] == 0 for n in result.cleared)


@pytest.mark.timeout(20)
@pytest.mark.parametrize(("dialect", "point"), LOSSLESS)
def test_every_single_loss_point_ends_accepted_with_the_plan_on_the_vehicle(dialect: str, point: str) -> None:
    sim, result, exc = _dispatch(dialect, lose=(point,))
    assert exc is None, f"{point}: {exc}"
    _check(sim, dialect, result, exc)
    assert sim.stats.lost_on_purpose >= 1, "the loss point was reached"


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("dialect", "drop", "point"), LOSSY)
def test_lossy_links_end_accepted_or_honest(dialect: str, drop: float, point: str) -> None:
    lose = () if point == "none" else (point,)
    sim, result, exc = _dispatch(dialect, drop=drop, lose=lose, seed=11)
    _check(sim, dialect, result, exc)
    if drop <= 0.1:
        assert exc is None, f"10 % loss is within the retry budget: {exc}"


@pytest.mark.timeout(20)
def test_issue_15_ardupilot_lost_item_lost_request_lost_final_ack_is_acked_after_read_back() -> None:
    """The reproduction: ArduPilot answers ERROR to the re-sent last item of a fence it has stored."""
    sim, result, exc = _dispatch("ardupilot", lose=("item:fence:2", "request:fence:4", "ack:fence"))
    assert exc is None, exc
    assert result is not None and result.status == "ACCEPTED" and "fence" in result.verified_by_download
    fence_upload = next(a for a in result.attempts if a["kind"] == "upload" and a["mission_type"] == "fence")
    assert fence_upload["outcome"] == "UNCERTAIN" and fence_upload["result"] == "MAV_MISSION_ERROR"
    verify = next(a for a in result.attempts if a["kind"] == "verify" and a["mission_type"] == "fence")
    assert verify["matches"] is True
    assert sim.stats.lost_on_purpose == 3
    _check(sim, "ardupilot", result, exc)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_fence_accepted_mission_refused_leaves_nothing_behind(dialect: str) -> None:
    sim, result, exc = _dispatch(dialect, reject="MAV_MISSION_NO_SPACE")
    assert isinstance(exc, DispatchFailed) and "MAV_MISSION_NO_SPACE" in exc.message
    assert exc.details["vehicle_cleared"] is True, "the ledger may free the drone: nothing of the dispatch is left"
    assert result is not None and result.cleared == ("fence",)
    assert result.holds == {"fence": {"count": 0, "matches_plan": False}, "mission": {"count": 0, "matches_plan": False},
                            "rally": {"count": 0, "matches_plan": False}}
    _check(sim, dialect, result, exc)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_a_mission_refused_mid_transfer_is_cleared_with_the_fence(dialect: str) -> None:
    """ArduPilot has written items 0..4 when item 5 fails (not atomic); both types are cleared and it says so."""
    sim, result, exc = _dispatch(dialect, reject="MAV_MISSION_ERROR", reject_at_seq=5)
    assert isinstance(exc, DispatchFailed), exc
    assert result is not None and set(result.cleared) == {"fence", "mission"}
    assert "the vehicle holds nothing of this dispatch" in result.detail
    assert all(h["count"] == 0 for h in _held(sim, dialect).values())
    _check(sim, dialect, result, exc)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("dialect", ["ardupilot", "px4"])
def test_every_final_ack_lost_is_settled_by_read_back_without_a_second_upload(dialect: str) -> None:
    sim, result, exc = _dispatch(dialect, lose_final_ack=True)
    assert exc is None, exc
    assert result is not None and result.verified_by_download == ("fence", "mission", "rally")
    assert sim.stats.uploads_completed == 3, "never a blind re-upload"
    _check(sim, dialect, result, exc)


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("dialect", "drop", "at"), [
    pytest.param(d, drop, at, id=f"{d}-drop{int(drop * 100)}-{'count' if at is None else f'item{at}'}")
    for d in ("ardupilot", "px4") for drop in (0.1, 0.3) for at in (None, 5)
])
def test_a_refusing_vehicle_on_a_lossy_link_is_never_accepted_and_its_holdings_are_true(dialect: str, drop: float, at: int | None) -> None:
    # at COUNT a refusal is NO_SPACE (an ERROR there means "busy" and is waited for); mid-transfer a write ERROR
    refusal = "MAV_MISSION_NO_SPACE" if at is None else "MAV_MISSION_ERROR"
    sim, result, exc = _dispatch(dialect, drop=drop, reject=refusal, reject_at_seq=at, seed=5)
    assert exc is not None, "a vehicle that refuses the mission never yields ACCEPTED"
    _check(sim, dialect, result, exc)
    assert not _held(sim, dialect)["mission"]["matches_plan"]
