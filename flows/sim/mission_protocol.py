"""The vehicle side of the MAVLink mission protocol, as ArduPilot and as PX4 implement it.

A dispatcher tested against one invented vehicle learns that vehicle's habits;
the uploader must instead hold against what real autopilots do. So each dialect
here follows its autopilot's own source, and every behaviour names the file and
function it comes from (ArduPilot master ``libraries/GCS_MAVLink/``, PX4
``src/modules/mavlink/mavlink_mission.cpp``). Timers are parameters of the
simulator (``rerequest_s``, ``transfer_timeout_s``) so tests can run them fast;
the defaults are the autopilots' own.

Behaviour table (U = upload, D = download):

| behaviour | ArduPilot | PX4 |
|---|---|---|
| request asked with | legacy MISSION_REQUEST (`MissionItemProtocol::queued_request_send`) | MISSION_REQUEST_INT (`MavlinkMissionManager::send_mission_request`, int mode) |
| U: re-request of a missing item | 1 s after the last request (`MissionItemProtocol::update`, `wp_recv_timeout_ms = 1000`) | 250 ms (`MavlinkMissionManager::send`, `MAVLINK_MISSION_RETRY_TIMEOUT_DEFAULT`) |
| U: transfer given up | 8 s without an item: ack OPERATION_CANCELLED (`MissionItemProtocol::update`, `upload_timeout_ms = 8000`) | 5 s without a message: back to idle, no ack (`MavlinkMissionManager::send`, `MAVLINK_MISSION_PROTOCOL_TIMEOUT_DEFAULT`) |
| U: item with another seq than asked | ack INVALID_SEQUENCE, transfer stays open (`MissionItemProtocol::handle_mission_item`) | ignored, transfer stays open (`handle_mission_item_both`: "Item sequence not expected, ignore item") |
| U: item when no upload is open | ack ERROR (`GCS_MAVLINK::handle_mission_item` in `GCS_Common.cpp`: `if (!prot->receiving)`) | the last item again: ack ACCEPTED again; any other: ack ERROR (`handle_mission_item_both`, IDLE branch) |
| U: COUNT again before the first item | restarts the transfer (`MissionItemProtocol::handle_mission_count`: same sender → `free_upload_resources`, re-init) | request seq 0 again (`handle_mission_count`, GETLIST with `_transfer_seq == 0`) |
| U: COUNT again mid-transfer | restarts the transfer at seq 0 (same function) | ack ERROR "busy", transfer stays open (same function) |
| U: COUNT while another sender uploads / while busy | ack DENIED (`handle_mission_count`) | ack ERROR (`handle_mission_count`, not IDLE) |
| U: where items go | mission and rally written as they arrive, list first truncated to COUNT (`MissionItemProtocol_Waypoints::truncate/replace_item/append_item`, `MissionItemProtocol_Rally`): an upload is not atomic | mission into the inactive dataman slot, switched in when complete (`handle_mission_count`: `_transfer_dataman_id`; `update_active_mission`): atomic |
| U: fence | kept aside and written whole when complete (`MissionItemProtocol_Fence::complete` → `write_fence`) | points written in place as they arrive, the count only when complete (`handle_mission_item_both`: `dm_write(DM_KEY_FENCE_POINTS, wp.seq + 1, …)`, `update_geofence_count`); rally the same (`DM_KEY_SAFE_POINTS`) |
| D: while an upload is open | ack DENIED (`MissionItemProtocol::handle_mission_request_list`, `handle_mission_request_int`) | REQUEST_LIST ignored when busy (`handle_mission_request_list`) |
| D: mission seq 0 | the vehicle's home (`MissionItemProtocol_Waypoints::get_item`: "always allow HOME to be read"; `AP_Mission` index 0) | the first planned item: no home slot |
| D: frame in MISSION_ITEM_INT | the plain frame: 0 (GLOBAL; every command without a location, and the fence) or 3 (GLOBAL_RELATIVE_ALT) (`AP_Mission::mission_cmd_to_mavlink_int`, `MissionItemProtocol_Fence::get_item_as_mission_item`; observed on SITL) | the `_INT` frame for a location (5, 6), MAV_FRAME_MISSION (2) as stored (`format_mavlink_mission_item`, `_int_mode`) |
| D: unused params | 0 (`AP_Mission::mission_cmd_to_mavlink_int` fills only the params a command uses) | as uploaded |
| D: request for another seq | mission: COUNT again + ack ERROR (`MissionItemProtocol_Waypoints::get_item`); fence: INVALID_SEQUENCE (`MissionItemProtocol_Fence::get_item`) | the current or the previous seq is served; any other: ack ERROR, back to idle (`handle_mission_request_both`) |
| D: end | nothing to close | SENDLIST until the station's ack or the 5 s timeout; a COUNT meanwhile gets ERROR (`handle_mission_count`) |
| CLEAR_ALL | ack ACCEPTED, or ERROR during an upload (`MissionItemProtocol::handle_mission_clear_all`) | ack ACCEPTED when idle, ignored when busy (`handle_mission_clear_all`) |
"""

