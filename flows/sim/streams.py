"""Which telemetry the simulated vehicle sends unasked, and how a ground station asks for more.

ArduPilot streams nothing but HEARTBEAT on a port until a ground station asks
(FACTS.md: "No telemetry but HEARTBEAT (and TIMESYNC, PARAM_VALUE) until a GCS
asks"); PX4 streams a default set on every link. Both honour
``MAV_CMD_SET_MESSAGE_INTERVAL`` per message, and ArduPilot also the legacy
``REQUEST_DATA_STREAM`` per group. The tables here are the autopilots' own:

- ArduPilot's stream groups, ``STREAM_*_msgs`` in
  ``libraries/GCS_MAVLink/GCS_MAVLink_Parameters.cpp`` (only the messages the
  simulator produces are listed): EXTENDED_STATUS carries SYS_STATUS,
  MISSION_CURRENT (``MSG_CURRENT_WAYPOINT``) and GPS_RAW_INT; POSITION carries
  GLOBAL_POSITION_INT (``MSG_LOCATION``); EXTRA3 carries BATTERY_STATUS and
  SYSTEM_TIME. HOME_POSITION and EXTENDED_SYS_STATE are in no group: only
  SET_MESSAGE_INTERVAL asks for them. ``GCS_MAVLINK::handle_request_data_stream``
  sets a group's rate on the port the request came from.
- PX4's defaults for a normal (ground station) link,
  ``Mavlink::configure_streams_to_default`` in ``src/modules/mavlink/mavlink_main.cpp``
  (``MAVLINK_MODE_NORMAL``): GLOBAL_POSITION_INT 5 Hz, SYS_STATUS 1 Hz,
  GPS_RAW_INT 1 Hz, EXTENDED_SYS_STATE 1 Hz, BATTERY_STATUS 0.5 Hz,
  HOME_POSITION 0.5 Hz; MISSION_CURRENT comes from the mission manager
  (``MavlinkMissionManager::send``), here at 1 Hz.

Intervals are kept in *simulated* seconds: the simulator compresses time
(``FlightOptions.speedup``), and a ground station that asks for positions at
5 Hz should see a track as dense as a real flight's.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "PRODUCED",
    "DATA_STREAM_GROUPS",
    "PX4_DEFAULT_RATES_HZ",
    "group_messages",
    "interval_s_for",
    "MIN_INTERVAL_S",
]

#: The telemetry messages the simulator can produce, by MAVLink message id (for SET_MESSAGE_INTERVAL).
PRODUCED: Mapping[int, str] = {
    1: "SYS_STATUS",
    2: "SYSTEM_TIME",
    24: "GPS_RAW_INT",
    33: "GLOBAL_POSITION_INT",
    42: "MISSION_CURRENT",
    147: "BATTERY_STATUS",
    242: "HOME_POSITION",
    245: "EXTENDED_SYS_STATE",
}

#: MAV_DATA_STREAM id → the produced messages of that ArduPilot stream group.
DATA_STREAM_GROUPS: Mapping[int, tuple[str, ...]] = {
    2: ("SYS_STATUS", "MISSION_CURRENT", "GPS_RAW_INT"),  # MAV_DATA_STREAM_EXTENDED_STATUS
    6: ("GLOBAL_POSITION_INT",),  # MAV_DATA_STREAM_POSITION
    12: ("BATTERY_STATUS", "SYSTEM_TIME"),  # MAV_DATA_STREAM_EXTRA3
}

PX4_DEFAULT_RATES_HZ: Mapping[str, float] = {
    "GLOBAL_POSITION_INT": 5.0,
    "SYS_STATUS": 1.0,
    "GPS_RAW_INT": 1.0,
    "EXTENDED_SYS_STATE": 1.0,
    "BATTERY_STATUS": 0.5,
    "HOME_POSITION": 0.5,
    "MISSION_CURRENT": 1.0,
    "SYSTEM_TIME": 1.0,
}


def group_messages(stream_id: int) -> tuple[str, ...]:
    """The messages a REQUEST_DATA_STREAM of ``stream_id`` sets (MAV_DATA_STREAM_ALL = 0: every group)."""
    if stream_id == 0:
        return tuple(name for names in DATA_STREAM_GROUPS.values() for name in names)
    return DATA_STREAM_GROUPS.get(stream_id, ())


#: The shortest stream interval an ArduCopter grants: 0.8 × its 400 Hz loop (``GCS_MAVLINK::cap_message_interval``,
#: libraries/GCS_MAVLink/GCS_Common.cpp: loop_period_us / 800, in whole ms).
MIN_INTERVAL_S = 0.003


def interval_s_for(rate_hz: float) -> float | None:
    """A rate in Hz as an interval; 0 (or less) stops the stream (None)."""
    return None if rate_hz <= 0 else max(MIN_INTERVAL_S, 1.0 / rate_hz)
