"""Give a vehicle its MAVLink 2 signing key (SETUP_SIGNING) and prove it took it: ``provision_signing``.

Why one step with the binding (issue 38): a binding that names a key the
vehicle does not have is a drone that never comes ONLINE, and a key the vehicle
has that the authority does not is a vehicle anyone on its network can
command. So ``sortie admin vehicle bind`` writes the key to the key store,
sends it to the vehicle and records the binding only once a link signed with
the new key is heard and answered.

What ArduPilot does (FACTS.md; ``GCS_MAVLINK::handle_setup_signing``,
``libraries/GCS_MAVLink/GCS_Signing.cpp``): it refuses while armed ("ERROR:
Won't setup signing when armed"), saves the key and timestamp, and activates
it at once on every link; from then on it signs every frame and drops unsigned
messages on every port but SERIAL0 (``accept_unsigned_callback``: channel 0 is
"assumed to be secure"). So the key is sent over a port the vehicle trusts:
SERIAL0 (its USB, or SITL's first TCP port), or any port signed with the key
it already has (``current``); a vehicle without a key takes it on any port.
The timestamp is MAVLink's signing clock: 10 µs units since 2015-01-01 UTC.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


from flows.vehicle.binding import VehicleBinding
from flows.vehicle.link import VehicleLink
from flows.errors import Conflict, DeviceMismatch, DeviceUnavailable

__all__ = ["provision_signing", "Provisioned", "signing_timestamp", "SIGNING_EPOCH_S"]

SIGNING_EPOCH_S = 1_420_070_400  # 2015-01-01T00:00:00Z
SENDS = 3  # SETUP_SIGNING has no acknowledgement: sent a few times, then proven by a signed link


def signing_timestamp(now_s: float | None = None) -> int:
    """MAVLink 2's signing timestamp (10 µs units since 2015-01-01 UTC) at ``now_s`` (wall clock)."""
    return int(((time.time() if now_s is None else now_s) - SIGNING_EPOCH_S) * 100_000)


@dataclass(frozen=True)
class Provisioned:
    """How a key reached a vehicle: over which link, and what proved it took it."""

    setup_link: str
    link: str
    system_id: int
    component_id: int
    autopilot: int | None
    proof: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"setup_link": self.setup_link, "link": self.link, "system_id": self.system_id,
                "component_id": self.component_id, "autopilot": self.autopilot, "proof": dict(self.proof)}


def provision_signing(link: str, expect: VehicleBinding, key: bytes, *, setup_link: str | None = None,
                      current: bytes | None = None, timeout_s: float = 8.0) -> Provisioned:
    """Send ``key`` to the vehicle ``expect`` describes (its system id, component, autopilot) over ``setup_link``
    (default ``link``; signed with ``current`` when the vehicle has a key already), then prove it on ``link``: a
    link signed with ``key`` hears the vehicle's signed heartbeat and its stream requests are answered.

    ``DeviceUnavailable``/``DeviceMismatch`` when the vehicle cannot be reached or is another; ``Conflict`` when
    it is armed (ArduPilot refuses) or did not take the key (an unsigned SETUP_SIGNING on a port that is not
    SERIAL0 of a vehicle that already signs is dropped without a word)."""
    if len(key) != 32:
        raise DeviceMismatch("a MAVLink 2 signing key is 32 bytes")
    setup_at = setup_link or link
    old = VehicleBinding(system_id=expect.system_id, component_id=expect.component_id, autopilot=expect.autopilot,
                         signing_key=current)
    with VehicleLink(setup_at, old, streams={}, heartbeat_timeout_s=timeout_s) as setup:
        setup.wait_vehicle(time.monotonic() + timeout_s)
        setup.pump(0.3)  # the heartbeat's armed flag, at least once more
        if setup.view.armed:
            raise Conflict(f"the vehicle on {setup_at!r} is armed: ArduPilot will not set up signing while armed; "
                           "nothing was sent", details={"nothing_sent": True})
        ts, tc = setup.target_system, setup.target_component
        stamp = signing_timestamp()
        for _ in range(SENDS):
            setup.send(lambda m: m.setup_signing_send(ts, tc, list(key), stamp))
            setup.pump(0.2)
    new = VehicleBinding(system_id=ts, component_id=tc, autopilot=expect.autopilot, signing_key=key)
    proof = _prove(link, new, timeout_s)
    return Provisioned(setup_at, link, ts, tc, expect.autopilot, proof)


def _prove(link: str, binding: VehicleBinding, timeout_s: float) -> dict[str, Any]:
    """A link signed with the new key hears the vehicle's signed frames and gets its requests answered."""
    try:
        with VehicleLink(link, binding, streams={"SYS_STATUS": 1.0}, heartbeat_timeout_s=timeout_s) as proving:
            proving.connect(time.monotonic() + timeout_s)
            answers = dict(proving.stream_answers)
            signing: Any = proving.mav.signing
            good = int(signing.goodsig_count)
    except (DeviceMismatch, DeviceUnavailable) as exc:
        raise Conflict("the vehicle did not take the new signing key (its frames are not signed with it, or it "
                       "ignores requests signed with it): a vehicle that already signs drops an unsigned "
                       "SETUP_SIGNING on every port but SERIAL0 — send it over SERIAL0 (--setup-link) or with its "
                       f"current key. ({exc.message})", details={"link": link}) from None
    if good == 0 or not answers.get("accepted", 0) + answers.get("refused", 0):
        raise Conflict("the vehicle answers, but not as one signing with the new key (no signed frame verified, or "
                       "no request answered); the binding was not recorded", details={"answers": answers})
    return {"signed_frames_verified": good, "stream_answers": answers}
