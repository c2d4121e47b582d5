"""Approval needed → someone is told: Prefect Automations that send through a notification block.

Nothing in the flows has to remember to notify: the Prefect server itself emits
a ``prefect.flow-run.Paused`` (a local run) or ``prefect.flow-run.Suspended``
(a deployed run) event whenever a run of ``dispatch-mission`` or
``daily-patrol`` starts waiting for its approval, and its triggers service
evaluates Automations on those events. Two Automations are declared here:

``sortie: approval needed``
    reactive, once per waiting run and per wait (a refused input that makes the
    run wait again notifies again);
``sortie: approval deadline close``
    proactive: a run that started waiting and saw no other state event for
    ``window - warn_before`` seconds (default 1800 - 300) gets a reminder that
    its draft expires soon. A re-wait after a refused input restarts the
    count, so the reminder can come late, never early; the ledger's deadline in
    ``sortie pending`` is the authority.

Both send through one Prefect notification block. ``ensure_notifications``
creates (or replaces: it is idempotent) a ``CustomWebhookNotificationBlock``
posting ``{"subject", "body", "name"}`` as JSON to a URL, or uses any
notification block the operator already made in the UI (e-mail, Slack, Teams…).
The message templates are Jinja, rendered by the server with the run, its
flow and the event (``flow_run.tags`` carries ``draft:<id>:v<n>``).
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
    "WAIT_EVENTS",
    "NotifySetup",
    "waiting_automation",
    "deadline_automation",
    "save_webhook_block",
    "ensure_notifications",
]

BLOCK_NAME = "sortie-approvals"
GATED_FLOWS = ("dispatch-mission", "daily-patrol")
WAITING_AUTOMATION = "sortie: approval needed"
DEADLINE_AUTOMATION = "sortie: approval deadline close"
#: The state events of a run that starts waiting (paused in its process, or suspended without one).
WAIT_EVENTS = ("prefect.flow-run.Paused", "prefect.flow-run.Suspended")

_WHICH = (
    "{% for t in flow_run.tags %}{% if t.startswith('draft:') and ':v' in t %}{{ t[6:] }}{% endif %}{% endfor %}"
)
_WAITING_SUBJECT = "sortie: approval needed ({{ flow.name }} {{ flow_run.name }})"
_WAITING_BODY = (
    "Run {{ flow_run.name }} of {{ flow.name }} waits for approval of draft " + _WHICH + ".\n"
    "Decide in the Prefect UI (Resume on the run: {{ flow_run|ui_url }}) or with "
    "`sortie approve <draft> --version <n> --as <you>`.\n"
    "Everything that waits, with approvers and deadlines: `sortie pending`."
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


def _waiting_trigger() -> Any:
    from prefect.events.schemas.automations import EventTrigger, Posture

    return EventTrigger(
        expect=set(WAIT_EVENTS),
        match={"prefect.resource.id": "prefect.flow-run.*"},
        match_related={"prefect.resource.role": "flow", "prefect.resource.name": list(GATED_FLOWS)},
        for_each={"prefect.resource.id"},
        posture=Posture.Reactive,
        threshold=1,
        within=timedelta(0),
    )


def waiting_automation(block_document_id: str) -> Any:
    """Notify once per wait of a ``dispatch-mission``/``daily-patrol`` run."""
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
        after=set(WAIT_EVENTS),
        expect={"prefect.flow-run.*"},  # any later state of the run (resumed, ended) cancels the reminder
        match={"prefect.resource.id": "prefect.flow-run.*"},
        match_related={"prefect.resource.role": "flow", "prefect.resource.name": list(GATED_FLOWS)},
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
    """The notification block and the two automations on the current Prefect API (idempotent)."""
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
    autos = [waiting_automation(block_id)]
    if deadline:
        autos.append(deadline_automation(block_id, window_s=window_s, warn_before_s=warn_before_s))
    return NotifySetup(block_id, block_name, {a.name: _replace_automation(a) for a in autos})
