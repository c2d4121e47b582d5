"""The ground-station side of the MAVLink mission protocol over one pymavlink link.

``MavLink`` opens a connection string (``udpout:127.0.0.1:14560``, ``udpin:…``,
``tcp:…``), says hello with a HEARTBEAT (a ``udpin`` vehicle learns our
address from it) and waits for the vehicle's heartbeat to learn its system
and component ids. ``upload`` and ``download`` run one transfer each and
return a ``Transfer`` record; they never raise for a protocol outcome (a NACK,
silence, a timeout): deciding what an outcome means is the dispatcher's job.

The upload follows the protocol as real vehicles need it (FACTS.md, MAVLink):
MISSION_COUNT is resent until the first request; whatever seq the vehicle asks
for is answered (repeats are normal, a legacy MISSION_REQUEST gets a
MISSION_ITEM_INT); an INVALID_SEQUENCE ack (our duplicate arrived late) is not
fatal; after ``retry_s`` of silence the last message is resent, at most
``max_retries`` times in a row (``final_ack_retries`` once the last item has
gone out: a vehicle still missing an item would be asking for it, so a quiet
vehicle then most likely stored the mission and lost its ack, which the
dispatcher settles by reading it back); everything ends by ``deadline``
(monotonic).
An ACCEPTED ack counts only once the last item has been sent, so a stale ack
of an earlier transfer cannot pass for this one.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Literal

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

from planner.errors import DeviceUnavailable, InvalidArgument  # noqa: E402
import struct  # noqa: E402

from planner.mission_items import FENCE, MISSION_TYPE_NAMES, MissionItem  # noqa: E402
from planner.mission_wire import from_wire, to_wire  # noqa: E402

__all__ = ["MavLink", "Transfer", "TransferOutcome", "result_name", "GCS_SYSTEM_ID", "GCS_COMPONENT_ID"]

_M = mavutil.mavlink

GCS_SYSTEM_ID = 255
GCS_COMPONENT_ID = _M.MAV_COMP_ID_MISSIONPLANNER  # 190

TransferOutcome = Literal[
    "ACCEPTED", "REJECTED", "NO_ANSWER", "UNCERTAIN", "DOWNLOADED", "DOWNLOAD_FAILED", "CONFIRMED", "UNCONFIRMED"
]


def result_name(code: int) -> str:
    """``MAV_MISSION_NO_SPACE`` for 4."""
    entry = _M.enums["MAV_MISSION_RESULT"].get(int(code))
    return entry.name if entry is not None else f"MAV_MISSION_RESULT_{code}"


@dataclass
class Transfer:
    """One protocol transfer (an attempt in the ledger's words), as it went.

    ``outcome``: ACCEPTED (final ack seen), REJECTED (a NACK: ``result`` names it),
    NO_ANSWER (the vehicle never asked for an item: nothing was transferred),
    UNCERTAIN (items went out but no final ack came), DOWNLOADED / DOWNLOAD_FAILED,
    and for parameters CONFIRMED (every value echoed back) / UNCONFIRMED.
    """

    direction: Literal["upload", "download", "params"]
    mission_type: int
    count: int
    outcome: TransferOutcome = "NO_ANSWER"
    result: str | None = None
    items_sent: int = 0
    requests_seen: int = 0
    resends: int = 0
    duplicates_acked: int = 0
    duration_s: float = 0.0
    detail: str = ""
    items: tuple[MissionItem, ...] = field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "mission_type": MISSION_TYPE_NAMES.get(self.mission_type, str(self.mission_type)),
            "count": self.count,
            "outcome": self.outcome,
            "result": self.result,
            "items_sent": self.items_sent,
            "requests_seen": self.requests_seen,
            "resends": self.resends,
            "duplicates_acked": self.duplicates_acked,
            "duration_s": round(self.duration_s, 3),
            "detail": self.detail,
        }


class MavLink:
    """One open link to one vehicle; use as a context manager so the socket is closed."""

    def __init__(
        self,
        connection: str,
        *,
        retry_s: float = 1.0,
        max_retries: int = 8,
        heartbeat_timeout_s: float = 5.0,
        final_ack_retries: int = 3,
        system_id: int = GCS_SYSTEM_ID,
        component_id: int = GCS_COMPONENT_ID,
    ) -> None:
        if retry_s <= 0 or max_retries < 1:
            raise InvalidArgument("retry_s must be > 0 and max_retries >= 1")
        self.connection = connection
        self.retry_s = retry_s
        self.max_retries = max_retries
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.final_ack_retries = min(final_ack_retries, max_retries)
        try:
            self.conn = mavutil.mavlink_connection(connection, source_system=system_id, source_component=component_id)
        except Exception as exc:  # noqa: BLE001 - pymavlink raises many kinds for a bad string or socket
            raise DeviceUnavailable(f"cannot open MAVLink link {connection!r}: {exc}") from None
        self.target_system = 0
        self.target_component = 0
        self.autopilot: int | None = None

    def __enter__(self) -> "MavLink":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass

    # --- hello ------------------------------------------------------------------------------

    def _heartbeat(self) -> None:
        try:
            self.conn.mav.heartbeat_send(_M.MAV_TYPE_GCS, _M.MAV_AUTOPILOT_INVALID, 0, 0, 0)
        except OSError:
            pass  # a udpin link has no peer until the vehicle speaks

    def wait_vehicle(self, deadline: float) -> None:
        """Send heartbeats until the autopilot's heartbeat names its ids; DeviceUnavailable if none.

        Heartbeats of ground stations and of components without an autopilot
        (cameras, gimbals) are skipped: the mission protocol talks to the autopilot.
        """
        end = min(deadline, time.monotonic() + self.heartbeat_timeout_s)
        interval = min(self.retry_s, 0.5)
        while time.monotonic() < end:
            self._heartbeat()
            msg = self.conn.recv_match(type="HEARTBEAT", blocking=True, timeout=max(0.0, min(interval, end - time.monotonic())))
            if (
                msg is not None
                and msg.type != _M.MAV_TYPE_GCS
                and msg.autopilot != _M.MAV_AUTOPILOT_INVALID  # a camera, gimbal or another GCS: not the autopilot
                and msg.get_srcSystem() != 0
            ):
                self.target_system = msg.get_srcSystem()
                self.target_component = msg.get_srcComponent()
                self.autopilot = int(msg.autopilot)
                return
        raise DeviceUnavailable(
            f"no vehicle heartbeat on {self.connection!r} within {self.heartbeat_timeout_s:g} s; "
            "is the vehicle (or `sortie sim-vehicle`) running and is the link right?"
        )

    def _for_us(self, msg: Any, mission_type: int) -> bool:
        if msg.get_srcSystem() != self.target_system:
            return False
        if getattr(msg, "target_system", 0) not in (0, self.conn.mav.srcSystem):
            return False
        return int(getattr(msg, "mission_type", 0)) == mission_type

    # --- upload -----------------------------------------------------------------------------

    def upload(self, items: tuple[MissionItem, ...], mission_type: int, deadline: float) -> Transfer:
        """Upload ``items`` as ``mission_type``; returns how it went (never raises for a NACK)."""
        t0 = time.monotonic()
        tr = Transfer("upload", mission_type, len(items))
        ts, tc = self.target_system, self.target_component
        mav = self.conn.mav
        wire = [to_wire(i) for i in items]

        def send_count() -> None:
            mav.mission_count_send(ts, tc, len(items), mission_type)

        def send_item(seq: int) -> None:
            mav.mission_item_int_send(ts, tc, **wire[seq])
            tr.items_sent += 1

        last: tuple[str, int] = ("count", -1)
        highest_sent = -1
        silent = 0
        send_count()
        while True:
            now = time.monotonic()
            if now >= deadline:
                tr.detail = "overall link timeout"
                break
            msg = self.conn.recv_match(
                type=["MISSION_REQUEST_INT", "MISSION_REQUEST", "MISSION_ACK"],
                blocking=True,
                timeout=max(0.0, min(self.retry_s, deadline - now)),
            )
            if msg is None:
                if time.monotonic() >= deadline:
                    tr.detail = "overall link timeout"
                    break
                silent += 1
                if silent > self.max_retries:
                    tr.detail = f"silence after {self.max_retries} resends"
                    break
                if highest_sent == len(items) - 1 and silent > self.final_ack_retries:
                    tr.detail = f"no final ack after the last item was sent {self.final_ack_retries + 1} times"
                    break
                tr.resends += 1
                if last[0] == "count":
                    send_count()
                else:
                    send_item(last[1])
                continue
            if not self._for_us(msg, mission_type):
                continue
            if msg.get_type() == "MISSION_ACK":
                if msg.type == _M.MAV_MISSION_ACCEPTED:
                    if highest_sent == len(items) - 1:
                        tr.outcome, tr.result = "ACCEPTED", result_name(msg.type)
                        break
                    continue  # a stale ack from an earlier transfer
                if msg.type == _M.MAV_MISSION_INVALID_SEQUENCE and last[0] == "item":
                    tr.duplicates_acked += 1
                    continue  # our duplicate arrived after the vehicle moved on: harmless
                tr.outcome, tr.result = "REJECTED", result_name(msg.type)
                tr.detail = f"the vehicle answered {result_name(msg.type)}"
                break
            seq = int(msg.seq)
            if not 0 <= seq < len(items):
                continue
            silent = 0
            tr.requests_seen += 1
            send_item(seq)
            last = ("item", seq)
            highest_sent = max(highest_sent, seq)
        if tr.outcome not in ("ACCEPTED", "REJECTED"):
            tr.outcome = "NO_ANSWER" if tr.requests_seen == 0 else "UNCERTAIN"
        tr.duration_s = time.monotonic() - t0
        return tr

    # --- download ---------------------------------------------------------------------------

    def download(self, mission_type: int, deadline: float) -> Transfer:
        """Read ``mission_type`` back from the vehicle item by item (bounded resends)."""
        t0 = time.monotonic()
        tr = Transfer("download", mission_type, -1, outcome="DOWNLOAD_FAILED")
        ts, tc = self.target_system, self.target_component
        mav = self.conn.mav

        def wait(types: list[str], ok: Any, resend: Any) -> Any:
            silent = 0
            while True:
                now = time.monotonic()
                if now >= deadline:
                    tr.detail = "overall link timeout"
                    return None
                msg = self.conn.recv_match(type=types, blocking=True, timeout=max(0.0, min(self.retry_s, deadline - now)))
                if msg is None:
                    silent += 1
                    if silent > self.max_retries:
                        tr.detail = f"silence after {self.max_retries} resends"
                        return None
                    tr.resends += 1
                    resend()
                    continue
                if self._for_us(msg, mission_type) and ok(msg):
                    return msg

        def request_list() -> None:
            mav.mission_request_list_send(ts, tc, mission_type)

        request_list()
        count_msg = wait(["MISSION_COUNT"], lambda m: True, request_list)
        if count_msg is None:
            tr.duration_s = time.monotonic() - t0
            return tr
        tr.count = int(count_msg.count)
        got: list[MissionItem] = []
        for seq in range(tr.count):

            def request(seq: int = seq) -> None:
                mav.mission_request_int_send(ts, tc, seq, mission_type)

            request(seq)
            tr.items_sent += 1
            msg = wait(["MISSION_ITEM_INT", "MISSION_ITEM"], lambda m, seq=seq: int(m.seq) == seq, request)
            if msg is None:
                tr.duration_s = time.monotonic() - t0
                return tr
            got.append(from_wire(msg))
        mav.mission_ack_send(ts, tc, _M.MAV_MISSION_ACCEPTED, mission_type)
        tr.outcome, tr.items = "DOWNLOADED", tuple(got)
        tr.duration_s = time.monotonic() - t0
        return tr

    # --- parameters ---------------------------------------------------------------------------

    def set_params(self, params: dict[str, float], deadline: float) -> Transfer:
        """Set float parameters (the fence ceiling) until the vehicle echoes each value back.

        PARAM_SET is idempotent, so unlike a mission it may be resent freely; a
        value counts as set only when a PARAM_VALUE with the same float32 comes back.
        """
        t0 = time.monotonic()
        tr = Transfer("params", FENCE, len(params), outcome="UNCONFIRMED")
        pending = {name: _f32(value) for name, value in params.items()}
        mav = self.conn.mav

        def send_all() -> None:
            for name, value in sorted(pending.items()):
                mav.param_set_send(
                    self.target_system, self.target_component, name.encode("ascii"), value, _M.MAV_PARAM_TYPE_REAL32
                )
                tr.items_sent += 1

        send_all()
        silent = 0
        while pending:
            now = time.monotonic()
            if now >= deadline:
                tr.detail = "overall link timeout"
                break
            msg = self.conn.recv_match(type="PARAM_VALUE", blocking=True, timeout=max(0.0, min(self.retry_s, deadline - now)))
            if msg is None:
                silent += 1
                if silent > self.max_retries:
                    tr.detail = f"no echo after {self.max_retries} resends"
                    break
                tr.resends += 1
                send_all()
                continue
            if msg.get_srcSystem() != self.target_system:
                continue
            name = msg.param_id if isinstance(msg.param_id, str) else msg.param_id.decode("ascii", "replace")
            name = name.rstrip("\x00")
            if name in pending and _f32(msg.param_value) == pending[name]:
                del pending[name]
                tr.requests_seen += 1
                silent = 0
        if not pending:
            tr.outcome, tr.detail = "CONFIRMED", ", ".join(f"{k}={v:g}" for k, v in sorted(params.items()))
        elif not tr.detail.startswith("overall"):
            tr.detail += f"; unconfirmed: {', '.join(sorted(pending))}"
        tr.duration_s = time.monotonic() - t0
        return tr


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]
