"""Findings and verdicts: a rule violation is a value, never an exception.

A ``Finding`` carries the evidence an approver needs: which rule, where (sortie
and leg index, zone id), what was measured against which limit in which unit,
and the operator message in English and Chinese. A ``Verdict`` is the sorted
tuple of findings of one evaluation and whether any of them blocks.

Example::

    >>> f = Finding(rule_id="ceiling", kind="altitude_ceiling", severity="block",
    ...             sortie_index=0, leg_index=2, measured=130.0, limit=120.0, unit="m",
    ...             zone_id=None, message_en="too high", message_zh="太高")
    >>> v = Verdict.from_findings([f])
    >>> v.blocked, len(v.blocking), len(v.warnings)
    (True, 1, 0)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from rules.schema import Severity

__all__ = ["CAPACITY_KINDS", "SEVERITY_RANK", "Finding", "Verdict"]

SEVERITY_RANK = {"block": 0, "warn": 1}

#: Kinds whose blocking findings mean "this drone/dock cannot do it", so another
#: dock or drone set may; airspace, altitude and weather are not fixed that way.
CAPACITY_KINDS = frozenset({"battery_reserve", "capability_required", "drone_available", "dock_range", "vehicle_at_dock",
                            "vehicle_failsafes"})

MEASURE_DECIMALS = 3


def _round(value: float | str | None) -> float | str | None:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    v = round(float(value), MEASURE_DECIMALS)
    return 0.0 if v == 0 else v


@dataclass(frozen=True)
class Finding:
    """One rule outcome worth showing: a violation (block) or a caution (warn).

    ``sortie_index``/``leg_index`` are ``None`` when the finding is about the
    whole plan or sortie. ``measured``/``limit`` are numbers rounded to 3
    decimals, or short strings (missing sensors, a status).
    """

    rule_id: str
    kind: str
    severity: Severity
    sortie_index: int | None
    leg_index: int | None
    measured: float | str | None
    limit: float | str | None
    unit: str
    zone_id: str | None
    message_en: str
    message_zh: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "measured", _round(self.measured))
        object.__setattr__(self, "limit", _round(self.limit))

    @property
    def blocks(self) -> bool:
        return self.severity == "block"

    def sort_key(self) -> tuple[Any, ...]:
        """Plan order first (sortie, leg), then rule id, zone, and the rest for ties."""
        return (
            -1 if self.sortie_index is None else self.sortie_index,
            -1 if self.leg_index is None else self.leg_index,
            self.rule_id,
            self.zone_id or "",
            SEVERITY_RANK[self.severity],
            self.kind,
            self.message_en,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "kind": self.kind,
            "severity": self.severity,
            "sortie_index": self.sortie_index,
            "leg_index": self.leg_index,
            "measured": self.measured,
            "limit": self.limit,
            "unit": self.unit,
            "zone_id": self.zone_id,
            "message_en": self.message_en,
            "message_zh": self.message_zh,
        }


@dataclass(frozen=True)
class Verdict:
    """All findings of one evaluation, sorted deterministically; ``blocked`` if any blocks."""

    findings: tuple[Finding, ...]
    blocked: bool

    @classmethod
    def from_findings(cls, findings: Iterable[Finding]) -> Verdict:
        ordered = tuple(sorted(set(findings), key=Finding.sort_key))
        return cls(findings=ordered, blocked=any(f.blocks for f in ordered))

    @property
    def blocking(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.blocks)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if not f.blocks)

    @property
    def capacity_blocked(self) -> bool:
        """Blocked only by capacity kinds: another dock or drone set might pass.

        A plan blocked by airspace, altitude or weather is not retried elsewhere
        by this test; the service decides, and a hard rule is never weakened.
        """
        return self.blocked and all(f.kind in CAPACITY_KINDS for f in self.blocking)

    def to_dict(self) -> dict[str, Any]:
        return {"blocked": self.blocked, "findings": [f.to_dict() for f in self.findings]}
