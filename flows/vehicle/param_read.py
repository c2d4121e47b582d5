"""Reading named parameters from a vehicle over its link: PARAM_REQUEST_READ, answered by PARAM_VALUE.

Why here: a launch judges the vehicle's own failsafe parameters (issue 42), and
a link opened for the launch has read none yet (the authority's hub reads them
on every session, ``flows.fleet.params``; a link opened per call has not). The
answers land in the link's view (``VehicleView.params``: this session only), so
whoever reads the view next sees them. A name the vehicle does not have is
never answered (ArduPilot's ``GCS_MAVLINK::handle_param_request_read`` finds
nothing and sends nothing): asked twice, then left missing, and the rule that
needs it names it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

__all__ = ["read_params", "request_read"]


def request_read(link: Any, names: Iterable[str]) -> None:
    """PARAM_REQUEST_READ of each name (by name: index -1) from the link's vehicle."""
    for name in names:
        link.send(lambda m, n=name: m.param_request_read_send(link.target_system, link.target_component,
                                                               n.encode("ascii"), -1))


def read_params(link: Any, names: Iterable[str], wait_s: float) -> dict[str, float]:
    """Ask for the names the view does not hold yet, wait for them (at most ``wait_s``, asking again half-way),
    and return the ones the vehicle answered."""
    wanted = tuple(dict.fromkeys(names))
    deadline = time.monotonic() + max(0.0, wait_s)
    for attempt in range(2):
        missing = [n for n in wanted if n not in link.view.params]
        if not missing:
            break
        request_read(link, missing)
        until = deadline if attempt else time.monotonic() + max(0.0, wait_s) / 2.0
        link.pump(max(0.0, until - time.monotonic()), lambda: all(n in link.view.params for n in wanted))
    return {n: link.view.params[n] for n in wanted if n in link.view.params}