from __future__ import annotations

from dataclasses import dataclass, field
import threading
from typing import Any, Callable, Protocol

from flows.mavlink import mavutil  # noqa: E402

from flows.sim.ardupilot_mission import StoredCommand, store, store_fence, store_rally  # noqa: E402
from flows.sim.px4_mission import store_px4  # noqa: E402
from planner.output.mission_items import FENCE, MISSION, MissionItem  # noqa: E402
from planner.output.mission_wire import from_wire, plain_frame, to_wire  # noqa: E402

Entry = MissionItem | StoredCommand  # what a vehicle keeps for one item (ArduPilot's mission: AP_Mission's command)



class VehicleSide(Protocol):
    """What the protocol needs of the vehicle (``flows.sim.vehicle.SimVehicle``, described here rather than imported: no cycle)."""

    dialect: str
    lose_final_ack: bool
    reject_result: int | None
    reject_types: tuple[int, ...]
    reject_at_seq: int | None
    rerequest_s: float
    transfer_timeout_s: float
    flight: Any
    stats: Any
    reply_port: Any
    _lock: threading.Lock
    _missions: dict[int, tuple[Entry, ...]]

    def send(self, build: Callable[[Any], None], loss: tuple[str, int, int] | None = None, port: Any = None) -> bool: ...
    def log(self, text: str) -> None: ...
    def _store(self, mtype: int, items: tuple[Entry, ...]) -> None: ...
    def _as_downloaded(self, mtype: int, items: tuple[Entry, ...]) -> tuple[MissionItem, ...]: ...

__all__ = ["MissionProtocol", "ArduPilotMissions", "Px4Missions", "protocol_for"]

_M = mavutil.mavlink


def _mtype(msg: Any) -> int:
    return int(getattr(msg, "mission_type", MISSION))


def _partner(msg: Any) -> tuple[int, int]:
    return (msg.get_srcSystem(), msg.get_srcComponent())


