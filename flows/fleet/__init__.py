"""The fleet as the authority sees it: one held link per vehicle (``hub``), its live state (``live``) and the
world seen through it (``overlay``). ``fleet.json`` keeps identity, dock, capabilities, energy model and
binding; ONLINE, battery and position come from the vehicle."""

__all__ = ["live", "overlay", "watch", "hub"]
