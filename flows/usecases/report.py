"""The report of one draft version: what was planned, approved, dispatched, flown, and what went wrong.

``build_report`` gathers it from the ledger (draft, findings, approvals,
dispatch, events, monitor alerts) and the recorded flight
(``flows.usecases.monitoring.load_flight``) and renders one Markdown text an inspector can
file; the same text is the Prefect artifact (``markdown_for_artifact`` embeds
the map as a ``data:`` URI instead of a file link). ``write_report`` puts
``report.md`` and ``flown.png`` (the plan's map picture with the flown track
over it) next to the version's other files.

Coverage "actually reached" is measured on the flown track, not taken from
the vehicle's word: a lane or survey leg counts the share of its planned
line within ``REACH_TOLERANCE_M`` of the track, an inspection point counts
when the track passed within that distance of it.

Vehicle STATUSTEXT messages are quoted as data in a code block: whatever
they say, they were logged and not acted on.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Mapping
from typing import Any


from flows.usecases.flown_work import REACH_TOLERANCE_M, work_flown
from flows.usecases.grounds import Grounds
from flows.usecases.monitoring import load_flight
from planner.errors import SortieError
from planner.plan import Plan, plan_from_dict

__all__ = [
    "REACH_TOLERANCE_M",
    "Report",
    "build_report",
    "write_report",
    "coverage_reached",
    "markdown_for_artifact",
]



@dataclass
class Report:
    """One version's report: the Markdown, the numbers behind it, and the map picture."""

    draft_id: str
    version: int
    state: str
    markdown: str
    data: dict[str, Any]
    map_png: bytes | None = None
    files: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"draft_id": self.draft_id, "version": self.version, "state": self.state, "markdown": self.markdown,
                "data": self.data, "files": dict(self.files)}


def _md(text: Any) -> str:
    """Plain text safe in a Markdown table cell (no pipes, no newlines, no HTML)."""
    s = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("\r", " ")
    return s.replace("<", "&lt;").replace(">", "&gt;").replace("`", "'")


def _num(x: Any, fmt: str = ".0f", unit: str = "") -> str:
    if x is None:
        return "–"
    return f"{x:{fmt}}{unit}"


def coverage_reached(plan: Plan, tracks: Mapping[int | str, list[tuple[float, float, float]]], *,
                     tolerance_m: float = REACH_TOLERANCE_M) -> dict[str, Any]:
    """Per kind of target (lanes, survey sweeps, inspection points): planned vs reached on the flown tracks.

    ``tracks`` maps a sortie's index → its own (t_s, lon, lat) positions, or a drone id → its track; each sortie is
    measured on its own track (else its drone's) by the one measure the end of a flight is judged with
    (``flows.usecases.flown_work``).
    """
    own = {s.index: tracks.get(s.index, tracks.get(s.drone_id, [])) for s in plan.sorties}
    work = work_flown(plan, own, tolerance_m=tolerance_m)
    work.pop("sorties")
    return work


def _sortie_tracks(flight: dict[str, Any] | None) -> dict[int | str, list[tuple[float, float, float]]]:
    """Each flown sortie's own track by its index (a drone flies several sorties: measuring each on the drone's
    last track judged a fully flown three-sortie survey 36 % flown)."""
    if not flight:
        return {}
    return {f.get("sortie_index", 0): [(p[0], p[1], p[2]) for p in f.get("track", [])]
            for f in flight.get("flights", [])}


def _drone_tracks(flight: dict[str, Any] | None) -> dict[str, list[tuple[float, float]]]:
    """Each drone's track over all its sorties, in order (for the map)."""
    out: dict[str, list[tuple[float, float]]] = {}
    for f in sorted((flight or {}).get("flights", []), key=lambda f: f.get("sortie_index", 0)):
        out.setdefault(f["drone_id"], []).extend((p[1], p[2]) for p in f.get("track", []))
    return out


