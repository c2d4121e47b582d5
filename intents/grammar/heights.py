"""Heights and coverage targets stated in a request, for the offline reader (``intents.grammar.reader``).

An altitude is read with its unit (m, metres, 米, ft, feet, 英尺, km, 公里, 千米) and
checked against the caller's ``Limits``: outside them is a question, never a default.
Its reference matters as much as its number: "40 m above the roofs" is not 40 m above
ground (read as that, a survey became a roof inspection), nor is 比塔顶高15米 or "15 m
over the treetops". A height above ground is read; above sea level (海拔, AMSL) it is
converted with ``Limits.ground_amsl_m`` when the caller knows the ground's height there,
else asked; above anything else (roofs, a mast's top, trees, the dock, take-off, 比…高,
高出…) it is asked (``height_reference``): nothing the reader knows converts it. The
reference is read before the targets, so "roofs" in it never names a target.

A length is the height to fly only when nothing makes it something else: "15 m from
the fence", 半径50米, "10 m spacing" are distances and "the 40 m high tower", 30米高的铁塔
sizes, all asked. A length standing alone at the end of a clause ("…with thermal,
40 m.", "热成象 50m") is the height (``bare_lengths``), unless another height is given
too. The heights are settled last (``settle_altitude``): two different ones are asked.
Words in ``intents.grammar.height_words``. A coverage target ("cover at least 99.5 %")
applies to area surveys.
"""

from __future__ import annotations

import re

import intents.grammar.height_words as H
import intents.grammar.vocabulary as V
from intents.intent import MissionType
from intents.stated_limits import FEET_TO_M, Limits
from intents.text.numbers import number
from intents.text.scan import Scan

__all__ = ["HeightReading"]

_CLAUSE_START = re.compile(r"[，,。;；!！?？\n]|\.(?:\s|$)")
_VERB = re.compile("|".join(p.pattern for p in (V.MAPPING, V.SURVEY, V.INSPECT, V.PATROL)) + r"|飞到|飞|到|在", re.ASCII)
_TARGET_BEFORE = re.compile("(?:" + "|".join(p for _, p in V.TARGET_PATTERNS) + r")\s*$", re.ASCII)
_VERB_BEFORE = re.compile("(?:" + "|".join(p.pattern for p in (V.MAPPING, V.SURVEY, V.INSPECT, V.PATROL)) + r")\s*(?:把|the\s+)?$",
                          re.ASCII)
_TARGET_IN = re.compile("|".join(f"(?:{p})" for t, p in V.TARGET_PATTERNS if t is not None), re.ASCII)
_TARGET_AFTER = re.compile(r"\s*(?:" + "|".join(p for _, p in V.TARGET_PATTERNS) + ")", re.ASCII)
_SAID_AS_HEIGHT = re.compile(r"(?:altitude|agl|above ground(?: level)?|height|\bup|\balt|高度|航高|高空)$", re.ASCII)
_REFERENCE_QUESTION = (
    "this height is {what}, and the plan flies a height above ground; how many metres above the ground?",
    "这个高度{what_zh}，而规划按离地高度飞行：离地多少米？",
)
_NOT_HEIGHT_QUESTION = (
    "is this the height to fly above the ground, or a distance or the size of something? give the height to fly, in metres",
    "这是离地飞行高度，还是距离或物体的尺寸？请给出离地飞行高度（米）",
)