class MissionProtocol:
    """What both autopilots share: storage through the vehicle, acks through its fault model."""

    def __init__(self, vehicle: VehicleSide) -> None:
        self.v = vehicle

    # storage (the vehicle owns the dict and its lock)
    def stored(self, mtype: int) -> list[Entry]:
        with self.v._lock:
            return list(self.v._missions.get(mtype, ()))

    def write(self, mtype: int, items: list[Entry] | tuple[Entry, ...]) -> None:
        self.v._store(mtype, tuple(items))

    def item_of(self, msg: Any) -> Entry | int:
        """What the vehicle keeps of an uploaded item, as its autopilot converts it (``flows.sim.ardupilot_mission``:
        AP_Mission / fence / rally; ``flows.sim.px4_mission``: mission_item_s), or the MAV_MISSION_RESULT refusing it."""
        item = from_wire(msg)
        if self.v.dialect != "ardupilot":
            return store_px4(item)
        mtype = _mtype(msg)
        return store(item) if mtype == MISSION else store_fence(item) if mtype == FENCE else store_rally(item)

    def ack(self, partner: tuple[int, int], mtype: int, result: int, *, final: bool = False, port: Any = None) -> None:
        """MISSION_ACK on the port of the transfer (``port``) or of the message being answered."""
        if final and result == _M.MAV_MISSION_ACCEPTED:
            if self.v.lose_final_ack:
                self.v.stats.final_acks_lost += 1
                return
            self.v.send(lambda m: m.mission_ack_send(partner[0], partner[1], result, mtype), loss=("ack", mtype, -1),
                        port=port)
            return
        self.v.send(lambda m: m.mission_ack_send(partner[0], partner[1], result, mtype), port=port)

    def rejects(self, mtype: int, seq: int | None) -> int | None:
        """The injected refusal for this COUNT (seq None) or item, if any."""
        v = self.v
        if v.reject_result is None or mtype not in v.reject_types:
            return None
        return v.reject_result if seq == v.reject_at_seq else None

    def completed(self, mtype: int, items: tuple[Entry, ...]) -> None:
        """Count and announce a stored upload (before its ack goes out, so a station never outruns it)."""
        self.v.stats.uploads_completed += 1
        if self.v.flight is not None:
            self.v.flight.on_mission_stored(self.v, mtype, self.v._as_downloaded(mtype, items))

    def serve(self, partner: tuple[int, int], item: MissionItem) -> None:
        wire = to_wire(item)
        if self.v.dialect == "ardupilot":
            wire["frame"] = plain_frame(wire["frame"])  # 0 and 3 even in MISSION_ITEM_INT (table: "D: frame")
        self.v.stats.downloads_served += 1
        self.v.send(lambda m: m.mission_item_int_send(partner[0], partner[1], **wire))

    def downloadable(self, mtype: int) -> tuple[MissionItem, ...]:
        return self.v._as_downloaded(mtype, tuple(self.stored(mtype)))

    # the messages (overridden per autopilot)
    def on_count(self, msg: Any, now: float) -> None: ...
    def on_item(self, msg: Any, now: float) -> None: ...
    def on_request(self, msg: Any, now: float) -> None: ...
    def on_request_list(self, msg: Any, now: float) -> None: ...
    def on_clear_all(self, msg: Any, now: float) -> None: ...
    def on_ack(self, msg: Any, now: float) -> None: ...
    def tick(self, now: float) -> None: ...


# --- ArduPilot -----------------------------------------------------------------------------------


@dataclass
class _ApReceiving:
    partner: tuple[int, int]
    count: int
    request_i: int = 0
    last_receive_s: float = 0.0
    last_request_s: float = 0.0
    fence_new: list[Entry | None] = field(default_factory=list)
    port: Any = None  # MissionItemProtocol::link: the channel the upload came on, which every request goes back to


