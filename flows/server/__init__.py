"""The authority: ``sortie server`` owns identity, time, the world and the ledger (see ``api``)."""
