"""Integrity of what flies: the dispatch seal (signed approval, recomputed plan hash, mission items),
settling uncertain dispatches by reading the vehicle back, honest outcomes, and ledger backups.

The ledger's own tamper evidence (hash chain, signed head, keys) lives in
``flows.ledger.chain`` and ``flows.ledger.signing``; this package builds on it.
"""
