"""The messages about the link itself, handled for the port they came on: stream requests and signing set-up.

An autopilot keeps, per port, what it was asked to stream (``GCS_MAVLINK::streamRates``
and the deferred-message buckets are members of each channel's ``GCS_MAVLINK``), so a
request is answered and remembered on the port it arrived on (``flows.sim.ports``):

- MAV_CMD_SET_MESSAGE_INTERVAL (``GCS_MAVLINK::handle_command_set_message_interval``): an
  interval in µs for one message; DENIED for a message the vehicle has no ``ap_message``
  for ("No ap_message for mavlink id"); -1 stops it;
- REQUEST_DATA_STREAM (``GCS_MAVLINK::handle_request_data_stream``): a rate for an
  ArduPilot stream group (``flows.sim.streams``); PX4's receiver ignores it;
- SETUP_SIGNING (``GCS_MAVLINK::handle_setup_signing``): the key is active at once, on
  every port.
"""

from __future__ import annotations

from typing import Any

from pymavlink.dialects.v20 import common as _M  # noqa: E402  (constants only)

from flows.sim.streams import MIN_INTERVAL_S, PRODUCED, group_messages, interval_s_for  # noqa: E402

__all__ = ["handle_link_message", "SET_MESSAGE_INTERVAL"]

SET_MESSAGE_INTERVAL = 511  # MAV_CMD_SET_MESSAGE_INTERVAL


def handle_link_message(vehicle: Any, msg: Any, port: Any) -> bool:
    """Handle a stream request or SETUP_SIGNING for ``port``; True when it was one."""
    kind = msg.get_type()
    if kind in ("COMMAND_LONG", "COMMAND_INT") and int(msg.command) == SET_MESSAGE_INTERVAL:
        name = PRODUCED.get(int(msg.param1))
        if name is None:
            vehicle.ack(msg, _M.MAV_RESULT_DENIED)
            return True
        interval_us = float(msg.param2)
        if interval_us < 0:
            port.rates_s.pop(name, None)
        elif interval_us > 0:
            port.rates_s[name] = max(MIN_INTERVAL_S, interval_us / 1e6)
        port.last_sent_s.pop(name, None)
        vehicle.ack(msg, _M.MAV_RESULT_ACCEPTED)
        return True
    if kind == "REQUEST_DATA_STREAM":
        if vehicle.dialect == "px4":
            return True  # PX4 streams its defaults and ignores the legacy request
        rate = float(msg.req_message_rate) if int(msg.start_stop) else 0.0
        for name in group_messages(int(msg.req_stream_id)):
            interval = interval_s_for(rate)
            if interval is None:
                port.rates_s.pop(name, None)
            else:
                port.rates_s[name] = interval
            port.last_sent_s.pop(name, None)
        return True
    if kind == "SETUP_SIGNING":
        vehicle.set_signing_key(bytes(msg.secret_key))
        vehicle.log("signing key set by SETUP_SIGNING")
        return True
    return False
