"""Walking the chain: every entry in order from the first (``verify_all``) or from a checkpoint (``verify_since``).

Why batched: the first walk checked each draft with four queries of its own,
so a ledger of 2,000 drafts took 77 s holding the lock. Here the entries are
read in windows of ``WINDOW`` consecutive seqs (one query per chained table
per window, DuckDB's zone maps skipping the rest), checked in one pass that
keeps each draft's last hash and each version's replayed state in memory,
and every whole-table fact (states, plans, dispatch rows, the head) is one
query (``flows.ledger.checks``). Memory stays at one window of rows.

A walk runs on whatever connection it is given: a snapshot of the shared
connection (a server; writers go on) or a read-only copy of the file (the
CLI, a backup) — never while holding the file from everyone else.

``verify_since`` trusts the entries up to a signed checkpoint that an earlier
walk made (``flows.ledger.checkpoints``) as long as the entry at the
checkpoint still has the hash it signed, and walks only what came after; the
one-query checks still cover every row. So a server's start costs the same
with 10 or 10,000 drafts behind it. What it does not re-check — the content
of entries before the checkpoint — the full walk does (``sortie ledger
verify``, every backup).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import duckdb

from flows.ledger.adopt import APPROVAL_SELECT, EVENT_SELECT
from flows.ledger.chain import CHAINED_TABLES, DRAFT_TABLES, GENESIS, entry_hash, head_row, union_of
from flows.ledger.checks import (
    AUDIT_SELECT,
    COMMAND_SELECT,
    DISPATCH_LOG_SELECT,
    GLOBAL_KINDS,
    REQUEST_SELECT,
    Break,
    ChainReport,
    approval_problem,
    check_dispatch_rows,
    check_head,
    check_plans_sql,
    check_states_sql,
    content,
    entry_name,
    rows,
)
from flows.ledger.signing import KeyStore

__all__ = ["verify_all", "verify_since", "WINDOW"]

#: How many consecutive seqs one round of queries reads.
WINDOW = 20_000

_SELECTS = (("event", EVENT_SELECT, "e.chain_seq"), ("approval", APPROVAL_SELECT, "chain_seq"),
            ("dispatch", DISPATCH_LOG_SELECT, "chain_seq"), ("audit", AUDIT_SELECT, "chain_seq"),
            ("request", REQUEST_SELECT, "chain_seq"), ("command", COMMAND_SELECT, "chain_seq"))


def _window(con: duckdb.DuckDBPyConnection, lo: int, hi: int) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for kind, select, col in _SELECTS:
        out += [(kind, r) for r in rows(con, f"{select} WHERE {col} > ? AND {col} <= ?", [lo, hi])]
    out.sort(key=lambda kr: kr[1]["chain_seq"])
    return out


def _unchained(con: duckdb.DuckDBPyConnection) -> Iterator[tuple[str, dict[str, Any]]]:
    for kind, select, col in _SELECTS:
        for r in rows(con, f"{select} WHERE {col} IS NULL"):
            yield kind, r


class _Walk:
    """One pass over entries in seq order: links, hashes, per-version replay, approval signatures."""

    def __init__(self, keys: KeyStore, report: ChainReport, prev: str, expected: int,
                 draft_last: dict[str, str]) -> None:
        self.keys, self.report = keys, report
        self.prev, self.expected = prev, expected
        self.draft_last = draft_last
        self.replay: dict[tuple[str, int], tuple[str | None, int | None, bool]] = {}

    def add(self, kind: str, row: dict[str, Any]) -> None:
        report, name, draft_id = self.report, entry_name(kind, row), row.get("draft_id")
        report.entries += 1
        seq = row["chain_seq"]
        if seq != self.expected:
            report.breaks.append(Break(name, f"is entry {seq} where entry {self.expected} was expected (an entry "
                                             "was deleted)", draft_id))
            self.expected = seq
        if row["prev_hash"] != self.prev:
            report.breaks.append(Break(name, "does not follow the entry before it (deleted or inserted entry)",
                                       draft_id))
        if kind not in GLOBAL_KINDS:
            if row["draft_prev_hash"] != self.draft_last.get(draft_id, GENESIS):
                report.breaks.append(Break(name, "does not follow the draft's previous entry (an entry before it "
                                                 "was deleted or inserted)", draft_id))
            self.draft_last[draft_id] = row["entry_hash"]
        if entry_hash(row["prev_hash"] or "", row["draft_prev_hash"], content(kind, row)) != row["entry_hash"]:
            report.breaks.append(Break(name, "its content was changed after it was written (hash mismatch)",
                                       draft_id))
        self.prev = row["entry_hash"]
        self.expected += 1
        if kind == "event":
            self._replay(row)
        elif kind == "approval":
            self._approval(row)
        elif kind == "dispatch":
            report.dispatch_changes += 1
        elif kind == "audit":
            report.audit_rows += 1

    def _replay(self, e: dict[str, Any]) -> None:
        key = (e["draft_id"], int(e["version"]))
        state, _, broken = self.replay.get(key, (None, None, False))
        if broken:
            return
        if e["from_state"] != state:
            self.report.breaks.append(Break(f"draft {key[0]} v{key[1]}", f"event {e['from_state']}→{e['to_state']} "
                                            f"does not follow {state} (an event is missing)", key[0]))
            self.replay[key] = (state, None, True)
            return
        self.replay[key] = (e["to_state"], int(e["row_version"]), False)

    def _approval(self, row: dict[str, Any]) -> None:
        self.report.approvals += 1
        problem = approval_problem(self.keys, row)
        if problem == "is not signed":
            # Chained when a pre-chain ledger was upgraded (``flows.ledger.adopt``): part of the record, but
            # dispatch never accepts it (it needs a signed approval).
            self.report.legacy_unsigned += 1
        elif problem:
            self.report.breaks.append(Break(entry_name("approval", row), problem, row["draft_id"]))

    def walk(self, con: duckdb.DuckDBPyConnection, lo: int, top: int) -> None:
        while lo < top:
            hi = min(lo + WINDOW, top)
            for kind, row in _window(con, lo, hi):
                self.add(kind, row)
            lo = hi


def _top(con: duckdb.DuckDBPyConnection) -> int:
    stats = con.execute("SELECT max(chain_seq) FROM (" + union_of(CHAINED_TABLES, "chain_seq") + ")").fetchone()
    head = head_row(con)
    return max(int(stats[0] or 0), 0 if head is None else head[0])


def _check_replayed(con: duckdb.DuckDBPyConnection, walk: _Walk, drafts: list[dict[str, Any]]) -> None:
    """Each version's state and row version are the replay of its events."""
    for d in drafts:
        key = (d["draft_id"], int(d["version"]))
        state, row_version, broken = walk.replay.get(key, (None, None, False))
        if broken:
            continue
        if state != d["state"] or (row_version is not None and row_version != d["row_version"]):
            walk.report.breaks.append(Break(f"draft {key[0]} v{key[1]}", f"its state {d['state']} is not what its "
                                            f"events say ({state}): the state was written without its event", key[0]))


