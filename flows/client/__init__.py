"""Clients of the authority: ``http`` (the HTTP client) and ``remote`` (the CLI's server-mode backend)."""
