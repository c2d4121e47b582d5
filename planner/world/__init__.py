"""The world snapshot: the frozen model, the world folder's files and their schema, geozones (ED-269, ED-318)."""
