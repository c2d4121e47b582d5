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

Reasoning from the protocol, not from one vehicle: once the last item has gone
out, any answer other than ACCEPTED (ERROR, INVALID_SEQUENCE, DENIED,
OPERATION_CANCELLED) or silence leaves the outcome unknown — ArduPilot answers
ERROR to the re-sent last item of a transfer it has already stored
(``GCS_MAVLINK::handle_mission_item``) — so the transfer ends UNCERTAIN with
that answer in ``result``, for the dispatcher to settle by reading back. Before
the first request, ERROR or DENIED means "busy" (PX4 still serving a download,
ArduPilot receiving from another station): nothing was written, so COUNT is
sent again on the retry timer until the deadline.

Binding: ``expect_system``/``expect_component``/``expect_autopilot`` make
``wait_vehicle`` refuse any other vehicle (``DeviceMismatch``); with
``signing_key`` every message is signed (MAVLink 2, pymavlink ``setup_signing``)
and unsigned or wrongly signed messages are dropped by the parser, so a
vehicle that should sign cannot be impersonated by one that does not.
"""

from __future__ import annotations

import os
import time
from typing import Any

os.environ.setdefault("MAVLINK20", "1")
from pymavlink import mavutil  # noqa: E402

import struct  # noqa: E402

from flows.vehicle.transfer import Transfer, TransferOutcome, result_name  # noqa: E402
from planner.errors import DeviceMismatch, DeviceUnavailable, InvalidArgument  # noqa: E402
from planner.output.mission_items import FENCE, MissionItem  # noqa: E402
from planner.output.mission_wire import from_wire, to_wire  # noqa: E402

__all__ = ["MavLink", "Transfer", "TransferOutcome", "result_name", "GCS_SYSTEM_ID", "GCS_COMPONENT_ID"]

_M = mavutil.mavlink

GCS_SYSTEM_ID = 255
GCS_COMPONENT_ID = _M.MAV_COMP_ID_MISSIONPLANNER  # 190

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
        expect_system: int | None = None,
        expect_component: int | None = None,
        expect_autopilot: int | None = None,
        signing_key: bytes | None = None,
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
        self.expect_system = expect_system
        self.expect_component = expect_component
        self.expect_autopilot = expect_autopilot
        self.signed = signing_key is not None
        if signing_key is not None:
            if len(signing_key) != 32:
                raise InvalidArgument("a MAVLink 2 signing key is 32 bytes")
            # an unsigned or wrongly signed reply is dropped as BAD_DATA; the callback only lets
            # pymavlink count the refusals (signing.reject_count), so a mismatch can be told from silence
            self.conn.setup_signing(signing_key, sign_outgoing=True, allow_unsigned_callback=_refuse_unsigned)
        self.target_system = 0
        self.target_component = 0
        self.autopilot: int | None = None
        self._last_heartbeat_s = 0.0

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
        self._last_heartbeat_s = time.monotonic()
        try:
            self.conn.mav.heartbeat_send(_M.MAV_TYPE_GCS, _M.MAV_AUTOPILOT_INVALID, 0, 0, 0)
        except OSError:
            pass  # a udpin link has no peer until the vehicle speaks

    def _recv(self, types: Any, timeout: float) -> Any:
        """``recv_match`` that keeps our 1 Hz heartbeat going, as a ground station must.

        Some vehicles (MAVSDK's servers among them) drop a partner whose
        heartbeats stop for a few seconds, and its messages with it.
        """
        if time.monotonic() - self._last_heartbeat_s >= 1.0:
            self._heartbeat()
        return self.conn.recv_match(type=types, blocking=True, timeout=timeout)

    def wait_vehicle(self, deadline: float) -> None:
        """Send heartbeats until the bound autopilot's heartbeat names its ids.

        Heartbeats of ground stations and of components without an autopilot
        (cameras, gimbals) are skipped: the mission protocol talks to the
        autopilot. With an expected system id, a heartbeat from another system is
        noted and waited past; one from the right system with another component
        or autopilot type is refused at once. Raises ``DeviceMismatch`` when only
        other vehicles (or only unverifiable signatures) were heard, and
        ``DeviceUnavailable`` when nothing was.
        """
        end = min(deadline, time.monotonic() + self.heartbeat_timeout_s)
        interval = min(self.retry_s, 0.5)
        others: set[tuple[int, int, int]] = set()
        while time.monotonic() < end:
            self._heartbeat()
            msg = self.conn.recv_match(type="HEARTBEAT", blocking=True, timeout=max(0.0, min(interval, end - time.monotonic())))
            if (
                msg is None
                or msg.type == _M.MAV_TYPE_GCS
                or msg.autopilot == _M.MAV_AUTOPILOT_INVALID  # a camera, gimbal or another GCS: not the autopilot
                or msg.get_srcSystem() == 0
            ):
                continue
            sysid, compid, autopilot = msg.get_srcSystem(), msg.get_srcComponent(), int(msg.autopilot)
            if self.expect_system is not None and sysid != self.expect_system:
                others.add((sysid, compid, autopilot))
                continue
            if self.expect_component is not None and compid != self.expect_component:
                raise DeviceMismatch(
                    f"the autopilot of system {sysid} on {self.connection!r} is component {compid}, "
                    f"the fleet entry says {self.expect_component}; nothing sent"
                )
            if self.expect_autopilot is not None and autopilot != self.expect_autopilot:
                raise DeviceMismatch(
                    f"system {sysid} on {self.connection!r} reports autopilot {_autopilot_name(autopilot)}, "
                    f"the fleet entry says {_autopilot_name(self.expect_autopilot)}; nothing sent"
                )
            self.target_system, self.target_component, self.autopilot = sysid, compid, autopilot
            return
        if others:
            seen = ", ".join(f"system {s} component {c} ({_autopilot_name(a)})" for s, c, a in sorted(others))
            raise DeviceMismatch(
                f"the vehicle on {self.connection!r} is {seen}, not system {self.expect_system} of the fleet entry; nothing sent"
            )
        if self.signed and self.conn.mav.signing.reject_count > 0:
            raise DeviceMismatch(
                f"the vehicle on {self.connection!r} answers, but not signed with this drone's key "
                f"({self.conn.mav.signing.reject_count} messages refused, "
                f"{self.conn.mav.signing.badsig_count} with another key); nothing sent"
            )
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
            msg = self._recv(
                ["MISSION_REQUEST_INT", "MISSION_REQUEST", "MISSION_ACK"],
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
                if highest_sent == len(items) - 1 and silent > self.final_ack_retries and last[0] == "item":
                    tr.detail = f"no final ack after the last item was sent {self.final_ack_retries + 1} times"
                    break
                tr.resends += 1
                if last[0] == "count":
                    send_count()
                else:
                    send_item(last[1])
                continue
            if (
                msg.get_type() == "MISSION_ACK"
                and last[0] == "count"
                and msg.type in _BUSY
                and msg.get_srcSystem() == self.target_system
                and int(getattr(msg, "mission_type", 0)) != mission_type
                and tr.busy_nacks < 4 * self.max_retries
            ):
                # PX4 acks a COUNT with ERROR in the type of the transfer it is still busy with
                # (a download whose final ack was lost): busy, not a refusal; COUNT again on the timer
                tr.busy_nacks += 1
                silent = 0
                continue
            if not self._for_us(msg, mission_type):
                continue
            if msg.get_type() == "MISSION_ACK":
                complete = highest_sent == len(items) - 1
                if msg.type == _M.MAV_MISSION_ACCEPTED:
                    if complete:
                        tr.outcome, tr.result = "ACCEPTED", result_name(msg.type)
                        break
                    continue  # a stale ack from an earlier transfer
                if msg.type == _M.MAV_MISSION_INVALID_SEQUENCE and last[0] == "item":
                    tr.duplicates_acked += 1
                    continue  # our duplicate arrived after the vehicle moved on: harmless
                if complete:
                    # every item went out: the vehicle may well hold them all (ArduPilot's ERROR to a
                    # re-sent last item, a DENIED or CANCELLED for a finished transfer) → unknown, read back
                    tr.outcome, tr.result = "UNCERTAIN", result_name(msg.type)
                    tr.detail = f"the vehicle answered {result_name(msg.type)} after the last item was sent"
                    break
                if last[0] == "count" and msg.type in _BUSY and tr.busy_nacks < 4 * self.max_retries:
                    tr.busy_nacks += 1  # busy before the first request: nothing written; COUNT again on the timer
                    silent = 0
                    continue
                tr.outcome, tr.result = "REJECTED", result_name(msg.type)
                tr.detail = f"the vehicle answered {result_name(msg.type)}" + (
                    f" after {highest_sent + 1} of {len(items)} items" if highest_sent >= 0 else ""
                )
                break
            seq = int(msg.seq)
            if not 0 <= seq < len(items):
                continue
            silent = 0
            tr.requests_seen += 1
            send_item(seq)
            last = ("item", seq)
            highest_sent = max(highest_sent, seq)
        if tr.outcome not in ("ACCEPTED", "REJECTED", "UNCERTAIN"):
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
                msg = self._recv(types, timeout=max(0.0, min(self.retry_s, deadline - now)))
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
        for _ in range(2):  # PX4 stays busy (SENDLIST) until this ack arrives: send it twice, it is idempotent
            mav.mission_ack_send(ts, tc, _M.MAV_MISSION_ACCEPTED, mission_type)
        tr.outcome, tr.items = "DOWNLOADED", tuple(got)
        tr.duration_s = time.monotonic() - t0
        return tr

    def drain(self, quiet_s: float, deadline: float) -> int:
        """Discard what is still arriving (late answers of abandoned transfers) until ``quiet_s`` of quiet.

        A vehicle may still be re-sending a COUNT or an item of a transfer we
        gave up; read right after, that stale answer would pass for the new one.
        """
        n = 0
        while time.monotonic() < deadline:
            if self._recv(None, timeout=max(0.0, min(quiet_s, deadline - time.monotonic()))) is None:
                break
            n += 1
        return n

    # --- clear ----------------------------------------------------------------------------------

    def clear(self, mission_type: int, deadline: float) -> Transfer:
        """MISSION_CLEAR_ALL of one mission type until the vehicle acks it ACCEPTED (bounded resends).

        Idempotent, so it may be resent freely; CLEARED only on an ACCEPTED ack
        for this mission type. A refusal (ArduPilot's ERROR while an upload is
        open) or silence is NOT_CLEARED with the reason.
        """
        t0 = time.monotonic()
        tr = Transfer("clear", mission_type, 0, outcome="NOT_CLEARED")
        mav = self.conn.mav

        def send() -> None:
            mav.mission_clear_all_send(self.target_system, self.target_component, mission_type)
            tr.items_sent += 1

        send()
        silent = 0
        while True:
            now = time.monotonic()
            if now >= deadline:
                tr.detail = "overall link timeout"
                break
            msg = self._recv("MISSION_ACK", timeout=max(0.0, min(self.retry_s, deadline - now)))
            if msg is None:
                silent += 1
                if silent > self.max_retries:
                    tr.detail = f"no ack after {self.max_retries} resends"
                    break
                tr.resends += 1
                send()
                continue
            if not self._for_us(msg, mission_type):
                continue
            tr.result = result_name(msg.type)
            if msg.type == _M.MAV_MISSION_ACCEPTED:
                tr.outcome = "CLEARED"
                break
            tr.detail = f"the vehicle answered {tr.result}"
            tr.resends += 1
            if tr.resends > self.max_retries:
                break
            send()
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
            msg = self._recv("PARAM_VALUE", timeout=max(0.0, min(self.retry_s, deadline - now)))
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


_BUSY = (_M.MAV_MISSION_ERROR, _M.MAV_MISSION_DENIED)


def _refuse_unsigned(mav: Any, msg_id: int) -> bool:
    """A bound, signing link accepts no unsigned message, not even a heartbeat."""
    return False


def _autopilot_name(code: int) -> str:
    entry = _M.enums["MAV_AUTOPILOT"].get(int(code))
    return entry.name if entry is not None else str(code)


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]