def build_report(draft_id: str, version: int | None = None, *, with_map: bool = True, grounds: Grounds) -> Report:
    """The report of one version (the latest when ``version`` is None), from the authority's ledger and the flight
    record in its home."""
    ledger = grounds.ledger
    rec = ledger.get_draft(draft_id, version)
    version = rec.version
    plan = plan_from_dict(rec.plan) if rec.plan else None
    approvals = ledger.approvals(draft_id, version)
    events = [e for e in ledger.events(draft_id) if e.version == version]
    dispatch = next((d for d in ledger.dispatches(draft_id) if d.version == version), None)
    flight = load_flight(draft_id, version, ledger.path.parent)
    launched = _load_launch(draft_id, version, ledger.path.parent)
    flights = (flight or {}).get("flights", [])
    tracks = _drone_tracks(flight)
    coverage = coverage_reached(plan, _sortie_tracks(flight)) if plan is not None and flight else None

    png: bytes | None = None
    if with_map and plan is not None:
        try:
            from planner.output.mapimage import render_plan_png

            png = render_plan_png(plan, grounds.world(rec.world_dir), flown_wgs84=tracks or None)
        except SortieError:
            png = None

    alerts = [a for f in flights for a in f.get("alerts", [])]
    texts = [dict(t, drone_id=f["drone_id"]) for f in flights for t in f.get("texts", [])]
    data: dict[str, Any] = {
        "draft_id": draft_id,
        "version": version,
        "state": rec.state,
        "plan_hash": rec.plan_hash,
        "request_text": rec.request_text,
        "requested_by": rec.requested_by,
        "tenant": rec.tenant,
        "region_id": rec.region_id,
        "findings": rec.findings,
        "approvals": [
            {"approver": a.approver, "decision": a.decision, "time": a.created_time, "expires": a.expires_time,
             "comment": a.comment, "plan_hash": a.plan_hash}
            for a in approvals
        ],
        "dispatch": None if dispatch is None else {
            "status": dispatch.status, "actor": dispatch.actor, "time": dispatch.created_time,
            "attempts": dispatch.attempts, "message": (dispatch.result or {}).get("message", ""),
            "uploads": [
                {k: u.get(k) for k in ("drone_id", "link", "dialect", "status", "counts", "verified_by_download",
                                       "params_advised", "detail")}
                for u in (dispatch.result or {}).get("uploads", [])
            ],
            "not_uploaded": (dispatch.result or {}).get("not_uploaded", []),
        },
        "launch": launched,
        "events": [
            {"time": e.event_time, "actor": e.actor, "from": e.from_state, "to": e.to_state, "reason": e.reason}
            for e in events
        ],
        "flown": None if flight is None else {
            "outcome": flight.get("outcome"), "state": flight.get("state"), "reason": flight.get("reason"),
            "work": flight.get("work"), "not_flown": flight.get("not_flown") or {},
            "energy_guard": flight.get("energy_guard"),
            "drones": [_flown_row(f, plan, _planned_seqs(flight, f)) for f in flights],
        },
        "operator_stops": [
            {"time": e.event_time, "actor": e.actor, "from": e.from_state, "to": e.to_state, "reason": e.reason}
            for e in events if (e.from_state, e.to_state) in _STOP_STEPS or e.to_state == "CANCELLED"
        ],
        "coverage": coverage,
        "alerts": alerts,
        "vehicle_messages": texts,
    }
    return Report(draft_id, version, rec.state, _render(data, plan), data, png)


#: Ledger steps that an operator's cancel, pause/resume or recall writes (flows.usecases.control).
_STOP_STEPS = frozenset({("IN_FLIGHT", "IN_FLIGHT"), ("IN_FLIGHT", "RECALLING"), ("RECALLING", "RECALLING"),
                         ("RECALLING", "RECALLED"), ("RECALLING", "ABORTED"), ("RECALLING", "SUCCEEDED")})


def _planned_seqs(flight: dict[str, Any], f: dict[str, Any]) -> list[int]:
    """The navigation items the plan gave this vehicle (the monitor's expectation), in order."""
    for e in flight.get("expectations", []):
        if e.get("drone_id") == f.get("drone_id") and e.get("sortie_index") == f.get("sortie_index"):
            return [int(s) for s in e.get("nav_seqs", [])]
    return []


