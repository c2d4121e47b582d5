"""The live operations page of ``sortie server`` (``/ops``): its map, its live picture and its static files.

The routes are ``flows.server.routes.ops``; this package holds what they serve: ``map`` (the world as the page
draws it), ``live`` (the fleet's rows and flown tracks) and ``static/`` (the page itself).
"""
