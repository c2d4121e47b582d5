"""intents.grammar.quantifiers and intents.time.recurrence: "every hydrant" quantifies, "every morning" repeats.

A quantifier before a target ("every hydrant", "every single fire lane", "each of the roofs", "every one of
the masts", 每个消防栓) says *which* targets — all of them, which is what a patrol or an inspection of the
selection does anyway — and nothing about *when*: an exact request with one is read without a question
(asking about an exact request is a defect too). A recurrence ("every morning", "each Monday", "every 2
hours", "every other day", 每天, 每周一, 每个早上, 每隔两小时) is a schedule the one flight a request plans
cannot keep: it is asked about, never read as a one-off. Both in one request ("every hydrant every
morning"): only the recurrence is asked. ``now`` is Sunday 2026-11-29 07:00 in Helsinki.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from intents.dialogue.turn import Read, Request, Unclear, understand
from intents.grammar.reader import read_offline
from intents.intent import Target
from intents.questions import QuestionKind

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")
H, F, R, M = Target.HYDRANTS, Target.FIRE_LANES, Target.ROOFS, Target.MASTS


@pytest.mark.parametrize(
    ("text", "clock", "targets"),
    [
        ("inspect every hydrant in this region today at 09:00", "09:00", {H}),
        ("patrol every fire lane today at 10:00", "10:00", {F}),
        ("inspect every single hydrant today at 09:00", "09:00", {H}),
        ("inspect every one of the hydrants today at 09:00", "09:00", {H}),
        ("inspect each one of the roofs today at 09:00", "09:00", {R}),
        ("inspect each of the hydrants today at 09:00", "09:00", {H}),
        ("inspect every fire hydrant today at 09:00", "09:00", {H}),
        ("inspect the roofs of every building today at 09:00", "09:00", {R}),  # every building: no time
        ("check every roof and every mast today at 11:00", "11:00", {R, M}),
        ("patrol every fire access road today at 10:00", "10:00", {F}),
        ("inspect every tower at 14:00 tomorrow", "14:00", {M}),
        ("Every hydrant, today 09:00, inspect them", "09:00", {H}),
        ("inspect every hydrant in the selection at 09:00 today, thermal camera", "09:00", {H}),
        ("每个消防栓都检查一下，今天上午9点", "09:00", {H}),
        ("每一个消防栓今天上午10点检查", "10:00", {H}),
    ],
)
def test_a_quantifier_before_a_target_is_no_time(text: str, clock: str, targets: set[Target]) -> None:
    reading = read_offline(text, now=NOW)
    assert reading.questions == [], [q.text for q in reading.questions]
    assert reading.intent.when.clock == clock
    assert set(reading.intent.targets) == targets


@pytest.mark.parametrize(
    ("text", "quoted"),
    [
        ("inspect every hydrant today at 09:00, every morning", "every morning"),
        ("check all the hydrants every morning", "every morning"),
        ("inspect every hydrant every day at 09:00", "every day"),
        ("patrol the fire lanes every day at 09:00", "every day"),
        ("patrol the fire lanes every Monday", "every Monday"),
        ("patrol the fire lanes each Monday at 10:00", "each Monday"),
        ("patrol the fire lanes each evening", "each evening"),
        ("patrol the fire lanes each afternoon", "each afternoon"),
        ("patrol the fire lanes every other day at 10:00", "every other day"),
        ("patrol the fire lanes every 2 hours", "every 2 hours"),
        ("patrol the fire lanes every single day at 10:00", "every single day"),
        ("patrol the fire lanes on each weekday at 10:00", "each weekday"),
        ("每天9点检查消防栓", "每天"),
        ("每周一上午巡查消防通道", "每周一"),
        ("每个早上巡查消防通道", "每个早上"),
        ("每日巡查消防通道", "每日"),
        ("每月巡查消防通道", "每月"),
        ("每逢周一巡查消防通道", "每逢周一"),
        ("每隔两小时巡查消防通道", "每隔两小时"),
        ("每个消防栓每天早上检查", "每天"),
        ("patrol the fire lanes on Mondays", "on Mondays"),
        ("patrol the fire lanes mornings at 9:00", "mornings"),
        ("patrol the fire lanes every now and then", "every now and then"),
        ("天天巡查消防通道", "天天"),
        ("定期巡查消防通道", "定期"),
    ],
)
def test_a_recurrence_is_asked_never_read_as_a_one_off(text: str, quoted: str) -> None:
    reading = read_offline(text, now=NOW)
    quotes = [q.quote for q in reading.questions if q.kind.value == "time"]
    assert any(quoted.lower() in (q or "").lower() for q in quotes), [q.text for q in reading.questions]
    assert reading.intent.needs_clarification


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("inspect every hydrant twice today at 09:00", "twice"),  # how often, not which: still asked
        ("inspect every hydrant now and then today", "now and then"),  # a recurrence without "every"
        ("inspect every so often the hydrants today at 09:00", "every so often"),
        ("inspect every other hydrant today at 09:00", "every other"),  # a subset the plan cannot select
        ("inspect every bit of the hydrants today at 09:00", "every bit"),  # no target after it: the residual asks
        ("take thermal photos on every fire lane patrol today", "every"),  # each time the mission is flown
        ("check the hydrants on every site visit", "every site visit"),
    ],
)
def test_what_is_no_target_after_every_is_still_asked(text: str, quote: str) -> None:
    reading = read_offline(text, now=NOW)
    quotes = [q.quote or "" for q in reading.questions]
    assert any(quote in q.lower() for q in quotes), [q.text for q in reading.questions]
    if quote == "twice":
        assert not any(q.lower() == "every" for q in quotes), quotes


@pytest.mark.parametrize(
    ("text", "answer", "clock"),
    [
        ("inspect every hydrant every morning", "tomorrow at 09:00", "09:00"),
        ("每个消防栓每天早上检查", "明天上午10点", "10:00"),
    ],
)
def test_a_recurrence_answered_with_one_time_is_read_exactly(text: str, answer: str, clock: str) -> None:
    """The question quotes the whole recurrence, so the answer takes its place and no "morning" is left over."""
    first = understand(Request(text, NOW, "Europe/Helsinki"), None)
    assert isinstance(first, Unclear) and [q.kind for q in first.questions] == [QuestionKind.TIME], first.questions
    done = understand(Request(text, NOW, "Europe/Helsinki"), {first.questions[0].id: answer})
    assert isinstance(done, Read), done
    assert done.intent.when.clock == clock and set(done.intent.targets) == {H}
