"""The Prefect flows' side of server mode: each task's operation as one request to the authority.

With ``SORTIE_SERVER`` set, a worker holds a *service token* with a narrow
scope (``sortie admin token create WORKER --scope service,plan,read,dispatch``): it
plans on behalf of the requester named in the flow's parameters, reads a
draft's state while it waits, relays an approval typed into the Prefect form
(the approver's user id AND a one-time code: the server verifies the code, so
the worker never decides who approved), and dispatches an approved version.
It never opens the ledger; workers on several machines share one authority.

``now``/``world`` flow parameters are refused in this mode: the server's clock
and world are the only ones.
"""

from __future__ import annotations

import os
from typing import Any

from flows.client.http import SortieClient
from planner.errors import InvalidArgument

__all__ = ["server_mode", "refuse_local_inputs", "plan", "draft_state", "decide", "dispatch", "last_approver", "expire"]


def server_mode() -> bool:
    """Whether the flows run as clients of ``sortie server``."""
    return bool(os.environ.get("SORTIE_SERVER", "").strip())


def refuse_local_inputs(world: str | None, now: str | None) -> None:
    """A caller's world or time has no meaning for the authority."""
    if world or now:
        raise InvalidArgument("world/now parameters are refused with SORTIE_SERVER set: the server's world and clock "
                              "are the only ones")


def _client() -> SortieClient:
    return SortieClient.from_env()


def plan(text: str, region_id: str | None, area: dict[str, Any] | None, requested_by: str,
         coverage_target: float | None = None) -> dict[str, Any]:
    """Plan through the server on behalf of the requester (recorded as asserted by this service token)."""
    return _client().plan(text, region_id, area, on_behalf_of=requested_by, coverage_target=coverage_target)


def draft_state(draft_id: str, version: int) -> dict[str, Any]:
    """The same fields ``flows.orchestration.ledger_access.draft_state`` reads from a local ledger."""
    d = _client().show(draft_id, int(version))
    return {k: d.get(k) for k in ("draft_id", "version", "row_version", "plan_hash", "verdict", "requested_by",
                                  "created_time")} | {"state": d["status"]}


def decide(decision: dict[str, Any]) -> str:
    """Relay an approval form's decision with its one-time code; the server verifies it. Returns the new state."""
    code = decision.get("code")
    if not code:
        raise InvalidArgument("with a sortie server, the approval form needs your one-time code (sortie admin totp "
                              "enroll YOU on the server host)")
    totp = {"user": decision["approver"], "code": code}
    c = _client()
    if decision["decision"] == "approve":
        out = c.approve(decision["draft_id"], decision["version"], decision["plan_hash"], decision.get("comment", ""),
                        totp=totp)
    else:
        out = c.reject(decision["draft_id"], decision["version"], decision.get("comment") or "rejected in the Prefect UI",
                       totp=totp)
    return str(out["status"])


def dispatch(draft_id: str, version: int, dry_run: bool, link: str | dict[str, str] | None) -> dict[str, Any]:
    """Dispatch as the service token's user (it needs the dispatcher role in the server's users.json)."""
    return _client().dispatch(draft_id, version, dry_run=dry_run, link=link)


def last_approver(draft_id: str, version: int) -> str:
    approvals = [a for a in _client().show(draft_id, int(version))["notes"].get("approvals", [])
                 if a["decision"] == "APPROVED"]
    if not approvals:
        raise InvalidArgument(f"draft {draft_id} v{version} has no approval to dispatch under")
    return str(approvals[-1]["approver"])


def expire(draft_id: str, version: int) -> str:
    """Ask the authority to expire the version if its approval window has passed on the server's clock."""
    return str(_client().expire(draft_id, int(version))["status"])