class ArduPilotMissions(MissionProtocol):
    """One ``MissionItemProtocol`` per mission type, as in ``libraries/GCS_MAVLink``."""

    def __init__(self, vehicle: VehicleSide) -> None:
        super().__init__(vehicle)
        self.receiving: dict[int, _ApReceiving] = {}

    def _request(self, mtype: int, rx: _ApReceiving, now: float) -> None:
        # MissionItemProtocol::queued_request_send: mavlink_msg_mission_request_send (the legacy message)
        rx.last_request_s = now
        seq = rx.request_i
        self.v.send(lambda m: m.mission_request_send(rx.partner[0], rx.partner[1], seq, mtype), loss=("request", mtype, seq),
                    port=rx.port)

    def on_count(self, msg: Any, now: float) -> None:
        mtype, partner = _mtype(msg), _partner(msg)
        rx = self.receiving.get(mtype)
        if rx is not None:
            if partner != rx.partner:
                self.ack(partner, mtype, _M.MAV_MISSION_DENIED)  # handle_mission_count: another sender uploads
                return
            del self.receiving[mtype]  # same sender: free_upload_resources, start again
        refused = self.rejects(mtype, None)
        if refused is not None:  # e.g. MAV_MISSION_NO_SPACE: checked before truncate(), nothing changes
            self.v.stats.uploads_rejected += 1
            self.ack(partner, mtype, refused)
            return
        count = int(msg.count)
        if mtype != _fence():
            # MissionItemProtocol_Waypoints::truncate / _Rally::truncate: the list is cut to the new count now
            self.write(mtype, self.stored(mtype)[:count])
        if count == 0:
            if mtype == _fence():
                self.write(mtype, ())
            self.completed(mtype, ())
            self.ack(partner, mtype, _M.MAV_MISSION_ACCEPTED, final=True)  # transfer_is_complete
            return
        rx = _ApReceiving(partner, count, 0, now, now, [None] * count if mtype == _fence() else [], self.v.reply_port)
        self.receiving[mtype] = rx
        self._request(mtype, rx, now)  # init_send_requests

    def on_item(self, msg: Any, now: float) -> None:
        mtype, partner = _mtype(msg), _partner(msg)
        rx = self.receiving.get(mtype)
        if rx is None:
            # GCS_MAVLINK::handle_mission_item: `if (!prot->receiving) send_mission_ack(..., MAV_MISSION_ERROR)`
            self.ack(partner, mtype, _M.MAV_MISSION_ERROR)
            return
        seq = int(msg.seq)
        if seq != rx.request_i:
            # MissionItemProtocol::handle_mission_item: not the requested seq → INVALID_SEQUENCE, still receiving
            self.ack(partner, mtype, _M.MAV_MISSION_INVALID_SEQUENCE)
            return
        if partner != rx.partner:
            self.ack(partner, mtype, _M.MAV_MISSION_DENIED)
            return
        refused = self.rejects(mtype, seq)
        item = self.item_of(msg)
        if refused is None and isinstance(item, int):
            refused, item = item, None  # MissionItemProtocol::handle_mission_item: the conversion refused it
        if refused is None and mtype != _fence():
            held = self.stored(mtype)
            if seq < len(held):
                held[seq] = item  # replace_item: written now, before the upload is complete
            elif seq == len(held):
                held.append(item)  # append_item
            else:
                refused = _M.MAV_MISSION_ERROR  # beyond the end of the list
            if refused is None:
                self.write(mtype, held)
        elif refused is None:
            rx.fence_new[seq] = item  # MissionItemProtocol_Fence::replace_item: into _new_items only
        if refused is not None:
            # handle_mission_item: a failed write acks the result and ends the transfer (what was written stays)
            self.v.stats.uploads_rejected += 1
            del self.receiving[mtype]
            self.ack(partner, mtype, refused)
            return
        rx.last_receive_s = now
        rx.request_i += 1
        if rx.request_i >= rx.count:
            del self.receiving[mtype]
            if mtype == _fence():
                self.write(mtype, [i for i in rx.fence_new if i is not None])  # Fence::complete → write_fence, whole
            items = tuple(self.stored(mtype))
            self.completed(mtype, items)
            self.ack(partner, mtype, _M.MAV_MISSION_ACCEPTED, final=True)  # transfer_is_complete
            return
        self._request(mtype, rx, now)

    def on_request_list(self, msg: Any, now: float) -> None:
        mtype, partner = _mtype(msg), _partner(msg)
        if mtype in self.receiving:
            self.ack(partner, mtype, _M.MAV_MISSION_DENIED)  # handle_mission_request_list: uploading, refuse
            return
        n = len(self.downloadable(mtype))
        self.v.send(lambda m: m.mission_count_send(partner[0], partner[1], n, mtype))

    def on_request(self, msg: Any, now: float) -> None:
        mtype, partner = _mtype(msg), _partner(msg)
        if mtype in self.receiving:
            self.ack(partner, mtype, _M.MAV_MISSION_DENIED)  # handle_mission_request_int
            return
        items = self.downloadable(mtype)
        seq = int(msg.seq)
        if not 0 <= seq < len(items):
            if mtype == MISSION:  # Waypoints::get_item: "educate the GCS" with the count, then ERROR
                n = len(items)
                self.v.send(lambda m: m.mission_count_send(partner[0], partner[1], n, mtype))
                self.ack(partner, mtype, _M.MAV_MISSION_ERROR)
            else:
                self.ack(partner, mtype, _M.MAV_MISSION_INVALID_SEQUENCE)  # Fence::get_item
            return
        self.serve(partner, items[seq])

    def on_clear_all(self, msg: Any, now: float) -> None:
        mtype, partner = _mtype(msg), _partner(msg)
        if mtype in self.receiving:
            self.ack(partner, mtype, _M.MAV_MISSION_ERROR)  # handle_mission_clear_all: `success && !receiving`
            return
        self.write(mtype, ())
        self.ack(partner, mtype, _M.MAV_MISSION_ACCEPTED)

    def tick(self, now: float) -> None:
        for mtype, rx in list(self.receiving.items()):
            if now - rx.last_receive_s > self.v.transfer_timeout_s:
                # MissionItemProtocol::update: upload_timeout_ms → OPERATION_CANCELLED; items written so far stay
                del self.receiving[mtype]
                self.v.log(f"upload of type {mtype} timed out at seq {rx.request_i}; cancelled")
                self.ack(rx.partner, mtype, _M.MAV_MISSION_OPERATION_CANCELLED, port=rx.port)
            elif now - rx.last_request_s > self.v.rerequest_s:
                self._request(mtype, rx, now)  # update: resend the request after wp_recv_timeout_ms


