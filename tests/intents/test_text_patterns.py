"""``intents.text.patterns.LazyPattern``: the reader's tables are compiled when a request needs them, and read the same.

The vocabulary and the time words were ~100 patterns compiled at import, half the cost of importing ``intents``
(issue 27). The whole behaviour of the reader over the corpora is checked by the reader's own tests; here: nothing is
compiled by importing the tables or by joining their sources, a pattern compiles once on first use, and it answers
exactly as ``re.compile`` of the same source and flags.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from intents.text.patterns import LazyPattern

ROOT = Path(__file__).resolve().parents[2]


def test_importing_the_tables_compiles_none_of_them() -> None:
    probe = (
        "import intents.extract, intents.grammar.vocabulary as V, intents.time.words as W\n"
        "from intents.text.patterns import LazyPattern\n"
        "lazy = [v for m in (V, W) for v in vars(m).values() if isinstance(v, LazyPattern)]\n"
        "print(len(lazy), sum(v._compiled is not None for v in lazy))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         check=True)
    n, compiled = map(int, out.stdout.split())
    assert n >= 50 and compiled == 0  # the tables the heights and the reader join are read by their source


def test_a_pattern_compiles_once_and_reads_as_re_compile() -> None:
    source, text = r"(?P<h>\d{1,2})\s*(?:点|o'?clock)\b|明天", "明天 9点 and 10 o'clock, 3点"
    lazy, real = LazyPattern(source, re.ASCII), re.compile(source, re.ASCII)
    assert lazy.pattern == source and lazy._compiled is None
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    first = lazy.compiled
    assert lazy.compiled is first and first.flags == real.flags
    assert lazy.search(text, 3).group("h") == real.search(text, 3).group("h") == "10"
    assert lazy.match(text) is not None and lazy.fullmatch("10 oclock") is not None
    assert lazy.findall(text) == real.findall(text) and lazy.split(text) == real.split(text)
    assert lazy.sub("#", text) == real.sub("#", text) and lazy.subn("#", text) == real.subn("#", text)
    assert lazy.groupindex == real.groupindex and lazy.groups == real.groups
    assert lazy.search(text).re is lazy.compiled  # what a reader compares a match's pattern with
