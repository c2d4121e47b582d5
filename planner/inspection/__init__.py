"""Point inspection pipeline: points to visit and the inspection plan."""