def _flown_row(f: dict[str, Any], plan: Plan | None, planned_seqs: list[int] | None = None) -> dict[str, Any]:
    sortie = None if plan is None else next((s for s in plan.sorties if s.index == f.get("sortie_index")), None)
    used_pct = None
    if f.get("battery_start_pct") is not None and f.get("battery_pct") is not None:
        used_pct = f["battery_start_pct"] - f["battery_pct"]
    return {
        "drone_id": f["drone_id"],
        "sortie_index": f.get("sortie_index"),
        "status": f.get("status"),
        "reason": f.get("reason", ""),
        "planned": None if sortie is None else {
            "distance_m": sortie.distance_m, "duration_s": sortie.duration_s, "energy_wh": sortie.energy_wh,
            "battery_pct": round(sortie.battery_fraction * 100.0, 1),
        },
        "flown": {
            "distance_m": f.get("flown_distance_m"), "duration_s": f.get("duration_s"), "energy_wh": f.get("energy_wh"),
            "battery_pct": None if used_pct is None else round(used_pct, 1),
            "items_reached": len(set(f.get("reached", []))), "items_total": f.get("nav_total"),
            "battery_end_pct": f.get("battery_pct"),
        },
        "items_flown": sorted(set(f.get("reached", []))),
        "items_not_flown": [s for s in (planned_seqs or []) if s not in set(f.get("reached", []))],
        "pauses": f.get("pauses", []),
        "recall": f.get("recall"),
    }


