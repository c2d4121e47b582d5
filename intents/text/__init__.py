"""intents.text: the request as characters — normalising, typo repair, claiming spans, numbers.

The bottom room of the offline reader: ``scan`` (the claimed/open bookkeeping and
the map back to what the operator wrote), ``typos`` (common misspellings read as
the word meant), ``numbers`` (Arabic, Chinese and English numerals).
"""
