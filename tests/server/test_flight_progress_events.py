"""The server's follower says where a flight is on its event feed: ``flight.progress`` with the /ops page's keys,
at most once a second per drone, and ``flight.link_lost`` / ``flight.link_back`` each time (docs/flight.md)."""

from __future__ import annotations

import time
from typing import Any

from flows.server.followers import PROGRESS_KEYS, Followers
from flows.vehicle.flight_record import DroneFlight


def test_progress_is_published_with_the_agreed_keys_at_most_once_a_second_per_drone() -> None:
    published: list[tuple[str, str | None, dict[str, Any]]] = []

    def run(on_update: Any) -> dict[str, Any]:
        a, b = DroneFlight("M3TD-01", "udp:x", 0), DroneFlight("M3TD-02", "udp:y", 1)
        tick = {k: None for k in PROGRESS_KEYS} | {"sorties": 2, "tick": True, "state": "IN_FLIGHT"}
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.5:  # 1.5 s of ticks every 50 ms for two drones
            on_update(a, "progress", tick | {"drone_id": "M3TD-01", "item": 3, "battery_pct": 80.0})
            on_update(b, "progress", tick | {"drone_id": "M3TD-02", "item": 7, "link_lost_s": 4.2})
            time.sleep(0.05)
        on_update(a, "progress", {"seq": 3, "items": [3]})  # an item reached: not a tick, never published as one
        on_update(b, "link_lost", {"message": "no telemetry for 5.0 s", "silent_s": 5.0})
        on_update(b, "link_back", {"silent_s": 8.1, "from_t_s": 100.0, "back_t_s": 108.0, "mode": "AUTO"})
        return {"state": "SUCCEEDED", "reason": "flown"}

    followers = Followers(lambda kind, tenant, data: published.append((kind, tenant, data)))
    follower, started = followers.follow("d-1", 1, "t1", run)
    assert started and follower.done.wait(10.0) and follower.error is None
    progress = [d for k, _, d in published if k == "flight.progress"]
    per_drone = {drone: [d for d in progress if d["drone_id"] == drone] for drone in ("M3TD-01", "M3TD-02")}
    assert all(len(v) == 2 for v in per_drone.values()), {k: len(v) for k, v in per_drone.items()}  # t=0 and t≈1 s
    assert all(set(PROGRESS_KEYS) <= set(d) for d in progress)
    assert {d["draft_id"] for d in progress} == {"d-1"} and {d["version"] for d in progress} == {1}
    assert per_drone["M3TD-02"][0]["link_lost_s"] == 4.2 and "link_lost_s" not in per_drone["M3TD-01"][0]
    kinds = [k for k, _, _ in published]
    assert kinds.count("flight.link_lost") == 1 and kinds.count("flight.link_back") == 1
    assert kinds[-1] == "flight.finished" and published[-1][2]["state"] == "SUCCEEDED"
