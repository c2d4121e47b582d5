"""Launch a dispatched version and follow its flight through one link per vehicle.

A real ArduPilot serves one client per TCP port, and a UDP port answers
whoever spoke last: a follower and a launch on separate connections to the
same port would take each other's answers. So, as a vehicle hub will, this
has one link per vehicle from the grounds' ``Vehicles`` port (bound and signed
as the dispatch recorded it; a hub's held link where it holds one), starts the
follower on those links (``flows.usecases.monitoring.monitor_mission``, which watches every message
whoever reads it), launches through them (``flows.usecases.launching``), and
returns both answers. The Prefect ``monitor-mission`` run uses it at the
planned start; ``sortie demo`` and the tests use it too.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from flows.usecases.control_kit import bindings, dispatched_links
from flows.usecases.grounds import Grounds
from planner.errors import SortieError

__all__ = ["launch_and_follow"]

FOLLOWER_WAIT_S = 10.0  # a follower slower than this to start (a loaded machine) is not waited for longer


def launch_and_follow(
    draft_id: str,
    version: int | None,
    *,
    launch_as: str,
    grounds: Grounds,
    now: datetime | None,
    actor: str = "monitor",
    options: Any | None = None,
    launch_options: Any | None = None,
    link: str | Mapping[str, str] | None = None,
    clock: Callable[[], datetime] | None = None,
    on_update: Callable[..., None] | None = None,
    on_launched: Callable[[dict[str, Any]], None] | None = None,
) -> tuple[dict[str, Any], Any]:
    """(the launch's result — or ``{"error": …}`` when it was refused —, the ``MonitorResult`` of the flight).

    ``now``: the ledger's time for the launch and the follower's events (None: the clock; ``clock``, when given,
    stamps the follower's events). ``link`` overrides the dispatch's links (``--link``). A refused launch
    (``PREFLIGHT_FAILED``) leaves the version DISPATCHED; the follower then ends NOT_STARTED within its
    ``start_wait_s``, and nothing else is recorded.
    """
    from flows.usecases.launching import launch
    from flows.usecases.monitoring import monitor_mission
    from flows.vehicle.stream_rates import TELEMETRY

    ledger = grounds.ledger
    rec = ledger.get_draft(draft_id, version)
    addresses = dispatched_links(ledger, rec, link)
    bound = bindings(grounds, rec, list(addresses))
    links: dict[str, Any] = {}
    try:
        for drone_id, conn in addresses.items():
            links[drone_id] = grounds.vehicles.open(conn, bound.get(drone_id), streams=TELEMETRY)
        box: dict[str, Any] = {}

        def follow() -> None:
            try:
                box["result"] = monitor_mission(draft_id, rec.version, grounds=grounds, actor=actor, now=now,
                                                options=options, on_update=on_update, links=links, clock=clock,
                                                launch_as=launch_as)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                box["error"] = exc

        before = {d: vl.subscriber_count for d, vl in links.items()}
        follower = threading.Thread(target=follow, name=f"follow-{draft_id}", daemon=True)
        follower.start()
        _await_followers(follower, links, before)
        try:
            at = now or (clock() if clock is not None else datetime.now().astimezone())
            launched = launch(draft_id, rec.version, actor=launch_as, now=at, grounds=grounds,
                              options=launch_options, links=links).to_dict()
        except SortieError as exc:
            launched = {"error": exc.to_dict(), "state": ledger.get_draft(draft_id, rec.version).state}
        if on_launched is not None:
            on_launched(launched)
        follower.join((getattr(options, "timeout_s", None) or 600.0) + 30.0)
        if "error" in box:
            raise box["error"]
        return launched, box.get("result")
    finally:
        for vl in links.values():
            vl.close()


def _await_followers(follower: threading.Thread, links: Mapping[str, Any], before: Mapping[str, int],
                     limit_s: float = FOLLOWER_WAIT_S) -> None:
    """Launch only once the follower reads every link (bounded): a vehicle that took off before its follower
    listened is counted from its first sight, its take-off not seen (``takeoff_seen`` False)."""
    end = time.monotonic() + limit_s
    while follower.is_alive() and time.monotonic() < end:
        if all(vl.subscriber_count > before.get(d, 0) for d, vl in links.items()):
            return
        time.sleep(0.01)
