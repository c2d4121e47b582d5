"""Clients of the authority: ``http`` (the httpx client) and ``flowops`` (the Prefect tasks in server mode).

The CLI's server-mode backend (``flows.cli.remote_backend``) is built on ``http``.
"""
