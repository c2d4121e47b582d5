"""The ground-station side of the MAVLink mission protocol, over one ``VehicleLink``.

``MissionClient(link)`` runs one transfer at a time on a connected link
(``flows.vehicle.link.open_link``): ``upload`` and ``download`` return a
``Transfer`` record and never raise for a protocol outcome (a NACK, silence,
a timeout): deciding what an outcome means is the dispatcher's job.

The upload follows the protocol as real vehicles need it (FACTS.md, MAVLink):
MISSION_COUNT is resent until the first request; whatever seq the vehicle asks
for is answered (repeats are normal, a legacy MISSION_REQUEST gets a
MISSION_ITEM_INT); an INVALID_SEQUENCE ack (our duplicate arrived late) is not
fatal; after ``retry_s`` of silence the last message is resent, at most
``max_retries`` times in a row (``final_ack_retries`` once the last item has
gone out: a vehicle still missing an item would be asking for it, so a quiet
vehicle then most likely stored the mission and lost its ack, which the
dispatcher settles by reading it back); everything ends by ``deadline``
(monotonic). An ACCEPTED ack counts only once the last item has been sent, so a
stale ack of an earlier transfer cannot pass for this one.

Reasoning from the protocol, not from one vehicle: once the last item has gone
out, any answer other than ACCEPTED (ERROR, INVALID_SEQUENCE, DENIED,
OPERATION_CANCELLED) or silence leaves the outcome unknown — ArduPilot answers
ERROR to the re-sent last item of a transfer it has already stored
(``GCS_MAVLINK::handle_mission_item``) — so the transfer ends UNCERTAIN with
that answer in ``result``, for the dispatcher to settle by reading back. Before
the first request, ERROR or DENIED means "busy" (PX4 still serving a download,
ArduPilot receiving from another station): nothing was written, so COUNT is
sent again on the retry timer until the deadline.

**A vehicle still booting**: ArduPilot answers MAV_MISSION_NO_SPACE to a
MISSION_COUNT in its first seconds (``max_items()`` is 0 until ``AP_Mission::init``;
FACTS.md: "wait ~10 s or retry"). A NO_SPACE at COUNT while the vehicle's
uptime (SYSTEM_TIME / GLOBAL_POSITION_INT ``time_boot_ms``, or its TIMESYNC)
is under ``BOOT_WINDOW_S`` is waited out: COUNT again every ``boot_retry_s``,
at most ``max_boot_retries`` times and never past the deadline; so is one while
its HEARTBEAT says MAV_STATE_BOOT (ArduCopter until "ArduPilot Ready"). Nothing
was written (the refusal comes before ``truncate``). A NO_SPACE from a vehicle
up longer, or whose uptime is unknown, is a refusal.
"""

from __future__ import annotations

import struct
import time
from typing import Any

from flows.mavlink import mavutil  # noqa: E402

from flows.vehicle.link import VehicleLink  # noqa: E402
from flows.vehicle.transfer import Transfer, result_name  # noqa: E402
from planner.errors import InvalidArgument
from planner.output.mission_items import FENCE, MissionItem  # noqa: E402
from planner.output.mission_wire import from_wire, to_wire  # noqa: E402

__all__ = ["MissionClient", "BOOT_WINDOW_S"]

_M = mavutil.mavlink
BOOT_WINDOW_S = 30.0  # ArduCopter SITL refused uploads for its first seconds ("wait ~10 s"): three times that


