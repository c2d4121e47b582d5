"""The use cases under one name: what the CLI, the server and the Prefect flows call.

Each function is one user action (plan, replan, approve, reject, dispatch,
look at drafts, export). They live in their own modules, each gather →
decide → apply:

    planning     plan_draft, replan, what_if
    decisions    approve, reject
    dispatching  dispatch
    reading      list_drafts, show_draft, diff_versions, draft_log, export, check_visible
    drafting     the pure decisions (alternatives, version rows, recheck, diff)
    views        the returned values;  draftfiles  the draft folder

Every use case takes the ledger as a value (``ledger=``), opened once by the
entry point: the CLI, ``sortie server``, a Prefect flow. The functions here
keep the old call style working for callers that do not pass one yet: they
open ``SORTIE_HOME/ledger.duckdb`` once for the call. The acting user is a
plain id (local mode, identity asserted) or an ``Actor`` (mode and proof).
Nothing here prints, and nothing knows about typer, HTTP or Prefect. Every
user error is a ``planner.errors.SortieError``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from flows.context import draft_dir, sortie_home
from flows.ledger import DraftRecord, Ledger, open_ledger
from flows.usecases import decisions, dispatching, planning, reading
from flows.usecases.actor import Actor, Policy, as_actor
from flows.usecases.common import load_world_at
from flows.usecases.drafting import MAX_ALTERNATIVES
from flows.usecases.reading import EXPORT_FORMATS
from flows.usecases.views import DispatchSummary, DraftSummary, SortieSummary
from planner.world.model import World

__all__ = [
    "MAX_ALTERNATIVES",
    "EXPORT_FORMATS",
    "Actor",
    "Policy",
    "as_actor",
    "SortieSummary",
    "DraftSummary",
    "DispatchSummary",
    "plan_draft",
    "what_if",
    "replan",
    "approve",
    "reject",
    "dispatch",
    "list_drafts",
    "show_draft",
    "diff_versions",
    "draft_log",
    "export",
    "draft_dir",
    "ensure_files",
    "load_world_at",
    "four_eyes_default",
    "local_policy",
    "check_visible",
]


def four_eyes_default() -> bool:
    """Local mode only: four-eyes is on unless ``SORTIE_FOUR_EYES=0`` says otherwise (a single-operator site).

    The server never reads this: its policy is its own configuration, recorded on every approval.
    """
    return os.environ.get("SORTIE_FOUR_EYES", "1").strip().lower() not in ("0", "false", "no", "off")


def local_policy() -> Policy:
    """The embedded mode's policy: four-eyes from the environment, the default time to live."""
    return Policy(four_eyes=four_eyes_default())


def ensure_files(rec: DraftRecord, world: World | None = None, home: Path | None = None) -> dict[str, str]:
    """A version's files, rewritten from the ledger when missing (say after a crash between commit and write)."""
    return planning.ensure_files(rec, home or sortie_home(), world)


def _ledger(ledger: Ledger | None) -> Ledger:
    return ledger if ledger is not None else open_ledger()


def plan_draft(*, ledger: Ledger | None = None, **kwargs: Any) -> DraftSummary:
    """``planning.plan_draft``: extract, plan, evaluate and record a new draft."""
    return planning.plan_draft(ledger=_ledger(ledger), **kwargs)


def what_if(**kwargs: Any) -> dict[str, Any]:
    """``planning.what_if``: plan on any world and time without recording anything."""
    return planning.what_if(**kwargs)


def replan(draft_id: str, *, ledger: Ledger | None = None, **kwargs: Any) -> DraftSummary:
    """``planning.replan``: a new version on a fresh world; the old one SUPERSEDED."""
    return planning.replan(draft_id, ledger=_ledger(ledger), **kwargs)


def approve(draft_id: str, version: int, *, ledger: Ledger | None = None, **kwargs: Any) -> DraftSummary:
    """``decisions.approve``; without a policy, the local one (``SORTIE_FOUR_EYES``)."""
    if kwargs.get("policy") is None and kwargs.get("four_eyes") is None:
        kwargs["policy"] = local_policy()
    return decisions.approve(draft_id, version, ledger=_ledger(ledger), **kwargs)


def reject(draft_id: str, version: int, *, ledger: Ledger | None = None, **kwargs: Any) -> DraftSummary:
    """``decisions.reject``."""
    return decisions.reject(draft_id, version, ledger=_ledger(ledger), **kwargs)


def dispatch(draft_id: str, version: int | None = None, *, ledger: Ledger | None = None, **kwargs: Any) -> DispatchSummary:
    """``dispatching.dispatch``: once ever, after the approval and a fresh recheck."""
    return dispatching.dispatch(draft_id, version, ledger=_ledger(ledger), **kwargs)


def check_visible(draft_id: str, user: str | Actor, *, ledger: Ledger | None = None, **kwargs: Any) -> None:
    """``reading.check_visible``."""
    reading.check_visible(draft_id, user, ledger=_ledger(ledger), **kwargs)


def list_drafts(*, ledger: Ledger | None = None, **kwargs: Any) -> list[DraftSummary]:
    """``reading.list_drafts``."""
    return reading.list_drafts(ledger=_ledger(ledger), **kwargs)


def show_draft(draft_id: str, version: int | None = None, *, ledger: Ledger | None = None) -> DraftSummary:
    """``reading.show_draft``."""
    return reading.show_draft(draft_id, version, ledger=_ledger(ledger))


def diff_versions(draft_id: str, v1: int, v2: int, *, ledger: Ledger | None = None) -> dict[str, Any]:
    """``reading.diff_versions``."""
    return reading.diff_versions(draft_id, v1, v2, ledger=_ledger(ledger))


def draft_log(draft_id: str, *, ledger: Ledger | None = None) -> dict[str, Any]:
    """``reading.draft_log``."""
    return reading.draft_log(draft_id, ledger=_ledger(ledger))


def export(draft_id: str, version: int | None, fmt: str, *, ledger: Ledger | None = None, **kwargs: Any) -> dict[str, Any]:
    """``reading.export``."""
    return reading.export(draft_id, version, fmt, ledger=_ledger(ledger), **kwargs)
