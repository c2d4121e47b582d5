"""The Prefect table artifact ``fleet``: the drones as the authority knows them, on request.

``sortie fleet --publish`` writes the same rows as ``sortie fleet`` (the
authority's: live from the vehicles through ``sortie server``, the world file
embedded) as one table artifact with a fixed key, so the UI's Artifacts page
shows the latest fleet next to the runs that plan with it (its history of
versions shows how it changed). A view, not a record: the ledger and the
vehicles are the truth.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FLEET_ARTIFACT_KEY", "fleet_table", "publish_fleet_board"]

FLEET_ARTIFACT_KEY = "fleet"


def fleet_table(data: dict[str, Any]) -> list[dict[str, Any]]:
    """One flat row per drone (a table artifact shows scalars): position and fault as text."""
    rows = []
    for d in data.get("drones", []):
        pos, fault = d.get("position"), d.get("fault")
        rows.append({
            "drone": d["id"], "tenant": d.get("tenant"), "status": d["status"], "battery %": d.get("battery_pct"),
            "mode": d.get("mode") or "", "armed": "" if d.get("armed") is None else ("yes" if d["armed"] else "no"),
            "position": "" if not pos else f"{pos['lat']:.6f}, {pos['lon']:.6f}, {pos['alt_m']} m",
            "last seen": d.get("last_seen") or "never", "source": d["source"],
            "fault": "" if not fault else f"{fault['code']}: {fault['message']}",
        })
    return rows


def publish_fleet_board(data: dict[str, Any]) -> str:
    """Create the next version of the ``fleet`` table artifact; returns its key."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    rows = fleet_table(data)
    up = sum(1 for r in rows if r["status"] in ("ONLINE", "IN_FLIGHT"))
    description = (f"The fleet at {data.get('server_time') or data.get('now') or 'now'} ({data.get('source')}): "
                   f"{up} of {len(rows)} up")
    if rows:
        create_table_artifact(table=rows, key=FLEET_ARTIFACT_KEY, description=description)
    else:  # an empty table renders as nothing at all in the UI; say so in words
        create_markdown_artifact(markdown="No drone of yours in this world.", key=FLEET_ARTIFACT_KEY,
                                 description=description)
    return FLEET_ARTIFACT_KEY
