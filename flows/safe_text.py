"""Safe text: the one place control characters are taken out of what sortie shows a person.

Why: a reject reason, a request text or a vehicle's status text is data from
someone else. Printed raw, ``ESC [ 2 J`` clears the approver's screen and the
next bytes can draw a fake "APPROVED by …"; a right-to-left override reorders
what they read. Every string the CLI prints as text goes through ``clean``
(control characters shown as visible escapes such as ``\\x1b``, newlines and
tabs kept: a message of ours may have several lines). Data shown in a table, a
log line or an event line goes through ``one_line`` (``clean_tree`` does it for
a whole result): every line break and separator — newline, carriage return,
tab, NEL, U+2028, U+2029 — shown as an escape too, since a newline in a
reject reason printed raw forges a whole line of ``sortie log`` (issue 28).
JSON output keeps the data and escapes DEL, C1 and the Unicode line and
paragraph separators (``json.dumps`` escapes the rest itself). ``markdown_text`` does the same for
the Prefect artifact, and escapes Markdown and HTML so a request text cannot
draw a table, a link or an image into the approver's page.

Kept free of heavy imports: the CLI imports it at start.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["clean", "one_line", "clean_tree", "escape_json_text", "markdown_text", "approver_view", "answered_line"]

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides/isolates.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# … and tab and newline too: what must stay on one line.
_BREAKS = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(match: re.Match[str]) -> str:
    if match.group() in _NAMED:
        return _NAMED[match.group()]
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean(text: str) -> str:
    """``text`` with every control character replaced by a visible escape (``\\x1b``)."""
    return _UNSAFE.sub(_visible, text)


def one_line(text: str) -> str:
    """``text`` on one line: ``clean``, and every line break, separator and tab as a visible escape (``\\n``)."""
    return _BREAKS.sub(_visible, text)


def clean_tree(value: Any) -> Any:
    """A copy of a JSON-like value with every string (keys included) ``one_line``: data is shown on one line."""
    if isinstance(value, str):
        return one_line(value)
    if isinstance(value, dict):
        return {clean_tree(k): clean_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_tree(v) for v in value]
    return value


def escape_json_text(text: str) -> str:
    """JSON text with DEL, C1 and bidi characters as ``\\uXXXX`` escapes: the same data, safe on a terminal."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


#: Markdown that could make emphasis, code, links, images, tables or strike-through inside a line.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()!|~])")


def markdown_text(text: str) -> str:
    """``text`` as one line of literal Markdown: controls made visible, HTML and Markdown syntax escaped."""
    safe = clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MD_SPECIAL.sub(r"\\\1", safe).replace("\n", " ").replace("\t", " ")


def answered_line(answer: Any) -> str:
    """One clarification as the approver reads it: the question's id and quote, the answer and how it was read,
    who gave it and when (an open request's answers, ``flows.usecases.requests``)."""
    if not isinstance(answer, dict):
        return str(answer)
    said = str(answer.get("question") or "")
    quote = f" “{answer['quote']}”" if answer.get("quote") and str(answer["quote"]) not in said else ""
    read = f" (read as “{answer['read_as']}”)" if answer.get("read_as") not in (None, "", answer.get("answer")) else ""
    who = f", by {answer['answered_by']}" if answer.get("answered_by") else ""
    when = f" at {answer['answered_time']}" if answer.get("answered_time") else ""
    return f"{answer.get('id', '?')}{quote}: {said} → “{answer.get('answer', '')}”{read}{who}{when}"


def approver_view(summary: dict[str, Any]) -> dict[str, Any]:
    """What the approver must see of where a plan came from: the request as written, who read it, and the
    clarifications answered, each with who answered and when (from a draft summary's ``request_text``,
    ``clarifications`` and ``intent``/``extractor``), one line each."""
    intent = summary.get("intent") or {}
    answered = [answered_line(a) for a in (summary.get("clarifications") or intent.get("clarifications_answered")
                                           or summary.get("clarifications_answered") or [])]
    return {
        "request_text": str(summary.get("request_text") or summary.get("text") or ""),
        "extractor": str(summary.get("extractor") or intent.get("extractor") or "unknown"),
        "clarifications_answered": answered,
    }
