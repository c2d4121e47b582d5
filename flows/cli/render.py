"""How the workflow commands print a result: drafts, lists, dispatches, launches, logs, diffs.

Each ``render_*`` takes the JSON-able dict the command returned (the same in
local and server mode) and prints it for a person; ``--json`` skips these.
"""

from __future__ import annotations

from typing import Any

from flows.cli.app import console

__all__ = ["render_draft", "render_list", "render_dispatch", "render_log", "render_diff", "render_request",
           "render_launch"]



def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100.0 * float(x):.0f} %"


def _render_drones(d: dict[str, Any]) -> None:
    """The tenant's drones that could fly the request (``*``: this version flies it) and why each other could not."""
    from flows.drone_choice import drone_rows

    rows = drone_rows(d)
    if not rows:
        return
    could = [r.drone_id + ("*" if r.flies else "") for r in rows if r.eligible]
    console.print(f"could fly it: {', '.join(could) or 'none'}" + (" (* flies this plan)" if any(r.flies for r in rows) else ""),
                  markup=False, highlight=False)
    for r in rows:
        if not r.eligible:
            console.print(f"  not {r.drone_id}: {'; '.join(r.why_not)}", markup=False, highlight=False)


def render_draft(d: dict[str, Any]) -> None:
    head = f"[bold]{d['draft_id']}[/] v{d['version']}  [bold]{d['status']}[/]  verdict {d['verdict']}"
    if d.get("plan_hash"):
        head += f"  plan {d['plan_hash'][:12]}…"
    if d.get("created") is False:
        head += "  [dim](already recorded)[/]"
    console.print(head, highlight=False)
    console.print(
        f"{d.get('mission_type') or '?'} for {d.get('region_id') or 'the selected area'} "
        f"({d['tenant']}), requested by {d['requested_by']}; planned for {d.get('planned_for') or '–'}",
        highlight=False,
        markup=False,
    )
    from flows.safe_text import approver_view  # integrity hook: where the plan came from

    seen = approver_view(d)
    console.print(f"request (as written): {seen['request_text']}", markup=False, highlight=False)
    answered = seen["clarifications_answered"]
    console.print(f"read by: {seen['extractor']}; clarifications answered: {'none' if not answered else len(answered)}"
                  + (f" (request {d['request_id']})" if d.get("request_id") else ""), markup=False, highlight=False)
    for line in answered:
        console.print(f"  {line}", markup=False, highlight=False)
    cov = d.get("coverage")
    if cov:
        console.print(
            f"coverage: images {cov['reached']:.1%} of the free area; target {cov['target']:.1%} "
            + ("met" if cov["met"] else "NOT met (the map shows what stays dark)"),
            markup=False, highlight=False,
        )
    if d.get("sorties"):
        from rich.table import Table

        t = Table(show_edge=False, header_style="bold")
        for col in ("#", "drone", "dock", "distance", "duration", "energy", "battery"):
            t.add_column(col, justify="right" if col not in ("drone", "dock") else "left")
        for s in d["sorties"]:
            t.add_row(
                str(s["index"]),
                s["drone"],
                s["dock"],
                f"{s['distance_m'] / 1000:.2f} km",
                f"{s['duration_s'] / 60:.1f} min",
                f"{s['energy_wh']:.1f} Wh",
                _pct(s["battery_fraction"]),
            )
        console.print(t)
    for f in d.get("findings") or []:
        colour = "red" if f.get("severity") == "block" else "yellow"
        where = "" if f.get("sortie_index") is None else f" (sortie {f['sortie_index']})"
        console.print(f"[{colour}]{f.get('severity', '?').upper()}[/] {f.get('rule_id')}{where}: ", end="", highlight=False)
        console.print(f.get("message_en", ""), markup=False, highlight=False)
    for m in d.get("missing") or []:
        console.print(f"[red]missing[/] {m}", highlight=False)
    _render_drones(d)
    for name, path in (d.get("files") or {}).items():
        console.print(f"  {name}: {path}", markup=False, highlight=False)
    if len(d.get("versions") or []) > 1:
        console.print(f"versions: {', '.join(str(v) for v in d['versions'])}", highlight=False)
    notes = d.get("notes") or {}
    for a in notes.get("approvals") or []:
        console.print(
            f"  {a['decision'].lower()} by {a['approver']} at {a['created_time']}"
            + (f", expires {a['expires_time']}" if a.get("expires_time") else "")
            + (f": {a['comment']}" if a.get("comment") else ""),
            markup=False,
            highlight=False,
        )
    for r in notes.get("refused") or []:
        console.print(
            f"  refused: {r['command']} by {r['actor']} ({r.get('identity') or '?'}"
            + (f", {r['via']}" if r.get("via") else "") + f") at {r['time']}: {r['code']}"
            + (f" {r['why']}" if r.get("why") else ""),
            markup=False,
            highlight=False,
        )
    for x in notes.get("dispatches") or []:
        console.print(f"  dispatch {x['idempotency_key'][:12]}… {x['status']}", markup=False, highlight=False)
    if d["status"] == "DRAFT" and d["verdict"] != "block":
        console.print(f"[dim]next: sortie approve {d['draft_id']} --version {d['version']}"
                      + (" --as APPROVER" if d.get("mode", "local") == "local" else "") + "[/]")


