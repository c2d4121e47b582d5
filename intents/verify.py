"""Holding a language model's Intent to the offline reader's contract.

A model only proposes. Its answer is compared field by field with what the
offline reader found in the *same text* (``intents.grammar.reader.Reading``): a value
the text does not support (an altitude, a day, a sensor nobody mentioned), a
value that differs from the one the text states, or one outside the caller's
limits becomes a question quoting both readings. The model can add questions,
never remove them: every span the offline reader could not read, and every
instruction it flagged, stays on the Intent. Geometry is never the model's:
the area is the offline reader's (the caller's selection, or a region the
caller's ``places`` named).
"""

from __future__ import annotations

from datetime import date

from intents.intent import Intent, RelativeDay, Sensor, Target
from intents.stated_limits import Limits
from intents.grammar.reader import Reading
from intents.time.resolve import resolve_relative
from intents.time.resolve import resolve_clock

__all__ = ["check_against_text"]


def _day(intent: Intent, today: date) -> date:
    return intent.when.date if intent.when.date is not None else resolve_relative(intent.when.day or RelativeDay.TODAY, today)


def _names(sensors: list[Sensor]) -> str:
    return ", ".join(s.value for s in sensors) or "none"


def check_against_text(proposed: Intent, reading: Reading, *, limits: Limits, today: date) -> Intent:
    """``proposed`` (from a model) with a question for every field the text does not support."""
    said = reading.intent
    missing = list(dict.fromkeys([*proposed.missing, *said.missing]))
    questions = list(dict.fromkeys([*said.clarification_questions, *proposed.clarification_questions]))

    def ask(item: str, question: str) -> None:
        if item not in missing:
            missing.append(item)
        questions.append(question)

    if proposed.mission_type != said.mission_type and said.mission_type is not None:
        ask("mission type", f"The model read {proposed.mission_type.value if proposed.mission_type else 'no mission'}, "
            f"the request says {said.mission_type.value}; which mission?")
    elif said.mission_type is None and proposed.mission_type is not None:
        ask("mission type", f"The model read {proposed.mission_type.value}, but no word of the request names a mission; which mission?")

    if _day(proposed, today) != _day(said, today):
        ask("day", f"The model read {_day(proposed, today).isoformat()}, the request gives {_day(said, today).isoformat()}; which day?")
    # A clock beside "asap" is still a clock (the start resolves to it): "right now" read by a model as asap *and*
    # 10:00 passed this check and planned 10:00 (bench.intents_guard's wrong-clock, on "… right now with lidar").
    if resolve_clock(proposed.when) != resolve_clock(said.when):
        ask("start time", f"The model read start {resolve_clock(proposed.when) or 'now'}, "
            f"the request gives {resolve_clock(said.when) or 'no time'}; when exactly?")

    if set(proposed.sensors) != set(said.sensors):
        ask("sensor", f"The model read sensors {_names(proposed.sensors)}, the request asks for {_names(said.sensors)}; which ones?")
    if set(proposed.excluded_sensors) & set(said.sensors):
        ask("sensor", f"The model excluded {_names(sorted(set(proposed.excluded_sensors) & set(said.sensors), key=lambda s: s.value))}, "
            "which the request asks for; which sensors?")

    if proposed.altitude_m is not None:
        if said.altitude_m is None and not reading.altitude_found:
            ask("altitude", f"The model read an altitude of {proposed.altitude_m:g} m, which the request does not state; which altitude?")
        elif said.altitude_m is not None and abs(proposed.altitude_m - said.altitude_m) > 0.5:
            ask("altitude", f"The model read {proposed.altitude_m:g} m, the request says {said.altitude_m:g} m; which altitude?")
        if not limits.altitude_ok(proposed.altitude_m):
            ask("altitude", f"{proposed.altitude_m:g} m is outside the allowed {limits.min_altitude_m:g}–"
                f"{limits.max_altitude_m:g} m above ground; which altitude should be flown?")
    elif said.altitude_m is not None:
        ask("altitude", f"The request says {said.altitude_m:g} m, which the model left out; which altitude?")

    if proposed.coverage_target is not None:
        if said.coverage_target is None and not reading.coverage_found:
            ask("coverage target", f"The model read a coverage target of {proposed.coverage_target:.1%}, which the request "
                "does not state; which coverage?")
        elif said.coverage_target is not None and abs(proposed.coverage_target - said.coverage_target) > 1e-9:
            ask("coverage target", f"The model read {proposed.coverage_target:.1%} coverage, the request says "
                f"{said.coverage_target:.1%}; which coverage?")
        if not limits.coverage_ok(proposed.coverage_target):
            ask("coverage target", f"{proposed.coverage_target:.1%} is outside the {limits.min_coverage:.0%}–"
                f"{limits.max_coverage:.0%} a survey can be asked to image; which coverage?")
    elif said.coverage_target is not None:
        ask("coverage target", f"The request asks for {said.coverage_target:.1%} coverage, which the model left out; which coverage?")

    unsupported = set(proposed.targets) - set(said.targets) - {Target.AREA, Target.FIRE_LANES}
    if unsupported:
        ask("targets", f"The model read targets {', '.join(sorted(t.value for t in unsupported))}, which the request does not name; which targets?")

    if len(questions) > 8:
        questions = questions[:7] + ["… and more: please restate the request."]
    return proposed.model_copy(
        update={
            "area": said.area,
            "missing": missing[:8],
            "clarification_questions": [q[:400] for q in questions],
            "instructions": list(dict.fromkeys([*said.instructions, *proposed.instructions]))[:5],
        }
    )
