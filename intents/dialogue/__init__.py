"""intents.dialogue: the operator answers the reader's questions, and the same request is read again.

``understand(Request, answers)`` (``turn``) is the one pure entry point; ``answers`` says
how an answer of each kind of question changes the request. The clarification dialogue
of the product (CLI, server, Prefect form, the draft's record) calls it.
"""
