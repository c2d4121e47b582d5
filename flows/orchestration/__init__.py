"""Prefect: the thin flows and tasks, the approval form, draft artifacts, waking a waiting run."""
