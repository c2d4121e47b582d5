"""Heights and coverage targets stated in a request, for the offline reader (``intents.grammar.reader``).

An altitude is read with its unit (m, metres, 米, ft, feet, 英尺, km, 公里, 千米) and
checked against the caller's ``Limits``: outside them is a question, never a default.
Its reference matters as much as its number: "40 m above the roofs" is not 40 m above
ground (read as that, a survey became a roof inspection). A height above ground is
read; above sea level (海拔, AMSL) it is converted with ``Limits.ground_amsl_m`` when
the caller knows the ground's height there, else asked; above roofs, buildings, the
take-off point or the dock it is asked (``height_reference``): nothing the reader
knows converts it. The reference is read before the targets, so "roofs" in it never
names a target. A coverage target ("cover at least 99.5 %") applies to area surveys.
"""

from __future__ import annotations

import intents.grammar.vocabulary as V
from intents.intent import MissionType
from intents.limits import FEET_TO_M, Limits
from intents.text.numbers import number
from intents.text.scan import Scan

__all__ = ["HeightReading"]


def _metres(raw: float, unit: str) -> float:
    if unit in ("英尺", "呎", "ft", "feet", "foot", "'"):
        return round(float(raw) * FEET_TO_M, 2)
    if unit in V.KILOMETRES:
        return round(float(raw) * 1000.0, 2)
    return float(raw)


class HeightReading:
    """The height-reading steps of the reader (a mixin over its scan, limits and ``ask``)."""

    scan: Scan
    limits: Limits
    notes: list[str]
    chinese: bool

    def ask(self, kind: str, start: int, end: int, why_en: str, why_zh: str) -> None:
        raise NotImplementedError

    def height_references(self) -> list[tuple[int, int, float]]:
        """Heights said above something: above ground read, above sea level converted or asked, others asked."""
        read: list[tuple[int, int, float]] = []
        for pattern in (V.HEIGHT_REF_AFTER, V.HEIGHT_REF_BEFORE):
            for m in self.scan.finditer(pattern):
                if not self.scan.is_open(m.start(), m.end()):
                    continue
                raw = number(m.group("v"))
                ref = m.group("ref")
                if raw is None:
                    self.ask("altitude", m.start(), m.end(), "which altitude exactly?", "具体飞多高？")
                    continue
                metres = _metres(raw, m.group("u"))
                ground = self.limits.ground_amsl_m
                if V.SEA_LEVEL.fullmatch(ref.strip()) and ground is not None:
                    agl = round(metres - ground, 2)
                    self.notes.append(f'"{self.scan.quote(m.start(), m.end())}": {metres:g} m above sea level is '
                                      f"{agl:g} m above the ground, which is {ground:g} m above sea level here")
                    self.scan.claim(m.start(), m.end())
                    read.append((m.start(), m.end(), agl))
                    continue
                sea = V.SEA_LEVEL.fullmatch(ref.strip()) is not None
                self.ask(
                    "height_reference", m.start(), m.end(),
                    f"this height is {'above sea level' if sea else 'not above the ground'}, and the plan flies a height "
                    "above ground; how many metres above the ground?",
                    f"这个高度{'是海拔高度' if sea else '不是离地高度'}，而规划按离地高度飞行：离地多少米？",
                )
        return read

    def altitude(self, values: list[tuple[int, int, float]]) -> tuple[float | None, bool]:
        """The one altitude to fly (above ground), whether one was stated; ``values`` are heights read already."""
        for pattern in V.ALTITUDE:
            for m in self.scan.finditer(pattern):
                raw = number(m.group("v"))
                if raw is None:
                    self.ask("altitude", m.start(), m.end(), "which altitude exactly?", "具体飞多高？")
                    continue
                bound = V.ALTITUDE_BOUND_AFTER.match(self.scan.text, m.end()) or V.ALTITUDE_BOUND_BEFORE.search(
                    self.scan.text[max(0, m.start() - 16) : m.start()]
                )
                if bound:  # "below 80 m", 80米以下: a limit, not the altitude to fly
                    self.ask("altitude", m.start(), m.end(), "is this the altitude to fly, or a limit?", "这是飞行高度还是限制？")
                    continue
                self.scan.claim(m.start(), m.end())
                values.append((m.start(), m.end(), _metres(raw, m.group("u"))))
        for m in self.scan.finditer(V.VAGUE_ALTITUDE):
            self.ask("altitude", m.start(), m.end(), "which altitude exactly, in metres?", "具体飞多高（米）？")
        distinct = {v for _, _, v in values}
        if len(distinct) > 1:
            s, e = min(v[0] for v in values), max(v[1] for v in values)
            self.ask("altitude", s, e, "two different altitudes are given; which one?", "给了两个不同的高度，按哪个？")
            return None, True
        if not values:
            return None, False
        s, e, value = values[0]
        lo, hi = self.limits.min_altitude_m, self.limits.max_altitude_m
        if not self.limits.altitude_ok(value):
            self.ask(
                "altitude", s, e,
                f"{value:g} m is outside the allowed {lo:g}–{hi:g} m above ground; which altitude should be flown?",
                f"{value:g} 米超出允许的 {lo:g}–{hi:g} 米离地高度范围，应该飞多高？",
            )
            return None, True
        return value, True

    def coverage(self, mission: MissionType | None) -> tuple[float | None, bool]:
        """The share of the area a survey must image, when the request states one (and whether it did)."""
        values: list[tuple[int, int, float]] = []
        for pattern in V.COVERAGE:
            for m in self.scan.finditer(pattern):
                if not self.scan.is_open(m.start(), m.end()):
                    continue  # an earlier pattern read it
                token = m.groupdict().get("v") or m.groupdict().get("w")
                raw = number(token) if token else None
                bound = V.COVERAGE_BOUND_AFTER.match(self.scan.text, m.end()) or V.COVERAGE_BOUND_BEFORE.search(
                    self.scan.text[max(0, m.start() - 16) : m.start()]
                )
                if raw is None or bound:  # "about 99 %", 99%以下: not a target to reach
                    self.ask("coverage", m.start(), m.end(), "which coverage exactly, as at least a percentage of the area?",
                             "覆盖率具体至少是百分之多少？")
                    continue
                self.scan.claim(m.start(), m.end())
                values.append((m.start(), m.end(), round(float(raw) / 100.0, 6)))
        if not values:
            return None, False
        if len({v for _, _, v in values}) > 1:
            s, e = min(v[0] for v in values), max(v[1] for v in values)
            self.ask("coverage", s, e, "two different coverage targets are given; which one?", "给了两个不同的覆盖率，按哪个？")
            return None, True
        s, e, value = values[0]
        if mission is not None and mission is not MissionType.AREA_SURVEY:
            self.ask("coverage", s, e, "a coverage target applies to area surveys only; is this a survey?",
                     "覆盖率只适用于区域测绘，这是测绘任务吗？")
            return None, True
        lo, hi = self.limits.min_coverage, self.limits.max_coverage
        if not self.limits.coverage_ok(value):
            self.ask(
                "coverage", s, e,
                f"{value:.1%} is outside the {lo:.0%}–{hi:.0%} of the area a survey can be asked to image; which coverage?",
                f"{value:.1%} 超出可要求的覆盖率范围 {lo:.0%}–{hi:.0%}，应该覆盖多少？",
            )
            return None, True
        return value, True
