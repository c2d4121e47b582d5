"""Approval needed → someone is told: Prefect Automations that send through a notification block.

Nothing outside the flows has to remember to notify: a run of
``dispatch-mission`` or ``daily-patrol`` announces the first time it waits for
the approval of a draft version (``announce_wait``: the Prefect event
``sortie.approval.waiting``, its resource ``sortie.draft.<id>.v<n>``, related
to the run and its flow) and the end of that wait (``announce_end``:
``sortie.approval.ended``), and the Prefect server's triggers service
evaluates Automations on those events. Three Automations are declared here:

``sortie: approval needed``
    reactive, once per waiting version and run: a re-wait after a refused input
    announces nothing (the run's state events would: Prefect emits
    ``prefect.flow-run.Suspended`` on every wait, which is why the automation
    does not listen to them);
``sortie: approval deadline close``
    proactive: a version announced as waiting whose wait has not ended
    ``window - warn_before`` seconds later (default 1800 - 300) gets a
    reminder that it expires soon; refused inputs do not restart the count.
    The ledger's deadline in ``sortie pending`` is the authority.
``sortie: fleet intrusion``
    reactive, on every ``sortie.fleet.intrusion`` that ``sortie server``'s hub posts
    (``flows.authority.prefect_notices``: forged traffic refused on a drone's link, or
    the drone held after foreign control), so the room sees it in Prefect too.

**Told at once, and once.** An announcement is posted to the Prefect API
before the run waits (``POST /api/events``, answered before the run suspends),
not left to Prefect's background events worker: a suspended run's process exits
right after it suspends, and an event still queued there went out only when the
run next started — minutes late, or never. Each announcement has an id derived
from the run and the version, and the run keeps a marker run input
(``sortie-told-…``) once the server took it, so a run restarted from the top (a
worker or a Prefect server restart: a deployed run starts again on every
resume) never announces the same wait twice; an announcement the server did not
take is tried again at the next start.

All send through one Prefect notification block. ``ensure_notifications``
creates (or replaces: it is idempotent) a ``CustomWebhookNotificationBlock``
posting ``{"subject", "body", "name"}`` as JSON to a URL, or uses any
notification block the operator already made in the UI (e-mail, Slack, Teams…).
The message templates are Jinja, rendered by the server with the event, its
run and flow (the event is related to them).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

__all__ = [
    "BLOCK_NAME",
    "GATED_FLOWS",
    "WAITING_AUTOMATION",
    "DEADLINE_AUTOMATION",
    "INTRUSION_AUTOMATION",
    "intrusion_automation",
    "WAITING_EVENT",
    "ENDED_EVENT",
    "announce_wait",
    "announce_end",
    "NotifySetup",
    "waiting_automation",
    "deadline_automation",
    "save_webhook_block",
    "ensure_notifications",
]

BLOCK_NAME = "sortie-approvals"
GATED_FLOWS = ("mission", "dispatch-mission", "daily-patrol")
WAITING_AUTOMATION = "sortie: approval needed"
INTRUSION_AUTOMATION = "sortie: fleet intrusion"
DEADLINE_AUTOMATION = "sortie: approval deadline close"
#: A run's first wait on a draft version, and the end of that wait (decided, expired, refused, cancelled).
WAITING_EVENT = "sortie.approval.waiting"
ENDED_EVENT = "sortie.approval.ended"

_WHICH = "{{ event.resource['sortie.draft'] }}"
_WAITING_SUBJECT = "sortie: approval needed ({{ flow.name }} {{ flow_run.name }})"
_WAITING_BODY = (
    "Run {{ flow_run.name }} of {{ flow.name }} waits for approval of draft " + _WHICH + ".\n"
    "Decide in the Prefect UI (Resume on the run: {{ flow_run|ui_url }}) or with "
    "`sortie approve <draft> --version <n>`.\n"
    "Everything that waits, with approvers and deadlines: `sortie pending`."
)
_INTRUSION_SUBJECT = "sortie: intrusion on {{ event.resource['sortie.drone'] }} ({{ event.payload.kind }})"
_INTRUSION_BODY = (
    "{{ event.resource['sortie.drone'] }} of {{ event.resource['sortie.tenant'] }}: {{ event.payload.message }}\n"
    "A held drone is not dispatched until a dispatcher clears it (POST /v1/fleet/<drone>/clear, docs/server.md); "
    "see it live on the operations page (/ops)."
)
_DEADLINE_SUBJECT = "sortie: approval deadline close ({{ flow.name }} {{ flow_run.name }})"
_DEADLINE_BODY = (
    "Run {{ flow_run.name }} of {{ flow.name }} has waited {minutes} min for approval of draft " + _WHICH + ";"
    " its draft expires about {left} min from now unless someone decides.\n"
    "Run: {{ flow_run|ui_url }} — deadlines: `sortie pending`."
)


@dataclass(frozen=True)
class NotifySetup:
    """What ``ensure_notifications`` left on the server."""

    block_document_id: str
    block_name: str
    automations: dict[str, str]  # name → id

    def to_dict(self) -> dict[str, Any]:
        return {"block": self.block_name, "block_document_id": self.block_document_id, "automations": self.automations}


def _resource(draft_id: str, version: int) -> dict[str, str]:
    return {"prefect.resource.id": f"sortie.draft.{draft_id}.v{int(version)}",
            "prefect.resource.name": f"{draft_id} v{int(version)}", "sortie.draft": f"{draft_id}:v{int(version)}"}


def announce_wait(draft_id: str, version: int, deadline: str) -> bool:
    """This run waits on this version (``sortie.approval.waiting``), said once per run whatever restarts; whether it
    was said now. Never raises (telling is best effort; the ledger and ``sortie pending`` are the record)."""
    return _tell(WAITING_EVENT, draft_id, version, {"deadline": deadline})


def announce_end(draft_id: str, version: int, outcome: str) -> bool:
    """The run's wait on this version is over (``sortie.approval.ended``): no reminder follows."""
    return _tell(ENDED_EVENT, draft_id, version, {"outcome": outcome})


