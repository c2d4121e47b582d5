"""The ledger's schema, as numbered migrations applied in order when the file is opened.

A migration is never edited once released: a change is a new, higher number.
``schema_migrations`` records which numbers a file holds, so an old ledger is
brought forward on its next open and a file from a newer sortie is refused
rather than misread.

Migration 5 puts the audit and every change of a dispatch (claim, attempt,
outcome, settlement: ``dispatch_log``) into the hash chain; rows written
before it are chained as they are on upgrade (``flows.ledger.adopt``), the
way migration 3 adopted events and approvals.

Migration 6 adds the open requests (``flows.ledger.requests``): one row per turn
of a request's clarification dialogue, each an entry of the chain; a file
written before it has none, so nothing is adopted.

Migration 7 adds the vehicle command journal (``flows.ledger.command_journal``):
one row per change of a command (sent, answered, settled), each an entry of the
chain; a file written before it has none, so nothing is adopted.

The audit has no index on ``draft_id``: the one query that reads a draft's audit rows (its refused
decision attempts) has more conditions than DuckDB 2.0.1 uses an index for, and its scan costs 2–3 ms
of CPU a draft at 3 million audit rows (``AuditRoom.refusals``); an index would only cost every write.

Times are stored as ISO 8601 text with their offset (the caller's ``now``), so
no session time zone or ``pytz`` is involved and the bytes are what was given.
``at`` is a reserved word in DuckDB: time columns are named ``*_time``.
"""

