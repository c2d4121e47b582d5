"""A sensor said with a hedge — "thermal optional", "thermal if possible", 最好带热成像, 热成像可选 — is asked about.

The Intent's sensors are required: the plan only gives the mission to a drone that carries each of them. A sensor
the operator called optional, or wanted only if possible, is neither required nor refused, and reading it as
required ("thermal optional" was read as a thermal camera required, the word "optional" dropped) is a silent guess;
so the sensor and its hedge are one "is this sensor wanted or not?" question ("yes" requires it, "drop" plans
without it: "yes" puts in the sensor alone, ``wanted``). The hedge after the sensor is matched at its end, the hedge before it at the end of the words before it.
"""

from __future__ import annotations

import re

__all__ = ["HEDGE_AFTER", "HEDGE_BEFORE", "wanted"]

HEDGE_AFTER = re.compile(
    r"^\s*(?:camera\s+|cam\s+|相机\s*|摄像头\s*)?(?:is\s+|are\s+)?(?:optional|if\s+(?:possible|available|you\s+can|any|there\s+is\s+one)"
    r"|nice[- ]to[- ]have|preferably|preferred|ideally|would\s+be\s+nice|可选|可有可无|可用可不用|用不用都行|带不带都行"
    r"|有的话|如果有的话?|都行|随意|看情况)"
)
HEDGE_BEFORE = re.compile(
    r"(?:\b(?:optionally|preferably|ideally|if\s+possible,?)\s+(?:(?:with|use|using|bring)\s+)?(?:the\s+|a\s+|an\s+)?"
    r"|最好(?:是)?(?:带上?|用|开)?|尽量(?:带上?|用|开)?|能带就带|可以的话(?:带上?|用)?|有的话(?:带上?|用)?)\s*$"
)


def wanted(sensor: str) -> tuple[tuple[str, str], ...]:
    """The words "yes" puts in place of a quote holding ``sensor`` and more ("thermal optional", "the thermal camera is
    broken"): the sensor alone, wanted ("with thermal", 用热成像) — never "with thermal optional", asked again."""
    return (("yes", f"用{sensor}" if re.search(r"[\u4e00-\u9fff]", sensor) else f"with {sensor}"),)