def render_list(d: dict[str, Any]) -> None:
    drafts = d["drafts"]
    if not drafts:
        console.print("no drafts yet: sortie plan TEXT --region ID")
        return
    from rich.table import Table

    t = Table(show_edge=False, header_style="bold")
    for col in ("draft", "v", "status", "verdict", "mission", "region", "by", "created"):
        t.add_column(col)
    for x in drafts:
        t.add_row(
            x["draft_id"], str(x["version"]), x["status"], x["verdict"], x.get("mission_type") or "–",
            x.get("region_id") or "area", x["requested_by"], x["created_time"],
        )
    console.print(t)


def render_dispatch(d: dict[str, Any]) -> None:
    console.print(
        f"[bold]{d['draft_id']}[/] v{d['version']} dispatch [bold]{d['status']}[/] "
        f"(key {d['idempotency_key'][:12]}…){'' if d['first'] else ' [dim](earlier outcome)[/]'}",
        highlight=False,
    )
    for c in d.get("checks") or []:
        console.print(f"  ✓ {c}", markup=False, highlight=False)
    console.print(d["message"], markup=False, highlight=False)
    console.print(f"draft is {d['draft_status']}", highlight=False)


def render_log(d: dict[str, Any]) -> None:
    for e in d["events"]:
        console.print(
            f"{e['event_time']}  v{e['version']}  {e['from_state'] or '∅'} → {e['to_state']}  by {e['actor']}: {e['reason']}",
            markup=False,
            highlight=False,
        )
    for x in d["dispatches"]:
        console.print(
            f"dispatch v{x['version']} {x['status']} key {x['idempotency_key'][:12]}… attempts {x['attempts']}",
            markup=False,
            highlight=False,
        )


def render_diff(d: dict[str, Any]) -> None:
    console.print(f"[bold]{d['draft_id']}[/] v{d['from']} → v{d['to']}", highlight=False)
    for k, ch in d["changes"].items():
        console.print(f"  {k}: {ch['from']} → {ch['to']}", markup=False, highlight=False)
    for s in d["sorties_added"]:
        console.print(f"  + sortie {s['index']} {s['drone']} {s['distance_m']:.0f} m", markup=False, highlight=False)
    for s in d["sorties_removed"]:
        console.print(f"  - sortie {s['index']} {s['drone']} {s['distance_m']:.0f} m", markup=False, highlight=False)
    for s in d["sorties_changed"]:
        console.print(
            f"  ~ sortie {s['sortie']}: {s['from']['distance_m']:.0f} m → {s['to']['distance_m']:.0f} m",
            markup=False,
            highlight=False,
        )
    for f in d["findings_added"]:
        console.print(f"  + finding {f[0]}", markup=False, highlight=False)
    for f in d["findings_removed"]:
        console.print(f"  - finding {f[0]}", markup=False, highlight=False)


def render_request(d: dict[str, Any]) -> None:
    """An open request: its state, the words, the open questions (or the draft it planned), every answer."""
    from flows.safe_text import answered_line

    console.print(f"[bold]{d['request_id']}[/]  [bold]{d['state']}[/]  turn {d['turn']}  open until {d['expires_time']}",
                  highlight=False)
    console.print(f"request (as written): {d['request_text']}", markup=False, highlight=False)
    console.print(f"requested by {d['requested_by']} for {d.get('region_id') or 'the selected area'} ({d['tenant']}) "
                  f"at {d['created_time']}; read by {d.get('extractor') or '?'}", markup=False, highlight=False)
    for a in d.get("answers") or []:
        console.print(f"  answered: {answered_line(a)}", markup=False, highlight=False)
    if d["state"] == "OPEN":
        for q in d.get("questions") or []:
            console.print(f"  [{q['id']}] {q['text']}", markup=False, highlight=False)
        console.print(f"[dim]next: {d.get('answer_with') or 'sortie plan --continue ' + d['request_id']}[/]")
    elif d.get("draft_id"):
        console.print(f"planned as {d['draft_id']} (sortie show {d['draft_id']})", markup=False, highlight=False)


def render_launch(d: dict[str, Any]) -> None:
    """A launch: the state it left, then per vehicle its pre-flight checks and the steps of its sequence."""
    console.print(f"{d['draft_id']} v{d['version']}: {d['state']} — {d['message']}", markup=False, highlight=False)
    for v in d.get("vehicles", []):
        console.print(f"  {v['drone_id']}: {v['status']}", markup=False, highlight=False)
        for c in v.get("checks", []):
            console.print(f"    {'ok ' if c['ok'] else 'NO '} {c['name']}: {c['detail']}", markup=False, highlight=False)
        for s in v.get("steps", []):
            console.print(f"    step {s['name']}: {s['outcome']} ({s.get('result') or '-'})", markup=False,
                          highlight=False)