def _render(d: dict[str, Any], plan: Plan | None, *, image: str = "flown.png") -> str:
    out: list[str] = []
    add = out.append

    def heading(title: str) -> None:
        out.extend(("", f"## {title}", ""))

    add(f"# Mission report: draft {d['draft_id']} v{d['version']}")
    add("")
    add(f"- **State:** {d['state']}")
    flown = d.get("flown")
    ended = (flown or {}).get("state") or (flown or {}).get("outcome")
    label = {"ABORTED": "Aborted", "SUCCEEDED": "Completed", "RECALLED": "Recalled", "INCOMPLETE": "Incomplete",
             "LINK_LOST": "Link lost"}.get(str(ended))
    if flown and label:
        named = flown.get("outcome")
        add(f"- **{label}:** " + (f"{named}: " if named not in (None, ended) else "") + _md(flown.get("reason", "")))
    add(f"- **Request:** {_md(d['request_text'])} (by {_md(d['requested_by'])}, tenant {_md(d['tenant'])}, "
        f"region {_md(d['region_id'] or '–')})")
    add(f"- **Plan hash:** `{d['plan_hash'] or '–'}`")
    if plan is not None:
        add(f"- **Mission:** {plan.mission_type}, planned for {plan.planned_for.isoformat(timespec='minutes')}, "
            f"{len(plan.sorties)} sortie(s)")
    heading("Planned vs flown")
    if not flown:
        add("Not flown yet: no flight has been monitored for this version.")
    else:
        add("| drone | sortie | status | distance m (plan / flown) | duration s (plan / flown) | "
            "energy Wh (plan / flown) | battery % used (plan / flown) | items reached |")
        add("|---|---|---|---|---|---|---|---|")
        for r in flown["drones"]:
            p, f = r["planned"] or {}, r["flown"]
            add(f"| {_md(r['drone_id'])} | {r['sortie_index']} | {r['status']} | "
                f"{_num(p.get('distance_m'))} / {_num(f['distance_m'])} | "
                f"{_num(p.get('duration_s'))} / {_num(f['duration_s'])} | "
                f"{_num(p.get('energy_wh'), '.1f')} / {_num(f['energy_wh'], '.1f')} | "
                f"{_num(p.get('battery_pct'), '.1f')} / {_num(f['battery_pct'], '.1f')} | "
                f"{f['items_reached']} of {f['items_total']} |")
        for r in flown["drones"]:
            if r["status"] != "SUCCEEDED":
                add("")
                add(f"**{_md(r['drone_id'])}: {r['status']}**: {_md(r['reason'])}")
        if any(r["items_not_flown"] or r["pauses"] for r in flown["drones"]):
            add("")
            add("### What was flown and what was not")
            add("")
            for r in flown["drones"]:
                flown_items = ", ".join(map(str, r["items_flown"])) or "none"
                left = ", ".join(map(str, r["items_not_flown"])) or "none"
                add(f"- {_md(r['drone_id'])}: flown items {flown_items}; **not flown: {left}**")
                for pz in r["pauses"]:
                    add(f"  - {pz['what']} at t={pz['t_s']:g} s, item {pz.get('seq')} (mode {pz.get('mode')})")
                if r.get("recall"):
                    rc = r["recall"]
                    add(f"  - recall took effect at t={rc['t_s']:g} s, item {rc.get('seq')}, mode {rc.get('mode')}")
    stops = d.get("operator_stops") or []
    if stops:
        heading("Stopped by an operator")
        for e in stops:
            add(f"- {e['time']} {_md(e['actor'])}: {e['from']} → {e['to']}: {_md(e['reason'])}")
    cov = d.get("coverage")
    if cov:
        add("")
        add(f"### Coverage actually reached (flown track within {cov['tolerance_m']:g} m)")
        add("")
        lanes, pts, sw = cov["lanes"], cov["points"], cov["sweeps"]
        if lanes["planned"]:
            add(f"- Lanes: {lanes['reached']} of {lanes['planned']} patrolled in full "
                f"({lanes['reached_m']:.0f} of {lanes['planned_m']:.0f} m)"
                + (f"; not reached: {_md(', '.join(lanes['missed'][:12]))}" + (" …" if len(lanes['missed']) > 12 else "")
                   if lanes["missed"] else ""))
        if sw["planned_m"]:
            share = sw["reached_m"] / sw["planned_m"] if sw["planned_m"] else 0.0
            add(f"- Survey sweeps: {sw['reached_m']:.0f} of {sw['planned_m']:.0f} m flown ({share:.0%})"
                + (f"; planned area coverage {plan.coverage_fraction:.0%}" if plan and plan.coverage_fraction else ""))
        if pts["planned"]:
            add(f"- Points: {pts['reached']} of {pts['planned']} inspected"
                + (f"; not reached: {_md(', '.join(pts['missed'][:12]))}" if pts["missed"] else ""))
        if plan is not None and plan.unserved:
            add(f"- Not planned at all (unserved): {len(plan.unserved)} target(s), e.g. "
                f"{_md(plan.unserved[0].target_id)}: {_md(plan.unserved[0].reason)}")
    heading("Findings at planning")
    if not d["findings"]:
        add("None: every rule passed.")
    else:
        add("| severity | rule | message |")
        add("|---|---|---|")
        for f in d["findings"]:
            message = f.get("message_en") or f.get("message", "")
            add(f"| {_md(f.get('severity', ''))} | {_md(f.get('rule_id', ''))} | {_md(message)} |")
    heading("Approvals")
    if not d["approvals"]:
        add("None.")
    for a in d["approvals"]:
        add(f"- {a['decision']} by **{_md(a['approver'])}** at {a['time']}"
            + (f" (valid until {a['expires']})" if a["expires"] else "")
            + (f": {_md(a['comment'])}" if a["comment"] else ""))
    heading("Dispatch")
    disp = d["dispatch"]
    if disp is None:
        add("Not dispatched.")
    else:
        add(f"- {disp['status']} by {_md(disp['actor'])} at {disp['time']}, {disp['attempts']} transfer attempt(s): "
            f"{_md(disp['message'])}")
        for u in disp["uploads"]:
            counts = ", ".join(f"{k} {v}" for k, v in sorted((u.get("counts") or {}).items()))
            line = f"- {_md(u['drone_id'])} ({u['dialect']}, {_md(u['link'])}): {u['status']}"
            line += f"; items {counts}" if counts else ""
            if u.get("verified_by_download"):
                line += f"; verified by download: {', '.join(u['verified_by_download'])}"
            if u.get("params_advised"):
                line += "; set on the vehicle: " + ", ".join(f"{k}={v:g}" for k, v in sorted(u["params_advised"].items()))
            add(line)
        for n in disp["not_uploaded"]:
            add(f"- not uploaded yet: sortie {n.get('sortie_index')} of {_md(n.get('drone_id'))}: {_md(n.get('reason', ''))}")
    heading("Launch")
    launch = d.get("launch")
    if not launch:
        add("Not launched by sortie.")
    else:
        for v in launch.get("vehicles", []):
            add(f"- {_md(v['drone_id'])} ({v['dialect']}, {_md(v['link'])}): **{v['status']}**"
                + (f" at {_md(v['failed'])}" if v.get("failed") else "") + f": {_md(v.get('detail', ''))}")
            checks = "; ".join(f"{'ok' if c['ok'] else 'FAILED'} {c['name']}" for c in v.get("checks", []))
            if checks:
                add(f"  - pre-flight checks: {checks}")
            steps = ", ".join(f"{st['name']} {st.get('result') or st['outcome']}" for st in v.get("steps", []))
            if steps:
                add(f"  - the vehicle's answers: {steps}")
    heading("Alerts")
    if not d["alerts"]:
        add("None.")
    for a in d["alerts"]:
        add(f"- t+{a['t_s']:.0f} s {_md(a['drone_id'])} **{a['kind']}**: {_md(a['message'])}")
    heading("Vehicle messages (logged as text, never acted on)")
    if not d["vehicle_messages"]:
        add("None.")
    else:
        add("```text")
        for t in d["vehicle_messages"]:
            text = str(t["text"]).replace("`", "'")
            add(f"t+{t['t_s']:>6.0f} s  {t['drone_id']}  {t['severity']:<9} {text}")
        add("```")
    heading("Events")
    add("| time | actor | from | to | reason |")
    add("|---|---|---|---|---|")
    for e in d["events"]:
        add(f"| {e['time']} | {_md(e['actor'])} | {e['from'] or '–'} | {e['to']} | {_md(e['reason'])} |")
    heading("Map")
    add(f"![plan (coloured) and flown track (black dashed)]({image})")
    add("")
    add("Map data © OpenStreetMap contributors.")
    return "\n".join(out) + "\n"


