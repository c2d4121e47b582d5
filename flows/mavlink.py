"""MAVLink 2 for every link and every simulator of this process, chosen in one place.

Why: pymavlink picks its wire version when ``mavutil`` is first imported, from
``MAVLINK20`` in the environment; imported without it there is no
``mission_type`` and fence and rally uploads break (FACTS.md, MAVLink). So
``mavutil`` is imported here and nowhere else in ``flows``: this module sets
``MAVLINK20`` first (an operator's own value stands) and every module that
speaks MAVLink takes ``mavutil`` from it. A module that needs only message
constants imports ``pymavlink.dialects.v20.common`` directly (it is MAVLink 2
whatever the environment says, and leaves ``mavutil``'s every-dialect import
to the first link); ``tests/test_import_contract.py`` checks both.
"""

from __future__ import annotations

import os

os.environ.setdefault("MAVLINK20", "1")

from pymavlink import mavutil  # noqa: E402

__all__ = ["mavutil"]
