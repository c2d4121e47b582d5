"""intents.grammar: the offline reader — a deterministic zh + en request → ``Intent`` that never guesses.

``vocabulary`` holds the words, ``missions`` tells one mission from two, ``heights``
reads altitudes and their reference, ``reader`` accounts for every span and turns
what it cannot read into ``intents.questions.Question`` values.
"""
