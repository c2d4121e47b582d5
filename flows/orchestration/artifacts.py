"""The draft artifact: what an approver reads in the Prefect UI before deciding.

One markdown artifact per draft version, keyed ``draft-<id>-v<version>``
(Prefect keys allow lowercase letters, digits and dashes only, so the id is
folded to that alphabet). It carries a table per sortie (drone, dock,
distance, duration, battery %), the tenant's drones that could fly it and
why each other could not (``flows.drone_choice``), the findings, the map picture inlined as a
``data:`` URI PNG (the UI renders it; the server needs no file access), and
the two ways to approve: the form on the waiting run's page, or
``sortie approve``.

``draft_markdown`` is a pure function of the draft summary and the PNG bytes,
so it is tested without a server; ``publish_draft_artifact`` is the one call
that talks to Prefect and must run inside a flow or task run.
"""

from __future__ import annotations

import base64
import dataclasses
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["artifact_key", "draft_markdown", "summary_dict", "map_png_bytes", "publish_draft_artifact", "MAX_INLINE_PNG_BYTES"]

#: Larger pictures are linked by path instead of inlined (artifact rows live in Prefect's database).
MAX_INLINE_PNG_BYTES = 1_500_000

_KEY_BAD = re.compile(r"[^a-z0-9-]+")


def artifact_key(draft_id: str, version: int) -> str:
    """``draft-<id>-v<version>`` folded to Prefect's key alphabet (lowercase letters, digits, dashes)."""
    folded = _KEY_BAD.sub("-", str(draft_id).lower()).strip("-")
    folded = re.sub(r"-{2,}", "-", folded) or "unnamed"
    return f"draft-{folded}-v{int(version)}"


def summary_dict(summary: Any) -> dict[str, Any]:
    """A plain dict of a draft summary, whatever shape the authority returns (dataclass, pydantic, dict)."""
    if isinstance(summary, Mapping):
        return dict(summary)
    for name in ("to_dict", "model_dump", "as_dict"):
        method = getattr(summary, name, None)
        if callable(method):
            return dict(method())
    if dataclasses.is_dataclass(summary) and not isinstance(summary, type):
        return dataclasses.asdict(summary)
    raise TypeError(f"cannot read a draft summary from {type(summary).__name__}")


def _num(value: Any, fmt: str, scale: float = 1.0) -> str:
    if value is None:
        return "–"
    try:
        return format(float(value) * scale, fmt)
    except (TypeError, ValueError):
        return str(value)


def _cell(value: Any) -> str:
    return str(value if value is not None else "–").replace("|", "\\|").replace("\n", " ")


def _battery_pct(sortie: Mapping[str, Any]) -> str:
    if sortie.get("battery_fraction") is not None:
        return _num(sortie["battery_fraction"], ".0f", 100.0)
    if sortie.get("battery_pct") is not None:
        return _num(sortie["battery_pct"], ".0f")
    return "–"


def map_png_bytes(summary: Mapping[str, Any]) -> bytes | None:
    """The map picture of a draft version, from ``files`` (a mapping or a list of paths), if it exists."""
    files = summary.get("files") or {}
    candidates: list[str] = []
    if isinstance(files, Mapping):
        for name, path in files.items():
            if str(name).endswith("png") or str(path).endswith(".png"):
                candidates.append(str(path))
    else:
        candidates = [str(p) for p in files if str(p).endswith(".png")]
    candidates.sort(key=lambda p: (Path(p).name != "map.png", p))
    for path in candidates:
        if Path(path).is_file():
            return Path(path).read_bytes()
    return None


def _drone_lines(summary: Mapping[str, Any]) -> list[str]:
    """The tenant's drones: which could fly this request (and which this version flies), why each other could not."""
    from flows.drone_choice import drone_rows

    rows = drone_rows(summary)
    if not rows:
        return []
    lines = ["", "## Drones", "", "| Drone | Could fly it | Why not |", "|---|---|---|"]
    for r in rows:
        could = ("yes, flies this plan" if r.flies else "yes") if r.eligible else "no"
        lines.append(f"| {_cell(r.drone_id)} | {could} | {_cell('; '.join(r.why_not)) if r.why_not else ''} |")
    return lines


