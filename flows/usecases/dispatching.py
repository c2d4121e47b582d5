"""The dispatch use case: one approved version to the vehicles, once ever.

gather: the version, the dispatching user, the matching unexpired approval,
a fresh snapshot of the world (the server's own, strictly loaded, in server
mode) and the rule set; decide: ``drafting.recheck`` (the rules again, now);
apply: claim the idempotency key in the ledger, upload over MAVLink
(``flows.vehicle.upload``), record the outcome.

In server mode an approval is accepted only if it was itself made in server
mode: an approval recorded by an embedded (local, asserted) sortie never
satisfies the authority.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from flows.context import draft_dir
from flows.errors import Conflict, DeviceUnavailable, DispatchFailed, DispatchUncertain, Forbidden
from flows.ledger import DispatchRecord, Ledger, idempotency_key, kill_point, params_hash
from flows.usecases import drafting
from flows.usecases.actor import Actor
from flows.usecases.common import user_of
from flows.usecases.draftfiles import files_of
from flows.usecases.grounds import Grounds
from flows.usecases.views import DispatchSummary, dispatch_summary
from planner.errors import SortieError

__all__ = ["dispatch", "first_outcome", "holds_role"]


def holds_role(draft_id: str, version: int, user_id: str, role: str, *, grounds: Grounds) -> bool:
    """Whether ``user_id`` holds ``role`` for this version's tenant and region (an unknown user holds none).
    Asked before an approval is recorded, so a run never holds an approval nobody can dispatch."""
    rec = grounds.ledger.get_draft(draft_id, version)
    world = grounds.world(rec.world_dir)
    try:
        user = user_of(world, user_id, role)
    except SortieError:
        return False
    return user.may(role, rec.tenant, rec.region_id)


def dispatch(
    draft_id: str,
    version: int | None = None,
    *,
    actor: str | Actor,
    now: datetime,
    link: str | Mapping[str, str] | None = None,
    dry_run: bool = False,
    timeout_s: float = 30.0,
    grounds: Grounds,
) -> DispatchSummary:
    """Dispatch one approved version (the latest when ``version`` is None), once ever.

    Order: the dispatcher role; an earlier dispatch of this version → its first
    outcome (PENDING while in flight; other parameters → ``Conflict``); a
    matching unexpired approval (``ApprovalRequired``/``ApprovalStale``; in
    server mode one made in server mode); the rules on a FRESH world snapshot
    (``DeviceUnavailable``/``AirspaceBlocked``); then ``dry_run`` stops and
    reports. Otherwise the idempotency key is claimed in the ledger, the plan
    uploaded, and the outcome recorded: ACKED → DISPATCHED, a refusal → FAILED
    (draft ABORTED), an unknown outcome → UNCERTAIN (never re-sent blind).
    Before the claim every vehicle's link is opened and must answer with the
    bound vehicle's heartbeat (``flows.vehicle.upload.open_links``): a vehicle
    that does not answer is ``DeviceUnavailable`` naming the likely causes (a
    TCP port held by another client, a signing mismatch), nothing is claimed,
    and the draft stays dispatchable. The upload then uses those same links.
    """
    who = actor if isinstance(actor, Actor) else Actor(actor)
    ledger = grounds.ledger
    rec = ledger.get_draft(draft_id, version)
    world = grounds.world(rec.world_dir)
    user = user_of(world, who.id, "dispatch")
    if not user.may("dispatcher", rec.tenant, rec.region_id):
        raise Forbidden(f"{user.id} may not dispatch drafts of tenant {rec.tenant}")
    if rec.plan_hash is None:
        raise Conflict(f"draft {draft_id} v{rec.version} is {rec.state} and has no plan to dispatch")
    key = idempotency_key(draft_id, rec.version, rec.plan_hash)
    params = {"link": dict(link) if isinstance(link, Mapping) else link}
    earlier = ledger.get_dispatch(key)
    if earlier is not None:
        if earlier.params_hash != params_hash(params):
            raise Conflict(
                f"draft {draft_id} v{rec.version} was already dispatched with other parameters "
                f"({json.dumps(earlier.params)}); a version is dispatched once"
            )
        return first_outcome(ledger, earlier, now=now, wait_s=timeout_s + 15.0)
    from flows.integrity.seal import seal_dispatch  # integrity hook: the approval, chain, signature, plan hash, items

    mode = "server" if who.mode == "server" else None  # the authority dispatches only on its own approvals
    seal = seal_dispatch(ledger, rec, world, now=now, require_mode=mode, approved_in=mode,
                         plan_file=draft_dir(draft_id, rec.version, grounds.home) / "plan.json")
    checks = ["approval matches this version and plan hash and has not expired"]
    checks += list(seal.checks)
    ledger.check_drones_free(draft_id, rec.version)
    checks += drafting.recheck(rec, world, grounds.rule_set(), now)
    if dry_run:
        return DispatchSummary(
            draft_id=draft_id, version=rec.version, idempotency_key=key, status="DRY_RUN", first=True, dry_run=True,
            draft_status=rec.state, message="dry run: every check passed; nothing was claimed or sent",
            checks=checks, files=files_of(draft_id, rec.version, grounds.home),
        )
    from flows.vehicle.linkspec import check_links
    from flows.vehicle.upload import open_links  # pymavlink is heavy: only a real dispatch loads it

    drones = sorted({s["drone_id"] for s in (rec.plan or {}).get("sorties", [])})
    check_links(drones, link)  # before the claim: a wrong --link must not use up the dispatch
    plan = seal.plan  # the plan whose hash was recomputed and whose items were hashed
    key_store = grounds.key_store
    with _claiming(key):  # racing requests of one process (the server's threads) hello one at a time
        earlier = ledger.get_dispatch(key)
        if earlier is not None:  # claimed meanwhile: its outcome, and this request never touches the vehicle
            return first_outcome(ledger, earlier, now=now, wait_s=timeout_s + 15.0)
        try:  # the vehicles answer before anything is claimed: a silent or wrong vehicle leaves the draft dispatchable
            links = open_links(plan, world, link=link, key_store=key_store, heartbeat_timeout_s=min(5.0, timeout_s),
                               vehicles=grounds.vehicles)
        except DeviceUnavailable as exc:  # DeviceMismatch too
            raise type(exc)(f"{exc.message}; nothing was claimed or sent: draft {draft_id} v{rec.version} stays "
                            f"{rec.state} and can be dispatched again once the vehicle answers",
                            details={**(exc.details if isinstance(exc.details, dict) else {}),
                                     "draft_status": rec.state, "claimed": False}) from None
        try:
            claim = ledger.claim_dispatch(draft_id, rec.version, plan_hash=rec.plan_hash, params=params, actor=user.id,
                                          now=now, items_hash=seal.items_hash, approval_id=seal.approval_id,
                                          mode=mode)
        except BaseException:
            _close(links)
            raise
    try:
        if not claim.claimed:
            return first_outcome(ledger, claim.dispatch, now=now, wait_s=timeout_s + 15.0)
        return _upload_claimed(ledger, rec, user.id, key, plan, world, link, links, key_store, checks, now=now,
                               timeout_s=timeout_s)
    finally:
        _close(links)


_CLAIMING: dict[str, tuple[threading.Lock, int]] = {}  # key -> (its lock, how many hold or wait for it)
_CLAIMING_GUARD = threading.Lock()


@contextmanager
def _claiming(key: str) -> Iterator[None]:
    """One hello-and-claim per idempotency key at a time in this process: the first claims, the rest then find
    its claim and answer with its outcome, without ever saying hello to the vehicle it is uploading to. A key's
    lock lives while someone holds or waits for it (a long-running server dispatches without growing)."""
    with _CLAIMING_GUARD:
        lock, users = _CLAIMING.get(key, (threading.Lock(), 0))
        _CLAIMING[key] = (lock, users + 1)
    try:
        with lock:
            yield
    finally:
        with _CLAIMING_GUARD:
            users = _CLAIMING[key][1] - 1
            if users:
                _CLAIMING[key] = (lock, users)
            else:
                del _CLAIMING[key]


def _close(links: dict[str, Any]) -> None:
    for vl in links.values():
        vl.close()


def _upload_claimed(ledger: Ledger, rec: Any, user_id: str, key: str, plan: Any, world: Any, link: Any,
                    links: dict[str, Any], key_store: Path, checks: list[str], *, now: datetime,
                    timeout_s: float) -> DispatchSummary:
    """Upload a claimed dispatch over the open links and record the outcome (see ``dispatch``)."""
    from flows.vehicle.upload import upload_plan as upload

    draft_id = rec.draft_id
    kill_point("dispatch:after_claim")

    def on_attempt(entry: dict[str, Any]) -> None:
        try:
            ledger.record_attempt(key, entry, now=now)
        except SortieError:
            pass  # the outcome below is recorded regardless; an attempt log line is not worth failing for
        if entry.get("kind") == "upload":
            kill_point(f"upload:after_{entry.get('mission_type')}")  # crash tests: killed between transfers

    try:
        outcome = upload(plan, world, link=link, timeout_s=timeout_s, on_attempt=on_attempt, links=links,
                         key_store=key_store)
        status, result = "ACKED", _outcome_dict(outcome)
        result["message"] = "the vehicle accepted the mission"
    except (DispatchFailed, DeviceUnavailable) as exc:
        status, result = "FAILED", {"message": exc.message, "outcome": exc.details}
        if isinstance(exc.details, dict) and exc.details.get("vehicle_cleared"):
            result["vehicle_cleared"] = True  # the uploader cleared what it had put up: the drones are free
    except DispatchUncertain as exc:
        status, result = "UNCERTAIN", {"message": exc.message, "outcome": exc.details}
    except SortieError as exc:
        status, result = "FAILED", {"message": exc.message, "code": exc.code}
    except Exception as exc:  # noqa: BLE001 - a crash mid-upload: what the vehicle holds is unknown
        status, result = "UNCERTAIN", {"message": f"the upload stopped with {type(exc).__name__}: {exc}"}
    kill_point("dispatch:after_upload")
    done = ledger.finish_dispatch(key, status=status, result=result, actor=user_id, now=now)
    draft_now = ledger.get_draft(draft_id, rec.version).state
    from flows.integrity.outcomes import outcome_error  # integrity hook: a non-success is an error, same code

    error = outcome_error(
        status, draft_id, f"{result['message']} (draft {draft_id} v{rec.version} is {draft_now})",
        dispatch_summary(done, first=True, draft_status=draft_now, message=result["message"]).to_dict(),
    )
    if error is not None:
        raise error
    return dispatch_summary(done, first=True, draft_status=draft_now, message=result["message"], checks=checks)


def _outcome_dict(outcome: Any) -> dict[str, Any]:
    if hasattr(outcome, "to_dict"):
        return dict(outcome.to_dict())
    if isinstance(outcome, Mapping):
        return dict(outcome)
    return {"outcome": str(outcome)}


def first_outcome(ledger: Ledger, d: DispatchRecord, *, now: datetime, wait_s: float = 0.0) -> DispatchSummary:
    """The answer to a repeated dispatch: the first one's outcome, never a second upload.

    While the first is still uploading (PENDING, its process alive) the repeat waits for it, at most
    ``wait_s``, so it can answer with the first one's outcome and code.
    """
    from flows.integrity.outcomes import wait_while_pending  # integrity hook: answer with the first's outcome

    d = wait_while_pending(ledger, d, wait_s)
    state = ledger.get_draft(d.draft_id, d.version).state
    if d.status == "PENDING" and not d.owner_alive():
        msg = (
            f"the first dispatch (pid {d.owner_pid}, {d.created_time}) died before recording its outcome; "
            "what reached the vehicle is unknown: read its mission back before anything else, never re-send blind"
        )
        try:
            d = ledger.finish_dispatch(
                d.idempotency_key, status="UNCERTAIN", result={"message": msg}, actor="sortie", now=now,
                expected_status=("PENDING",),
            )
        except Conflict:
            d = ledger.get_dispatch(d.idempotency_key) or d
    else:
        msg = {
            "PENDING": "a dispatch of this version is in progress",
            "ACKED": "already dispatched: the vehicle accepted the mission",
            "SENT": "already dispatched",
            "UNCERTAIN": "the first dispatch's outcome is unknown",
            "FAILED": "the first dispatch failed",
        }[d.status]
    from flows.integrity.outcomes import outcome_error  # integrity hook: the first outcome's code, again

    summary = dispatch_summary(d, first=False, draft_status=state, message=msg)
    error = outcome_error(d.status, d.draft_id, msg, summary.to_dict())
    if error is not None:
        raise error
    return summary
