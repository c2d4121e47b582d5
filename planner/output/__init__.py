"""What leaves the planner: MAVLink mission items and their wire form, ground-station files, map pictures."""
