"""Area survey pipeline: cells, sweeps, the order of sweeps (OR-Tools), repair passes, the survey plan."""
