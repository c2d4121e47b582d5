"""Geometry shared by every pipeline: the local metric frame, transit around no-fly zones, airspace fences."""
