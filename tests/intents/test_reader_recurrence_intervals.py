"""intents.time.recurrence: a repeating interval is asked about once, quoting the whole phrase.

"Every hour and a half", "every one and a half hours", "every quarter of an hour", "every 45 min or so",
每隔一个半小时, 每45分钟左右: one fact, a schedule the one flight a request plans cannot keep. The reader
asks about it once, in the operator's words — the whole interval, its fraction, its "or so" and the window it
ends at ("from 9 until noon", 从上午9点到12点) — never the interval's first word as a repetition and its fraction
as a number nobody can make sense of ("and a half starting": what does it set?). The answer takes the quote's
place (``intents.dialogue``), so a quote cut short leaves "and a half" behind to be asked again.

A start beside the interval ("starting 10:00", "from 09:00", 从十点开始) is a time a one-off flight can keep: it
is still read as the start, outside the quote, so an answer "just once" keeps it. What is no recurrence ("an
hour and a half flight", "for an hour and a half", "1.5 h of flight time", 半小时内, "in an hour and a half")
is read as before: never asked as a repetition. ``now`` is Sunday 2026-11-29 07:00 in Helsinki.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from intents.dialogue.turn import Read, Request, Unclear, understand
from intents.grammar.reader import read_offline
from intents.intent import RelativeDay

NOW = datetime.fromisoformat("2026-11-29T07:00:00+02:00")
REPEATS_EN = "this repeats, and one request plans one flight"
REPEATS_ZH = "这是重复的时间"


def _one_recurrence_question(text: str) -> str:
    """The quote of the request's only question, which must be the recurrence's."""
    reading = read_offline(text, now=NOW)
    texts = [q.text for q in reading.questions]
    assert len(reading.questions) == 1, texts
    question = reading.questions[0]
    assert question.kind.value == "time" and (REPEATS_EN in question.text or REPEATS_ZH in question.text), texts
    assert reading.intent.needs_clarification
    return question.quote or ""


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("patrol the fire lanes every hour and a half", "every hour and a half"),
        ("patrol the fire lanes every hour-and-a-half", "every hour-and-a-half"),
        ("patrol the fire lanes every one and a half hours", "every one and a half hours"),
        ("patrol the fire lanes every 1.5 h", "every 1.5 h"),
        ("patrol the fire lanes every half hour", "every half hour"),
        ("patrol the fire lanes every half an hour", "every half an hour"),
        ("patrol the fire lanes every quarter of an hour", "every quarter of an hour"),
        ("patrol the fire lanes every quarter-hour", "every quarter-hour"),
        ("patrol the fire lanes every three quarters of an hour", "every three quarters of an hour"),
        ("patrol the fire lanes every two and a half hours", "every two and a half hours"),
        ("patrol the fire lanes every 2 and a half hours", "every 2 and a half hours"),
        ("patrol the fire lanes every 45 min or so", "every 45 min or so"),
        ("patrol the fire lanes every hour or two", "every hour or two"),
        ("patrol the fire lanes once every hour and a half", "once every hour and a half"),
        ("patrol the fire lanes roughly every 90 minutes", "roughly every 90 minutes"),
        ("patrol the fire lanes every 1 hour 30 minutes", "every 1 hour 30 minutes"),
        ("patrol the fire lanes every hour and 15 minutes", "every hour and 15 minutes"),
        ("patrol the fire lanes every 1h30", "every 1h30"),
        ("patrol the fire lanes every 2-3 hours", "every 2-3 hours"),
        ("patrol the fire lanes every 20 to 30 minutes", "every 20 to 30 minutes"),
        ("patrol the fire lanes every hour on the hour", "every hour on the hour"),
        ("patrol the fire lanes every hour until noon", "every hour until noon"),
        ("patrol the fire lanes every hour from 9 until noon", "every hour from 9 until noon"),
        ("patrol the fire lanes every hour and a half from 9 until noon", "every hour and a half from 9 until noon"),
        ("patrol the fire lanes every 30 minutes between 9 and 11", "every 30 minutes between 9 and 11"),
        ("patrol the fire lanes every hour for 3 hours", "every hour for 3 hours"),
        ("patrol the fire lanes every hour all day", "every hour all day"),
        ("每隔一个半小时巡查消防通道", "每隔一个半小时"),
        ("每一个半小时巡查消防通道", "每一个半小时"),
        ("每半小时巡查消防通道", "每半小时"),
        ("每1.5小时巡查消防通道", "每1.5小时"),
        ("每两个半小时巡查消防通道", "每两个半小时"),
        ("每隔一刻钟巡查消防通道", "每隔一刻钟"),
        ("每45分钟左右巡查消防通道", "每45分钟左右"),
        ("每隔一个小时三十分钟巡查消防通道", "每隔一个小时三十分钟"),
        ("每隔一个多小时巡查消防通道", "每隔一个多小时"),
        ("每隔2到3小时巡查消防通道", "每隔2到3小时"),
        ("从上午9点到12点每小时巡查消防通道", "从上午9点到12点每小时"),
    ],
)
def test_an_interval_is_asked_once_quoting_the_whole_phrase(text: str, quote: str) -> None:
    assert _one_recurrence_question(text).lower() == quote.lower()


@pytest.mark.parametrize(
    ("text", "quote", "clock", "day"),
    [
        ("patrol the fire lanes every hour and a half starting 10:00", "every hour and a half", "10:00", RelativeDay.TODAY),
        ("starting at 10:00, patrol the fire lanes every hour and a half", "every hour and a half", "10:00",
         RelativeDay.TODAY),
        ("survey the area every 90 minutes from 09:00", "every 90 minutes", "09:00", RelativeDay.TODAY),
        ("patrol the fire lanes every quarter of an hour beginning at 08:30 tomorrow", "every quarter of an hour",
         "08:30", RelativeDay.TOMORROW),
        ("patrol the fire lanes every two and a half hours from 14:00", "every two and a half hours", "14:00",
         RelativeDay.TODAY),
        ("上午十点起每隔一个半小时巡查消防通道", "每隔一个半小时", "10:00", RelativeDay.TODAY),
        ("从明天上午十点开始每隔一个半小时巡查消防通道", "每隔一个半小时", "10:00", RelativeDay.TOMORROW),
        ("每隔两个小时巡查消防通道，从上午9点开始", "每隔两个小时", "09:00", RelativeDay.TODAY),
    ],
)
def test_a_start_beside_the_interval_is_still_read(text: str, quote: str, clock: str, day: RelativeDay) -> None:
    assert _one_recurrence_question(text).lower() == quote.lower()
    when = read_offline(text, now=NOW).intent.when
    assert (when.clock, when.day) == (clock, day)


@pytest.mark.parametrize(
    ("text", "clock", "asked"),
    [
        ("patrol the fire lanes in an hour and a half", "08:30", []),
        ("patrol the fire lanes an hour and a half from now", "08:30", []),
        ("一个半小时后巡查消防通道", "08:30", []),
        ("patrol the fire lanes today at 10:00, an hour and a half flight", "10:00", ["number"]),
        ("patrol the fire lanes today at 10:00 for an hour and a half", "10:00", ["parameter"]),  # a duration
        ("patrol every fire lane today at 10:00 for one and a half hours", "10:00", ["parameter"]),
        ("survey the area tomorrow at 09:00, 1.5 h of flight time", "09:00", ["number"]),
        ("inspect every hydrant today at 09:00, half an hour each", "09:00", ["number"]),
        ("半小时内巡查消防通道", None, ["number"]),
        ("今天上午十点巡查消防通道，飞一个半小时", "10:00", ["parameter"]),
    ],
)
def test_no_repetition_is_asked_where_none_is_said(text: str, clock: str | None, asked: list[str]) -> None:
    """A duration or an offset is no recurrence: read (or asked about) as before, never asked as one."""
    reading = read_offline(text, now=NOW)
    assert not any(REPEATS_EN in q.text or REPEATS_ZH in q.text for q in reading.questions), [q.text for q in reading.questions]
    assert [q.kind.value for q in reading.questions] == asked
    assert reading.intent.when.clock == clock


@pytest.mark.parametrize(
    ("text", "answer", "clock"),
    [
        ("patrol the fire lanes every hour and a half starting 10:00", "just once", "10:00"),
        ("patrol the fire lanes every hour and a half", "today at 11:00", "11:00"),
        ("patrol the fire lanes every hour from 9 until noon", "today at 09:00", "09:00"),
        ("每隔一个半小时巡查消防通道", "今天上午11点", "11:00"),
    ],
)
def test_the_one_answer_replaces_the_whole_interval(text: str, answer: str, clock: str) -> None:
    """The answer takes the quote's place: nothing of the interval ("and a half") is left to be asked again."""
    first = understand(Request(text, NOW, "Europe/Helsinki"), None)
    assert isinstance(first, Unclear) and len(first.questions) == 1, first.questions
    assert REPEATS_EN in first.questions[0].text or REPEATS_ZH in first.questions[0].text, first.questions
    done = understand(Request(text, NOW, "Europe/Helsinki"), {first.questions[0].id: answer})
    assert isinstance(done, Read), done
    assert done.intent.when.clock == clock
