"""The one link opener (``flows.vehicle.link.open_link``) against the simulator over real TCP and UDP on 127.0.0.1.

What it must get right is what ArduCopter was observed to do (FACTS.md): one
client per TCP port (a second one connects and then hears nothing), telemetry
only on request and per port (SET_MESSAGE_INTERVAL, else REQUEST_DATA_STREAM),
a MISSION_COUNT refused with NO_SPACE while the vehicle boots — and a dispatch
whose vehicle does not answer before anything is sent must leave the draft
dispatchable, with the likely causes named.
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("MAVLINK20", "1")

from flows.context import resolve_now  # noqa: E402
from flows.ledger import open_ledger  # noqa: E402
from flows.sim.vehicle import SimVehicle  # noqa: E402
from testkit import sim_vehicle  # noqa: E402
from flows.usecases import dispatching  # noqa: E402
from flows.vehicle.link import TELEMETRY, open_link  # noqa: E402
from flows.vehicle.upload import upload_plan  # noqa: E402
from flows.usecases.grounds import Grounds  # noqa: E402
from flows.errors import DeviceUnavailable
from planner.output.mission_items import MISSION  # noqa: E402
from testkit import approved_draft_home, free_port, wire_plan, wire_world  # noqa: E402

pytestmark = pytest.mark.timeout(60)

FAST = dict(timeout_s=10.0, retry_s=0.05, max_retries=12, heartbeat_timeout_s=2.0)
NOW = resolve_now("2026-11-29T06:58:00+02:00")


def _tcp_sim(**kwargs: Any) -> tuple[SimVehicle, int]:
    port = free_port()
    return sim_vehicle(f"tcpin:127.0.0.1:{port}", "ardupilot", heartbeat_s=0.1, rerequest_s=0.05, **kwargs), port


def test_a_tcp_link_uploads_and_streams_only_what_it_asked_for() -> None:
    sim, port = _tcp_sim(home=(60.1699, 24.9409, 13.5))
    with sim:
        outcome = upload_plan(wire_plan(), wire_world("ardupilot"), link=f"tcp:127.0.0.1:{port}", **FAST)
        assert outcome.status == "ACCEPTED" and len(sim.missions[MISSION]) > 3
        assert set(sim.ports[0].rates_s) == {"SYSTEM_TIME"}  # the upload asked for the vehicle's uptime only
    sim2, port2 = _tcp_sim(home=(60.1699, 24.9409, 13.5))
    with sim2:
        with open_link(f"tcp:127.0.0.1:{port2}", streams=TELEMETRY) as link:
            assert link.stream_outcome == {name: "interval" for name in TELEMETRY}  # each SET_MESSAGE_INTERVAL ACKed
            # every streamed value once (each stream has its own interval: under load one comes later than another)
            link.pump(5.0, lambda: link.view.home_lat is not None and link.view.prearm_ok is not None
                      and link.view.gps_fix_type is not None)
            assert link.view.prearm_ok is True and link.view.gps_fix_type == 3 and link.view.home_lat == pytest.approx(60.1699)


def test_a_port_held_by_another_client_is_named_and_nothing_is_sent() -> None:
    sim, port = _tcp_sim()
    with sim:
        with open_link(f"tcp:127.0.0.1:{port}", streams={}):  # the first client holds the port
            t0 = time.monotonic()
            with pytest.raises(DeviceUnavailable) as info:
                open_link(f"tcp:127.0.0.1:{port}", heartbeat_timeout_s=1.0)  # connects (listen queue), hears nothing
            assert 0.9 < time.monotonic() - t0 < 3.0
            msg = info.value.message
            assert "held by another client" in msg and "one client per TCP port" in msg and "signing" in msg
            assert info.value.details["nothing_sent"] is True
        # the first client left: the port serves the next one
        with open_link(f"tcp:127.0.0.1:{port}", streams={}, heartbeat_timeout_s=2.0) as link:
            assert link.target_system == 1


def test_without_a_set_message_interval_answer_the_legacy_stream_request_is_used() -> None:
    class NoIntervals:
        """A vehicle part that swallows MAV_CMD_SET_MESSAGE_INTERVAL (an autopilot that predates it)."""

        def on_message(self, vehicle: SimVehicle, msg: Any) -> bool:
            return False

        def on_mission_stored(self, vehicle: SimVehicle, mission_type: int, items: tuple[Any, ...]) -> None:
            return None

        def tick(self, vehicle: SimVehicle, now_s: float) -> None:
            return None

    sim = sim_vehicle("udpin:127.0.0.1:0", "ardupilot", heartbeat_s=0.1, flight=NoIntervals())
    sim._link_message = lambda msg: (msg.get_type() in ("COMMAND_LONG",) and int(msg.command) == 511) or \
        SimVehicle._link_message(sim, msg)  # type: ignore[method-assign]
    with sim:
        with open_link(sim.address, streams={"GLOBAL_POSITION_INT": 4.0, "HOME_POSITION": 1.0},
                       stream_ack_s=0.3) as link:
            assert link.stream_outcome == {"GLOBAL_POSITION_INT": "data_stream", "HOME_POSITION": "unanswered"}
            assert link.fresh("GLOBAL_POSITION_INT", time.monotonic(), 2.0)
            assert "GLOBAL_POSITION_INT" in sim.ports[0].rates_s  # REQUEST_DATA_STREAM of MAV_DATA_STREAM_POSITION


def test_an_upload_refused_with_no_space_while_the_vehicle_boots_is_asked_again() -> None:
    with sim_vehicle("udpin:127.0.0.1:0", "ardupilot", rerequest_s=0.05, boot_s=10.0, speedup=6.67) as sim:  # 1.5 s wall
        outcome = upload_plan(wire_plan(), wire_world("ardupilot"), link=sim.address, **FAST)
    assert outcome.status == "ACCEPTED" and sim.stats.booting_refusals >= 1
    fence = next(a for a in outcome.uploads[0].attempts if a["kind"] == "upload")
    assert fence["boot_retries"] >= 1 and fence["outcome"] == "ACCEPTED"


@pytest.fixture(scope="module")
def approved(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, int]]:
    home = tmp_path_factory.mktemp("approved")
    with approved_draft_home(home, now=NOW) as d:
        yield home, d.draft_id, d.version


def test_a_dispatch_to_a_busy_port_claims_nothing_and_the_draft_stays_dispatchable(
        approved: tuple[Path, str, int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    template, draft_id, version = approved
    shutil.copytree(template, tmp_path / "home")
    monkeypatch.setenv("SORTIE_HOME", str(tmp_path / "home"))
    port = free_port()
    with sim_vehicle(f"tcpin:127.0.0.1:{port}", "px4", heartbeat_s=0.1, rerequest_s=0.05) as sim:
        holder = socket.create_connection(("127.0.0.1", port))  # another ground station holds the port
        try:
            time.sleep(0.2)
            with pytest.raises(DeviceUnavailable) as info:
                dispatching.dispatch(draft_id, version, actor="chen.jing", now=NOW, link=f"tcp:127.0.0.1:{port}",
                                     timeout_s=3.0, grounds=Grounds(ledger=open_ledger()))
        finally:
            holder.close()
        msg = info.value.message
        assert "held by another client" in msg and "nothing was claimed or sent" in msg and "stays APPROVED" in msg
        ledger = open_ledger()
        assert ledger.dispatches(draft_id) == [] and ledger.get_draft(draft_id, version).state == "APPROVED"
        assert sim.stats.uploads_completed == 0
        time.sleep(0.2)  # the vehicle notices the first client left
        again = dispatching.dispatch(draft_id, version, actor="chen.jing", now=NOW, link=f"tcp:127.0.0.1:{port}",
                                     timeout_s=10.0, grounds=Grounds(ledger=open_ledger()))
        assert again.status == "ACKED" and sim.stats.uploads_completed == 3