from __future__ import annotations

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "drafts, approvals, dispatches, events, audit",
        """
        CREATE TABLE drafts (
            draft_id       VARCHAR NOT NULL,
            version        INTEGER NOT NULL,
            state          VARCHAR NOT NULL,
            row_version    INTEGER NOT NULL,
            request_key    VARCHAR NOT NULL,
            tenant         VARCHAR NOT NULL,
            region_id      VARCHAR,
            requested_by   VARCHAR NOT NULL,
            request_text   VARCHAR NOT NULL,
            intent_json    VARCHAR,
            plan_json      VARCHAR,
            plan_hash      VARCHAR,
            findings_json  VARCHAR NOT NULL,
            verdict        VARCHAR NOT NULL,
            missing_json   VARCHAR NOT NULL,
            notes_json     VARCHAR NOT NULL,
            world_name     VARCHAR NOT NULL,
            world_dir      VARCHAR NOT NULL,
            world_hash     VARCHAR NOT NULL,
            created_time   VARCHAR NOT NULL,
            updated_time   VARCHAR NOT NULL,
            PRIMARY KEY (draft_id, version)
        );
        CREATE TABLE approvals (
            approval_id    VARCHAR PRIMARY KEY,
            draft_id       VARCHAR NOT NULL,
            version        INTEGER NOT NULL,
            plan_hash      VARCHAR,
            approver       VARCHAR NOT NULL,
            decision       VARCHAR NOT NULL,
            comment        VARCHAR NOT NULL,
            created_time   VARCHAR NOT NULL,
            expires_time   VARCHAR
        );
        CREATE TABLE dispatches (
            idempotency_key VARCHAR PRIMARY KEY,
            draft_id        VARCHAR NOT NULL,
            version         INTEGER NOT NULL,
            plan_hash       VARCHAR NOT NULL,
            params_hash     VARCHAR NOT NULL,
            params_json     VARCHAR NOT NULL,
            drone_ids       VARCHAR NOT NULL,
            status          VARCHAR NOT NULL,
            attempts        INTEGER NOT NULL,
            attempts_json   VARCHAR NOT NULL,
            result_json     VARCHAR,
            actor           VARCHAR NOT NULL,
            owner_host      VARCHAR NOT NULL,
            owner_pid       INTEGER NOT NULL,
            created_time    VARCHAR NOT NULL,
            updated_time    VARCHAR NOT NULL,
            UNIQUE (draft_id, version)
        );
        CREATE SEQUENCE event_seq START 1;
        CREATE TABLE events (
            event_id       BIGINT PRIMARY KEY DEFAULT nextval('event_seq'),
            draft_id       VARCHAR NOT NULL,
            version        INTEGER NOT NULL,
            actor          VARCHAR NOT NULL,
            from_state     VARCHAR,
            to_state       VARCHAR NOT NULL,
            reason         VARCHAR NOT NULL,
            event_time     VARCHAR NOT NULL,
            row_version    INTEGER NOT NULL
        );
        CREATE SEQUENCE audit_seq START 1;
        CREATE TABLE audit (
            audit_id       BIGINT PRIMARY KEY DEFAULT nextval('audit_seq'),
            actor          VARCHAR,
            command        VARCHAR NOT NULL,
            args_sha256    VARCHAR NOT NULL,
            args_redacted  VARCHAR NOT NULL,
            result_code    VARCHAR NOT NULL,
            duration_ms    DOUBLE NOT NULL,
            started_time   VARCHAR NOT NULL,
            draft_id       VARCHAR
        );
        CREATE INDEX events_draft ON events (draft_id);
        CREATE INDEX approvals_draft ON approvals (draft_id, version);
        """,
    ),
    (
        2,
        "approvals record how the decision was made (mode, identity proof, policy, clock)",
        """
        ALTER TABLE approvals ADD COLUMN evidence_json VARCHAR;
        """,
    ),
    (
        3,
        "hash chain over events and approvals, signed approvals and chain head, dispatch items hash",
        """
        ALTER TABLE events ADD COLUMN chain_seq BIGINT;
        ALTER TABLE events ADD COLUMN prev_hash VARCHAR;
        ALTER TABLE events ADD COLUMN draft_prev_hash VARCHAR;
        ALTER TABLE events ADD COLUMN entry_hash VARCHAR;
        ALTER TABLE approvals ADD COLUMN statement_json VARCHAR;
        ALTER TABLE approvals ADD COLUMN signature VARCHAR;
        ALTER TABLE approvals ADD COLUMN key_id VARCHAR;
        ALTER TABLE approvals ADD COLUMN chain_seq BIGINT;
        ALTER TABLE approvals ADD COLUMN prev_hash VARCHAR;
        ALTER TABLE approvals ADD COLUMN draft_prev_hash VARCHAR;
        ALTER TABLE approvals ADD COLUMN entry_hash VARCHAR;
        ALTER TABLE dispatches ADD COLUMN items_hash VARCHAR;
        ALTER TABLE dispatches ADD COLUMN approval_id VARCHAR;
        CREATE TABLE chain_head (
            id             INTEGER PRIMARY KEY,
            seq            BIGINT NOT NULL,
            head_hash      VARCHAR NOT NULL,
            signature      VARCHAR,
            key_id         VARCHAR
        );
        """,
    ),
    (
        4,
        "audit rows say why a command was refused (a self-approval attempt is auditable)",
        """
        ALTER TABLE audit ADD COLUMN result_message VARCHAR;
        """,
    ),
    (
        5,
        "audit rows and dispatch changes join the hash chain; audit names token, caller and client; the ledger's "
        "id and its signed checkpoints",
        """
        ALTER TABLE audit ADD COLUMN token_id VARCHAR;
        ALTER TABLE audit ADD COLUMN client_addr VARCHAR;
        ALTER TABLE audit ADD COLUMN caller VARCHAR;
        ALTER TABLE audit ADD COLUMN chain_seq BIGINT;
        ALTER TABLE audit ADD COLUMN prev_hash VARCHAR;
        ALTER TABLE audit ADD COLUMN entry_hash VARCHAR;
        CREATE SEQUENCE dispatch_log_seq START 1;
        CREATE TABLE dispatch_log (
            log_id          BIGINT PRIMARY KEY DEFAULT nextval('dispatch_log_seq'),
            idempotency_key VARCHAR NOT NULL,
            draft_id        VARCHAR NOT NULL,
            version         INTEGER NOT NULL,
            change          VARCHAR NOT NULL,
            status          VARCHAR NOT NULL,
            row_json        VARCHAR NOT NULL,
            change_time     VARCHAR NOT NULL,
            chain_seq       BIGINT,
            prev_hash       VARCHAR,
            draft_prev_hash VARCHAR,
            entry_hash      VARCHAR
        );
        CREATE INDEX dispatch_log_draft ON dispatch_log (draft_id);
        CREATE TABLE ledger_meta (
            name           VARCHAR PRIMARY KEY,
            value          VARCHAR NOT NULL
        );
        INSERT INTO ledger_meta SELECT 'ledger_id', CAST(gen_random_uuid() AS VARCHAR);
        CREATE SEQUENCE checkpoint_seq START 1;
        CREATE TABLE chain_checkpoints (
            checkpoint_id  BIGINT PRIMARY KEY DEFAULT nextval('checkpoint_seq'),
            seq            BIGINT NOT NULL,
            head_hash      VARCHAR NOT NULL,
            scope          VARCHAR NOT NULL,
            statement_json VARCHAR NOT NULL,
            signature      VARCHAR NOT NULL,
            key_id         VARCHAR NOT NULL
        );
        """,
    ),
    (
        6,
        "open requests: a request that needs clarification, each turn of its dialogue (asked, answered, planned, "
        "expired) an entry of the hash chain",
        """
        CREATE TABLE request_turns (
            request_id     VARCHAR NOT NULL,
            turn           INTEGER NOT NULL,
            state          VARCHAR NOT NULL,
            tenant         VARCHAR NOT NULL,
            region_id      VARCHAR,
            requested_by   VARCHAR NOT NULL,
            request_text   VARCHAR NOT NULL,
            request_json   VARCHAR NOT NULL,
            questions_json VARCHAR NOT NULL,
            answers_json   VARCHAR NOT NULL,
            actor          VARCHAR NOT NULL,
            reason         VARCHAR NOT NULL,
            draft_id       VARCHAR,
            created_time   VARCHAR NOT NULL,
            expires_time   VARCHAR NOT NULL,
            turn_time      VARCHAR NOT NULL,
            chain_seq      BIGINT,
            prev_hash      VARCHAR,
            entry_hash     VARCHAR,
            PRIMARY KEY (request_id, turn)
        );
        """,
    ),
    (
        7,
        "the vehicle command journal: every command to a vehicle written before it is sent, its answer after, and "
        "a crash's unanswered command settled from the vehicle's state; each change an entry of the hash chain",
        """
        CREATE TABLE vehicle_commands (
            command_id     VARCHAR NOT NULL,
            change         VARCHAR NOT NULL,
            draft_id       VARCHAR,
            version        INTEGER,
            drone_id       VARCHAR NOT NULL,
            action         VARCHAR NOT NULL,
            command        VARCHAR NOT NULL,
            params_json    VARCHAR NOT NULL,
            actor          VARCHAR NOT NULL,
            outcome        VARCHAR,
            detail_json    VARCHAR NOT NULL,
            owner_host     VARCHAR NOT NULL,
            owner_pid      INTEGER NOT NULL,
            change_time    VARCHAR NOT NULL,
            chain_seq      BIGINT,
            prev_hash      VARCHAR,
            entry_hash     VARCHAR,
            PRIMARY KEY (command_id, change)
        );
        """,
    ),
)

SCHEMA_VERSION = max(number for number, _, _ in MIGRATIONS)
