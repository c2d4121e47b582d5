"""The use cases' name for who acts and under which approval policy: ``flows.actor`` (a leaf of its own, so a client
of ``sortie server`` has the authority's vocabulary without importing the use cases)."""

from __future__ import annotations

from flows.actor import LOCAL, SERVER, Actor, Policy, as_actor

__all__ = ["Actor", "Policy", "as_actor", "LOCAL", "SERVER"]
