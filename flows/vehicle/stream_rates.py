"""Which telemetry a part of sortie asks a vehicle for, and how often (Hz): plain values, no pymavlink.

Kept apart from ``flows.vehicle.link`` (which loads pymavlink and applies them on every
(re)connection) so the use cases name what they need when they have a link from the
authority's ``Vehicles`` port without importing the link itself.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["TELEMETRY", "CONTROL_STREAMS", "UPLOAD_STREAMS"]

#: What the follower and the launch read (Hz): FACTS.md's list, plus GPS_RAW_INT (fix) and SYSTEM_TIME (uptime).
TELEMETRY: Mapping[str, float] = {
    "GLOBAL_POSITION_INT": 5.0, "SYS_STATUS": 1.0, "BATTERY_STATUS": 1.0, "MISSION_CURRENT": 2.0,
    "HOME_POSITION": 0.5, "EXTENDED_SYS_STATE": 1.0, "GPS_RAW_INT": 1.0, "SYSTEM_TIME": 1.0,
}
#: What confirms a command: the mission state (ArduPilot's pause), the position (land here), landed or not.
CONTROL_STREAMS: Mapping[str, float] = {
    "MISSION_CURRENT": 4.0, "GLOBAL_POSITION_INT": 4.0, "EXTENDED_SYS_STATE": 2.0, "SYS_STATUS": 1.0,
}
#: The upload needs only the vehicle's uptime (a MISSION_COUNT refused with NO_SPACE during boot).
UPLOAD_STREAMS: Mapping[str, float] = {"SYSTEM_TIME": 1.0}
