"""intents.grammar: a priority or focus that the Intent cannot express is asked about in every form (the lead's
independent batch d, class 2: "Check the gates at 10:15 tomorrow; the east gate is the priority." was read as a HIGH
priority request), while urgency, a time and an ordinal of the flight are still read.

The plan covers the selected area evenly and has no order inside it, so "X is the priority", "X matters most", "X
first", "mostly X", "start with X", 以X为主, X优先, 重点是X, X最要紧 … are asked (the focus question); said of the job
itself ("this is top priority", "priority: high", 优先级：高) it is urgency. ``now`` is Wednesday 2026-12-02 07:30.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from intents.grammar.reader import read_offline
from intents.intent import Priority
from intents.questions import QuestionKind

NOW = datetime.fromisoformat("2026-12-02T07:30:00+02:00")


@pytest.mark.parametrize(
    "text",
    [
        "Check the gates at 10:15 tomorrow; the east gate is the priority.",
        "Check the gates at 10:15 tomorrow; the east gate is our top priority.",
        "Check the gates at 10:15 tomorrow; the east gate's the priority.",
        "inspect the hydrants tomorrow 9am, the ones by the warehouse are high priority",
        "Check the gates at 10:15 tomorrow; the east gate matters most.",
        "Check the gates at 10:15 tomorrow; the east gate takes priority.",
        "Check the gates at 10:15 tomorrow; the east gate takes precedence over the others.",
        "Check the gates at 10:15 tomorrow; east gate is key.",
        "Check the gates at 10:15 tomorrow; the east gate is the main worry.",
        "Check the gates at 10:15 tomorrow; the east gate is most important.",
        "Check the gates at 10:15 tomorrow, east gate first.",
        "Check the gates at 10:15 tomorrow, gate 3 comes first",
        "Check the gates at 10:15 tomorrow, mostly the east gate.",
        "Check the gates at 10:15 tomorrow, start with hydrants",
        "Check the gates at 10:15 tomorrow, the east gate before the rest",
        "Check the gates at 10:15 tomorrow, the priority is the east gate",
        "明天上午10点检查大门，以东门为主",
        "明天上午10点检查大门，东门为主",
        "明天上午10点检查大门，东门优先",
        "明天上午10点检查消防栓，3号消防栓优先",
        "明天上午10点检查大门，重点是东门",
        "明天上午10点检查大门，东门是重点",
        "明天上午10点检查大门，东门最要紧",
        "明天上午10点检查大门，东门要紧",
        "明天上午10点检查大门，东门最重要",
        "明天上午10点检查大门，东门排第一",
        "明天上午10点检查大门，东门是关键",
        "明天上午10点检查大门，先东门后西门",
        "明天上午10点检查大门，南门第一",
        "明天上午10点检查大门，南门要优先",
        "inspect the gates tomorrow 9am, the south entrance needs the most attention",
        "inspect the gates tomorrow 9am, we care most about the south entrance",
        "inspect the gates tomorrow 9am; the south entrance is the top concern",
    ],
)
def test_a_priority_inside_the_area_is_asked_in_every_form(text: str) -> None:
    reading = read_offline(text, now=NOW)
    assert [q.kind for q in reading.questions] == [QuestionKind.FOCUS], reading.intent.clarification_questions
    assert reading.intent.priority is Priority.NORMAL  # a focus is no urgency of the whole request


@pytest.mark.parametrize(
    ("text", "priority"),
    [
        ("Check the hydrants at 10:15 tomorrow, priority: high", Priority.HIGH),
        ("Check the hydrants at 10:15 tomorrow, priority: low", Priority.LOW),
        ("Check the hydrants at 10:15 tomorrow, priority normal", Priority.NORMAL),
        ("Check the hydrants at 10:15 tomorrow, high priority", Priority.HIGH),
        ("Check the hydrants at 10:15 tomorrow, this is top priority", Priority.HIGH),
        ("Check the hydrants at 10:15 tomorrow, it is a priority", Priority.HIGH),
        ("Check the hydrants at 10:15 tomorrow, the job is high priority", Priority.HIGH),
        ("Check the hydrants at 10:15 tomorrow, the inspection is urgent", Priority.URGENT),
        ("Check the hydrants at 10:15 tomorrow, it's critical", Priority.URGENT),
        ("明天上午10点检查大门，优先级：高", Priority.HIGH),
        ("明天上午10点检查大门，优先级低", Priority.LOW),
        ("明天上午10点检查大门，优先处理", Priority.HIGH),
        ("明天上午10点检查大门，紧急", Priority.URGENT),
        ("明天上午10点检查大门，这个任务要优先", Priority.HIGH),
        ("明天上午10点检查大门，安全第一", Priority.NORMAL),
        ("inspect the gates tomorrow 9am, prio high", Priority.HIGH),
        ("inspect the gates tomorrow 9am, low prio", Priority.LOW),
    ],
)
def test_a_priority_of_the_request_itself_is_urgency_and_not_asked(text: str, priority: Priority) -> None:
    intent = read_offline(text, now=NOW).intent
    assert not intent.needs_clarification, intent.clarification_questions
    assert intent.priority is priority


@pytest.mark.parametrize(
    "text",
    [
        "First patrol of the day: fire lanes at 6am tomorrow",
        "The first patrol tomorrow: fire lanes at 6am",
        "Survey the lot tomorrow 9am, first time we fly it",
    ],
)
def test_first_as_an_ordinal_of_the_flight_is_read(text: str) -> None:
    assert not read_offline(text, now=NOW).intent.needs_clarification


def test_first_as_an_ordinal_of_a_target_is_asked_as_a_part_of_the_area() -> None:
    """All the gates are not "the first gate": planning them all would be silently wrong, so it is asked (as a scope)."""
    reading = read_offline("Check the first gate tomorrow at 10am", now=NOW)
    assert [(q.kind, q.quote) for q in reading.questions] == [(QuestionKind.SCOPE, "the first")]


def test_first_light_is_a_time_not_a_focus() -> None:
    reading = read_offline("Patrol the fire lanes tomorrow at first light", now=NOW)
    assert QuestionKind.FOCUS not in {q.kind for q in reading.questions}