# --- PX4 -------------------------------------------------------------------------------------------

_IDLE, _GETLIST, _SENDLIST = "IDLE", "GETLIST", "SENDLIST"


class Px4Missions(MissionProtocol):
    """One ``MavlinkMissionManager``: a single transfer at a time, whatever its type."""

    def __init__(self, vehicle: VehicleSide) -> None:
        super().__init__(vehicle)
        self.state = _IDLE
        self.mission_type = MISSION
        self.partner: tuple[int, int] = (0, 0)
        self.transfer_seq = 0
        self.transfer_count = 0
        self.buffer: list[Entry | None] = []  # the inactive dataman slot of a mission upload
        self.time_last_sent = 0.0
        self.time_last_recv = 0.0
        self.port: Any = None  # the channel of the transfer (``MavlinkMissionManager`` is one per link)

    def _count_of(self, mtype: int) -> int:
        return len(self.downloadable(mtype))

    def _request(self, now: float) -> None:
        # send_mission_request: MISSION_REQUEST_INT in int mode (the mode a MISSION_ITEM_INT sender gets)
        self.time_last_sent = now
        seq, mtype, partner = self.transfer_seq, self.mission_type, self.partner
        self.v.send(lambda m: m.mission_request_int_send(partner[0], partner[1], seq, mtype), loss=("request", mtype, seq),
                    port=self.port)

    def _ack(self, result: int, *, final: bool = False) -> None:
        # send_mission_ack always answers the transfer partner with the current _mission_type
        self.ack(self.partner, self.mission_type, result, final=final, port=self.port)

    def on_count(self, msg: Any, now: float) -> None:
        mtype = _mtype(msg)
        if self.state == _GETLIST:
            self.time_last_recv = now
            if self.transfer_seq == 0:
                self._request(now)  # handle_mission_count: "looks like our MISSION_REQUEST was lost"
            else:
                self._ack(_M.MAV_MISSION_ERROR)  # "busy, already receiving": the transfer stays open
            return
        if self.state != _IDLE:
            self._ack(_M.MAV_MISSION_ERROR)  # "IGN MISSION_COUNT: Busy" (e.g. still SENDLIST after a download)
            return
        self.time_last_recv = now
        self.mission_type, self.partner, self.port = mtype, _partner(msg), self.v.reply_port
        refused = self.rejects(mtype, None)
        if refused is not None:
            self.v.stats.uploads_rejected += 1
            self._ack(refused)
            return
        count = int(msg.count)
        if count == 0:
            self.write(mtype, ())  # MISSION_COUNT 0 clears the list and stays idle
            self.completed(mtype, ())
            self._ack(_M.MAV_MISSION_ACCEPTED, final=True)
            return
        self.state, self.transfer_seq, self.transfer_count = _GETLIST, 0, count
        self.buffer = [None] * count
        self._request(now)

    def on_item(self, msg: Any, now: float) -> None:
        mtype, seq = _mtype(msg), int(msg.seq)
        if mtype != self.mission_type:
            self._ack(_M.MAV_MISSION_ERROR)  # handle_mission_item_both: "Unexpected mission type"
            return
        if self.state == _IDLE:
            if self.transfer_seq == seq + 1:
                # "Assume this is a duplicate … the GCS did not receive the last ack and sent the same item again"
                self._ack(_M.MAV_MISSION_ACCEPTED, final=True)
            else:
                self._ack(_M.MAV_MISSION_ERROR)  # "IGN MISSION_ITEM: No transfer"
            return
        if self.state != _GETLIST:
            self._ack(_M.MAV_MISSION_ERROR)  # "IGN MISSION_ITEM: Busy"
            return
        self.time_last_recv = now
        if seq != self.transfer_seq:
            return  # "Item sequence not expected, ignore item"
        refused = self.rejects(mtype, seq)
        item = self.item_of(msg)
        if refused is None and isinstance(item, int):
            refused = item  # handle_mission_item_both: parse_mavlink_mission_item refused it
        if refused is not None or isinstance(item, int):
            self.v.stats.uploads_rejected += 1
            self._ack(refused if refused is not None else _M.MAV_MISSION_ERROR)
            self.state = _IDLE
            return
        if mtype == MISSION:
            self.buffer[seq] = item  # into the inactive slot (_transfer_dataman_id)
        else:
            # fence / rally points: dm_write(..., wp.seq + 1, ...) in place; the stored count changes at the end
            held = self.stored(mtype)
            if seq < len(held):
                held[seq] = item
                self.write(mtype, held)
            self.buffer[seq] = item
        self.transfer_seq = seq + 1
        if self.transfer_seq < self.transfer_count:
            self._request(now)
            return
        items = tuple(i for i in self.buffer if i is not None)
        self.write(mtype, items)  # update_active_mission / update_geofence_count / update_safepoint_count
        self.state = _IDLE
        self.completed(mtype, items)
        self._ack(_M.MAV_MISSION_ACCEPTED, final=True)

    def on_request_list(self, msg: Any, now: float) -> None:
        mtype = _mtype(msg)
        if self.transfer_seq == self._count_of(self.mission_type):
            self.state = _IDLE  # "all mission items have been sent … we can proceed even if MISSION_ACK was never received"
        if not (self.state == _IDLE or (self.state == _SENDLIST and self.mission_type == mtype)):
            return  # "Mission download request ignored, already active"
        self.time_last_recv = now
        self.state, self.mission_type, self.partner, self.port = _SENDLIST, mtype, _partner(msg), self.v.reply_port
        self.transfer_seq, self.transfer_count = 0, self._count_of(mtype)
        n, partner = self.transfer_count, self.partner
        self.time_last_sent = now
        self.v.send(lambda m: m.mission_count_send(partner[0], partner[1], n, mtype))

    def on_request(self, msg: Any, now: float) -> None:
        mtype, seq = _mtype(msg), int(msg.seq)
        if _partner(msg) != self.partner or self.state != _SENDLIST:
            return  # IDLE: "Silently ignore this as some OSDs have buggy mission protocol implementations"
        if mtype != self.mission_type:
            return
        self.time_last_recv = now
        if seq == self.transfer_seq and self.transfer_seq < self.transfer_count:
            self.transfer_seq += 1
        elif seq != self.transfer_seq - 1:
            self.state = _IDLE  # handle_mission_request_both: "Req. WP was unexpected"
            self._ack(_M.MAV_MISSION_ERROR)
            return
        items = self.downloadable(mtype)
        if seq < len(items):
            self.serve(self.partner, items[seq])
        else:
            self.state = _IDLE
            self._ack(_M.MAV_MISSION_ERROR)

    def on_ack(self, msg: Any, now: float) -> None:
        # handle_mission_ack: in SENDLIST the station's ack (any result) ends the download
        if self.state == _SENDLIST and _partner(msg) == self.partner and _mtype(msg) == self.mission_type:
            self.time_last_recv = now
            self.state = _IDLE

    def on_clear_all(self, msg: Any, now: float) -> None:
        if self.state != _IDLE:
            return  # "IGN CLEAR CMD: Busy"
        mtype = _mtype(msg)
        self.time_last_recv = now
        self.mission_type, self.partner, self.port = mtype, _partner(msg), self.v.reply_port
        if mtype == _M.MAV_MISSION_TYPE_ALL:
            for t in list(self.v._missions):
                self.write(t, ())
        else:
            self.write(mtype, ())
        self._ack(_M.MAV_MISSION_ACCEPTED)

    def tick(self, now: float) -> None:
        # MavlinkMissionManager::send: the retry timer, then the protocol timeout
        if self.state == _GETLIST and self.time_last_sent and now - self.time_last_sent > self.v.rerequest_s:
            self._request(now)
        elif self.state != _IDLE and self.time_last_recv and now - self.time_last_recv > self.v.transfer_timeout_s:
            self.v.log(f"mission transfer ({self.state}) timed out; idle")
            self.state = _IDLE  # switch_to_idle_state: no ack is sent


def _fence() -> int:
    return int(_M.MAV_MISSION_TYPE_FENCE)


def protocol_for(vehicle: VehicleSide) -> MissionProtocol:
    """The mission protocol of the vehicle's dialect."""
    return ArduPilotMissions(vehicle) if vehicle.dialect == "ardupilot" else Px4Missions(vehicle)