def markdown_for_artifact(report: Report) -> str:
    """The report with the map embedded as a ``data:`` URI (a Prefect artifact has no files beside it)."""
    if report.map_png is None:
        return report.markdown
    uri = "data:image/png;base64," + base64.b64encode(report.map_png).decode("ascii")
    return report.markdown.replace("](flown.png)", f"]({uri})")


def write_report(report: Report, out: str | Path | None = None, *, home: Path) -> dict[str, str]:
    """Write ``report.md`` (or ``out``) and ``flown.png`` beside it; returns the paths (also kept in ``files``).
    ``home``: whose draft folders (the authority's)."""
    from flows.context import draft_dir

    path = Path(out) if out is not None else draft_dir(report.draft_id, report.version, home) / "report.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    files: dict[str, str] = {}
    text = report.markdown
    if report.map_png is not None:
        png = path.with_name(path.stem + "-flown.png") if out is not None else path.with_name("flown.png")
        png.write_bytes(report.map_png)
        files["map"] = str(png)
        text = text.replace("](flown.png)", f"]({png.name})")
    path.write_text(text, encoding="utf-8")
    files["report"] = str(path)
    report.files = files
    return files


def _load_launch(draft_id: str, version: int, home: Path) -> dict[str, Any] | None:
    """The recorded launch of a version (``launch.json``, ``flows.usecases.launching``) in ``home``'s draft
    folders (the authority's), or None."""
    import json

    from flows.usecases.launching import launch_path

    path = launch_path(draft_id, version, home)
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
