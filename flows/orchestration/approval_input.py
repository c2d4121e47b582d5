"""The approval form of a waiting run: what an approver sends to resume it.

A ``dispatch_mission`` (or ``daily_patrol``) run that waits for approval
suspends or pauses with ``wait_for_input=ApprovalInput.with_initial_data(...)``:
the Prefect UI renders this model as the form on the run page, pre-filled
with the draft id, version and plan hash the run waits for. ``sortie
approve`` sends the same shape through ``resume_flow_run``.

Prefect's ``with_initial_data`` rebuilds the fields with plain defaults and
drops their constraints (FACTS: ``ge=1`` let 0 through), and the server only
checks the JSON schema it was given. So the flow never trusts what
``wait_for_input`` hands back: it calls :func:`validate_approval` on the
plain dict, which re-runs this model with every constraint, and then checks
that the input names exactly the draft version the run waits for.

With a sortie server the form is :class:`RelayedApprovalInput`: the one-time
code is required there (the server proves the approver by it), and the form
says so and shows no ``--as`` hints (a terminal decides with its own token).
"""

from __future__ import annotations

from typing import Any, Literal

from prefect.input import RunInput
from pydantic import ConfigDict, Field, ValidationError

from planner.errors import InvalidArgument

__all__ = ["ApprovalInput", "RelayedApprovalInput", "PLAN_HASH_PATTERN", "CODE_PATTERN", "validate_approval",
           "approval_form"]

PLAN_HASH_PATTERN = r"^[0-9a-f]{16,128}$"
CODE_PATTERN = r"^[0-9]{6}$"


class ApprovalInput(RunInput):
    """One decision on one draft version, bound to its plan hash."""

    model_config = ConfigDict(extra="forbid")

    draft_id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
                          description="The draft this decision is about.")
    version: int = Field(ge=1, description="The draft version shown in the artifact.")
    plan_hash: str = Field(pattern=PLAN_HASH_PATTERN,
                           description="The plan hash shown in the artifact; a decision on another plan is refused.")
    decision: Literal["approve", "reject"] = Field(description="approve dispatches the plan; reject ends it.")
    approver: str = Field(min_length=1, max_length=64, description="Your user id (must hold the approver role).")
    comment: str = Field(default="", max_length=2000, description="Why (required in practice for a rejection).")
    code: str | None = Field(default=None, pattern=CODE_PATTERN,
                             description="Your one-time code (6 digits from your authenticator app); required when "
                                         "sortie runs with a server, which verifies it.")


class RelayedApprovalInput(ApprovalInput):
    """The form with a sortie server: the one-time code is required (judged at the moment you submit)."""

    code: str = Field(pattern=CODE_PATTERN,  # type: ignore[assignment]
                      description="Required: your one-time code (6 digits from your authenticator app). The server "
                                  "judges it at the moment you press Submit, however late the run reads it.")


def validate_approval(raw: Any, model: type[ApprovalInput] = ApprovalInput) -> ApprovalInput:
    """Re-validate an input from ``wait_for_input`` (or any dict) against every constraint of ``model``.

    ``raw`` may be a ``RunInput`` instance of a ``with_initial_data`` subclass
    (constraints lost) or a plain mapping. Raises ``InvalidArgument`` naming
    the offending fields.
    """
    if isinstance(raw, RunInput):
        data = raw.model_dump(exclude={"metadata"})
        data.pop("metadata", None)
    elif isinstance(raw, dict):
        data = dict(raw)
    else:
        raise InvalidArgument(f"approval input must be a mapping, got {type(raw).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '-'}: {err['msg']}" for err in exc.errors())
        raise InvalidArgument(f"approval input is invalid: {problems}") from None


def approval_form(draft_id: str, version: int, plan_hash: str, *, request_text: str | None = None,
                  extractor: str | None = None, relayed: bool = False,
                  clarifications: list[dict[str, Any]] | None = None) -> type[ApprovalInput]:
    """The form a run shows while it waits: the draft fields and the decision (approve) pre-filled, the approver
    empty; the request as written (escaped), who read it and each clarification answered (its answer, who gave
    it, when), so the approver sees where the plan came from. ``relayed`` (a sortie server decides): the code is required
    and the terminal hint uses the operator's own token."""
    from flows.safe_text import answered_line, markdown_text

    origin = ""
    if request_text:
        answered = "; ".join(markdown_text(answered_line(c)) for c in clarifications or []) or "none"
        origin = (f" Request as written: “{markdown_text(request_text)}” (read by "
                  f"{markdown_text(extractor or 'unknown')}; clarifications answered: {answered}).")
    if relayed:
        how = ("Your user id **and your one-time code are required** (6 digits from your authenticator app; "
               "judged at the moment you press Submit). Read the draft artifact first. Or from a terminal with your "
               f"own token: `sortie approve {draft_id} --version {version}`.")
    else:
        how = ("Read the draft artifact first. Or from a terminal: "
               f"`sortie approve {draft_id} --version {version} --as <you>`.")
    form = RelayedApprovalInput if relayed else ApprovalInput
    return form.with_initial_data(
        description=f"Approve or reject draft **{draft_id} v{version}** (plan hash `{plan_hash[:12]}…`).{origin} {how}",
        draft_id=draft_id,
        version=version,
        plan_hash=plan_hash,
        decision="approve",  # pre-filled: the reviewer who agrees only types who they are (and their code)
        comment="",
    )
