"""Lane patrol pipeline: lanes split at junctions, arc routing (OR-Tools), the patrol plan."""