class MissionClient:
    """The mission protocol (upload, download, clear, parameters) over one connected ``VehicleLink``."""

    def __init__(self, link: VehicleLink, *, retry_s: float = 1.0, max_retries: int = 8, final_ack_retries: int = 3,
                 boot_retry_s: float = 1.0, max_boot_retries: int = 30) -> None:
        if retry_s <= 0 or max_retries < 1:
            raise InvalidArgument("retry_s must be > 0 and max_retries >= 1")
        self.link = link
        self.retry_s = retry_s
        self.max_retries = max_retries
        self.final_ack_retries = min(final_ack_retries, max_retries)
        self.boot_retry_s = boot_retry_s
        self.max_boot_retries = max_boot_retries

    def _recv(self, types: Any, timeout: float) -> Any:
        return self.link.recv(types, timeout=timeout)

    def uptime_s(self, wait_s: float = 0.0) -> float | None:
        """The vehicle's uptime from its own clock (None when it has not said), waiting up to ``wait_s`` for it."""
        if self.link.view.boot_ms is None and wait_s > 0:
            self.link.pump(wait_s, lambda: self.link.view.boot_ms is not None)
        ms = self.link.view.boot_ms
        return None if ms is None else ms / 1000.0

    def _still_booting(self, tr: Transfer, deadline: float) -> bool:
        """After a NO_SPACE at COUNT: whether the vehicle has been up for only a few seconds (then wait a bit)."""
        if tr.boot_retries >= self.max_boot_retries:
            return False
        booting = self.link.view.system_status == _M.MAV_STATE_BOOT  # its HEARTBEAT says so (ArduCopter)
        up = self.uptime_s(wait_s=0.0 if booting else min(1.5, max(0.0, deadline - time.monotonic())))
        if not booting and (up is None or up >= BOOT_WINDOW_S):
            return False
        tr.boot_retries += 1
        tr.detail = ("the vehicle refused with NO_SPACE while " + ("its heartbeat said BOOT" if booting else
                     f"up {up:.1f} s") + " (still booting): waited and asked again")
        self.link.pump(min(self.boot_retry_s, max(0.0, deadline - time.monotonic())))
        return time.monotonic() < deadline

    def _for_us(self, msg: Any, mission_type: int) -> bool:
        if msg.get_srcSystem() != self.link.target_system:
            return False
        if getattr(msg, "target_system", 0) not in (0, self.link.mav.srcSystem):
            return False
        return int(getattr(msg, "mission_type", 0)) == mission_type

    # --- upload -----------------------------------------------------------------------------

    def upload(self, items: tuple[MissionItem, ...], mission_type: int, deadline: float) -> Transfer:
        """Upload ``items`` as ``mission_type``; returns how it went (never raises for a NACK)."""
        t0 = time.monotonic()
        tr = Transfer("upload", mission_type, len(items))
        ts, tc = self.link.target_system, self.link.target_component
        mav = _Sender(self.link)
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
                and msg.get_srcSystem() == self.link.target_system
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
                if last[0] == "count" and msg.type == _M.MAV_MISSION_NO_SPACE and self._still_booting(tr, deadline):
                    silent = 0
                    send_count()  # ArduPilot during boot: nothing was written, ask again
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
        ts, tc = self.link.target_system, self.link.target_component
        mav = _Sender(self.link)

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
        Only the mission protocol counts: telemetry never stops (PX4 streams it
        unasked), and it cannot pass for a transfer's answer.
        """
        n = 0
        while time.monotonic() < deadline:
            if self._recv(_PROTOCOL, timeout=max(0.0, min(quiet_s, deadline - time.monotonic()))) is None:
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
        mav = _Sender(self.link)

        def send() -> None:
            mav.mission_clear_all_send(self.link.target_system, self.link.target_component, mission_type)
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
        mav = _Sender(self.link)

        def send_all() -> None:
            for name, value in sorted(pending.items()):
                mav.param_set_send(
                    self.link.target_system, self.link.target_component, name.encode("ascii"), value, _M.MAV_PARAM_TYPE_REAL32
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
            if msg.get_srcSystem() != self.link.target_system:
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
_PROTOCOL = ["MISSION_COUNT", "MISSION_ITEM_INT", "MISSION_ITEM", "MISSION_REQUEST", "MISSION_REQUEST_INT",
             "MISSION_ACK"]


class _Sender:
    """``mav.x_send(...)`` through ``VehicleLink.send`` (serialised, signed with the binding's key)."""

    def __init__(self, link: VehicleLink) -> None:
        self._link = link

    def __getattr__(self, name: str) -> Any:
        def send(*args: Any, **kwargs: Any) -> None:
            self._link.send(lambda m: getattr(m, name)(*args, **kwargs))

        return send


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]