def _metres(raw: float, unit: str) -> float:
    if unit in ("英尺", "呎", "ft", "feet", "foot", "'"):
        return round(float(raw) * FEET_TO_M, 2)
    if unit in H.KILOMETRES:
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

    def _clause_before(self, pos: int) -> str:
        """The text of the clause up to ``pos``."""
        text = self.scan.text[:pos]
        starts = [m.end() for m in _CLAUSE_START.finditer(text)]
        return text[starts[-1] if starts else 0 :]

    def _ask_reference(self, start: int, end: int, sea: bool, away: bool = False) -> None:
        en, zh = _REFERENCE_QUESTION
        what = "above sea level" if sea else "measured from something, not above the ground" if away else "not above the ground"
        what_zh = "是海拔高度" if sea else "是相对某物量的，不是离地高度" if away else "不是离地高度"
        self.ask("height_reference", start, end, en.format(what=what), zh.format(what_zh=what_zh))

    def _lead_in(self, start: int) -> int:
        """Where a height said against something starts with the open words before it that say "height" ("at
        altitude 120 m AMSL", 高度海拔120米): read or quoted with it, so no "altitude" is left to ask about alone."""
        view = self.scan.view()[max(0, start - 40) : start]
        lead = H.HEIGHT_LEAD_IN.search(view)
        if lead is None or not lead.group(0).strip():
            return start
        return start - (len(view) - lead.start()) + (len(lead.group(0)) - len(lead.group(0).lstrip()))

    def height_references(self) -> list[tuple[int, int, float]]:
        """Heights said against something: ground read, sea level converted or asked, anything else asked."""
        read: list[tuple[int, int, float]] = []
        for pattern in (H.HEIGHT_REF_AFTER, H.HEIGHT_REF_BEFORE):
            for m in self.scan.finditer(pattern):
                if not self.scan.is_open(m.start(), m.end()):
                    continue
                ref = m.group("ref").strip()
                if H.NOT_A_REFERENCE.match(ref):
                    continue  # "at 40 m over the weekend": a time, not a reference
                start = m.start()
                if pattern is H.HEIGHT_REF_BEFORE and not ref.startswith(("比", "高出", "高于", "超出", "离", "距", "相对")):
                    stop = m.start("ref") + len(m.group("ref"))
                    verbs = [v.end() for v in _VERB.finditer(self.scan.text, max(0, m.start() - 3), stop) if v.end() > start]
                    start = max([start, *verbs])  # 检查铁塔顶上方15米: the mission word is no part of the reference
                start = self._lead_in(start)
                raw = number(m.group("v"))
                if raw is None:
                    self.ask("altitude", start, m.end(), "which altitude exactly?", "具体飞多高？")
                    continue
                metres = _metres(raw, m.group("u"))
                sea = H.SEA_LEVEL.fullmatch(ref) is not None
                if H.GROUND.fullmatch(ref) or H.GROUND_NOUN.search(ref):
                    self.scan.claim(start, m.end())
                    read.append((start, m.end(), metres))
                    continue
                ground = self.limits.ground_amsl_m
                if sea and ground is not None:
                    agl = round(metres - ground, 2)
                    self.notes.append(f'"{self.scan.quote(start, m.end())}": {metres:g} m above sea level is '
                                      f"{agl:g} m above the ground, which is {ground:g} m above sea level here")
                    self.scan.claim(start, m.end())
                    read.append((start, m.end(), agl))
                    continue
                self._ask_reference(start, m.end(), sea, away=ref.startswith(("离", "距", "clear")))
                if _VERB_BEFORE.search(self.scan.text[max(0, start - 12) : start]):
                    # 检查铁塔顶上方15米: the mast is what is inspected, as well as what the height is said against
                    for target in _TARGET_IN.finditer(self.scan.text, start, m.end()):
                        self.scan.release(target.start(), target.end())
        return read

    def _not_a_height(self, m: re.Match[str], leading_number: bool) -> tuple[str, int, int] | None:
        """Why the length ``m`` is not the height to fly above ground (a question kind) and the words that say so,
        or ``None``. The quote takes in those words, so an answer ("40") replaces the whole distance."""
        before = self._clause_before(m.start())
        relative = H.RELATIVE_BEFORE.search(before)
        if relative:  # 比塔顶高15米, "higher than the mast at 15 m"
            return "height_reference", m.start() - (len(before) - relative.start()), m.end()
        after = H.NOT_HEIGHT_AFTER.match(self.scan.text, m.end()) or H.OBJECT_SIZE_AFTER.match(self.scan.text, m.end())
        if after:  # "15 m from the fence", 50米外, "the 40 m high tower"
            return "altitude", m.start(), max(after.end(), self.scan.open_run(m.start(), after.end())[1])
        lead = None if not leading_number or _SAID_AS_HEIGHT.search(m.group(0)) else H.NOT_HEIGHT_BEFORE.search(before)
        if lead:  # "within 50 m", 半径50米 (but "from 40 m up" is a height)
            return "altitude", m.start() - (len(before) - lead.start()), m.end()
        return None

    def _take(self, m: re.Match[str], leading_number: bool, values: list[tuple[int, int, float]]) -> None:
        raw = number(m.group("v"))
        if raw is None:
            self.ask("altitude", m.start(), m.end(), "which altitude exactly?", "具体飞多高？")
            return
        bound = H.ALTITUDE_BOUND_AFTER.match(self.scan.text, m.end()) or H.ALTITUDE_BOUND_BEFORE.search(
            self.scan.text[max(0, m.start() - 16) : m.start()]
        )
        if bound:  # "below 80 m", 80米以下: a limit, not the altitude to fly
            self.ask("altitude", m.start(), m.end(), "is this the altitude to fly, or a limit?", "这是飞行高度还是限制？")
            return
        why = self._not_a_height(m, leading_number)
        if why is not None and why[0] == "height_reference":
            self._ask_reference(why[1], why[2], sea=False)
            return
        if why is not None:
            self.ask(why[0], why[1], why[2], *_NOT_HEIGHT_QUESTION)
            return
        self.scan.claim(m.start(), m.end())
        values.append((m.start(), m.end(), _metres(raw, m.group("u"))))

    def altitude(self, values: list[tuple[int, int, float]]) -> None:
        """Every altitude said as one ("at 40 m", 高度50米, "80 m altitude") into ``values``; vague ones asked."""
        for pattern in H.ALTITUDE:
            for m in self.scan.finditer(pattern):
                self._take(m, not self.scan.text[m.start() : m.start("v")].strip(), values)
        for m in self.scan.finditer(H.VAGUE_ALTITUDE):
            self.ask("altitude", m.start(), m.end(), "which altitude exactly, in metres?", "具体飞多高（米）？")

    def bare_lengths(self, values: list[tuple[int, int, float]]) -> None:
        """A length left alone at the end of its clause ("…with thermal, 40 m.", "热成象 50m"), or followed only by
        words another step read (a time, a sensor — never a target: 50米铁塔), is the height to fly."""
        for m in self.scan.finditer(H.BARE_LENGTH):
            view = self.scan.view()
            if H.CLAUSE_END_AFTER.match(view, m.end()) is None and not (
                re.match(r"\s*(?:(?:at|on|@)\s*)?\x00", view[m.end() :]) and not _TARGET_AFTER.match(self.scan.text, m.end())
            ):
                continue  # an open word follows it in its clause ("40 m from …"): left for the residual to ask about
            if _TARGET_BEFORE.search(self._clause_before(m.start())):
                continue  # 消防通道100米, "the gate 30 m": the length of a lane or a distance from a point, as often
            self._take(m, True, values)

    def settle_altitude(self, values: list[tuple[int, int, float]]) -> tuple[float | None, bool]:
        """The one altitude to fly (above ground) out of ``values``, and whether one was stated."""
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
