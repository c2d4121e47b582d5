"""The simulated vehicle's parameters: the few of its dialect that the product reads and sets.

Kept apart from ``flows.sim.vehicle`` so that the vehicle module stays about the
link and the mission protocol. PARAM_SET of a known name stores the value as
float32 (MAVLink's PARAM_VALUE carries a float) and answers PARAM_VALUE; an
unknown name is ignored, as ArduPilot's ``GCS_MAVLINK::handle_param_set`` does
when ``AP_Param::find`` fails; PARAM_REQUEST_READ of a known name answers PARAM_VALUE.
"""

from __future__ import annotations

import struct
import threading
from typing import Any

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

__all__ = ["SimParams"]

DEFAULTS = {
    "ardupilot": {"FENCE_ALT_MAX": 100.0, "FENCE_ENABLE": 0.0, "FENCE_TYPE": 7.0, "RTL_ALT": 1500.0},
    "px4": {"GF_MAX_VER_DIST": 0.0, "GF_ACTION": 1.0, "RTL_RETURN_ALT": 60.0},
}


class SimParams:
    """One vehicle's parameter table; ``vehicle`` is the ``SimVehicle`` that sends the answers."""

    def __init__(self, dialect: str) -> None:
        self._values: dict[str, float] = dict(DEFAULTS[dialect])
        self._lock = threading.Lock()

    def values(self) -> dict[str, float]:
        with self._lock:
            return dict(self._values)

    def on_set(self, vehicle: Any, msg: Any) -> None:
        name = _name(msg.param_id)
        if name not in self._values:
            return
        with self._lock:
            self._values[name] = _f32(msg.param_value)
        vehicle.log(f"param {name} = {msg.param_value:g}")
        self._answer(vehicle, name)

    def on_read(self, vehicle: Any, msg: Any) -> None:
        name = _name(msg.param_id)
        if name in self._values:
            self._answer(vehicle, name)

    def _answer(self, vehicle: Any, name: str) -> None:
        with self._lock:
            names = sorted(self._values)
            value = self._values[name]
        index = names.index(name)
        vehicle.send(lambda m: m.param_value_send(name.encode("ascii"), value, _M.MAV_PARAM_TYPE_REAL32, len(names), index))


def _name(raw: Any) -> str:
    text = raw if isinstance(raw, str) else bytes(raw).decode("ascii", "replace")
    return text.rstrip("\x00")


def _f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", float(x)))[0]
