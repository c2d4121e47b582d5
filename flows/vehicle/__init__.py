"""Talking to vehicles over MAVLink: the link, mission upload with read-back, flight modes, the monitor."""
