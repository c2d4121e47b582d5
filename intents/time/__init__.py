"""intents.time: *when* — the time words, reading them from a request, and resolving them.

``words`` (the vocabulary), ``zones`` (time zones and UTC offsets named in the text),
``dates`` and ``clocks`` (the two halves of the reader), ``parse`` (``read_time``, which
puts them together) and ``resolve`` (the one definition of *when* for planning).
Imports only ``intents.text`` and ``intents.intent`` below it; nothing here imports
the package back.
"""
