"""A fleet alert the control room must see in Prefect: ``fleet.intrusion`` as the event ``sortie.fleet.intrusion``.

Why: the operator of a shift watches the Prefect UI (issue 39), not ``sortie watch`` or the feed. The server's hub
says ``fleet.intrusion`` on its feed when a drone's link refuses forged traffic or something else took control of
the vehicle (``flows.fleet.hub``); ``telling_prefect`` wraps the hub's ``publish`` so the same alert also goes to
the Prefect API as an event — resource ``sortie.drone.<id>`` (with the tenant), the hub's words and figures as its
payload — which the Prefect UI's event feed shows and the automation ``sortie: fleet intrusion``
(``flows.orchestration.notify``, made by ``sortie notify setup``) turns into a notification.

Best effort, off the hub's thread, bounded: a Prefect server that is down or slow never delays the hub or the
feed (the ledger's audit row and the feed stay the record). Without a Prefect API nothing is sent.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

from flows.authority.prefect_api import prefect_api_url

__all__ = ["FLEET_INTRUSION_EVENT", "NOTICES", "notice_event", "post_notice", "telling_prefect", "POST_TIMEOUT_S"]

FLEET_INTRUSION_EVENT = "sortie.fleet.intrusion"
#: The feed's alerts that also go to Prefect, and the Prefect event each becomes.
NOTICES = {"fleet.intrusion": FLEET_INTRUSION_EVENT}
#: The longest one notice may take to post (on its own thread).
POST_TIMEOUT_S = 5.0

_log = logging.getLogger(__name__)


def notice_event(kind: str, tenant: str | None, data: dict[str, Any]) -> dict[str, Any]:
    """The Prefect event (JSON, ``prefect.events.Event``'s shape) of one feed alert ``kind`` about a drone."""
    drone = str(data.get("drone_id") or "unknown")
    resource = {"prefect.resource.id": f"sortie.drone.{drone}", "prefect.resource.name": drone, "sortie.drone": drone}
    if tenant:
        resource["sortie.tenant"] = str(tenant)
    return {"id": str(uuid.uuid4()), "occurred": datetime.now(timezone.utc).isoformat(), "event": NOTICES[kind],
            "resource": resource, "related": [], "payload": {"feed": kind, **data}}


def post_notice(event: dict[str, Any], api_url: str, *, timeout_s: float = POST_TIMEOUT_S) -> bool:
    """``POST <api>/events``; whether the Prefect server took it (never raises: logged instead)."""
    import httpx

    try:
        httpx.post(f"{api_url.rstrip('/')}/events", json=[event], timeout=timeout_s).raise_for_status()
        return True
    except httpx.HTTPError as exc:
        _log.warning("could not tell Prefect %s for %s: %s", event.get("event"),
                     event.get("resource", {}).get("sortie.drone"), exc)
        return False


def telling_prefect(publish: Callable[[str, str | None, dict[str, Any]], Any]) -> Callable[..., Any]:
    """``publish`` (the feed's), which also tells the Prefect API of every alert in ``NOTICES`` on a thread."""

    def told(kind: str, tenant: str | None, data: dict[str, Any]) -> Any:
        out = publish(kind, tenant, data)
        if kind in NOTICES and (api := prefect_api_url()) is not None:
            threading.Thread(target=post_notice, args=(notice_event(kind, tenant, dict(data)), api),
                             name=f"prefect-notice-{kind}", daemon=True).start()
        return out

    return told
