"""One drone's held link: opened by ``open_link`` with the drone's binding, read on its own thread, reopened
with bounded backoff; what it saw is read by the hub (``flows.fleet.hub``) at any time.

The thread is the only reader that waits on the link; a request never does
(the hub's ``snapshot`` only copies values under a lock). What can go wrong
is a named fault (``flows.fleet.live.FAULTS``), decided from the link's own
evidence, never from the words of an error:

- the socket cannot be opened, or no heartbeat comes → ``LINK_UNAVAILABLE``;
- another system id, component or autopilot answers → ``DEVICE_MISMATCH``
  (``VehicleLink.wait_vehicle``: nothing is sent to it); so does a vehicle that
  signs its frames on the link of a drone bound to no key (a signing vehicle is
  bound to a key: another drone's vehicle, reached on a port that answers
  unsigned — issue 38's unbound drone repointed onto another's vehicle);
- the vehicle answers but pymavlink refused its frames as not signed with the
  drone's key (``signing.reject_count``), or it signs and ignores this
  unsigned link's requests (``signing.sig_count`` with no answer) →
  ``SIGNING_MISMATCH`` (FACTS.md: a signed ArduPilot silently drops unsigned
  commands and stream requests on every port but SERIAL0);
- the key cannot be read → ``KEY_UNAVAILABLE``;
- another drone, or another sortie process on this host, holds the link's
  address (``flows.fleet.link_claim``) → ``LINK_HELD``: nothing is opened, and
  the claim is tried again with the backoff;
- while the link is lent (``flows.vehicle.vehicles.HeldLinks``: the upload, launch, a
  command or the follower speaks through it) the watch does not read: the
  borrower reads, and the watch keeps what the link saw — unless nothing was
  read for ``LENT_QUIET_S`` (a borrower that stopped reading);
- heard, then silent: the link is kept (a UDP vehicle that comes back is heard
  on it, and ``VehicleLink`` asks for its streams again after a silence), and
  reopened after ``HoldTimes.reopen_after_s`` (a TCP port whose vehicle restarted).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flows.fleet.link_claim import LinkClaim
from flows.fleet.live import Fault
from flows.fleet.params import ParamReads, request_read
from flows.vehicle.binding import VehicleBinding
from flows.vehicle.link import TELEMETRY, VehicleLink, open_link
from flows.vehicle.vehicles import HeldLinks
from flows.vehicle.view import VehicleView
from flows.errors import DeviceMismatch, DeviceUnavailable
from planner.errors import SortieError

__all__ = ["DroneWatch", "HoldTimes", "Heard", "BACKOFF_S", "LENT_QUIET_S", "FOREIGN_KEYS"]

#: What a link refused and never read (``VehicleLink.foreign``), summed over the watch's links.
FOREIGN_KEYS = ("other_source", "other_system", "unsigned")

#: Seconds between attempts to open a link that failed (the last one repeats).
BACKOFF_S: Sequence[float] = (1.0, 2.0, 4.0, 8.0, 15.0)
#: A lent link nobody has read for this long is read by the watch again (a borrower that kept its lease and
#: stopped reading must not leave the drone OFFLINE while its vehicle talks).
LENT_QUIET_S = 3.0
#: How long a stopped watch keeps its link for a part still speaking through it (a follower) before closing it.
LEASE_WAIT_S = 4 * 3600.0


@dataclass(frozen=True)
class HoldTimes:
    """How a link is held: the wait for the vehicle's heartbeat when opening, the silence after which the link
    is reopened, the backoff between failed openings (the last one repeats)."""

    heartbeat_timeout_s: float = 5.0
    reopen_after_s: float = 30.0
    backoff_s: tuple[float, ...] = tuple(BACKOFF_S)


@dataclass(frozen=True)
class Heard:
    """What a watch knows now: the vehicle's view, how long ago it last sent a heartbeat (None: never) and each
    message type (this session), the link's fault, and what it refused as foreign (counts over the watch's life,
    with a few sources and system ids as evidence)."""

    view: VehicleView
    heard_s_ago: float | None
    fault: Fault | None
    ages: Mapping[str, float]
    foreign: Mapping[str, Any]


class DroneWatch:
    """The held link of one drone and what its vehicle last said (thread-safe reads)."""

    def __init__(self, drone_id: str, link: str, binding: Callable[[], VehicleBinding], *, lender: HeldLinks,
                 on_change: Callable[["DroneWatch"], None] | None = None, times: HoldTimes = HoldTimes(),
                 claim: Callable[[], LinkClaim] | None = None) -> None:
        self.drone_id = drone_id
        self.link = link
        self._binding = binding
        self.lender = lender  # the hub's: lends this watch's link to every part that speaks to the drone
        self._on_change = on_change
        self.times = times
        self.opens = 0  # links opened (a reconnection counts)
        self.held: VehicleLink | None = None
        self._view = VehicleView()
        self._heard: float | None = None  # monotonic time of the vehicle's last HEARTBEAT
        self._seen: dict[str, float] = {}  # message type → monotonic time of the last one (this session)
        self._fault: Fault | None = None
        self._foreign_before: dict[str, int] = dict.fromkeys(FOREIGN_KEYS, 0)  # of the links closed before
        self._foreign_now: dict[str, Any] = {}
        self._params = ParamReads()
        self._claim = claim
        self._claimed: LinkClaim | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # --- what the hub reads ----------------------------------------------------------------

    def state(self) -> Heard:
        """What the vehicle last said, how long ago, the link's fault and what it refused."""
        with self._lock:
            now = time.monotonic()
            heard = None if self._heard is None else max(0.0, now - self._heard)
            ages = {k: max(0.0, now - t) for k, t in self._seen.items()}
            now_counts = self._foreign_now
            foreign: dict[str, Any] = {k: self._foreign_before[k] + int(now_counts.get(k, 0)) for k in FOREIGN_KEYS}
            foreign["sources"] = list(now_counts.get("sources", ()))
            foreign["systems"] = list(now_counts.get("systems", ()))
            return Heard(self._view, heard, self._fault, ages, foreign)

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> "DroneWatch":
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=f"hub-{self.drone_id}", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout_s: float = 3.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout_s)
            self._thread = None

    # --- the thread ------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._hold_links()
        finally:
            if self._claimed is not None:
                self._claimed.release()

    def _hold_links(self) -> None:
        failures = 0
        while not self._stop.is_set():
            link = self._open() if self._claim_link() else None
            if link is None:
                self._wait(self.times.backoff_s[min(failures, len(self.times.backoff_s) - 1)])
                failures += 1
                continue
            failures = 0
            try:  # held (`_open`): every part that opens this address now speaks through this link
                self._read(link)
            finally:
                self.lender.release(link)  # no new borrower; one still speaking through it (a flight's follower)
                end = time.monotonic() + LEASE_WAIT_S  # keeps it until it is done (a changed link, a stopped watch)
                while link.leases > 0 and time.monotonic() < end:
                    time.sleep(0.5)
                with self._lock:
                    self.held = None
                    counts = link.foreign()
                    for k in FOREIGN_KEYS:
                        self._foreign_before[k] += int(counts[k])
                    self._foreign_now = {}
                link.close(force=True)

    def _claim_link(self) -> bool:
        """This host's claim on the link's address (``flows.fleet.link_claim``): one holder per vehicle."""
        if self._claimed is not None or self._claim is None:
            return True
        try:
            self._claimed = self._claim()
        except SortieError as exc:
            self._set_fault(Fault("LINK_HELD", exc.message))
            return False
        return True

    def _open(self) -> VehicleLink | None:
        try:
            binding = self._binding()
        except SortieError as exc:
            self._set_fault(Fault("KEY_UNAVAILABLE", exc.message))
            return None
        try:
            link = open_link(self.link, binding, connect=False, streams=TELEMETRY,
                             heartbeat_timeout_s=self.times.heartbeat_timeout_s)
        except SortieError as exc:
            self._set_fault(Fault("LINK_UNAVAILABLE", exc.message))
            return None
        try:
            link.connect()
        except (DeviceMismatch, DeviceUnavailable) as exc:
            self._set_fault(_classify(link, exc))
            link.close(force=True)
            return None
        except Exception as exc:  # noqa: BLE001 - a socket error of any kind: the thread lives on, the fault is named
            self._set_fault(Fault("LINK_UNAVAILABLE", f"{type(exc).__name__}: {exc}"))
            link.close(force=True)
            return None
        if binding.signing_key is None and link.conn.mav.signing.sig_count > 0:
            # a vehicle that signs its frames is bound to a key: not this unbound entry's vehicle (another drone's,
            # reached on a port that answers unsigned, e.g. its SERIAL0): never ONLINE on it, nothing read from it
            self._set_fault(Fault("DEVICE_MISMATCH", f"the vehicle on {self.link!r} (system {link.target_system}) "
                                  "signs its messages with a key, and this drone's fleet entry names none: it is "
                                  "another drone's vehicle, or this one must be bound (`sortie admin vehicle bind`)"))
            link.close(force=True)
            return None
        self.opens += 1
        # lent before the drone shows as held and ONLINE: a part that opens the address once it sees the drone
        # online must borrow this link, never open a second client (a TCP port serves one: tests/fleet/test_lending)
        self.lender.hold(link)
        with self._lock:
            self.held = link
            self._fault = None
        self._params.restart()
        self._saw(link)
        return link

    def _read(self, link: VehicleLink) -> None:
        """Read until stopped or silent for ``times.reopen_after_s`` (then the link is reopened)."""
        while not self._stop.is_set():
            last_rx = max(link.seen.values(), default=0.0)
            if link.leases > 0 and time.monotonic() - last_rx < LENT_QUIET_S:
                # lent and read: the borrower reads every message (and keeps view/seen), the hub only looks
                self._stop.wait(0.2)
                self._saw(link)
                continue
            try:
                if link.leases > 0:
                    link.pump(1.0)  # a quiet borrower: what queued up meanwhile is read at once
                else:
                    link.recv(None, timeout=0.5)
                    self._ask_params(link)
            except Exception:  # noqa: BLE001 - a broken socket: reopen it
                return
            self._saw(link)
            heard = link.seen.get("HEARTBEAT")
            if heard is None or time.monotonic() - heard > self.times.reopen_after_s:
                return

    def _ask_params(self, link: VehicleLink) -> None:
        """PARAM_REQUEST_READ of the parameters this session has not answered yet (``flows.fleet.params``)."""
        view = link.view
        if not link.target_system or not view.mode:
            return
        names = self._params.due(view.session, view.params, view.dialect, time.monotonic())
        if names:
            request_read(link, names)

    def _saw(self, link: VehicleLink) -> None:
        with self._lock:
            self._view = link.view
            self._seen = dict(link.seen)
            self._foreign_now = link.foreign()
            heard = link.seen.get("HEARTBEAT")
            if heard is not None:
                self._heard = heard
        self._changed()

    def _set_fault(self, fault: Fault) -> None:
        with self._lock:
            if fault.code == "LINK_UNAVAILABLE" and self._heard is not None:
                fault = None  # type: ignore[assignment]  # heard before: it is SILENT (live_drone says how long)
            self._fault = fault
        self._changed()

    def _wait(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self._stop.is_set() and time.monotonic() < end:
            self._stop.wait(min(0.5, max(0.0, end - time.monotonic())))
            self._changed()  # a silence turns into OFFLINE while the link is down, too

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self)


def _classify(link: VehicleLink, exc: SortieError) -> Fault:
    """The fault a failed connect shows, from the link's signing counters and the error's kind."""
    signing: Any = link.conn.mav.signing
    if link.signed and signing.reject_count > 0:
        return Fault("SIGNING_MISMATCH", exc.message)
    if not link.signed and signing.sig_count > 0 and isinstance(exc, DeviceUnavailable):
        return Fault("SIGNING_MISMATCH", exc.message)
    if isinstance(exc, DeviceMismatch):
        return Fault("DEVICE_MISMATCH", exc.message)
    return Fault("LINK_UNAVAILABLE", exc.message)
