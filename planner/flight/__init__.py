"""How the vehicle flies a mission: its waypoint controller (ArduPilot S-curves, PX4 smoothing), take-off and landing, power."""