def _marker(event: str, draft_id: str, version: int) -> str:
    """The run input that says this run told ``event`` for this version (run input keys: letters, digits, dashes)."""
    return f"sortie-told-{event.rsplit('.', 1)[-1]}-{draft_id}-v{int(version)}".lower()


def _tell(event: str, draft_id: str, version: int, payload: dict[str, Any]) -> bool:
    import logging

    from prefect.context import FlowRunContext

    ctx = FlowRunContext.get()
    run = ctx.flow_run if ctx is not None else None
    try:
        if run is not None and _told(run.id, _marker(event, draft_id, version)):
            return False
        _post(_event(event, draft_id, version, payload, ctx))
        if run is not None:
            from prefect.input import create_flow_run_input

            create_flow_run_input(key=_marker(event, draft_id, version), value={"event": event}, flow_run_id=run.id)
        return True
    except Exception as exc:  # noqa: BLE001 - a notification lost must not stop the wait
        logging.getLogger(__name__).warning("could not announce %s for %s v%s: %s", event, draft_id, version, exc)
        return False


def _told(run_id: Any, key: str) -> bool:
    from prefect.input import read_flow_run_input

    return read_flow_run_input(key, flow_run_id=run_id) is not None


def _event(event: str, draft_id: str, version: int, payload: dict[str, Any], ctx: Any) -> Any:
    """The event, related to the run and its flow (the automations' templates name them), with an id of its own
    per run and version (a repeat is the same event to Prefect's triggers)."""
    import uuid

    from prefect.events import Event

    run = ctx.flow_run if ctx is not None else None
    related: list[dict[str, str]] = []
    if run is not None:
        related.append({"prefect.resource.id": f"prefect.flow-run.{run.id}", "prefect.resource.role": "flow-run",
                        "prefect.resource.name": str(run.name)})
        related.append({"prefect.resource.id": f"prefect.flow.{run.flow_id}", "prefect.resource.role": "flow",
                        "prefect.resource.name": str(getattr(ctx.flow, "name", "") or "")})
    said = uuid.uuid5(uuid.NAMESPACE_URL, f"sortie:{event}:{run.id if run else uuid.uuid4()}:{draft_id}:v{int(version)}")
    return Event(event=event, resource=_resource(draft_id, version), related=related, payload=payload, id=said)


def _post(ev: Any) -> None:
    """The event to the Prefect API now (``POST /events``), raising if the server did not take it."""
    from prefect import get_client

    with get_client(sync_client=True) as client:
        client.request("POST", "/events", json=[ev.model_dump(mode="json")]).raise_for_status()


def _waiting_trigger() -> Any:
    from prefect.events.schemas.automations import EventTrigger, Posture

    return EventTrigger(
        expect={WAITING_EVENT},
        match={"prefect.resource.id": "sortie.draft.*"},
        for_each={"prefect.resource.id"},
        posture=Posture.Reactive,
        threshold=1,
        within=timedelta(0),
    )


def waiting_automation(block_document_id: str) -> Any:
    """Notify once per waiting version of a ``dispatch-mission``/``daily-patrol`` run."""
    from prefect.automations import AutomationCore, SendNotification

    return AutomationCore(
        name=WAITING_AUTOMATION,
        description="A sortie run waits for an approval: tell the approvers (flows/orchestration/notify.py).",
        trigger=_waiting_trigger(),
        actions=[SendNotification(block_document_id=block_document_id, subject=_WAITING_SUBJECT, body=_WAITING_BODY)],
    )


