"""Request bodies of the authority's API: strict, closed, small.

Every body forbids unknown fields (a ``world`` or ``now`` sent along with an
approval is an error, not silently ignored) and is strict about types (``"1"``
is not a version). A refused body is ``INVALID_ARGUMENT`` (HTTP 422) and writes nothing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["PlanBody", "Totp", "ApproveBody", "RejectBody", "DispatchBody", "ReplanBody", "ExpireBody", "CancelBody",
           "HoldBody", "RecallBody", "MonitorBody", "ReconcileBody", "BackupBody"]

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
    """The approver's user id and a one-time code, typed at a shared screen (say the Prefect approval form)."""

    model_config = _CLOSED
    user: str = Field(min_length=1, max_length=200)
    code: str = Field(min_length=6, max_length=6, pattern=r"^[0-9]{6}$")


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
    """Pause or resume a flying mission (``flows.usecases.control.pause``/``resume``)."""

    model_config = _CLOSED
    version: int | None = Field(default=None, ge=1, le=1_000_000)
    reason: str = Field(default="", max_length=2000)
    link: str | dict[str, str] | None = None
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


class MonitorBody(BaseModel):
    """Follow a dispatched version on the server (``flows.server.followers``): one follower per version, joined by
    later requests; each request waits at most ``wait_s`` for the end (bounded for an HTTP call)."""

    model_config = _CLOSED
    version: int | None = Field(default=None, ge=1, le=1_000_000)
    timeout_s: float = Field(default=600.0, gt=0.0, le=6 * 3600.0)
    link_lost_s: float = Field(default=5.0, gt=0.0, le=600.0)
    battery_margin: float = Field(default=10.0, ge=0.0, le=100.0)
    wait_s: float = Field(default=0.0, ge=0.0, le=120.0)


class ReconcileBody(BaseModel):
    """Settle an UNCERTAIN dispatch by reading the vehicle back at the server's record of its address."""

    model_config = _CLOSED
    timeout_s: float = Field(default=30.0, gt=0.0, le=120.0)


class BackupBody(BaseModel):
    """A consistent, verified ledger backup under the server's ``<home>/backups``; ``include_files`` sends the
    copy back too (base64), so the admin's client keeps one off the host."""

    model_config = _CLOSED
    include_files: bool = False
