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
    """One line per waiting version under its tenant, who may approve on the line below: it fits an 80-column
    terminal (a bordered table folded the draft ids, names and deadlines there, issue 39); the draft id, what the
    operator types next, is never cut."""
    import textwrap

    from flows.authority.views import pending_rows

    rows = pending_rows(out)
    at = out.get("now") or out.get("server_time")
    if not rows:
        console.print(f"Nothing waits for approval (at {at}).", markup=False, highlight=False)
        return
    day = str(at)[:10]
    for r in rows:  # the date once, in the title, when the deadline is on the same day
        r["deadline"] = r["deadline"][11:] if r["deadline"][:10] == day else r["deadline"]
    console.print(f"Waiting for approval: {len(rows)} (at {str(at)[:16].replace('T', ' ')}{str(at)[19:]})",
                  markup=False, highlight=False)
    cols = ("draft", "region", "requested by", "time left", "deadline")
    width = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    line = "  ".join(c.ljust(width[c]) for c in cols).rstrip()
    text_width = max(40, min(int(getattr(console, "width", 80) or 80), 200))
    tenant = None
    for r in rows:
        if r["tenant"] != tenant:
            tenant = r["tenant"]
            console.print(f"\n{tenant}\n  {line}", markup=False, highlight=False)
        console.print("  " + "  ".join(str(r[c]).ljust(width[c]) for c in cols).rstrip(), markup=False,
                      highlight=False, soft_wrap=True)
        for part in textwrap.wrap(f"may approve: {r['who may approve']}", width=text_width - 6,
                                  break_on_hyphens=False):
            console.print(f"      {part}", markup=False, highlight=False)
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