def deadline_automation(block_document_id: str, *, window_s: int = 1800, warn_before_s: int = 300) -> Any:
    """Remind when a run has waited ``window_s - warn_before_s`` seconds with no decision (no other state event)."""
    from prefect.automations import AutomationCore, SendNotification
    from prefect.events.schemas.automations import EventTrigger, Posture

    after_s = max(10, int(window_s) - int(warn_before_s))  # Prefect's floor for a proactive window is 10 s
    body = _DEADLINE_BODY.replace("{minutes}", str(round(after_s / 60))).replace(
        "{left}", str(max(0, round((int(window_s) - after_s) / 60))))
    trigger = EventTrigger(
        after={WAITING_EVENT},
        expect={ENDED_EVENT},  # the end of the wait (decided, expired, refused, cancelled) cancels the reminder
        match={"prefect.resource.id": "sortie.draft.*"},
        for_each={"prefect.resource.id"},
        posture=Posture.Proactive,
        threshold=1,
        within=timedelta(seconds=after_s),
    )
    return AutomationCore(
        name=DEADLINE_AUTOMATION,
        description="A sortie run has waited close to its approval deadline: remind the approvers.",
        trigger=trigger,
        actions=[SendNotification(block_document_id=block_document_id, subject=_DEADLINE_SUBJECT, body=body)],
    )


def intrusion_automation(block_document_id: str) -> Any:
    """Notify on every ``sortie.fleet.intrusion`` (``flows.authority.prefect_notices``: the server's hub saw forged
    traffic on a drone's link, or something else took control of the vehicle and the drone is held)."""
    from prefect.automations import AutomationCore, SendNotification
    from prefect.events.schemas.automations import EventTrigger, Posture

    from flows.authority.prefect_notices import FLEET_INTRUSION_EVENT

    return AutomationCore(
        name=INTRUSION_AUTOMATION,
        description="A drone's link saw an intrusion: tell the operators (flows/authority/prefect_notices.py).",
        trigger=EventTrigger(expect={FLEET_INTRUSION_EVENT}, match={"prefect.resource.id": "sortie.drone.*"},
                             posture=Posture.Reactive, threshold=1, within=timedelta(0)),
        actions=[SendNotification(block_document_id=block_document_id, subject=_INTRUSION_SUBJECT,
                                  body=_INTRUSION_BODY)],
    )


def save_webhook_block(url: str, *, name: str = BLOCK_NAME) -> str:
    """A webhook notification block posting ``{"subject", "body", "name"}`` as JSON; overwritten if it exists."""
    from prefect.blocks.notifications import CustomWebhookNotificationBlock

    block = CustomWebhookNotificationBlock(
        name=name, url=url, method="POST",
        json_data={"subject": "{{subject}}", "body": "{{body}}", "name": "{{name}}"},
    )
    return str(block.save(name, overwrite=True))


def _existing_block_id(name: str) -> str:
    """The id of a notification block the operator made (``<type-slug>/<name>`` or a bare name)."""
    from prefect import get_client
    from prefect.exceptions import ObjectNotFound

    from planner.errors import NotFound

    slug, _, bare = name.rpartition("/")
    with get_client(sync_client=True) as client:
        if slug:
            try:
                return str(client.read_block_document_by_name(bare, slug, include_secrets=False).id)
            except ObjectNotFound:
                raise NotFound(f"no {slug} block named {bare!r} on this Prefect server") from None
        docs = [d for d in client.read_block_documents(include_secrets=False) if d.name == bare]
    if len(docs) != 1:
        raise NotFound(f"{'no' if not docs else 'more than one'} block named {bare!r}: give <block-type-slug>/{bare}")
    return str(docs[0].id)


def _replace_automation(automation: Any) -> str:
    """Create ``automation``, deleting every earlier automation of the same name (setup is idempotent)."""
    from prefect import get_client

    with get_client(sync_client=True) as client:
        for old in client.read_automations_by_name(automation.name):
            client.delete_automation(old.id)
        return str(client.create_automation(automation))


def ensure_notifications(
    *, webhook: str | None = None, block: str | None = None, window_s: int = 1800, warn_before_s: int = 300,
    deadline: bool = True,
) -> NotifySetup:
    """The notification block and the automations (approval needed, deadline close, fleet intrusion) on the current
    Prefect API (idempotent)."""
    from planner.errors import InvalidArgument

    if (webhook is None) == (block is None):
        raise InvalidArgument("give exactly one of --webhook URL and --block NAME")
    if not 0 < int(warn_before_s) < int(window_s):
        raise InvalidArgument(f"--warn-before-s must be between 0 and the window ({window_s} s), not {warn_before_s}")
    if webhook is not None:
        if not webhook.startswith(("http://", "https://")):
            raise InvalidArgument(f"--webhook must be an http(s) URL, not {webhook!r}")
        block_id, block_name = save_webhook_block(webhook), f"custom-webhook/{BLOCK_NAME}"
    else:
        block_id, block_name = _existing_block_id(str(block)), str(block)
    autos = [waiting_automation(block_id), intrusion_automation(block_id)]
    if deadline:
        autos.append(deadline_automation(block_id, window_s=window_s, warn_before_s=warn_before_s))
    return NotifySetup(block_id, block_name, {a.name: _replace_automation(a) for a in autos})
