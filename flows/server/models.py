"""Request bodies of the authority's API: strict, closed, small.

Every body forbids unknown fields (a ``world`` or ``now`` sent along with an
approval is an error, not silently ignored) and is strict about types (``"1"``
is not a version). A refused body is ``INVALID_ARGUMENT`` (HTTP 422) and writes nothing.
The one time a body may carry is ``Totp.submitted_at``: when a relayed one-time
code was typed, honoured only within bounds of the server's own clock
(``flows.server.totp.judged_at``).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PlanBody", "Totp", "ApproveBody", "RejectBody", "AttemptBody", "AnswersBody", "ExpireRequestBody", "DispatchBody", "ReplanBody", "ExpireBody", "CancelBody",
           "HoldBody", "RecallBody", "MonitorBody", "ReconcileBody", "ReadVehicleBody", "BackupBody", "ClearBody"]

_CLOSED = ConfigDict(extra="forbid", strict=True)


class PlanBody(BaseModel):
    model_config = _CLOSED
    text: str = Field(min_length=1, max_length=2000)
    region_id: str | None = Field(default=None, max_length=200)
    area: dict[str, Any] | None = None
    on_behalf_of: str | None = Field(default=None, max_length=200, description="service tokens only: the requester")
    coverage_target: float | None = Field(
        default=None, description="area surveys: the share of the area to image, 0.5-1.0 (planner.job's range)"
    )


class Totp(BaseModel):
    """The user id and a one-time code, typed at a shared screen (say the Prefect approval form), and when it was
    submitted there (ISO 8601 with offset; the relaying worker reads it from Prefect's record of the input)."""

    model_config = _CLOSED
    user: str = Field(min_length=1, max_length=200)
    code: str = Field(min_length=6, max_length=6, pattern=r"^[0-9]{6}$")
    submitted_at: str | None = Field(default=None, max_length=64,
                                     description="when the code was submitted; judged within bounds of the server's clock")


class ApproveBody(BaseModel):
    model_config = _CLOSED
    version: int = Field(ge=1, le=1_000_000)
    plan_hash: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    comment: str = Field(default="", max_length=2000)
    totp: Totp | None = None


class RejectBody(BaseModel):
    model_config = _CLOSED
    version: int = Field(ge=1, le=1_000_000)
    reason: str = Field(min_length=1, max_length=2000)
    totp: Totp | None = None


class AttemptBody(BaseModel):
    """A form input a worker refused before asking (junk, another draft, a wrong plan hash): audited, nothing decided.

    ``claimed_by`` is whatever user id the input named: unproven, so it is recorded as a claim, never as the actor."""

    model_config = _CLOSED
    version: int = Field(ge=1, le=1_000_000)
    command: str = Field(pattern=r"^prefect\.[a-z-]{1,40}$")
    claimed_by: str | None = Field(default=None, max_length=64)
    code: str = Field(pattern=r"^[A-Z_]{2,40}$")
    message: str | None = Field(default=None, max_length=2000)
    attempt: int | None = Field(default=None, ge=1, le=1000)
    flow_run_id: str | None = Field(default=None, max_length=64)


class AnswersBody(BaseModel):
    """Answers to an open request's questions: one per open question in order, or ``QUESTION_ID=TEXT``; ``totp``: the
    answerer's user id and one-time code, relayed from a shared screen (the Prefect clarification form)."""

    model_config = _CLOSED
    answers: list[Annotated[str, Field(min_length=1, max_length=600)]] = Field(min_length=1, max_length=20)
    totp: Totp | None = None


class ExpireRequestBody(BaseModel):
    model_config = _CLOSED


class DispatchBody(BaseModel):
    """``link``, if given, must equal the server's record of each drone's address (``flows.server.links``)."""

    model_config = _CLOSED
    version: int | None = Field(default=None, ge=1, le=1_000_000)
    dry_run: bool = False
    link: str | dict[str, str] | None = None


class ReplanBody(BaseModel):
    model_config = _CLOSED


class ExpireBody(BaseModel):
    model_config = _CLOSED
    version: int = Field(ge=1, le=1_000_000)


class CancelBody(BaseModel):
    """Withdraw a DRAFT/APPROVED version before dispatch (``flows.usecases.control.cancel``)."""

    model_config = _CLOSED
    version: int | None = Field(default=None, ge=1, le=1_000_000)
    reason: str = Field(min_length=1, max_length=2000)


class HoldBody(BaseModel):
    """Pause or resume a flying mission (``flows.usecases.control.pause``/``resume``); ``totp``: an operator's
    one-time code relayed from a shared screen (the Prefect deployments), who then acts."""

    model_config = _CLOSED
    version: int | None = Field(default=None, ge=1, le=1_000_000)
    reason: str = Field(default="", max_length=2000)
    link: str | dict[str, str] | None = None
    totp: Totp | None = None
    force: bool = False  # pause: hold a vehicle that refuses the pause in BRAKE (ArduCopter), and say so


class LaunchBody(BaseModel):
    """Launch a dispatched version (``flows.usecases.launching.launch``); ``prearm_wait_s`` bounds the wait for the
    vehicle's pre-arm checks (bounded for an HTTP call)."""

    model_config = _CLOSED
    version: int | None = Field(default=None, ge=1, le=1_000_000)
    link: str | dict[str, str] | None = None
    prearm_wait_s: float = Field(default=60.0, ge=0.0, le=110.0)


class RecallBody(BaseModel):
    """Recall a flying mission home, or land it in place; ``wait_s`` follows it down (bounded for an HTTP call)."""

    model_config = _CLOSED
    version: int | None = Field(default=None, ge=1, le=1_000_000)
    land_here: bool = False
    reason: str = Field(default="", max_length=2000)
    link: str | dict[str, str] | None = None
    wait_s: float = Field(default=0.0, ge=0.0, le=120.0)
    totp: Totp | None = None


class MonitorBody(BaseModel):
    """Follow a dispatched version on the server (``flows.server.followers``): one follower per version, joined by
    later requests; each request waits at most ``wait_s`` for the end (bounded for an HTTP call)."""

    model_config = _CLOSED
    version: int | None = Field(default=None, ge=1, le=1_000_000)
    timeout_s: float = Field(default=600.0, gt=0.0, le=6 * 3600.0)
    link_lost_s: float = Field(default=5.0, gt=0.0, le=600.0)
    battery_margin: float = Field(default=10.0, ge=0.0, le=100.0)
    wait_s: float = Field(default=0.0, ge=0.0, le=120.0)


class ReadVehicleBody(BaseModel):
    """Read what a drone's vehicle holds (fence, mission, rally) at the server's record of its address."""

    model_config = _CLOSED
    link: str | None = Field(default=None, max_length=500, description="if given, must equal the server's record")
    timeout_s: float = Field(default=30.0, gt=0.0, le=120.0)


class ReconcileBody(BaseModel):
    """Settle an UNCERTAIN dispatch by reading the vehicle back at the server's record of its address."""

    model_config = _CLOSED
    timeout_s: float = Field(default=30.0, gt=0.0, le=120.0)


class AnchorRef(BaseModel):
    """A published ledger anchor the client holds: where it came from, and its signed JSON (checked on use)."""

    model_config = _CLOSED
    name: str = Field(min_length=1, max_length=500)
    anchor: dict[str, Any]


class BackupBody(BaseModel):
    """A consistent, verified ledger backup under the server's ``<home>/backups``; ``include_files`` sends the
    copy back too (base64), so the admin's client keeps one off the host."""

    model_config = _CLOSED
    include_files: bool = False
    #: Anchors the client holds off the host (its previous backups'): the server's ledger must still hold each.
    against: list[AnchorRef] = Field(default_factory=list, max_length=16)


class ClearBody(BaseModel):
    """Release a drone held after foreign control: why the operator judges it safe (recorded in the ledger)."""

    model_config = _CLOSED
    reason: str = Field(min_length=3, max_length=500)
