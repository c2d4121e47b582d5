"""``sortie pending`` (what waits for approval, for whom, until when) and ``sortie notify setup``.

``pending`` asks the authority (``flows.authority``): the same list from the
local ledger, or the server's ``GET /v1/pending`` with ``SORTIE_SERVER``
(tenant-scoped by the token; ``--as``/``--world``/``--now`` refused there like
everywhere). ``--publish`` also writes it to the Prefect
table artifact ``pending-approvals`` that waiting runs refresh.

``notify setup`` makes the Prefect notification block and the two
automations of ``flows.orchestration.notify`` on ``PREFECT_API_URL``; running
it again replaces them (idempotent).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from flows.cli.app import AsOpt, JsonOpt, NowOpt, WorldOpt, app, console, run
from planner.errors import InvalidArgument

__all__ = ["pending_cmd", "notify_setup"]

notify_app = typer.Typer(help="Tell approvers when a run waits (Prefect automations + a notification block).",
                         no_args_is_help=True)
app.add_typer(notify_app, name="notify")


def _render_pending(out: dict[str, Any]) -> None:
    from rich.table import Table

    from flows.authority.views import pending_rows

    rows = pending_rows(out)
    if not rows:
        console.print(f"Nothing waits for approval (at {out.get('now') or out.get('server_time')}).")
        return
    table = Table(title=f"Waiting for approval: {len(rows)} (at {out.get('now') or out.get('server_time')})")
    for col in rows[0]:
        # the draft id is what the operator types next (`sortie approve ID`): never folded across lines
        table.add_column(col, overflow="fold", no_wrap=col == "draft", min_width=len(rows[0]["draft"]) if col == "draft" else None)
    for r in rows:
        table.add_row(*(str(v) for v in r.values()))
    console.print(table)
    if out.get("artifact_key"):
        console.print(f"Published to the Prefect artifact {out['artifact_key']}.")


@app.command("pending")
def pending_cmd(
    as_user: AsOpt = None,
    world: WorldOpt = None,
    now: NowOpt = None,
    publish: Annotated[bool, typer.Option("--publish", help="Also publish the Prefect table artifact pending-approvals.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """What waits for approval, per tenant: who may approve, the deadline and the time left."""

    def body() -> dict[str, Any]:
        from flows.authority.choice import authority

        out = authority("sortie pending", as_user=as_user, world=world, now=now).pending()
        if publish:
            from flows.authority.prefect_api import prefect_api_url
            from flows.orchestration.pending_board import publish_pending_board

            if not prefect_api_url():
                raise InvalidArgument("--publish needs PREFECT_API_URL (environment or Prefect profile)")
            out["artifact_key"] = publish_pending_board(out)
        return out

    run(body, as_json, _render_pending)


@notify_app.command("setup")
def notify_setup(
    webhook: Annotated[str | None, typer.Option("--webhook", help="POST {subject, body, name} as JSON to this URL.")] = None,
    block: Annotated[str | None, typer.Option("--block", help="Use this existing notification block instead (<type-slug>/<name>, e.g. email/ops).")] = None,
    window_s: Annotated[int, typer.Option("--window-s", help="The approval window the runs use (prefect.yaml: approval_window_s).")] = 1800,
    warn_before_s: Annotated[int, typer.Option("--warn-before-s", help="Remind this long before a waiting draft expires.")] = 300,
    no_deadline: Annotated[bool, typer.Option("--no-deadline", help="Only notify when a run starts waiting.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Create (or replace) the notification block and the 'approval needed' / 'deadline close' automations."""

    def body() -> dict[str, Any]:
        from flows.authority.prefect_api import prefect_api_url
        from flows.orchestration.notify import ensure_notifications

        api = prefect_api_url()
        if not api:
            raise InvalidArgument("PREFECT_API_URL is not set (environment or Prefect profile): the automations live on "
                                  "a Prefect server (`uv run prefect server start`)")
        done = ensure_notifications(webhook=webhook, block=block, window_s=window_s, warn_before_s=warn_before_s,
                                    deadline=not no_deadline)
        return done.to_dict() | {"api_url": api}

    def render(out: dict[str, Any]) -> None:
        console.print(f"Notifications through block {out['block']} on {out['api_url']}:")
        for name, ident in out["automations"].items():
            console.print(f"  automation {name!r} ({ident})")

    run(body, as_json, render)
