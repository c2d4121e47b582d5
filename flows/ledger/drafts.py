"""Drafts: recording new versions (with their alternatives) and the generic state change.

Why a room: recording a version is the one write that creates rows rather than
moving them; the superseding of the previous version and of the alternatives
the planner tried happens in the same transaction, so a replan race has one
winner.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import duckdb

from flows.errors import Conflict
from flows.ledger.records import _DRAFT_COLS, DraftRecord, NewVersion, _dumps, _iso, replace_state
from flows.ledger.states import TRANSITIONS, apply_transition, insert_event
from flows.ledger.store import Store, kill_point
from planner.errors import InvalidArgument

__all__ = ["DraftsRoom"]


class DraftsRoom(Store):
    """The draft writes of the ledger."""

    def transition(
        self,
        draft_id: str,
        version: int,
        *,
        expected_state: str,
        expected_row_version: int,
        to_state: str,
        actor: str,
        reason: str,
        now: datetime,
    ) -> DraftRecord:
        """Move a draft version from ``expected_state`` to ``to_state``, or raise ``Conflict``.

        For callers outside this module (expiry in the Prefect flow, the flight
        monitor); approvals and dispatches have their own methods.
        """
        if (expected_state, to_state) not in TRANSITIONS:
            raise Conflict(f"draft {draft_id} v{version}: {expected_state} cannot become {to_state}")

        def work(con: duckdb.DuckDBPyConnection) -> DraftRecord:
            current = self._get(con, draft_id, version)
            expected = replace_state(current, expected_state, expected_row_version, current.updated_time)
            return apply_transition(con, expected, to_state, actor=actor, reason=reason, now=now)

        return self._write(work, what=f"{draft_id} v{version} → {to_state}")

    def record_versions(
        self,
        versions: Sequence[NewVersion],
        *,
        actor: str,
        now: datetime,
        supersede: DraftRecord | None = None,
        reasons: Sequence[str] = (),
    ) -> list[DraftRecord]:
        """Record new draft versions in one transaction.

        Every version but the last is immediately SUPERSEDED (an alternative
        the planner tried and left, kept for the record; ``reasons[i]`` says
        why). ``supersede`` is the previous latest version (as read by the
        caller): it becomes SUPERSEDED under the usual conditional update, so
        two concurrent replans cannot both win. A version that already exists
        is a ``Conflict``.
        """
        if not versions:
            raise InvalidArgument("record_versions needs at least one version")

        def work(con: duckdb.DuckDBPyConnection) -> list[DraftRecord]:
            return self._insert_versions(con, versions, actor=actor, now=now, supersede=supersede, reasons=reasons)

        first = versions[0]
        return self._write(work, what=f"record draft {first.draft_id} v{first.version}")

    def _insert_versions(
        self,
        con: duckdb.DuckDBPyConnection,
        versions: Sequence[NewVersion],
        *,
        actor: str,
        now: datetime,
        supersede: DraftRecord | None,
        reasons: Sequence[str],
    ) -> list[DraftRecord]:
        """``record_versions``' writes inside the caller's transaction (an answered request records its turn too)."""
        if not versions:
            raise InvalidArgument("record_versions needs at least one version")
        stamp = _iso(now)
        if supersede is not None:
            apply_transition(
                con, supersede, "SUPERSEDED", actor=actor, reason=f"replanned as v{versions[0].version}", now=now
            )
        out: list[DraftRecord] = []
        for i, v in enumerate(versions):
            if (None, v.state) not in TRANSITIONS:
                raise InvalidArgument(f"a new draft version cannot start as {v.state}")
            con.execute(
                f"INSERT INTO drafts ({_DRAFT_COLS}) VALUES ({', '.join(['?'] * 21)})",
                [
                    v.draft_id,
                    v.version,
                    v.state,
                    1,
                    v.request_key,
                    v.tenant,
                    v.region_id,
                    v.requested_by,
                    v.request_text,
                    None if v.intent is None else _dumps(v.intent),
                    None if v.plan is None else _dumps(v.plan),
                    v.plan_hash,
                    _dumps(v.findings),
                    v.verdict,
                    _dumps(v.missing),
                    _dumps(v.notes),
                    v.world_name,
                    v.world_dir,
                    v.world_hash,
                    stamp,
                    stamp,
                ],
            )
            insert_event(con, v.draft_id, v.version, actor=actor, from_state=None, to_state=v.state,
                         reason=TRANSITIONS[(None, v.state)], stamp=stamp, row_version=1,
                         plan_hash=v.plan_hash, world_hash=v.world_hash)
            kill_point("ledger:record:in_transaction")
            rec = self._get(con, v.draft_id, v.version)
            if i < len(versions) - 1:
                reason = reasons[i] if i < len(reasons) else f"alternative v{versions[i + 1].version} tried"
                rec = apply_transition(con, rec, "SUPERSEDED", actor=actor, reason=reason, now=now)
            out.append(rec)
        return out
