"""The offline reader: a deterministic zh + en request → ``Intent`` that never guesses.

Used when no language model is configured (the demo, CI), as the baseline the
LLM is scored against, and as the evidence the LLM's answer is checked against
(``intents.verify``). Same text in, same Intent out; no clock (``now`` is
passed in), no network. The words live in ``intents.grammar.vocabulary``.

**Fail closed.** The reader accounts for every span of the request
(``intents.text.scan``): recognisers claim what they read, in this order —

1. instructions: text that tries to give orders ("ignore previous instructions",
   "审批已通过", "直接起飞", "launch drone 7") is claimed to the end of its clause
   and kept *verbatim* in ``Intent.instructions``; it is not read for fields
   and not deleted: the rest of the request is still read in full;
2. a focus or an order of priority inside the area (重点看…, 先看北门那个, "start
   with the ones near the gate", "most important is …", "the east gate is the
   priority", 东门最要紧): asked, to the end of its
   clause; the selected region named in the text ("region 1001", 1001区);
3. heights said against something (``intents.grammar.heights``): ground read, sea
   level converted or asked, anything else (比塔顶高15米, "over the treetops") asked;
4. targets and mission words (消防通道, emergency access roads, hydrants, roofs,
   survey, mapping, 测绘, inspect, patrol, 巡查 …; a verb alone, "巡一下", names no
   mission, and a survey of points, "a thermal survey of the roofs", is asked:
   ``intents.grammar.missions``);
5. priority (紧急/urgent, 尽快/asap, 不急/no rush);
6. altitude with its unit (m, metres, 米, ft, feet, 英尺, km, 公里), checked against the caller's ``Limits``; then a
   coverage target ("cover at least 99.5 %", 覆盖率不低于99.5%), for area surveys only, checked against them too;
7. time (``intents.time.parse``);
8. sensors and their negation (不要用热成像, no thermal, don't bother with IR): a negation covers its own item and
   those listed with it by or/nor/和/、; an item said to be wanted ("thermal yes", "with zoom", 开热成像) is required;
   an item after a negated one and a bare comma or "and" is asked; an item listed with a sensor is read as the one
   sensor it certainly means ("lidr and rgb cam": ``intents.grammar.lists``, ``.sensor_slips``) or asked; a word
   that means two sensors (激光), an infrared word not the thermal camera (近红外), a short token in a list that is no
   sensor ("rgb, zm and tmr"), a word in the place of equipment ("w/ LR": ``.equipment``) and "all sensors except
   X" are asked, "none but X" is X (``intents.grammar.sensor_exceptions``);
9. scope: "only X" becomes the caller's named region when ``places`` names X;
   any other restriction ("except the north section", 跳过…那段) is a question,
   because an area cannot be expressed as "the selection minus something";
10. a length left alone at the end of its clause ("…with thermal, 40 m."): the
    height, unless another is given (then the heights are settled: two are asked);

and then looks at what is left. Anything there that looks like a parameter — a number, a unit, a date or time word,
a place or scope word, a sensor word, a speed or overlap, an instruction word, a slip of a word that matters ("nxet":
``intents.grammar.slips``) — makes the Intent ask a question that quotes its words (``intents.grammar.quotes``).
Speeds, durations and spacings are claimed whole and asked before (``intents.grammar.rates``); a sensor said with
a hedge ("thermal optional") is asked (``intents.grammar.sensor_hedges``). Nothing the request says is ever replaced
by a default. Mission precedence: ``intents.grammar.missions``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime

import intents.grammar.vocabulary as V
from intents.grammar.asking import compose, missing_items
from intents.grammar.equipment import equipment_items
from intents.grammar.heights import HeightReading
from intents.grammar.lists import ListItem, list_items, short_items
from intents.grammar.missions import MissionSpan, read_missions, survey_questions
from intents.grammar.quantifiers import claim_quantifiers
from intents.grammar.rates import DURATION, DURATION_QUESTION, SPACING, SPACING_QUESTION, SPEED, SPEED_QUESTION, rates
from intents.grammar.slips import slips
from intents.grammar.quotes import MISSION_VERB, TRIMMED, quote_span
from intents.grammar.sensor_exceptions import ALL_BUT_QUESTION, sensor_exceptions
from intents.grammar.sensor_hedges import HEDGE_AFTER, HEDGE_BEFORE, wanted
from intents.grammar.sensor_slips import sensor_meant
from intents.intent import AreaRef, Intent, MissionType, Priority, RelativeDay, Sensor, Target, TimeSpec
from intents.stated_limits import Limits
from intents.questions import Question
from intents.text.scan import CLAIMED, Scan
from intents.time.parse import Problem, TimeReading, read_time

__all__ = ["EXTRACTOR_NAME", "Reading", "parse_offline", "read_offline"]

EXTRACTOR_NAME = "offline-grammar"

_CJK = re.compile(r"[\u4e00-\u9fff]")
_TARGET = re.compile("|".join(f"(?:{p})" for t, p in V.TARGET_PATTERNS if t is not None), re.ASCII)


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.ASCII)  # re caches compiled patterns: the tables stay plain strings


@dataclass
class Reading:
    """What the offline reader made of a request: the Intent and the evidence behind each field."""

    intent: Intent
    time: TimeReading
    altitude_found: bool = False
    sensor_spans: int = 0
    problems: list[Problem] = field(default_factory=list)
    priority_found: bool = False
    coverage_found: bool = False
    questions: list[Question] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # how a reading was decided (a.m./p.m. by the window, a zone)
    split: list[MissionSpan] = field(default_factory=list)  # two missions or more: never one Intent


class _Reader(HeightReading):
    def __init__(
        self, text: str, now: datetime | None, limits: Limits, places: Mapping[str, str] | None, region: str | None,
    ) -> None:
        self.scan = Scan(text)
        self.now = now
        self.limits = limits
        self.places = {self._key(k): v for k, v in (places or {}).items()}
        self.region = region
        self.problems: list[Problem] = []
        self.instructions: list[tuple[int, int, str]] = []
        self.notes: list[str] = []
        self.chinese = bool(_CJK.search(text))
        self.area: AreaRef | None = None

    def _today(self) -> date | None:
        return None if self.now is None else self.now.date()

    @staticmethod
    def _key(name: str) -> str:
        return re.sub(r"\s+", " ", name.strip().lower())

    def ask(self, kind: str, start: int, end: int, why_en: str, why_zh: str,
            choices: tuple[tuple[str, str], ...] = ()) -> None:
        self.scan.claim(start, end)
        self.problems.append(Problem(kind, start, end, why_en, why_zh, choices))

    # ------------------------------------------------------------------ 1. instructions

    def instructions_(self) -> None:
        for m in self.scan.finditer(V.INSTRUCTION):
            if not self.scan.is_open(m.start(), m.end()):
                continue
            strong = V.STRONG.search(m.group(0)) is not None
            end_match = (V.SENTENCE_END if strong else V.CLAUSE_END).search(self.scan.text, m.end())
            end = len(self.scan.text) if end_match is None else end_match.start()
            start = m.start()
            self.scan.claim(start, end)
            quote = self.scan.quote(start, end)
            if quote:
                self.instructions.append((start, end, quote[:500]))

    # ------------------------------------------------------------------ 1b. focus, the region named

    def focus(self) -> None:
        """"重点看3号消防栓", "especially the north gate", "先看北门那个", "start with the ones near the gate": claimed
        to the end of the clause and asked about. Its targets are no targets of the mission ("重点看3号消防栓" on a
        patrol is no hydrant inspection), but a mission word in it is still read, and with it its object ("first
        check the hydrant by …", 重点检查一下变压器: a verb alone names no mission)."""
        for m in self.scan.finditer(V.FOCUS):
            if not self.scan.is_open(m.start(), m.end()):
                continue
            end_match = V.CLAUSE_END.search(self.scan.text, m.end())
            end = len(self.scan.text) if end_match is None else end_match.start()
            stop = V.FOCUS_STOP.search(self.scan.text, m.end(), end)  # a day, time, height or sensor after it: read
            end = end if stop is None else stop.start()
            start = m.start()
            lead_start = self.scan.open_run(m.start(), m.end())[0]
            lead = self.scan.text[lead_start : m.start()]
            if lead.strip() and not MISSION_VERB.search(lead) and (
                not self.scan.text[m.end() : end].strip() or _CJK.match(m.group(0))
            ):  # "北门的先看", "3号楼那段优先", "东侧多拍点": the focus is (also) what comes before the marker
                start = lead_start
            self.ask("focus", start, end, *V.FOCUS_QUESTION)
            verbs = list(MISSION_VERB.finditer(self.scan.text, m.start(), end))
            for verb in verbs:
                self.scan.release(verb.start(), verb.end())
            if verbs:  # "first check the hydrant by …": the verb's own object is read with it (a verb alone is none)
                for target in _TARGET.finditer(self.scan.text, m.start(), end):
                    self.scan.release(target.start(), target.end())

    def region_named(self) -> None:
        """"region 1001" when region-1001 is selected is read; another region named is asked about."""
        def key(name: str) -> str:
            return re.sub(r"[^a-z0-9]", "", name.lower())

        def digits(name: str) -> str:
            return "".join(re.findall(r"\d+", name))

        for m in self.scan.finditer(V.REGION_NAMED):
            said = next((g for g in m.group("id", "rid", "raw", "eid", "zid", "zid2") if g), "")
            selected = self.region or ""
            if selected and (key(said) == key(selected) or key("region" + said) == key(selected)
                             or (digits(said) and digits(said) == digits(selected))):
                self.scan.claim(m.start(), m.end())
                continue
            where = selected if selected else "the map selection"
            where_zh = f"区域 {selected}" if selected else "地图上选定的区域"
            self.ask("region", m.start(), m.end(), f"this names another area than {where}, which is what is planned; which one?",
                     f"这里说的区域与{where_zh}（将按其规划）不同，是哪一个？")

    # ------------------------------------------------------------------ 2. targets and mission

    # ------------------------------------------------------------------ 3. priority

    def priority(self) -> tuple[Priority, bool]:
        found: list[Priority] = []
        for priority, pattern in V.PRIORITY:
            for m in self.scan.finditer(_rx(pattern)):
                self.scan.claim(m.start(), m.end())
                found.append(priority)
        if V.HIGH_TIME.search(self.scan.view()):
            found.append(Priority.HIGH)
        for priority in (Priority.URGENT, Priority.HIGH, Priority.LOW, Priority.NORMAL):
            if priority in found:
                return priority, True
        return Priority.NORMAL, False

    # ------------------------------------------------------------------ 6. sensors

    def sensors(self) -> tuple[list[Sensor], list[Sensor], int]:
        text = self.scan.view()
        hits: list[tuple[int, int, Sensor]] = []
        taken: list[tuple[int, int]] = []
        for m in V.SENSOR_NOT_THERMAL.finditer(text):  # 近红外, "IR illuminator": not the thermal camera, asked
            self.ask("sensor", m.start(), m.end(), *V.SENSOR_NOT_THERMAL_QUESTION)
            taken.append(m.span())
        for sensor, pattern in V.SENSOR_PATTERNS:
            for m in _rx(pattern).finditer(text):
                if any(m.start() < end and start < m.end() for start, end in taken):
                    continue  # 激光测距 is a rangefinder, not also a lidar
                hits.append((m.start(), m.end(), sensor))
                taken.append((m.start(), m.end()))
        hits = self._slips_in_lists(text, hits)
        for m in V.SENSOR_AMBIGUOUS.finditer(text):  # 激光, "laser": the lidar or the rangefinder, asked
            if not any(m.start() < end and start < m.end() for start, end, _ in hits):
                self.ask("sensor", m.start(), m.end(), *V.SENSOR_AMBIGUOUS_QUESTION)
        spans: list[tuple[int, int]] = []
        required: set[Sensor] = set()
        excluded: set[Sensor] = set()
        prev_end, prev_negated = -1, False
        prev_wanted: tuple[int, Sensor] | None = None  # where the last sensor wanted was said, and which
        for start, end, sensor in hits:
            before = text[max(0, start - 30) : start]
            neg_before = V.NEG_BEFORE.search(before)
            suffix = V.SENSOR_SUFFIX.match(text[end:])
            end_all = end + (suffix.end() if suffix else 0)
            neg_after = V.NEG_AFTER.search(text[end_all : end_all + 24])
            broken = V.SENSOR_BROKEN.match(text[end_all : end_all + 30]) or HEDGE_AFTER.match(text[end_all : end_all + 30])
            if broken or (hedge := HEDGE_BEFORE.search(before)):  # "thermal is broken", "thermal optional": neither wanted nor not
                self.ask("sensor", start - (0 if broken else len(before) - hedge.start()), end_all + (broken.end() if broken else 0),
                         "is this sensor wanted or not?", "这个传感器要用还是不用？", wanted(self.scan.quote(start, end_all)))
                prev_end, prev_negated, prev_wanted = end_all, False, None
                continue
            negated = bool(neg_before) or bool(neg_after)
            affirmed = None if negated else V.AFFIRM_BEFORE.search(before) or V.AFFIRM_AFTER.match(text[end_all : end_all + 24])
            only = None if neg_before else V.SENSOR_ONLY.search(before)
            only_after = not negated and suffix is not None and V.ONLY_AFTER.search(suffix.group(0).rstrip())
            if not negated and not affirmed and not only and not only_after and prev_negated and V.COMMA_LINK.match(
                    text[prev_end:start]):
                # "no thermal, zoom": the zoom wanted, or refused too? asked, never taken either way
                self.ask("sensor", start, end_all, "is this sensor wanted or not?", "这个传感器要用还是不用？")
                prev_end, prev_negated, prev_wanted = end_all, False, None
                continue
            if not negated and not affirmed and not only and not only_after and prev_negated and V.CONJ.match(
                    text[prev_end:start]):
                negated = True
            if not negated and prev_wanted is not None and V.CHOICE.match(text[prev_end:start]):
                # "lidar or thermal": one of them, which the Intent cannot say; asked, neither taken
                required.discard(prev_wanted[1])
                self.ask("sensor", prev_wanted[0], end_all, "which of these sensors is wanted?", "要用其中哪一种传感器？")
                prev_end, prev_negated, prev_wanted = end_all, False, None
                continue
            lead = neg_before or only or (affirmed if affirmed is not None and affirmed.re is V.AFFIRM_BEFORE.compiled else None)
            claim_start = start - (len(before) - lead.start()) if lead else start
            tail = neg_after or (affirmed if affirmed is not None and affirmed.re is V.AFFIRM_AFTER.compiled else None)
            claim_end = end_all + (tail.end() if tail else 0)
            self.scan.claim(claim_start, claim_end)
            (excluded if negated else required).add(sensor)
            prev_end, prev_negated = end_all, negated
            prev_wanted = None if negated else (claim_start, sensor)
            spans.append((start, end_all))
        self._claim_joints(text, spans)
        self.list_items(spans)
        for s, e in short_items(self.scan.text, spans, [(s, e) for s, e, _ in hits], self._written):  # "rgb, zm and tmr"
            self.ask("sensor", s, e, "this short word is listed with the sensors; which sensor is meant, if any?",
                     "这个缩写和传感器列在一起，指的是哪种传感器？")
        both = required & excluded
        if both:
            s, e = hits[0][0], hits[-1][1]
            self.ask("sensor", s, e, "is this sensor wanted or not?", "这个传感器要用还是不用？")
            required -= both
            excluded -= both
        return sorted(required, key=lambda s: s.value), sorted(excluded, key=lambda s: s.value), len(hits)

    @staticmethod
    def _with_suffix(text: str, hits: list[tuple[int, int, Sensor]]) -> list[tuple[int, int]]:
        spans = []
        for start, end, _ in hits:
            suffix = V.SENSOR_SUFFIX.match(text[end:])
            spans.append((start, end + (suffix.end() if suffix else 0)))
        return spans

    def _slips_in_lists(self, text: str, hits: list[tuple[int, int, Sensor]]) -> list[tuple[int, int, Sensor]]:
        """Each item listed with a sensor that is a slip of one ("lidr and rgb cam", 热成橡跟变焦) becomes a hit
        itself, so its negation and its own list are read like any other; a chain of them is followed (bounded)."""
        hits = sorted(hits)
        for _ in range(4):
            new = []
            for item in list_items(text, self._with_suffix(text, hits)) + equipment_items(text):  # "with lidr" too
                meant = sensor_meant(text[item.start : item.end])
                if meant is not None and not any(item.start < e and s < item.end for s, e, _ in hits + new):
                    new.append((item.start + meant[0], item.end, meant[1]))
            if not new:
                break
            hits = sorted(hits + new)
        return hits

    def _written(self, start: int, end: int) -> str:
        s, e = self.scan.written_span(start, end)
        return self.scan.written[s:e]

    def _claim_joints(self, text: str, spans: list[tuple[int, int]]) -> None:
        """The joint between two sensors read ("以及", "as well as") and a label before the list ("sensors:") are read."""
        for (_, prev_end), (start, _) in zip(spans, spans[1:]):
            if V.LIST_JOINT.match(text[prev_end:start]):
                self.scan.claim(prev_end, start)
        if spans:
            label = V.SENSOR_LABEL.search(text[max(0, spans[0][0] - 20) : spans[0][0]])
            if label:
                self.scan.claim(spans[0][0] - (len(text[max(0, spans[0][0] - 20) : spans[0][0]]) - label.start()), spans[0][0])

    def list_items(self, spans: list[tuple[int, int]]) -> None:
        """An item of a list of sensors that was read as nothing ("laser range finder + hd kam", 热成像和夜视仪): a
        sensor the reader does not know is asked about, never dropped. What the residual step would ask about anyway
        (a number, a unit, a time word) is left to it, with its own question; a sensor word ("multispec") is asked here."""
        view = self.scan.view()
        slots = {(item.start, item.end) for item in equipment_items(view, frozenset(s for s, _ in spans))}  # "w/ LR", 用LR: no list around it
        for item in list_items(view, spans) + [ListItem(s, e, sure=True) for s, e in sorted(slots)]:
            s, e = item.start, item.end
            piece = view[s:e]
            if not item.sure or not self.scan.is_open(s, e):
                continue
            if re.search(r"\d", piece) or any(rx.search(piece) for kind, rx, _, _ in V.RESIDUAL_RX if kind != "sensor"):
                continue  # a number, a unit, a time word: the residual step asks with its own question
            if (s, e) in slots:
                self.ask("sensor", s, e, "this is said where equipment goes but is no sensor the reader knows; which sensor is"
                         " meant, if any?", "这里说的是要带的设备，但不是已知的传感器；指的是哪种传感器（如果有）？")
                continue
            self.ask("sensor", s, e, "this is listed with the sensors but is none the reader knows; which sensor is meant?",
                     "这里和传感器列在一起，但不是已知的传感器，指的是哪种传感器？")

    # ------------------------------------------------------------------ 7. scope

    def scope(self) -> None:
        for m in self.scan.finditer(V.SCOPE):
            if not self.scan.is_open(m.start(), m.end()):
                continue
            end = self._open_after(m.end())
            rest = self._key(re.sub(r"^\s*(?:the|去|巡|查|飞|测|检|看|要|需要|需)?\s*", "", self.scan.view()[m.end() : end]))
            rest = re.sub(r"^the\s+", "", rest)
            word = m.group(0)
            restricting = word in ("only", "just the", "只", "仅", "光")
            if restricting and rest in self.places and self.area is None:
                self.area = AreaRef(kind="region", region_id=self.places[rest])
                self.scan.claim(m.start(), end)
                continue
            self.ask(
                "scope", m.start(), end,
                "this restricts the area, which can only be the selected area or a named region; which area exactly?",
                "这限定了范围，而范围只能是选定区域或已命名区域；具体是哪块区域？",
            )

    def _open_after(self, pos: int) -> int:
        """The end of the open words after ``pos`` (up to a claimed word or the end of the clause)."""
        view, text = self.scan.view(), self.scan.text
        end = pos
        i = pos
        while i < len(text) and text[i] not in "，,。;；!！?？\n":
            if view[i] == CLAIMED:
                break  # another recogniser's span
            if view[i] != " ":
                end = i + 1
            i += 1
        return end

    # ------------------------------------------------------------------ 8. what is left

    def residual(self) -> None:
        for m in V.ORDINAL_MISSION.finditer(self.scan.text):
            first = m.start() + m.group(0).lower().index("first")
            if self.scan.is_open(first, first + 5):
                self.scan.claim(m.start(), m.end())
        for m in self.scan.finditer(V.FILLER):
            self.scan.claim(m.start(), m.end())
        for kind, pattern, en, zh in V.RESIDUAL_RX:
            for m in self.scan.finditer(pattern):
                if not self.scan.is_open(m.start(), m.end()) or not m.group(0).strip():
                    continue
                start, end = self.scan.open_run(m.start(), m.end())
                if kind in TRIMMED:
                    start, end = quote_span(self.scan.text, (start, end), (m.start(), m.end()))
                if kind == "instruction":
                    self.scan.claim(start, end)
                    quote = self.scan.quote(start, end)
                    if quote:
                        self.instructions.append((start, end, quote[:500]))
                    continue
                self.ask(kind, start, end, en, zh)
        for start, end, meant, kind in slips(self.scan.view()):  # "nxet monday": asked, never dropped
            self.ask(kind, start, end, f'is this "{meant}"? it was not read; what is meant?',
                     f"这是“{meant}”吗？没有读懂，指的是什么？", choices=(("yes", meant),))

    # ------------------------------------------------------------------ the Intent

    def read(self) -> Reading:
        self.instructions_()
        self.focus()
        self.region_named()
        self.problems.extend(rates(self.scan, SPEED, SPEED_QUESTION))  # "速度每秒6米": a speed, never a height
        self.problems.extend(rates(self.scan, SPACING, SPACING_QUESTION))  # "间距10米": between lines, never a height
        heights = self.height_references()
        missions = read_missions(self.scan)
        mission, targets = missions.mission, missions.targets
        for problem in survey_questions(self.scan, missions.asked, self.chinese):  # "a thermal survey of the roofs"
            self.ask(problem.kind, problem.start, problem.end, problem.why_en, problem.why_zh, problem.choices)
        priority, priority_found = self.priority()
        self.altitude(heights)
        coverage, coverage_found = self.coverage(mission)
        time = read_time(self.scan, self.now)
        self.problems.extend(rates(self.scan, DURATION, DURATION_QUESTION))  # "for 20 minutes": no clock, no offset
        self.problems.extend(time.problems)
        self.notes.extend(time.notes)
        for phrase in sensor_exceptions(self.scan):  # "all sensors except thermal", 除了热成像都带上: asked whole
            self.ask("sensor", phrase.start, phrase.end, *ALL_BUT_QUESTION, choices=phrase.choices)
        sensors, excluded, sensor_spans = self.sensors()
        self.scope()
        self.bare_lengths(heights)
        altitude_m, altitude_found = self.settle_altitude(heights)
        claim_quantifiers(self.scan)  # "every hydrant": all of them, no time (after the time reader took "every day")
        self.residual()
        if mission is MissionType.AREA_SURVEY and not targets - {Target.FIRE_LANES}:
            targets = {Target.AREA}
        self.instructions.sort()
        questions = compose(self.scan, self.problems, mission=mission, split=missions.split,
                            instructions=self.instructions, chinese=self.chinese)
        texts = [q.text for q in questions]
        if len(texts) > 8:
            texts = texts[:7] + [texts[7][:300] + " …"]
        when = TimeSpec(
            day=time.day if time.day is not None else RelativeDay.TODAY if time.date in (None, self._today()) else None,
            date=time.date,
            clock=time.clock,
            part_of_day=time.part,
            asap=time.asap,
        )
        intent = Intent(
            mission_type=mission,
            area=self.area or AreaRef(kind="selection"),
            when=when,
            sensors=sensors,
            excluded_sensors=excluded,
            altitude_m=altitude_m,
            coverage_target=coverage,
            targets=sorted(targets, key=lambda t: t.value),
            priority=priority,
            summary=_summary(mission, when, sensors, excluded, altitude_m, coverage, time.said_in),
            missing=missing_items(questions)[:8],
            clarification_questions=texts,
            instructions=[q for _, _, q in self.instructions][:5],
        )
        return Reading(
            intent=intent, time=time, altitude_found=altitude_found, sensor_spans=sensor_spans,
            problems=list(self.problems), priority_found=priority_found, coverage_found=coverage_found,
            questions=questions, notes=list(self.notes), split=missions.split,
        )


def _summary(
    mission: MissionType | None, when: TimeSpec, sensors: list[Sensor], excluded: list[Sensor], altitude_m: float | None,
    coverage: float | None = None, said_in: str | None = None,
) -> str:
    """A one-line restatement built from the fields only (never echoes the user's text)."""
    bits = [mission.value if mission else "UNSPECIFIED_MISSION",
            when.date.isoformat() if when.date else (when.day or RelativeDay.TODAY).value]
    if when.clock:
        bits.append(when.clock + (f" (said {said_in})" if said_in else ""))
    elif when.part_of_day:
        bits.append(when.part_of_day.value)
    elif when.asap:
        bits.append("ASAP")
    if sensors:
        bits.append("with " + "+".join(s.value for s in sensors))
    if excluded:
        bits.append("without " + "+".join(s.value for s in excluded))
    if altitude_m is not None:
        bits.append(f"at {altitude_m:g} m")
    if coverage is not None:
        bits.append(f"imaging at least {coverage:.1%}")
    return " ".join(bits)[:120]


def read_offline(
    text: str,
    *,
    now: datetime | None = None,
    limits: Limits | None = None,
    places: Mapping[str, str] | None = None,
    region: str | None = None,
) -> Reading:
    """Read ``text`` span by span. ``now`` is the user's local time (needed for dates and offsets);
    ``limits`` the caller's altitude bounds; ``places`` region names → ids the request may name; ``region``
    the selected region's id (the request may name it: "region 1001")."""
    return _Reader(text, now, limits or Limits(), places, region).read()


def parse_offline(
    text: str,
    *,
    now: datetime | None = None,
    limits: Limits | None = None,
    places: Mapping[str, str] | None = None,
    region: str | None = None,
) -> Intent:
    """The ``Intent`` of ``text`` by the offline reader (area: the caller's, unless ``places`` matched)."""
    return read_offline(text, now=now, limits=limits, places=places, region=region).intent