def draft_markdown(summary: Mapping[str, Any], png: bytes | None = None) -> str:
    """The artifact text of one draft version."""
    draft_id = summary.get("draft_id")
    version = summary.get("version")
    plan_hash = str(summary.get("plan_hash") or "")
    status = summary.get("status") or summary.get("state") or "?"
    lines: list[str] = [
        f"# Draft {draft_id} v{version}",
        "",
        f"- **Status:** {status}",
        f"- **Plan hash:** `{plan_hash}`",
    ]
    for label, key in (("Requested by", "requested_by"), ("Region", "region_id"), ("Verdict", "verdict")):
        if summary.get(key):
            lines.append(f"- **{label}:** {_cell(summary[key])}")
    from flows.safe_text import approver_view, markdown_text  # integrity hook: the request, escaped

    seen = approver_view(dict(summary))
    lines.append(f"- **Request (as written):** {markdown_text(seen['request_text']) or '–'}")
    lines.append(f"- **Read by:** {markdown_text(seen['extractor'])}")
    answered = seen["clarifications_answered"]
    if not answered:
        lines.append("- **Clarifications answered:** none")
    else:  # an answered open request: each question with its answer, who gave it and when
        where = f" (request {markdown_text(str(summary['request_id']))})" if summary.get("request_id") else ""
        lines.append(f"- **Clarifications answered**{where}:")
        lines += [f"    - {markdown_text(line)}" for line in answered]
    lines += ["", "## Sorties", ""]
    sorties = list(summary.get("sorties") or [])
    if sorties:
        lines += [
            "| # | Drone | Dock | Distance (km) | Duration (min) | Energy (Wh) | Battery % |",
            "|---|---|---|---:|---:|---:|---:|",
        ]
        for i, s in enumerate(sorties, 1):
            lines.append(
                f"| {i} | {_cell(s.get('drone') or s.get('drone_id'))} | {_cell(s.get('dock') or s.get('dock_id'))} "
                f"| {_num(s.get('distance_m'), '.2f', 0.001)} | {_num(s.get('duration_s'), '.1f', 1 / 60)} "
                f"| {_num(s.get('energy_wh'), '.1f')} | {_battery_pct(s)} |"
            )
    else:
        lines.append("_No sorties: nothing can fly this request as it stands._")
    missing = summary.get("missing") or []
    if missing:
        lines += ["", "**Missing resources:** " + ", ".join(_cell(m) for m in missing)]
    lines += _drone_lines(summary)
    lines += ["", "## Findings", ""]
    findings = list(summary.get("findings") or [])
    if findings:
        lines += ["| Severity | Rule | Finding |", "|---|---|---|"]
        for f in findings:
            if isinstance(f, Mapping):
                message = f.get("message_en") or f.get("message") or f.get("message_zh")
                lines.append(f"| {_cell(f.get('severity'))} | {_cell(f.get('rule_id') or f.get('rule'))} | {_cell(message)} |")
            else:
                lines.append(f"| – | – | {_cell(f)} |")
    else:
        lines.append("No findings: every rule passed.")
    lines += ["", "## Map", ""]
    if png and len(png) <= MAX_INLINE_PNG_BYTES:
        lines.append(f"![map of draft {draft_id} v{version}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})")
    elif png:
        lines.append(f"_The map picture is {len(png) // 1024} KiB, too large to inline; see the draft's files._")
    else:
        lines.append("_No map picture was made for this version._")
    relayed = summary.get("mode") == "server"  # a sortie server decides: the code is required, a terminal has a token
    lines += [
        "",
        "## How to approve",
        "",
        "- **In the Prefect UI:** open the waiting run of this draft (`mission`, `daily-patrol` or `dispatch-mission`) and "
        "click **Resume**; the form is pre-filled with the draft id, version and plan hash: choose "
        "`approve` or `reject`, enter your user id"
        + (" **and your one-time code (required)**" if relayed else "") + " and a comment.",
        f"- **From a terminal:** `sortie approve {draft_id} --version {version}"
        + ("` with your own token " if relayed else " --as <your user id>` ")
        + f"(or `sortie reject {draft_id} --version {version} --reason …`). The waiting run resumes by itself.",
        "",
        "The approval is recorded in the sortie ledger, bound to this version and plan hash, and expires; "
        "dispatch re-checks the rules on a fresh world snapshot first.",
    ]
    return "\n".join(lines) + "\n"


def publish_draft_artifact(summary: Any) -> str:
    """Create the markdown artifact of a draft version (inside a flow or task run); returns its key."""
    from prefect.artifacts import create_markdown_artifact

    data = summary_dict(summary)
    key = artifact_key(data["draft_id"], data["version"])
    create_markdown_artifact(
        markdown=draft_markdown(data, map_png_bytes(data)),
        key=key,
        description=f"Draft {data['draft_id']} v{data['version']}: sorties, findings, map and how to approve.",
    )
    return key
