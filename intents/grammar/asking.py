"""From what the reader could not read to the questions it asks: kind, quote, a stable id, the text.

Each ``Problem`` (a span the reader recognised as a parameter but could not read
exactly) becomes one ``intents.questions.Question``; a request that names no mission
gets one question about the whole request (id ``mission``); a request with two
missions gets one ``mission_split`` question per mission, each saying what would be
planned if that one is kept, and nothing else but the instructions question — the
other questions would mix the two missions' times and heights, and are asked again
about the mission that is kept. Ids are the kind and the quote's offset in the request
as written, so the same request read again gives the same ids (``intents.dialogue``).
"""

from __future__ import annotations

import intents.grammar.vocabulary as V
from intents.grammar.missions import MissionSpan
from intents.intent import MissionType
from intents.questions import Question, QuestionKind, question_id
from intents.text.scan import Scan
from intents.time.reading import Problem

__all__ = ["MISSION_NAMES", "compose", "missing_items"]

MISSION_NAMES = {
    MissionType.FIRE_LANE_PATROL: ("fire-lane patrol", "消防通道巡查"),
    MissionType.AREA_SURVEY: ("area survey", "区域测绘"),
    MissionType.POINT_INSPECTION: ("point inspection", "点位检查"),
}


def _kept_text(scan: Scan, split: list[MissionSpan], keep: MissionSpan) -> str:
    """The request as written without the other missions' words: what is read when ``keep`` is kept."""
    text = scan.written
    cuts = sorted(scan.written_span(m.cut_start, m.cut_end) for m in split if m is not keep)
    out, last = [], 0
    for s, e in cuts:
        out.append(text[last:s])
        last = max(last, e)
    out.append(text[last:])
    return " ".join("".join(out).split()).strip(" ,，。;；")


def _split_questions(scan: Scan, split: list[MissionSpan], chinese: bool) -> list[Question]:
    questions = []
    for mission in split:
        start, end = scan.written_span(mission.cut_start, mission.cut_end)
        kept = _kept_text(scan, split, mission)[:200]
        en, zh = MISSION_NAMES[mission.mission]
        text = (
            f"这个请求包含{len(split)}个任务，一个请求只规划一个：这里只规划{zh}“{kept}”，其余的另行提交？（是/否）"
            if chinese else
            f'This request holds {len(split)} missions and one request plans one: plan only the {en} "{kept}" here, '
            "and send the rest as its own request? (yes / no)"
        )
        questions.append(Question(
            id=question_id(QuestionKind.MISSION_SPLIT, start), kind=QuestionKind.MISSION_SPLIT,
            quote=scan.quote(mission.start, mission.end), text=text[:400], start=start, end=end, mission=mission.mission.value,
        ))
    return questions


def compose(
    scan: Scan, problems: list[Problem], *, mission: MissionType | None, split: list[MissionSpan],
    instructions: list[tuple[int, int, str]], chinese: bool,
) -> list[Question]:
    """Every question of one reading, in the order the operator reads them."""
    questions: list[Question] = []
    if split:
        questions.extend(_split_questions(scan, split, chinese))
    elif mission is None and not any(p.kind == QuestionKind.MISSION.value for p in problems):
        text = V.QUESTION_MISSION_ZH if chinese else V.QUESTION_MISSION_EN
        questions.append(Question(id=question_id(QuestionKind.MISSION, None), kind=QuestionKind.MISSION, text=text))
    if not split:
        for p in sorted(problems, key=lambda p: (p.start, p.end)):
            quote = scan.quote(p.start, p.end) or scan.text[p.start : p.end]
            start, end = scan.written_span(p.start, p.end)
            text = f"“{quote}”：{p.why_zh}" if chinese else f'"{quote}": {p.why_en}'
            questions.append(Question(id=question_id(QuestionKind(p.kind), start), kind=QuestionKind(p.kind),
                                      quote=quote[:500], text=text[:400], start=start, end=end, choices=dict(p.choices)))
    for start_n, end_n, quote in instructions:  # one each, so each can be answered (or dropped) on its own
        start, end = scan.written_span(start_n, end_n)
        text = (f"请求中含有指令“{quote}”，不会被执行，需要人确认：去掉它（回答“去掉”）还是重新说明？" if chinese
                else f'The request contains an instruction, "{quote}", which is not carried out and needs a person '
                "to confirm: plan without it (answer \"drop\"), or restate?")
        questions.append(Question(id=question_id(QuestionKind.INSTRUCTION, start), kind=QuestionKind.INSTRUCTION,
                                  quote=quote[:500], text=text[:400], start=start, end=end))
    unique: dict[str, Question] = {}
    for q in questions:
        unique.setdefault(q.id, q)
    return list(unique.values())


def missing_items(questions: list[Question]) -> list[str]:
    """What the Intent lists as missing: one item per kind asked about, in order."""
    items: list[str] = []
    for q in questions:
        item = V.MISSING.get(q.kind.value, q.kind.value)
        if item not in items:
            items.append(item)
    return items