def _finish(con: duckdb.DuckDBPyConnection, keys: KeyStore, report: ChainReport, recorded: dict[str, Any] | None,
            head_name: str) -> ChainReport:
    report.breaks += check_dispatch_rows(con)
    report.breaks += check_head(con, keys, recorded, head_name)
    head = head_row(con)
    report.head_seq, report.head_hash = (0, GENESIS) if head is None else (head[0], head[1])
    report.drafts = int(con.execute("SELECT count(DISTINCT draft_id) FROM drafts").fetchone()[0])
    return report


def verify_all(con: duckdb.DuckDBPyConnection, keys: KeyStore, recorded: dict[str, Any] | None,
               head_name: str = "ledger.duckdb.head") -> ChainReport:
    """Walk every entry from the first (links, hashes, replay, signatures), then every whole-table check.

    ``recorded`` is the head file as it was when ``con``'s snapshot was taken.
    """
    report = ChainReport(scope="full")
    for kind, row in _unchained(con):
        report.entries += 1
        report.breaks.append(Break(entry_name(kind, row), "is not in the hash chain (written outside sortie, e.g. "
                                                          "by hand)", row.get("draft_id")))
    walk = _Walk(keys, report, GENESIS, 1, {})
    walk.walk(con, 0, _top(con))
    _check_replayed(con, walk, rows(con, "SELECT draft_id, version, state, row_version FROM drafts ORDER BY 1, 2"))
    report.breaks += check_plans_sql(con)
    return _finish(con, keys, report, recorded, head_name)


def verify_since(con: duckdb.DuckDBPyConnection, keys: KeyStore, recorded: dict[str, Any] | None, seq: int,
                 head_hash: str, head_name: str = "ledger.duckdb.head") -> ChainReport:
    """Walk the entries after the checkpoint (``seq``, ``head_hash``: checked to be still there by the caller),
    then every one-query check over all rows."""
    report = ChainReport(scope="since", from_seq=seq)
    for kind, row in _unchained(con):
        report.entries += 1
        report.breaks.append(Break(entry_name(kind, row), "is not in the hash chain (written outside sortie, e.g. "
                                                          "by hand)", row.get("draft_id")))
    touched = ("SELECT DISTINCT draft_id FROM (" + union_of(DRAFT_TABLES, "draft_id", "chain_seq > ?") + ")")
    draft_last = {
        r[0]: r[1] for r in con.execute(
            "SELECT draft_id, arg_max(entry_hash, chain_seq) FROM ("
            + union_of(DRAFT_TABLES, "draft_id, chain_seq, entry_hash", "chain_seq <= ?")
            + f") WHERE draft_id IN ({touched}) GROUP BY draft_id",
            [seq] * (2 * len(DRAFT_TABLES)),
        ).fetchall()
    }
    walk = _Walk(keys, report, head_hash, seq + 1, draft_last)
    # The versions touched since the checkpoint are replayed from their first event.
    for e in rows(con, f"SELECT draft_id, version, from_state, to_state, row_version FROM events WHERE chain_seq <= ? "
                       f"AND draft_id IN ({touched}) ORDER BY chain_seq", [seq] + [seq] * len(DRAFT_TABLES)):
        walk._replay(e)
    walk.walk(con, seq, _top(con))
    _check_replayed(con, walk, rows(con, f"SELECT draft_id, version, state, row_version FROM drafts WHERE draft_id "
                                         f"IN ({touched}) ORDER BY 1, 2", [seq] * len(DRAFT_TABLES)))
    seen = {b.text() for b in report.breaks}
    report.breaks += [b for b in check_states_sql(con) if b.text() not in seen]
    return _finish(con, keys, report, recorded, head_name)
