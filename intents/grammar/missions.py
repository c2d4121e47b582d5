"""Which mission a request names — or that it names two, which are never merged into one.

Targets (消防栓, fire lanes, roofs …) and mission words (mapping, survey, inspect,
patrol …) are found and claimed; the request is cut into clauses at punctuation and
conjunctions (", and also", 然后, 另外 …), and each clause's mission is decided by
the reader's precedence: mapping words → AREA_SURVEY; point targets → POINT_INSPECTION
("巡检消防栓" inspects hydrants); fire lanes → FIRE_LANE_PATROL; then survey, inspect
and patrol words. A clause whose only mission word is a check ("and check for parked
cars") continues the mission before it.

A verb alone names no mission: "下午两点巡一下", "patrol at 15:30", "check it tomorrow" never
say what to patrol or check (the fleet patrols fire lanes and inspects hydrants, roofs …;
which, the words must say), so such a request asks what to do. A survey of points ("a
thermal survey of the roofs", 把屋顶用热成像扫一遍) is either an inspection of each point or a
survey of the whole area: asked (``asked``), never chosen in silence.

When two different missions are named — in two clauses ("survey the lot ASAP at 30 m,
and also patrol the fire lanes tomorrow at 10") or in one ("patrol and map the yard")
— the result is a ``split``: one span per mission, and no mission type. A merged
Intent would carry one mission with the other's time, height or sensors, which is the
silent-wrong reading this reader exists to prevent; so each mission becomes its own
question (``intents.questions.QuestionKind.MISSION_SPLIT``), quoting the words that
belong to it, and an answer keeps one of them (``intents.dialogue``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import intents.grammar.vocabulary as V
from intents.intent import MissionType, Target
from intents.text.scan import Scan
from intents.time.reading import Problem

__all__ = ["MissionReading", "MissionSpan", "read_missions", "survey_questions"]

_BOUNDARY = re.compile(
    r"[，,。;；!！?？\n]+\s*(?:(?:and\s+)?(?:also|then|plus)\b|and\b|然后|另外|还有|再|并且|同时|顺便|以及|接着)?"
    r"|\b(?:and\s+also|and\s+then|and|then|also|plus|as\s+well\s+as|after\s+that|afterwards)\b"
    r"|\s*[+&]\s*|然后|另外|还有|并且|同时|顺便|以及|接着|外加|加上|和|跟|与|再"
    r"|(?:加|并|附带|捎带)(?=\s*(?:测绘|航测|航拍|测|巡|检查|检测|排查|查|扫|拍|看))",  # 检查消防栓加测绘厂区: two missions
    re.ASCII,
)

_KIND_OF_WORD = {"map": MissionType.AREA_SURVEY, "survey": MissionType.AREA_SURVEY,
                 "inspect": MissionType.POINT_INSPECTION, "patrol": MissionType.FIRE_LANE_PATROL}


@dataclass(frozen=True)
class MissionSpan:
    """One mission of a split request: its type, the words quoted, and the stretch removed when another is kept."""

    mission: MissionType
    start: int
    end: int
    cut_start: int
    cut_end: int


@dataclass
class MissionReading:
    mission: MissionType | None
    targets: set[Target]
    split: list[MissionSpan] = field(default_factory=list)
    asked: list[tuple[int, int, list[tuple[int, int]], list[tuple[int, int]]]] = field(default_factory=list)
    """Surveys of points: the span asked about, the survey words in it, and the targets in it."""


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    what: Target | str | None  # a target, a mission word ("map", "survey", "inspect", "patrol"), None: an area noun


def _decide(mentions: list[_Mention]) -> list[MissionType] | None:
    """The missions one clause names, by the reader's precedence; two or more: the clause mixes missions; ``None``:
    a survey of points, which is asked; none: no mission, or a verb alone that does not say what to do."""
    targets = {m.what for m in mentions if isinstance(m.what, Target)}
    words = {m.what for m in mentions if isinstance(m.what, str) and not isinstance(m.what, Target)}
    area_nouns = any(m.what is None for m in mentions)
    points = targets & V.POINT_TARGETS
    lanes = Target.FIRE_LANES in targets
    if "map" in words and (lanes or "patrol" in words):
        return [MissionType.AREA_SURVEY, MissionType.FIRE_LANE_PATROL]
    if "map" in words:
        return [MissionType.AREA_SURVEY]
    if points and lanes:
        return [MissionType.POINT_INSPECTION, MissionType.FIRE_LANE_PATROL]
    if points and "survey" in words and not words & {"inspect", "patrol"}:
        return None  # "a thermal survey of the roofs": each roof inspected, or the whole area surveyed?
    if points:
        return [MissionType.POINT_INSPECTION]
    if lanes:
        return [MissionType.FIRE_LANE_PATROL]
    if "survey" in words or (area_nouns and words & {"inspect", "patrol"}):
        return [MissionType.AREA_SURVEY]
    return []  # "巡一下", "patrol at 15:30", "check it": a verb that does not say what


def _belongs(mention: _Mention, mission: MissionType) -> bool:
    if isinstance(mention.what, str) and not isinstance(mention.what, Target):  # Target is a str enum too
        return _KIND_OF_WORD[mention.what] is mission
    if mention.what is None:
        return mission is MissionType.AREA_SURVEY
    if mention.what is Target.FIRE_LANES:
        return mission is MissionType.FIRE_LANE_PATROL
    return mission is MissionType.POINT_INSPECTION


def read_missions(scan: Scan) -> MissionReading:
    """Claim the targets and mission words of ``scan`` and decide the mission, or split it."""
    mentions: list[_Mention] = []
    for target, pattern in V.TARGET_PATTERNS:
        for m in scan.finditer(re.compile(pattern, re.ASCII)):
            scan.claim(m.start(), m.end())
            mentions.append(_Mention(m.start(), m.end(), target))
    for name, pattern in (("map", V.MAPPING), ("survey", V.SURVEY), ("inspect", V.INSPECT), ("patrol", V.PATROL)):
        for m in scan.finditer(pattern):
            scan.claim(m.start(), m.end())
            mentions.append(_Mention(m.start(), m.end(), name))
    mentions.sort(key=lambda m: m.start)
    targets = {m.what for m in mentions if isinstance(m.what, Target)}
    # clauses: (start, end, start of the boundary before it)
    clauses: list[tuple[int, int, int]] = []
    pos, before = 0, 0
    for b in _BOUNDARY.finditer(scan.text):
        clauses.append((pos, b.start(), before))
        pos, before = b.end(), b.start()
    clauses.append((pos, len(scan.text), before))
    found: list[tuple[MissionType, int, int, int | None]] = []  # mission, quote start/end, boundary (None: words)
    asked: list[tuple[int, int, list[tuple[int, int]], list[tuple[int, int]]]] = []
    bare: list[_Mention] = []
    for start, end, boundary in clauses:
        inside = [m for m in mentions if start <= m.start < end]
        missions = _decide(inside)
        if missions is None:
            surveys = [(m.start, m.end) for m in inside if m.what == "survey"]
            points = [(m.start, m.end) for m in inside if isinstance(m.what, Target) and m.what in V.POINT_TARGETS]
            asked.append((min(m.start for m in inside), max(m.end for m in inside), surveys, points))
            continue
        if not missions:
            bare.extend(m for m in inside if m.what in ("patrol", "inspect"))  # a verb alone: what to patrol, check?
            continue
        if len(missions) > 1:  # one clause, two missions: quote each mission's own words
            for mission in missions:
                own = [m for m in inside if _belongs(m, mission)]
                found.append((mission, min(m.start for m in own), max(m.end for m in own), None))
            continue
        if found and all(m.what == "inspect" for m in inside):
            continue  # "… and check for parked cars": part of the mission before it
        content = scan.text[start:end]
        lead = len(content) - len(content.lstrip())
        found.append((missions[0], start + lead, len(scan.text[:end].rstrip()), boundary))
    if asked and len({f[0] for f in found}) <= 1:
        return MissionReading(None, targets, asked=asked)
    named = {f[0] for f in found}
    if found and any(_KIND_OF_WORD[str(m.what)] not in named and (m.what == "patrol" or m.start < found[0][1])
                     for m in bare):
        # "patrol and map the east yard": the patrol's object is not said, and it is another mission than the map's
        # (a check after a mission, "… and check for parked cars", is part of it; so is "… fire road, patrol it"):
        # which mission is asked
        return MissionReading(None, targets)
    if len({f[0] for f in found}) <= 1:
        return MissionReading(found[0][0] if found else None, targets)
    split: list[MissionSpan] = []
    clause_based = [f for f in found if f[3] is not None]
    for mission, start, end, boundary in found:
        if boundary is None:
            split.append(MissionSpan(mission, start, end, start, end))
            continue
        later = [f for f in clause_based if f[1] > start]
        if clause_based[0][1] == start:  # the first mission: up to where the next one starts
            cut = (start, later[0][1] if later else end)
        else:  # a later one: from the boundary before it up to the next one's boundary (its own trailing words)
            cut = (boundary, later[0][3] if later and later[0][3] is not None else len(scan.text))
        split.append(MissionSpan(mission, start, end, *cut))
    return MissionReading(None, targets, split)


def _rewritten(scan: Scan, start: int, end: int, edits: list[tuple[tuple[int, int], str]], chinese: bool) -> str:
    """The operator's words of ``[start, end)`` with each span of ``edits`` (normalised offsets) replaced."""
    written = scan.written
    ws, we = scan.written_span(start, end)
    out, last = [], ws
    for (a, b), words in sorted(edits):
        a, b = scan.written_span(a, b)
        out += [written[last:a], f" {words} " if words and not chinese else words]
        last = b
    out.append(written[last:we])
    joined = " ".join("".join(out).split())
    return re.sub(r"\s+(?:of|on|over|for|across)(?:\s+(?:the|all|all\s+the|our|these|those|its))?$", "", joined)


def survey_questions(scan: Scan, asked: list[tuple[int, int, list[tuple[int, int]], list[tuple[int, int]]]],
                     chinese: bool) -> list[Problem]:
    """One ``mission`` question per survey of points; its answer "inspection" or "survey" puts that mission's words
    in place of the quote (``Question.choices``): "survey of the roofs" → "inspection of the roofs" / "area survey"."""
    inspection, survey = ("检查", "区域测绘") if chinese else ("inspection", "area survey")
    problems = []
    for start, end, surveys, points in asked:
        choices = (("inspection", _rewritten(scan, start, end, [(sp, inspection) for sp in surveys], chinese)),
                   ("survey", _rewritten(scan, start, end, [(sp, survey) for sp in surveys] + [(sp, "") for sp in points],
                                         chinese)))
        problems.append(Problem("mission", start, end, *V.SURVEY_OF_POINTS_QUESTION, choices))
    return problems
